// cluster.yaml records of one cluster per cloud, with the Terraform outputs a real apply of
// templates/terraform/<cloud> gives (values as cluster.yaml keeps them): for the image builders' tests.
import type {ClusterRecord} from '../../src/lib/cluster/schema.js'
import type {CloudProvider} from '../../src/lib/providers/registry.js'

const common = (name: string) => ({
  cluster_id: name,
  mgmt_public_ip: '203.0.113.7',
  mgmt_private_ip: '10.0.0.10',
  mgmt_hostname: 'mgmt',
  shared_fs_host: '10.0.0.20',
  shared_fs_type: 'nfs',
  shared_fs_mount_options: 'nfsvers=3,hard,_netdev',
})

export const CLOUD_OUTPUTS: Record<CloudProvider, (name: string) => Record<string, unknown>> = {
  aws: (name) => ({
    ...common(name),
    mgmt_user: 'ubuntu',
    mgmt_shape: 't3a.medium',
    region: 'eu-west-2',
    zone: 'eu-west-2a',
    vpc_id: 'vpc-0abc',
    subnet_id: 'subnet-0abc',
    compute_security_group_id: 'sg-0abc',
    node_role_arn: 'arn:aws:iam::123456789012:role/citc-demo-mgmt',
    mgmt_shared_fs_source: 'fs-0abc:/',
    mgmt_shared_fs_type: 'efs',
    mgmt_shared_fs_mount_options: 'tls,iam,mounttargetip=10.0.0.20,_netdev',
    base_image: {id: 'ami-0123456789abcdef0', owner: '099720109477', name_filter: 'ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*', architecture: 'x86_64', os: 'ubuntu-24.04'},
    shared_fs_path: '/',
  }),
  google: (name) => ({
    ...common(name),
    mgmt_user: 'ubuntu',
    mgmt_shape: 'e2-standard-2',
    project: 'citc-test-project',
    region: 'europe-west2',
    zone: 'europe-west2-b',
    network: 'https://www.googleapis.com/compute/v1/projects/citc-test-project/global/networks/citc-demo',
    subnetwork: 'https://www.googleapis.com/compute/v1/projects/citc-test-project/regions/europe-west2/subnetworks/citc-demo',
    compute_network_tag: `citc-${name}-cluster`,
    node_service_account: `citc-${name}-mgmt@citc-test-project.iam.gserviceaccount.com`,
    base_image: {self_link: 'https://www.googleapis.com/compute/v1/projects/ubuntu-os-cloud/global/images/ubuntu-2404-noble-amd64-v20260110', project: 'ubuntu-os-cloud', family: 'ubuntu-2404-lts-amd64', os: 'ubuntu-24.04'},
    shared_fs_path: '/shared',
  }),
  oracle: (name) => ({
    ...common(name),
    mgmt_user: 'ubuntu',
    mgmt_shape: 'VM.Standard.E4.Flex',
    region: 'eu-frankfurt-1',
    compartment_id: 'ocid1.compartment.oc1..aaaademo',
    availability_domain: 'Uocm:EU-FRANKFURT-1-AD-1',
    ad_number: 1,
    vcn_id: 'ocid1.vcn.oc1.eu-frankfurt-1.aaaademo',
    subnet_id: 'ocid1.subnet.oc1.eu-frankfurt-1.aaaademo',
    dns_domain: 'cluster.citcdemo.oraclevcn.com',
    base_image: {id: 'ocid1.image.oc1.eu-frankfurt-1.aaaaubuntu', operating_system: 'Canonical Ubuntu', operating_system_version: '24.04', os: 'ubuntu-24.04'},
    shared_fs_path: '/shared',
  }),
}

const CLOUD_SETTINGS: Record<CloudProvider, (o: Record<string, unknown>) => Record<string, unknown>> = {
  aws: (o) => ({region: o.region, zone: o.zone, mgmtShape: o.mgmt_shape}),
  google: (o) => ({region: o.region, zone: o.zone, mgmtShape: o.mgmt_shape, project: o.project}),
  oracle: (o) => ({region: o.region, zone: '1', mgmtShape: 'VM.Standard.E4.Flex.1.16', tenancyOcid: 'ocid1.tenancy.oc1..aaaademo', compartmentOcid: o.compartment_id}),
}

/** A ready cloud cluster `name` on `provider`, citc installed under `prefix` on its management node. */
export function cloudRecord(provider: CloudProvider, name = 'demo', opts: {prefix?: string; outputs?: Record<string, unknown>} = {}): ClusterRecord {
  const outputs = {...CLOUD_OUTPUTS[provider](name), ...opts.outputs}
  const prefix = opts.prefix ?? '/opt/citc'
  return {
    name,
    provider,
    createdAt: '2026-01-01T12:00:00Z',
    origin: 'created',
    mgmt: {host: '203.0.113.7', port: 22, user: 'ubuntu', keyPath: '/keys/admin_ed25519', hostKeyFingerprint: `SHA256:${'A'.repeat(43)}`, hostname: 'mgmt', sudo: true},
    slurm: {confPath: '/mnt/shared/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'},
    terraform: {outputs},
    cloud: {...CLOUD_SETTINGS[provider](outputs), citcBin: `${prefix}/lib/node_modules/citc/bin/run.js`, nodeBin: '/usr/bin/node'} as ClusterRecord['cloud'],
  } as ClusterRecord
}
