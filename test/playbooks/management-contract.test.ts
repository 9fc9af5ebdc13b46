// /etc/citc/cluster.json as the citc_programs role really writes it: the real role, run by the real
// ansible-playbook (local connection, as citc runs it) with its files sent to a temp directory, fed the
// variables citc passes (as inventory host variables: one run for all cases) — for local, and for each cloud the driver section nodeDriverVars makes from
// the outputs its Terraform template declares (read from outputs.tf with HashiCorp's HCL parser, so a
// renamed or added output shows here) — and the file parsed with the contract's schema.
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {parse} from '@cdktf/hcl2json'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {MANAGEMENT_CONTRACT_VERSION, type ManagementProvider, readManagementContractFile} from '../../src/lib/cluster/management-contract.js'
import {nodeDriverVars} from '../../src/lib/providers/node-driver-vars.js'
import {ROOT} from '../helpers/cli.js'

const work = mkdtempSync(join(tmpdir(), 'citc-contract-'))
symlinkSync(join(ROOT, 'playbooks', 'group_vars'), join(work, 'group_vars'))
writeFileSync(join(work, 'role.yml'), '- hosts: all\n  gather_facts: false\n  roles:\n    - citc_programs\n')
afterAll(() => rmSync(work, {recursive: true, force: true}))

/** What `terraform output -json` gives after an apply, per template: every output outputs.tf declares. */
const OUTPUTS: Record<Exclude<ManagementProvider, 'local'>, Record<string, unknown>> = {
  aws: {
    cluster_id: 'demo',
    mgmt_public_ip: '203.0.113.10',
    mgmt_private_ip: '10.0.0.10',
    mgmt_user: 'ubuntu',
    mgmt_hostname: 'mgmt',
    mgmt_shape: 't3a.medium',
    region: 'eu-west-2',
    zone: 'eu-west-2a',
    vpc_id: 'vpc-0abc',
    subnet_id: 'subnet-0abc',
    compute_security_group_id: 'sg-0abc',
    base_image: {id: 'ami-0123', owner: '099720109477', name_filter: 'ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*', architecture: 'x86_64', os: 'ubuntu-24.04'},
    shared_fs_host: '10.0.0.20',
    shared_fs_path: '/',
    shared_fs_type: 'nfs4',
    shared_fs_mount_options: 'nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev',
    node_role_arn: 'arn:aws:iam::123456789012:role/citc-demo-mgmt',
    mgmt_shared_fs_source: 'fs-0abc:/',
    mgmt_shared_fs_type: 'efs',
    mgmt_shared_fs_mount_options: 'tls,iam,mounttargetip=10.0.0.20,_netdev',
  },
  google: {
    cluster_id: 'demo',
    mgmt_public_ip: '203.0.113.11',
    mgmt_private_ip: '10.0.0.2',
    mgmt_user: 'ubuntu',
    mgmt_hostname: 'mgmt',
    mgmt_shape: 'e2-standard-2',
    project: 'citc-demo-123',
    region: 'europe-west2',
    zone: 'europe-west2-b',
    network: 'https://www.googleapis.com/compute/v1/projects/citc-demo-123/global/networks/citc-demo',
    subnetwork: 'https://www.googleapis.com/compute/v1/projects/citc-demo-123/regions/europe-west2/subnetworks/citc-demo',
    compute_network_tag: 'citc-demo',
    base_image: {self_link: 'https://www.googleapis.com/compute/v1/projects/ubuntu-os-cloud/global/images/ubuntu-2404-noble-amd64-v20261101', project: 'ubuntu-os-cloud', family: 'ubuntu-2404-lts-amd64', os: 'ubuntu-24.04'},
    node_service_account: 'citc-demo-mgmt@citc-demo-123.iam.gserviceaccount.com',
    shared_fs_host: '10.0.1.2',
    shared_fs_path: '/shared',
    shared_fs_type: 'nfs',
    shared_fs_mount_options: 'nfsvers=3,hard,timeo=600,retrans=3,_netdev',
  },
  oracle: {
    cluster_id: 'demo',
    mgmt_public_ip: '203.0.113.12',
    mgmt_private_ip: '10.0.0.3',
    mgmt_user: 'ubuntu',
    mgmt_hostname: 'mgmt',
    mgmt_shape: 'VM.Standard.E4.Flex.1.16',
    region: 'uk-london-1',
    compartment_id: 'ocid1.compartment.oc1..aaaaaaaacompartment',
    availability_domain: 'Uocm:UK-LONDON-1-AD-2',
    ad_number: 2,
    vcn_id: 'ocid1.vcn.oc1.uk-london-1.aaaa',
    subnet_id: 'ocid1.subnet.oc1.uk-london-1.aaaa',
    dns_domain: 'cluster.demo.oraclevcn.com',
    base_image: {id: 'ocid1.image.oc1.uk-london-1.aaaa', operating_system: 'Canonical Ubuntu', operating_system_version: '24.04', os: 'ubuntu-24.04'},
    shared_fs_host: '10.0.0.30',
    shared_fs_path: '/shared',
    shared_fs_type: 'nfs',
    shared_fs_mount_options: 'nfsvers=3,hard,timeo=600,retrans=3,_netdev',
  },
}

/** The variables citc passes, each host (one per case) writing under its own directory. */
function hostVars(dir: string, vars: Record<string, unknown>) {
  for (const d of ['etc', 'programs', 'log']) mkdirSync(join(dir, d), {recursive: true})
  return {
    ansible_connection: 'local',
    ansible_python_interpreter: 'auto_silent',
    cluster_name: 'demo',
    citc_bin: join(ROOT, 'bin', 'run.js'),
    citc_node_bin: process.execPath,
    citc_etc_dir: join(dir, 'etc'),
    citc_programs_dir: join(dir, 'programs'),
    citc_log_dir: join(dir, 'log'),
    ...vars,
  }
}

/**
 * Run the role once for every case (hosts of one inventory, in parallel: each ansible-playbook run
 * costs seconds). The inventory's host variables carry what citc passes in vars.json.
 */
function runRole(cases: Record<string, Record<string, unknown>>) {
  const hosts = Object.fromEntries(Object.entries(cases).map(([host, vars]) => [host, hostVars(join(work, host), vars)]))
  const inventory = join(work, `inventory-${Object.keys(cases).join('-')}.json`)
  writeFileSync(inventory, JSON.stringify({all: {hosts}}), {mode: 0o600})
  return spawnSync('ansible-playbook', ['-i', inventory, '--forks', '5', join(work, 'role.yml')], {
    encoding: 'utf8',
    env: {...process.env, ANSIBLE_ROLES_PATH: join(ROOT, 'playbooks', 'roles'), ANSIBLE_NOCOLOR: '1', LC_ALL: 'C.UTF-8'},
    timeout: 120_000,
  })
}

const LOCAL_OVERRIDES = {runDir: '/run/citc-test/nodes', startTimeoutS: 30, stopGraceS: 2.5}
let run: ReturnType<typeof runRole>
beforeAll(() => {
  run = runRole({
    local: {provider: 'local'},
    'local-unmonitored': {provider: 'local', citc_monitoring: false},
    'local-overrides': {provider: 'local', citc_node_driver: LOCAL_OVERRIDES},
    aws: {provider: 'aws', citc_node_driver: nodeDriverVars('aws', OUTPUTS.aws)},
    google: {provider: 'google', citc_node_driver: nodeDriverVars('google', OUTPUTS.google)},
    oracle: {provider: 'oracle', citc_node_driver: nodeDriverVars('oracle', OUTPUTS.oracle)},
  })
}, 120_000)

/** The file the role wrote for one case, parsed by the contract's reader. */
function written(host: string) {
  if (run.status !== 0) throw new Error(`the role failed (exit ${run.status}):\n${run.stdout}\n${run.stderr}`)
  const file = join(work, host, 'etc', 'cluster.json')
  expect(statSync(file).mode & 0o777).toBe(0o644)
  return readManagementContractFile(file)
}

describe('cluster.json written by the citc_programs role', () => {
  it.each(Object.keys(OUTPUTS) as Array<keyof typeof OUTPUTS>)('the fixture has every output templates/terraform/%s/outputs.tf declares', async (provider) => {
    const tf = (await parse('outputs.tf', readFileSync(join(ROOT, 'templates', 'terraform', provider, 'outputs.tf'), 'utf8'))) as {output: Record<string, unknown>}
    expect(Object.keys(OUTPUTS[provider]).sort()).toEqual(Object.keys(tf.output).sort())
  })

  it('local: the common fields, an empty driver section, this version', () => {
    const dir = join(work, 'local')
    const contract = written('local')
    expect(contract).toEqual({
      version: MANAGEMENT_CONTRACT_VERSION,
      name: 'demo',
      provider: 'local',
      sharedDir: '/mnt/shared',
      slurmUser: 'root',
      programsDir: join(dir, 'programs'),
      confPath: '/etc/slurm/slurm.conf',
      elasticLog: join(dir, 'log', 'elastic.log'),
      monitoring: {dir: '/var/lib/citc/metrics', prometheusUrl: 'http://127.0.0.1:9090', every: 30},
      driver: {},
    })
  })

  it('a cluster without monitoring (create --no-monitoring) has no monitoring section', () => {
    expect(written('local-unmonitored').monitoring).toBeUndefined()
  })

  it('local: driver overrides keep their types (numbers stay numbers)', () => {
    const contract = written('local-overrides')
    expect(contract.provider === 'local' && contract.driver).toEqual(LOCAL_OVERRIDES)
  })

  it('aws: subnet, security group, zone, identity and image from the outputs', () => {
    const contract = written('aws')
    expect(contract.provider).toBe('aws')
    expect(contract.slurmUser).toBe('slurm')
    // Cloud images run node-exporter on the private address: nodes.json lists them on this port.
    expect(contract.monitoring?.computeExporterPort).toBe(9100)
    expect(contract.driver).toEqual({
      region: 'eu-west-2',
      zone: 'eu-west-2a',
      mgmtPrivateIp: '10.0.0.10',
      sharedFs: {host: '10.0.0.20', path: '/', type: 'nfs4', mountOptions: OUTPUTS.aws.shared_fs_mount_options},
      vpcId: 'vpc-0abc',
      subnetId: 'subnet-0abc',
      securityGroupId: 'sg-0abc',
      nodeRoleArn: 'arn:aws:iam::123456789012:role/citc-demo-mgmt',
      baseImage: {id: 'ami-0123', os: 'ubuntu-24.04', owner: '099720109477', nameFilter: 'ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*', architecture: 'x86_64'},
    })
  })

  it('google: project, zone, subnetwork, network tag, service account and image from the outputs', () => {
    const contract = written('google')
    expect(contract.provider).toBe('google')
    expect(contract.driver).toMatchObject({
      project: 'citc-demo-123',
      region: 'europe-west2',
      zone: 'europe-west2-b',
      network: OUTPUTS.google.network,
      subnetwork: OUTPUTS.google.subnetwork,
      networkTag: 'citc-demo',
      serviceAccount: 'citc-demo-mgmt@citc-demo-123.iam.gserviceaccount.com',
      mgmtPrivateIp: '10.0.0.2',
      sharedFs: {host: '10.0.1.2', path: '/shared', type: 'nfs'},
      baseImage: {selfLink: (OUTPUTS.google.base_image as {self_link: string}).self_link, family: 'ubuntu-2404-lts-amd64', project: 'ubuntu-os-cloud', os: 'ubuntu-24.04'},
    })
  })

  it('oracle: compartment, availability domain (name and number), subnet and image from the outputs', () => {
    const contract = written('oracle')
    expect(contract.provider).toBe('oracle')
    expect(contract.driver).toMatchObject({
      region: 'uk-london-1',
      compartmentId: 'ocid1.compartment.oc1..aaaaaaaacompartment',
      availabilityDomain: 'Uocm:UK-LONDON-1-AD-2',
      adNumber: 2,
      vcnId: 'ocid1.vcn.oc1.uk-london-1.aaaa',
      subnetId: 'ocid1.subnet.oc1.uk-london-1.aaaa',
      dnsDomain: 'cluster.demo.oraclevcn.com',
      baseImage: {id: 'ocid1.image.oc1.uk-london-1.aaaa', operatingSystem: 'Canonical Ubuntu', operatingSystemVersion: '24.04', os: 'ubuntu-24.04'},
    })
  })

  it('refuses a cloud cluster without its driver section, before writing anything', () => {
    const dir = join(work, 'aws-bare')
    const r = runRole({'aws-bare': {provider: 'aws'}})
    expect(r.status).not.toBe(0)
    expect(r.stdout).toContain('citc_node_driver must be the aws section of cluster.json')
    expect(() => statSync(join(dir, 'etc', 'cluster.json'))).toThrow(/ENOENT/)
    expect(() => statSync(join(dir, 'programs', 'resume'))).toThrow(/ENOENT/)
  }, 120_000)

  it('holds nothing secret: no key material and no password in any file the role writes', () => {
    const text = execFileSync('cat', [join(work, 'aws', 'etc', 'cluster.json'), join(work, 'oracle', 'etc', 'cluster.json')], {encoding: 'utf8'})
    expect(text).not.toMatch(/PRIVATE KEY|password|secret|ssh-ed25519|ssh_host_key/i)
  })
})
