import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {clusterRegistry, ClusterRegistry, dataDir} from '../../../src/lib/cluster/registry.js'
import type {ClusterRecord} from '../../../src/lib/cluster/schema.js'
import {CitcError, InvalidInputError} from '../../../src/lib/errors.js'

const FP = 'SHA256:' + 'b'.repeat(43)

function record(name: string, over: Partial<ClusterRecord> = {}): ClusterRecord {
  return {
    name,
    provider: 'aws',
    createdAt: '2026-11-21T12:01:02.000Z',
    origin: 'registered',
    mgmt: {host: '198.51.100.4', port: 22, user: 'rocky', keyPath: '/keys/admin', hostKeyFingerprint: FP},
    slurm: {confPath: '/mnt/shared/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'},
    ...over,
  }
}

const mode = (p: string) => statSync(p).mode & 0o777

function caught(fn: () => unknown): CitcError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(CitcError)
    return error as CitcError
  }
  throw new Error('expected a CitcError')
}

let tmp: string
let savedEnv: string | undefined
let registry: ClusterRegistry

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'citc-registry-'))
  savedEnv = process.env.CITC_DATA_DIR
  process.env.CITC_DATA_DIR = tmp
  registry = clusterRegistry('/nonexistent/oclif-data-dir')
})

afterEach(() => {
  if (savedEnv === undefined) delete process.env.CITC_DATA_DIR
  else process.env.CITC_DATA_DIR = savedEnv
  rmSync(tmp, {recursive: true, force: true})
})

describe('dataDir', () => {
  it('prefers CITC_DATA_DIR, else the caller’s directory', () => {
    expect(dataDir('/x')).toBe(tmp)
    expect(registry.root).toBe(tmp)
    process.env.CITC_DATA_DIR = ''
    expect(dataDir('/x')).toBe('/x')
    delete process.env.CITC_DATA_DIR
    expect(clusterRegistry('/y').clustersDir).toBe('/y/clusters')
    expect(() => dataDir()).toThrow(/CITC_DATA_DIR/)
  })
})

describe('cluster registry', () => {
  it('creates a cluster: private directories, cluster.yaml 0600, read back with defaults', () => {
    const {name: _n, ...rest} = record('cheerful-macaw')
    void _n
    const created = registry.create({...rest, name: 'cheerful-macaw', slurm: undefined, mgmt: {...rest.mgmt, port: undefined}})
    const p = registry.paths('cheerful-macaw')
    expect(p.dir).toBe(join(tmp, 'clusters', 'cheerful-macaw'))
    expect(mode(p.dir)).toBe(0o700)
    expect(mode(p.keysDir)).toBe(0o700)
    expect(statSync(p.logsDir).isDirectory()).toBe(true)
    expect(statSync(p.terraformDir).isDirectory()).toBe(true)
    expect(mode(p.clusterYaml)).toBe(0o600)
    expect(p.journal).toBe(join(p.dir, 'journal'))
    expect(created).toEqual(record('cheerful-macaw'))
    expect(registry.get('cheerful-macaw')).toEqual(created)
    expect(readFileSync(p.clusterYaml, 'utf8')).toMatch(/^# Written by citc/)
  })

  it('runs prepare before writing, so a key can be copied into keys/ (as cluster add does)', () => {
    const r = record('c1', {mgmt: {...record('c1').mgmt, keyPath: ''}})
    registry.create(r, (paths) => {
      r.mgmt.keyPath = registry.writeKey('c1', 'admin', '-----BEGIN OPENSSH PRIVATE KEY-----\n')
      expect(paths.keysDir).toBe(join(tmp, 'clusters/c1/keys'))
    })
    const key = join(tmp, 'clusters/c1/keys/admin')
    expect(registry.get('c1').mgmt.keyPath).toBe(key)
    expect(mode(key)).toBe(0o600)
  })

  it('refuses an existing name, an invalid name, and a directory left by an interrupted create', () => {
    registry.create(record('c1'))
    expect(caught(() => registry.create(record('c1'))).kind).toBe('usage')
    expect(caught(() => registry.create(record('Bad_Name'))).kind).toBe('invalidInput')
    mkdirSync(join(tmp, 'clusters/half'))
    const e = caught(() => registry.create(record('half')))
    expect(e.message).toMatch(/no cluster\.yaml/)
    expect(registry.names()).toEqual(['c1'])
    registry.remove('half')
    registry.create(record('half'))
    expect(registry.names()).toEqual(['c1', 'half'])
  })

  it('leaves nothing behind when prepare or validation fails', () => {
    expect(() =>
      registry.create(record('c2'), () => {
        throw new Error('copy failed')
      }),
    ).toThrow('copy failed')
    expect(existsSync(join(tmp, 'clusters/c2'))).toBe(false)
    const noFingerprint = record('c2')
    delete noFingerprint.mgmt.hostKeyFingerprint
    const e = caught(() => registry.create(noFingerprint)) as InvalidInputError
    expect(e.problems).toEqual([{where: join(tmp, 'clusters/c2/cluster.yaml'), message: expect.stringMatching(/^mgmt\.hostKeyFingerprint: is required/)}])
    expect(existsSync(join(tmp, 'clusters/c2'))).toBe(false)
  })

  it('lists clusters sorted; scan reports a broken one without hiding the others', () => {
    expect(registry.list()).toEqual([])
    registry.create(record('zeta'))
    registry.create(record('alpha', {provider: 'local', mgmt: {host: 'localhost', port: 22, user: 'root', keyPath: '/k'}}))
    expect(registry.list().map((r) => r.name)).toEqual(['alpha', 'zeta'])
    writeFileSync(registry.paths('zeta').clusterYaml, 'name: zeta\n')
    expect(() => registry.list()).toThrow(InvalidInputError)
    const scan = registry.scan()
    expect(scan[0]).toMatchObject({name: 'alpha', record: {provider: 'local'}})
    expect(scan[1].name).toBe('zeta')
    expect(scan[1].error?.kind).toBe('invalidInput')
  })

  it('get of an unknown cluster is noCluster (exit 5), also for names that could be paths', () => {
    for (const name of ['nope', '../etc', '']) {
      const e = caught(() => registry.get(name))
      expect(e.kind).toBe('noCluster')
      expect(e.exitCode).toBe(5)
    }
  })

  it('an invalid cluster.yaml is invalidInput naming the file, line and field', () => {
    registry.create(record('c3'))
    const file = registry.paths('c3').clusterYaml
    writeFileSync(file, readFileSync(file, 'utf8').replace('port: 22', 'port: -1'))
    const e = caught(() => registry.get('c3')) as InvalidInputError
    expect(e.kind).toBe('invalidInput')
    expect(e.exitCode).toBe(3)
    expect(e.problems).toHaveLength(1)
    expect(e.problems[0].where).toMatch(new RegExp(`^${file}:\\d+:\\d+$`))
    expect(e.problems[0].message).toMatch(/^mgmt\.port: /)
    expect(e.message).toContain(file)
  })

  it('refuses a cluster.yaml whose name is not its directory’s', () => {
    registry.create(record('c4'))
    const file = registry.paths('c4').clusterYaml
    writeFileSync(file, readFileSync(file, 'utf8').replace('name: c4', 'name: c5'))
    expect(caught(() => registry.get('c4')).message).toMatch(/name is "c5".*"c4"/)
  })

  it('updates atomically, keeps mode 0600, refuses renames and invalid records', () => {
    registry.create(record('c1'))
    const file = registry.paths('c1').clusterYaml
    const next = registry.update('c1', (r) => {
      r.terraform = {outputs: {ManagementPublicIP: '198.51.100.9', ids: [1, 2]}}
      r.settings = {suspendTime: 120}
    })
    expect(next.terraform?.outputs.ids).toEqual([1, 2])
    expect(registry.get('c1')).toEqual(next)
    expect(mode(file)).toBe(0o600)
    expect(registry.update('c1', (r) => ({...r, origin: 'created'})).origin).toBe('created')

    const before = readFileSync(file, 'utf8')
    expect(() => registry.update('c1', (r) => ({...r, name: 'c9'}))).toThrow(/rename/)
    const e = caught(() => registry.update('c1', (r) => void (r.mgmt.port = 0))) as InvalidInputError
    expect(e.problems[0].message).toMatch(/^mgmt\.port/)
    expect(readFileSync(file, 'utf8')).toBe(before)
    expect(caught(() => registry.update('nope', () => {})).kind).toBe('noCluster')
  })

  it('removes the whole directory; removing an unknown cluster is noCluster', () => {
    registry.create(record('c1'))
    const p = registry.paths('c1')
    writeFileSync(join(p.logsDir, 'x.log'), 'log')
    registry.remove('c1')
    expect(existsSync(p.dir)).toBe(false)
    expect(caught(() => registry.remove('c1')).kind).toBe('noCluster')
  })

  it('writeKey refuses file names that could escape keys/', () => {
    registry.create(record('c1'))
    for (const bad of ['../x', '.hidden', 'a/b', '']) expect(() => registry.writeKey('c1', bad, 'k')).toThrow(/bad key file name/)
  })
})

describe('resolveName', () => {
  it('takes a known flag, refuses an unknown one', () => {
    registry.create(record('c1'))
    registry.create(record('c2'))
    expect(registry.resolveName('c2')).toBe('c2')
    expect(caught(() => registry.resolveName('c3')).kind).toBe('noCluster')
  })

  it('no cluster: noCluster with a hint to create or add one', () => {
    const e = caught(() => registry.resolveName())
    expect(e.kind).toBe('noCluster')
    expect(e.hint).toMatch(/citc create/)
    expect(e.hint).toMatch(/citc cluster add/)
  })

  it('exactly one cluster: that one (an empty flag counts as none)', () => {
    registry.create(record('only'))
    expect(registry.resolveName()).toBe('only')
    expect(registry.resolveName('')).toBe('only')
  })

  it('several: usage error listing them and naming -c', () => {
    registry.create(record('b-one'))
    registry.create(record('a-two'))
    const e = caught(() => registry.resolveName())
    expect(e.kind).toBe('usage')
    expect(e.message).toContain('a-two, b-one')
    expect(e.hint).toMatch(/-c NAME/)
  })
})
