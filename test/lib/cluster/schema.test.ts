import {describe, expect, it} from 'vitest'

import {checkClusterRecord, DEFAULT_PROGRAMS_DIR, DEFAULT_SLURM_CONF, parseClusterYaml} from '../../../src/lib/cluster/schema.js'
import {CitcError, InvalidInputError} from '../../../src/lib/errors.js'
import {FP, ORACLE_CLUSTER_YAML} from '../../fixtures/cluster-yaml.js'

const FILE = '/data/clusters/cheerful-macaw/cluster.yaml'

const good = ORACLE_CLUSTER_YAML

function problems(text: string) {
  try {
    parseClusterYaml(text, FILE)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as InvalidInputError).problems
  }
  throw new Error('expected an InvalidInputError')
}

describe('cluster.yaml schema', () => {
  it('reads a valid file and fills in defaults', () => {
    const r = parseClusterYaml(good, FILE)
    expect(r.mgmt.port).toBe(22)
    expect(r.slurm).toEqual({confPath: DEFAULT_SLURM_CONF, programsDir: DEFAULT_PROGRAMS_DIR})
    expect(r.mgmt.ad).toBe(1)
    expect(r.settings).toEqual({suspendTime: 300, region: 'uk-london-1'})
    expect(r.terraform?.outputs.subnets).toEqual(['a', 'b'])
  })

  it('locates a wrong value by file:line:col and dotted field', () => {
    const p = problems(good.replace('  user: opc', '  user: opc\n  port: twenty-two'))
    expect(p).toHaveLength(1)
    expect(p[0].where).toBe(`${FILE}:8:9`)
    expect(p[0].message).toMatch(/^mgmt\.port: /)
  })

  it('names a missing field at its parent', () => {
    const p = problems(good.replace('  user: opc\n', ''))
    expect(p).toEqual([{where: `${FILE}:6:3`, message: 'mgmt.user: is required'}])
  })

  it('refuses unknown keys, pointing at the key', () => {
    const p = problems(good.replace('origin: created', 'origin: created\nregoin: eu'))
    expect(p).toEqual([{where: `${FILE}:5:1`, message: expect.stringMatching(/^regoin: unknown key/)}])
  })

  it('reports YAML syntax errors with a position', () => {
    const p = problems('name: a\nmgmt: [unclosed\n')
    expect(p[0].where).toMatch(new RegExp(`^${FILE}:\\d+:\\d+$`))
  })

  it('checks name, provider, fingerprint format, absolute paths', () => {
    const p = problems(
      good
        .replace('name: cheerful-macaw', 'name: Cheerful_Macaw')
        .replace('provider: oracle', 'provider: azure')
        .replace(FP, 'MD5:aa:bb')
        .replace('keyPath: /data', 'keyPath: data'),
    )
    expect(p.map((x) => x.message.split(':')[0]).sort()).toEqual(['mgmt.hostKeyFingerprint', 'mgmt.keyPath', 'name', 'provider'])
  })

  it('requires the host key fingerprint unless the provider is local', () => {
    const without = good.replace(`  hostKeyFingerprint: ${FP}\n`, '')
    expect(problems(without)).toEqual([{where: `${FILE}:6:3`, message: expect.stringMatching(/^mgmt\.hostKeyFingerprint: is required for provider oracle/)}])
    expect(parseClusterYaml(without.replace('provider: oracle', 'provider: local'), FILE).mgmt.hostKeyFingerprint).toBeUndefined()
  })

  it('an empty file is one problem about the document, at its start (as every file citc reads)', () => {
    const p = problems('')
    expect(p).toHaveLength(1)
    expect(p[0].where).toBe(`${FILE}:1:1`)
  })

  // Found by test/properties (#23): both were a ReferenceError (exit 1, "a bug") instead of exit 3.
  it('an alias without its anchor, or aliases that expand beyond reason, at the alias', () => {
    expect(problems(good.replace('  region: uk-london-1', '  region: *nowhere'))).toEqual([
      {where: `${FILE}:14:11`, message: expect.stringMatching(/^Unresolved alias .*nowhere/)},
    ])
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]']
    expect(problems(bomb.join('\n') + '\n')).toEqual([{where: `${FILE}:2:8`, message: expect.stringMatching(/Excessive alias count/)}])
  })

  it('refuses half a surrogate pair ("\\ud800"), which would not survive being written back as UTF-8', () => {
    expect(problems(good.replace('user: opc', 'user: "op\\ud800c"'))).toEqual([{where: `${FILE}:7:9`, message: expect.stringMatching(/^"\\ud800" is half of a UTF-16 surrogate pair/)}])
  })

  it('checkClusterRecord reports against the given place', () => {
    expect(() => checkClusterRecord({name: 'x'}, 'cluster.yaml')).toThrow(CitcError)
    try {
      checkClusterRecord({name: 'x', provider: 'local', createdAt: 'yesterday', origin: 'created', mgmt: {host: 'h', user: 'u', keyPath: '/k'}}, 'W')
    } catch (error) {
      expect((error as InvalidInputError).problems).toEqual([{where: 'W', message: expect.stringMatching(/^createdAt: /)}])
    }
  })
})

describe('the cloud section, by provider', () => {
  // cluster.yaml as `citc create` wrote it before provider modules existed: each must still parse.
  const cloudRecord = (provider: string, cloud: string) => `name: lab
provider: ${provider}
createdAt: 2026-11-21T12:01:02.000Z
origin: created
mgmt:
  host: 203.0.113.7
  user: ubuntu
  keyPath: /data/clusters/lab/keys/admin_ed25519
  hostKeyFingerprint: ${FP}
phase: creating
cloud:
${cloud}`
  const written = {
    aws: '  region: eu-west-2\n  zone: eu-west-2a\n  mgmtShape: t3a.medium\n  credentials: profile:research\n  profile: research\n  imageOs: debian-12\n  sshCidr: 203.0.113.0/24\n  citcBin: /opt/citc/bin/run.js\n  nodeBin: /usr/bin/node\n',
    google: '  region: europe-west2\n  zone: europe-west2-b\n  mgmtShape: e2-standard-2\n  credentials: file:/home/me/key.json\n  credentialsFile: /home/me/key.json\n  project: my-project-1\n',
    oracle:
      '  region: uk-london-1\n  zone: "2"\n  mgmtShape: VM.Standard.E4.Flex.1.16\n  credentials: profile:DEFAULT\n  tenancyOcid: ocid1.tenancy.oc1..t\n  profile: DEFAULT\n  compartmentOcid: ocid1.compartment.oc1..c\n',
  }

  it.each(Object.entries(written))('%s: what citc wrote before still parses', (provider, cloud) => {
    const r = parseClusterYaml(cloudRecord(provider, cloud), FILE)
    expect(r.provider).toBe(provider)
    expect(r.cloud?.region).toBeDefined()
  })

  it("refuses another provider's setting, located at its key", () => {
    expect(problems(cloudRecord('aws', `${written.aws}  project: my-project-1\n`))).toEqual([{where: `${FILE}:21:3`, message: expect.stringMatching(/^cloud\.project: unknown key/)}])
    expect(problems(cloudRecord('google', `${written.google}  tenancyOcid: ocid1.tenancy.oc1..t\n`))[0].message).toMatch(/^cloud\.tenancyOcid: unknown key/)
  })

  it("checks a provider's own fields: google's key file must be an absolute path", () => {
    const p = problems(cloudRecord('google', written.google.replace('credentialsFile: /home/me/key.json', 'credentialsFile: key.json')))
    expect(p).toEqual([{where: `${FILE}:16:20`, message: 'cloud.credentialsFile: must be an absolute path'}])
  })

  it('a local cluster has no cloud section; the common fields are still required', () => {
    const local = cloudRecord('local', written.aws)
    expect(problems(local).map((p) => p.message)).toContain('cloud: unknown key (a typo? citc does not ignore unknown keys)')
    expect(problems(cloudRecord('aws', '  zone: eu-west-2a\n')).map((p) => p.message)).toEqual(['cloud.region: is required', 'cloud.mgmtShape: is required'])
  })

  it('still checks every other field when the provider is unknown', () => {
    expect(problems(cloudRecord('azure', written.aws).replace('name: lab', 'name: Lab')).map((p) => p.message.split(':')[0]).sort()).toEqual(['name', 'provider'])
  })
})
