// The clouds' inputs before any machine exists: tfvars from typed inputs (pure), input checks located
// by flag, the outputs citc reads back, INI reading. Credential discovery is in credentials.test.ts.
import {describe, expect, it} from 'vitest'

import {CitcError, InvalidInputError} from '../../../src/lib/errors.js'
import type {AwsInputs} from '../../../src/lib/providers/aws/index.js'
import type {GoogleInputs} from '../../../src/lib/providers/google/index.js'
import {splitOracleShape, type OracleInputs} from '../../../src/lib/providers/oracle/index.js'
import {
  CLOUD_PROVIDERS,
  expandHome,
  isCidr,
  parseIni,
  readClusterOutputs,
  tfvarsFor,
  tildePath,
} from '../../../src/lib/providers/cloud.js'
import type {TerraformOutputs} from '../../../src/lib/tools/terraform.js'
import {cloudModule} from '../../../src/lib/providers/registry.js'

const keys = {
  sshPublicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHhTq3nS8tY5H9uVv2m9Xg2mJ8bq1o7o4Q2bJ0dP6sGy admin@laptop\n',
  sshHostKey: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
  sshHostKeyPublic: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ2bDfYx0eH3c2kq9B1oZQm7v8m6c2l1nKQvYt7u3rR host',
}
const aws: AwsInputs = {provider: 'aws', clusterId: 'demo', region: 'eu-west-2', zone: 'eu-west-2a', ...keys}
const google: GoogleInputs = {provider: 'google', clusterId: 'demo', region: 'europe-west2', zone: 'europe-west2-b', project: 'my-project-1', ...keys}
const oracle: OracleInputs = {
  provider: 'oracle',
  clusterId: 'demo',
  region: 'uk-london-1',
  availabilityDomain: 2,
  tenancyOcid: 'ocid1.tenancy.oc1..aaaa',
  compartmentOcid: 'ocid1.compartment.oc1..bbbb',
  configFileProfile: 'DEFAULT',
  ...keys,
}

function problems(fn: () => unknown): Array<{where: string; message: string}> {
  try {
    fn()
  } catch (error) {
    if (error instanceof InvalidInputError) return error.problems
    throw error
  }
  return []
}

describe('tfvars', () => {
  it('aws: common values with defaults, the zone, and the architecture of the shape', () => {
    expect(tfvarsFor(aws)).toEqual({
      cluster_id: 'demo',
      region: 'eu-west-2',
      mgmt_shape: 't3a.medium',
      ssh_public_key: keys.sshPublicKey.trim(),
      ssh_host_key: `${keys.sshHostKey}\n`,
      ssh_host_key_public: keys.sshHostKeyPublic,
      image_os: 'ubuntu-24.04',
      ssh_cidr: '0.0.0.0/0',
      zone: 'eu-west-2a',
      mgmt_arch: 'x86_64',
    })
    expect(tfvarsFor({...aws, mgmtShape: 'c7g.large'})).toMatchObject({mgmt_shape: 'c7g.large', mgmt_arch: 'arm64'})
    expect(tfvarsFor({...aws, mgmtShape: 'z9.unknown', mgmtArch: 'arm64'})).toMatchObject({mgmt_arch: 'arm64'})
    expect(tfvarsFor({...aws, imageOs: 'debian-12', sshCidr: '198.51.100.0/24'})).toMatchObject({image_os: 'debian-12', ssh_cidr: '198.51.100.0/24'})
  })

  it('google: project and zone', () => {
    expect(tfvarsFor(google)).toMatchObject({project: 'my-project-1', zone: 'europe-west2-b', mgmt_shape: 'e2-standard-2', mgmt_arch: 'x86_64'})
    expect(tfvarsFor({...google, mgmtShape: 't2a-standard-4'})).toMatchObject({mgmt_arch: 'arm64'})
  })

  it('oracle: a flexible shape split into shape, OCPUs and memory; the API key by profile or by fields', () => {
    expect(tfvarsFor(oracle)).toMatchObject({
      mgmt_shape: 'VM.Standard.E4.Flex',
      mgmt_ocpus: 1,
      mgmt_memory_gb: 16,
      availability_domain: 2,
      tenancy_ocid: 'ocid1.tenancy.oc1..aaaa',
      compartment_ocid: 'ocid1.compartment.oc1..bbbb',
      config_file_profile: 'DEFAULT',
    })
    const fixed = tfvarsFor({...oracle, mgmtShape: 'VM.Standard2.1'})
    expect(fixed.mgmt_shape).toBe('VM.Standard2.1')
    expect(fixed).not.toHaveProperty('mgmt_ocpus')
    const explicit = tfvarsFor({
      ...oracle,
      configFileProfile: undefined,
      userOcid: 'ocid1.user.oc1..u',
      fingerprint: 'aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99',
      privateKeyPath: '/k.pem',
    })
    expect(explicit).toMatchObject({user_ocid: 'ocid1.user.oc1..u', private_key_path: '/k.pem'})
    expect(explicit).not.toHaveProperty('config_file_profile')
    expect(splitOracleShape('VM.Standard.A1.Flex.4.24')).toEqual({shape: 'VM.Standard.A1.Flex', ocpus: 4, memoryGb: 24})
  })

  it('writes only variables on the provider list', () => {
    for (const inputs of [aws, google, oracle]) {
      const list = cloudModule(inputs.provider).cloud.variables
      for (const name of Object.keys(tfvarsFor(inputs))) expect(list).toContain(name)
    }
  })
})

describe('input checks, located by flag', () => {
  it('common: name, keys, CIDR', () => {
    expect(problems(() => tfvarsFor({...aws, clusterId: '1abc'})).map((p) => p.where)).toEqual(['--name'])
    expect(problems(() => tfvarsFor({...aws, sshHostKeyPublic: 'ssh-rsa AAAA'})).map((p) => p.where)).toEqual(['host key'])
    expect(problems(() => tfvarsFor({...aws, sshHostKey: 'not a key'})).map((p) => p.where)).toEqual(['host key'])
    expect(problems(() => tfvarsFor({...aws, sshCidr: '0.0.0.0'})).map((p) => p.where)).toEqual(['--ssh-cidr'])
    expect(isCidr('10.0.0.0/8')).toBe(true)
    expect(isCidr('256.0.0.0/8')).toBe(false)
  })

  it('aws: region and zone must agree', () => {
    expect(problems(() => tfvarsFor({...aws, zone: 'eu-west-1a'}))).toEqual([{where: '--zone', message: 'eu-west-1a is not in region eu-west-2'}])
    expect(problems(() => tfvarsFor({...aws, region: 'London'})).map((p) => p.where)).toEqual(['--region'])
  })

  it('google: project id, zone in region, Ubuntu only', () => {
    expect(problems(() => tfvarsFor({...google, project: 'My Project'})).map((p) => p.where)).toEqual(['--project'])
    expect(problems(() => tfvarsFor({...google, zone: 'us-east1-b'})).map((p) => p.where)).toEqual(['--zone'])
    expect(problems(() => tfvarsFor({...google, imageOs: 'debian-12'}))[0].message).toContain('no cloud-init')
    expect(problems(() => tfvarsFor({...google, project: 'example.com:my-project'}))).toEqual([])
  })

  it('oracle: OCIDs, AD number, all three key fields or none, sized flex shapes', () => {
    const wheres = (i: OracleInputs) => problems(() => tfvarsFor(i)).map((p) => p.where)
    expect(wheres({...oracle, tenancyOcid: 'ocid1.user.oc1..x'})).toEqual(['--tenancy'])
    expect(wheres({...oracle, availabilityDomain: 4})).toEqual(['--zone'])
    expect(wheres({...oracle, userOcid: 'ocid1.user.oc1..x'})).toEqual(['--user/--fingerprint/--key-file'])
    expect(wheres({...oracle, mgmtShape: 'VM.Standard.E4.Flex'})).toEqual(['--mgmt-shape'])
    expect(wheres({...oracle, imageOs: 'debian-12'})).toEqual(['--image-os'])
  })
})

describe('outputs', () => {
  const value = (v: unknown) => ({value: v, sensitive: false})
  const full = (provider: (typeof CLOUD_PROVIDERS)[number]): TerraformOutputs =>
    Object.fromEntries(cloudModule(provider).cloud.outputs.map((name) => [name, value(name === 'mgmt_public_ip' ? '203.0.113.7' : `${name}-value`)]))

  it('reads what create, status and ssh need, keeping every non-sensitive output', () => {
    const outputs = {...full('aws'), extra_secret: {value: 's3cret', sensitive: true}}
    const read = readClusterOutputs('aws', outputs)
    expect(read.mgmt).toEqual({host: '203.0.113.7', port: 22, user: 'mgmt_user-value', hostname: 'mgmt_hostname-value'})
    expect(read.all).toHaveProperty('subnet_id', 'subnet_id-value')
    expect(read.all).toHaveProperty('shared_fs_type', 'shared_fs_type-value')
    // A test-only output is not read: clouds use 22 (a stand-in node's port is create's option).
    expect(readClusterOutputs('aws', {...outputs, mgmt_ssh_port: value(2222)}).mgmt.port).toBe(22)
    expect(read.all).not.toHaveProperty('extra_secret')
  })

  it('names every missing output (an unfinished apply, another citc version)', () => {
    const outputs = full('oracle')
    delete outputs.mgmt_public_ip
    outputs.dns_domain = value(null)
    let error: unknown
    try {
      readClusterOutputs('oracle', outputs)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).message).toBe('terraform output lacks mgmt_public_ip, dns_domain')
    expect((error as CitcError).hint).toContain('citc create --resume')
  })
})

describe('INI files and paths', () => {
  it('reads sections and keys as AWS and OCI write them', () => {
    const ini = parseIni(
      '# comment\n[default]\nregion = eu-west-2\ns3 =\n   max_concurrent_requests = 10\n\n[profile dev]\n; another\naws_access_key_id=AKIA\nweird line\n[DEFAULT]\nkey_file=~/.oci/k.pem\n',
    )
    expect(ini.get('default')).toEqual({region: 'eu-west-2', s3: ''})
    expect(ini.get('profile dev')).toEqual({aws_access_key_id: 'AKIA'})
    expect(ini.get('DEFAULT')).toEqual({key_file: '~/.oci/k.pem'})
  })

  it('expands and shortens the home directory', () => {
    expect(expandHome('~/.oci/k.pem', '/home/me')).toBe('/home/me/.oci/k.pem')
    expect(expandHome('/abs', '/home/me')).toBe('/abs')
    expect(tildePath('/home/me/.aws/config', '/home/me')).toBe('~/.aws/config')
    expect(tildePath('/etc/x', '/home/me')).toBe('/etc/x')
  })
})
