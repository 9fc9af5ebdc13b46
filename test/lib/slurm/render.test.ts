import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import type {Limits} from '../../../src/lib/slurm/limits-types.js'
import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'
import {buildNodeGroups, groupHostlist, nodePrefix, shapeWeight} from '../../../src/lib/slurm/nodes.js'
import {generateConfig} from '../../../src/lib/slurm/generate.js'
import {DISPLACED_PREFIX, defaultElasticSettings, extractManagedBlock, mergeSlurmConf, renderGresConf} from '../../../src/lib/slurm/render.js'
import {localModule} from '../../../src/lib/providers/local/index.js'
import {providerModule} from '../../../src/lib/providers/registry.js'

// A small, fixed catalogue: these tests are about rendering, not about shape data.
const shapes: Record<string, Shape> = {
  'c5.xlarge': {name: 'c5.xlarge', sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'},
  'g4dn.xlarge': {name: 'g4dn.xlarge', sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 16384, realMemoryMiB: 14500, arch: 'x86_64', gpu: {count: 1, model: 't4'}},
  'VM.Standard2.1': {name: 'VM.Standard2.1', sockets: 1, coresPerSocket: 1, threadsPerCore: 2, memoryMiB: 15360, realMemoryMiB: 13800, arch: 'x86_64'},
}
const catalogue: ShapeCatalogue = {provider: 'aws', source: 'test', get: (n) => shapes[n], names: () => Object.keys(shapes)}

const limits = (entries: Limits['entries'], extra: Partial<Limits> = {}): Limits => ({entries, staticNodes: [], partitions: [], settings: {}, ...extra})
const entry = (shape: string, count: number, more: object = {}) => ({shape, count, where: 'limits.yaml:1:1', ...more})

const dir = mkdtempSync(join(tmpdir(), 'citc-render-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** Slurm's own parser: scontrol reads the whole file (and exits non-zero on an unknown key or bad line). */
function scontrolAccepts(conf: string): {ok: boolean; err: string; hosts: string[]} {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.conf`)
  writeFileSync(file, conf)
  const r = spawnSync('scontrol', ['show', 'hostnames', 'x'], {env: {...process.env, SLURM_CONF: file}, encoding: 'utf8'})
  if (r.error) throw new Error(`scontrol is needed for this test: ${r.error.message}`)
  return {ok: r.status === 0, err: r.stderr, hosts: r.stdout.trim().split('\n')}
}

const base = {clusterId: 'demo', provider: 'aws' as const, controllerHost: 'demo-mgmt', slurmUser: 'slurm', accounting: true}

describe('node names and groups', () => {
  it('follows CitC names with the cluster id, on every provider', () => {
    expect(nodePrefix('demo', 'c5.xlarge')).toBe('demo-c5-xlarge')
    expect(nodePrefix('demo', 'VM.Standard2.1', 2)).toBe('demo-vm-standard2-1-ad2')
    expect(nodePrefix('demo', 'n1_standard_2')).toBe('demo-n1-standard-2')
    expect(groupHostlist('demo-c5-xlarge', 1)).toBe('demo-c5-xlarge-0001')
    expect(groupHostlist('demo-c5-xlarge', 12)).toBe('demo-c5-xlarge-[0001-0012]')
  })

  it('weights smaller shapes lower and GPUs highest', () => {
    expect(shapeWeight(shapes['c5.xlarge'])).toBeLessThan(shapeWeight(shapes['g4dn.xlarge']))
    expect(shapeWeight({...shapes['c5.xlarge'], sockets: 2})).toBeGreaterThan(shapeWeight(shapes['c5.xlarge']))
  })

  it('puts every node in compute by default, and honours named partitions', () => {
    const a = buildNodeGroups(limits([entry('c5.xlarge', 3)]), {clusterId: 'demo', provider: 'aws', catalogue})
    expect(a.partitions).toEqual([{name: 'compute', default: true, maxTime: undefined, options: {}, nodes: ['demo-c5-xlarge-[0001-0003]']}])
    const b = buildNodeGroups(
      limits([entry('c5.xlarge', 3), entry('g4dn.xlarge', 1, {partitions: ['gpu']})], {
        partitions: [
          {name: 'cpu', default: false, options: {}},
          {name: 'gpu', default: true, options: {}, maxTime: '12:00:00'},
        ],
      }),
      {clusterId: 'demo', provider: 'aws', catalogue},
    )
    expect(b.groups[0].partitions).toEqual(['gpu']) // no partitions given: the default one
    expect(b.partitions.map((p) => [p.name, p.default, p.nodes])).toEqual([
      ['cpu', false, []],
      ['gpu', true, ['demo-c5-xlarge-[0001-0003]', 'demo-g4dn-xlarge-0001']],
    ])
  })

  it('gives local nodes one port each, from a range of their shape\'s own', () => {
    const local: ShapeCatalogue = {...catalogue, provider: 'local'}
    const ports = (l: Limits) => buildNodeGroups(l, {clusterId: 'l', provider: 'local', catalogue: local, sharedNodeAddress: localModule.slurm.sharedNodeAddress}).groups.map((g) => g.sharedAddress?.firstPort)
    const first = local.names().indexOf('c5.xlarge')
    const second = local.names().indexOf('g4dn.xlarge')
    expect(ports(limits([entry('c5.xlarge', 3), entry('g4dn.xlarge', 2)]))).toEqual([17001 + first * 9999, 17001 + second * 9999])
    // Growing the first group moves no port of the second.
    expect(ports(limits([entry('c5.xlarge', 9), entry('g4dn.xlarge', 2)]))[1]).toBe(17001 + second * 9999)
  })
})

describe('generated slurm.conf', () => {
  const gen = (l: Limits, provider: 'aws' | 'oracle' | 'local' = 'aws') =>
    generateConfig({provider, slurm: providerModule(provider).slurm, clusterId: 'demo', limits: l, catalogue, elastic: defaultElasticSettings(providerModule(provider).slurm.power), base: {...base, provider}})

  it('matches the snapshot and Slurm accepts it, expanding to the expected nodes', async () => {
    const g = gen(
      limits([entry('c5.xlarge', 4), entry('g4dn.xlarge', 2, {features: ['nvme']})], {
        partitions: [
          {name: 'compute', default: true, maxTime: '1-00:00:00', options: {}},
          {name: 'big', default: false, options: {OverSubscribe: 'NO'}},
        ],
        settings: {MaxJobCount: '20000'},
      }),
    )
    await expect(g.slurmConf).toMatchFileSnapshot('__snapshots__/aws-extended.slurm.conf')
    await expect(g.gresConf).toMatchFileSnapshot('__snapshots__/aws-extended.gres.conf')
    const r = scontrolAccepts(g.slurmConf)
    expect(r.err).toBe('')
    expect(r.ok).toBe(true)
    // One NodeName line per shape, not per node.
    expect(g.slurmConf.match(/^NodeName=/gm)).toHaveLength(2)
    expect(g.slurmConf).toContain('Gres=gpu:t4:1')
    expect(g.slurmConf).toContain('Features="shape=g4dn.xlarge,arch=x86_64,nvme"')
    expect(g.gresConf).toContain('NodeName=demo-g4dn-xlarge-[0001-0002] Name=gpu Type=t4 File=/dev/nvidia0')
  })

  it('writes the oracle AD into names and features, and the local ports', async () => {
    const o = gen(limits([entry('VM.Standard2.1', 2, {ad: 1}), entry('VM.Standard2.1', 1, {ad: 3})]), 'oracle')
    await expect(o.slurmConf).toMatchFileSnapshot('__snapshots__/oracle.slurm.conf')
    expect(o.slurmConf).toContain('NodeName=demo-vm-standard2-1-ad1-[0001-0002] ')
    expect(o.slurmConf).toContain('Features="shape=VM.Standard2.1,ad=3,arch=x86_64"')
    expect(scontrolAccepts(o.slurmConf).ok).toBe(true)
    const l = gen(limits([entry('c5.xlarge', 2)]), 'local')
    await expect(l.slurmConf).toMatchFileSnapshot('__snapshots__/local.slurm.conf')
    expect(l.slurmConf).toContain('NodeAddr=127.0.0.1 Port=[17001-17002]')
    expect(scontrolAccepts(l.slurmConf).ok).toBe(true)
  })

  it('is deterministic byte for byte', () => {
    const l = limits([entry('c5.xlarge', 4), entry('g4dn.xlarge', 2)])
    expect(gen(l).slurmConf).toBe(gen(l).slurmConf)
  })

  it('writes no GresTypes and an empty gres.conf without GPUs', () => {
    const g = gen(limits([entry('c5.xlarge', 1)]))
    expect(g.slurmConf).not.toContain('GresTypes')
    expect(renderGresConf(g.groups)).toBe('# Managed by citc (`citc finish`): one line per GPU node group.\n')
  })
})

describe('merging into an existing slurm.conf', () => {
  const block = '# STARTNODES\nNodeName=a State=CLOUD\nPartitionName=p Nodes=a\n# ENDNODES\n'

  it('replaces the block between the markers and keeps everything else', () => {
    const existing = 'ClusterName=x\n# STARTNODES\nNodeName=old State=CLOUD\n# ENDNODES\nMaxJobCount=5\n'
    expect(mergeSlurmConf(existing, block)).toBe('ClusterName=x\n' + block + 'MaxJobCount=5\n')
  })

  it('appends a block to a file without one, commenting out keys the block now owns', () => {
    const existing = 'ClusterName=x\nSuspendTime=600\nNodeName=hand State=CLOUD\n'
    const merged = mergeSlurmConf(existing, block)
    expect(merged).toBe(`ClusterName=x\n${DISPLACED_PREFIX}SuspendTime=600\n${DISPLACED_PREFIX}NodeName=hand State=CLOUD\n${block}`)
    expect(extractManagedBlock(merged)).toBe(block)
  })

  it('refuses a file with a start marker and no end marker', () => {
    expect(() => mergeSlurmConf('# STARTNODES\nNodeName=a\n', block)).toThrow(/without a matching/)
  })
})
