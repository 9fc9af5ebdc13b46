import {describe, expect, it} from 'vitest'

import {checkClusterRecord, DEFAULT_PROGRAMS_DIR, DEFAULT_SLURM_CONF, parseClusterYaml} from '../../../src/lib/cluster/schema.js'
import {CitcError, InvalidInputError} from '../../../src/lib/errors.js'

const FP = 'SHA256:' + 'A'.repeat(43)
const FILE = '/data/clusters/cheerful-macaw/cluster.yaml'

const good = `name: cheerful-macaw
provider: oracle
createdAt: 2026-11-21T12:01:02.000Z
origin: created
mgmt:
  host: 203.0.113.7
  user: opc
  keyPath: /data/clusters/cheerful-macaw/keys/admin
  hostKeyFingerprint: ${FP}
  shape: VM.Standard.E4.Flex.2.16
  ad: 1
settings:
  suspendTime: 300
  region: uk-london-1
terraform:
  outputs:
    ManagementPublicIP: 203.0.113.7
    subnets: [a, b]
`

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

  it('an empty file is one problem about the document', () => {
    const p = problems('')
    expect(p).toHaveLength(1)
    expect(p[0].where).toBe(FILE)
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
