// The cluster's stored limits.yaml and finish: joined machines kept when the given file has no static:,
// refused (located, nothing changed) when it names other machines; written atomically, mode 0600.
import {mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {withStaticNode} from '../../../../src/lib/config/limits-static-edit.js'
import {clusterRegistry} from '../../../../src/lib/cluster/registry.js'
import {InvalidInputError} from '../../../../src/lib/errors.js'
import {runFinish} from '../../../../src/lib/tasks/finish/finish-workflow.js'
import {readStoredLimits, storedLimitsPath, withStoredMachines, writeStoredLimits} from '../../../../src/lib/tasks/finish/stored-limits.js'

const machine = (name: string, address: string) => ({
  name,
  address,
  controller: '10.250.99.1',
  ssh: {user: 'root', port: 22, hostKey: 'SHA256:' + 'A'.repeat(43)},
  hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800},
  shared: 'nfs' as const,
})
const STORED = withStaticNode(withStaticNode('c5.xlarge: 2\n', machine('ws1', '10.250.99.2')), machine('ws2', '10.250.99.3'))

function problemOf(fn: () => unknown) {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as InvalidInputError).problems
  }
  throw new Error('expected an InvalidInputError')
}

describe('withStoredMachines', () => {
  it('a file without static: gets the stored machines; without stored ones it is used as given', () => {
    const given = '# more nodes\nc5.xlarge: 4\n'
    const out = withStoredMachines(given, 'new.yaml', STORED)
    expect(out).toBe(withStaticNode(withStaticNode(given, machine('ws1', '10.250.99.2')), machine('ws2', '10.250.99.3')))
    expect(withStoredMachines(given, 'new.yaml', undefined)).toBe(given)
    expect(withStoredMachines(given, 'new.yaml', 'c5.xlarge: 1\n')).toBe(given)
  })

  it('a file naming the same machines: the stored section is what is kept', () => {
    const given = withStaticNode(withStaticNode('shapes:\n  c5.xlarge: 4\n', machine('ws2', '10.250.99.3')), {...machine('ws1', '10.250.99.2'), weight: 7})
    const out = withStoredMachines(given, 'new.yaml', STORED)
    expect(out).toContain('shapes:\n  c5.xlarge: 4\n')
    expect(out).not.toContain('weight: 7')
  })

  it('a file naming other machines: one located problem saying to use node add/remove', () => {
    const given = withStaticNode('shapes:\n  c5.xlarge: 4\n', machine('ws9', '10.250.99.9'))
    expect(problemOf(() => withStoredMachines(given, 'new.yaml', STORED))).toEqual([
      {
        where: 'new.yaml:3:1',
        path: 'static',
        message: 'this static: section names ws9, which has not joined the cluster and leaves out ws1, ws2, which have joined it; joined machines are added and removed with citc node add/remove',
      },
    ])
    expect(problemOf(() => withStoredMachines(given, 'new.yaml', undefined))[0].message).toMatch(/^this static: section names ws9, which has not joined the cluster;/)
  })
})

describe('the stored copy on disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'citc-stored-limits-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('is <cluster dir>/limits.yaml, replaced whole with mode 0600 and no temporary file left', () => {
    const path = storedLimitsPath(dir)
    expect(path).toBe(join(dir, 'limits.yaml'))
    expect(readStoredLimits(path)).toBeUndefined()
    writeFileSync(path, 'old\n', {mode: 0o644})
    writeStoredLimits(path, STORED)
    expect(readFileSync(path, 'utf8')).toBe(STORED)
    expect(readStoredLimits(path)).toBe(STORED)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(dir)).toEqual(['limits.yaml'])
  })
})

describe('citc finish on a cluster with joined machines: refused before connecting', () => {
  const data = mkdtempSync(join(tmpdir(), 'citc-finish-stored-'))
  const saved = process.env.CITC_DATA_DIR
  process.env.CITC_DATA_DIR = data
  afterAll(() => {
    if (saved === undefined) delete process.env.CITC_DATA_DIR
    else process.env.CITC_DATA_DIR = saved
    rmSync(data, {recursive: true, force: true})
  })
  // A cluster at an address nothing answers on: a test that tried to connect would fail otherwise.
  const registry = clusterRegistry(data)
  registry.create({
    name: 'lab',
    provider: 'aws',
    createdAt: '2026-11-21T12:01:02.000Z',
    origin: 'registered',
    mgmt: {host: '198.51.100.4', port: 22, user: 'rocky', keyPath: '/keys/admin', hostKeyFingerprint: 'SHA256:' + 'b'.repeat(43)},
    slurm: {confPath: '/mnt/shared/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'},
  })
  const stored = storedLimitsPath(registry.paths('lab').dir)
  writeFileSync(stored, STORED, {mode: 0o600})
  const io = {log: () => {}, note: () => {}, json: true, interactive: false, yes: true, renderer: 'silent' as const}
  const finish = (limitsFile: string) => runFinish(io, {cluster: 'lab', limitsFile, dryRun: false, force: false, wait: false}, data)

  it('a given static: naming other machines: the located error, the stored copy unchanged', async () => {
    const given = join(data, 'other.yaml')
    writeFileSync(given, withStaticNode('shapes:\n  c5.xlarge: 4\n', machine('ws9', '10.250.99.9')))
    const error = await finish(given).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).problems[0]).toMatchObject({where: `${given}:3:1`, path: 'static'})
    expect(readFileSync(stored, 'utf8')).toBe(STORED)
  })

  it("the given file's own problems at its own lines, though the stored machines are added to it", async () => {
    const given = join(data, 'bad.yaml')
    writeFileSync(given, 'c5.xlarge: 2\nc5.xlrge: 1\n')
    const error = await finish(given).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).problems.map((p) => p.where)).toEqual([`${given}:2:1`])
    expect(readFileSync(stored, 'utf8')).toBe(STORED)
  })
})
