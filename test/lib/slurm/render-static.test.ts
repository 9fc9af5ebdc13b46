// Joined machines (limits.yaml's static:) in slurm.conf: static lines, never suspended, configless,
// SlurmctldHost at their controller address — snapshotted and read back by Slurm's own parser. Without
// them the output is what it was (the other snapshots in __snapshots__ do not change).
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {generateConfig, nodeDocuments} from '../../../src/lib/slurm/generate.js'
import type {Limits, StaticNodeSpec} from '../../../src/lib/slurm/limits-types.js'
import {providerModule} from '../../../src/lib/providers/registry.js'
import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'
import {DISPLACED_PREFIX, defaultElasticSettings, mergeSlurmConf, renderBase, withSlurmctldHost} from '../../../src/lib/slurm/render.js'

const shapes: Record<string, Shape> = {
  'c5.xlarge': {name: 'c5.xlarge', sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'},
}
const catalogue: ShapeCatalogue = {provider: 'aws', source: 'test', get: (n) => shapes[n], names: () => Object.keys(shapes)}

const ws = (name: string, address: string, more: Partial<StaticNodeSpec> = {}): StaticNodeSpec => ({
  name,
  address,
  controller: '10.250.99.1',
  ssh: {user: 'root', port: 22, hostKey: 'SHA256:' + 'A'.repeat(43)},
  hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800},
  shared: 'nfs',
  where: 'limits.yaml:1:1',
  ...more,
})
const limits = (staticNodes: StaticNodeSpec[], extra: Partial<Limits> = {}): Limits => ({
  entries: [{shape: 'c5.xlarge', count: 2, where: 'limits.yaml:1:1'}],
  staticNodes,
  partitions: [],
  settings: {},
  ...extra,
})
const TWO = [ws('ws1', '10.250.99.2', {features: ['bigmem']}), ws('ws2', '10.250.99.3', {partitions: ['big'], weight: 5})]
const PARTITIONS: Limits['partitions'] = [
  {name: 'compute', default: true, options: {}},
  {name: 'big', default: false, options: {}},
]

function gen(l: Limits, provider: 'aws' | 'local' = 'local', current?: string) {
  const slurm = providerModule(provider).slurm
  return generateConfig({
    provider,
    slurm,
    clusterId: 'demo',
    limits: l,
    catalogue: {...catalogue, provider},
    elastic: defaultElasticSettings(slurm.power),
    current,
    base: {clusterId: 'demo', provider, controllerHost: 'demo-mgmt', slurmUser: 'slurm', accounting: true, controllerAddr: slurm.controllerAddr},
  })
}

const dir = mkdtempSync(join(tmpdir(), 'citc-render-static-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** Slurm's own parser reads the whole file; `scontrol show hostnames` of the given list. */
function scontrolReads(conf: string, hostlist: string): {status: number | null; stdout: string; stderr: string} {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.conf`)
  writeFileSync(file, conf)
  const r = spawnSync('scontrol', ['show', 'hostnames', hostlist], {env: {...process.env, SLURM_CONF: file}, encoding: 'utf8'})
  if (r.error) throw new Error(`scontrol is needed for this test: ${r.error.message}`)
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe('slurm.conf with joined machines', () => {
  it('matches the snapshot, and scontrol reads it', async () => {
    const g = gen(limits(TWO, {partitions: PARTITIONS}))
    await expect(g.slurmConf).toMatchFileSnapshot('__snapshots__/local-static.slurm.conf')
    const r = scontrolReads(g.slurmConf, 'ws[1-2]')
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual(['ws1', 'ws2'])
  })

  it('writes the contract lines: static NodeName, SuspendExcNodes, SrunPortRange, configless, partitions, SlurmctldHost', () => {
    const g = gen(limits(TWO, {partitions: PARTITIONS}))
    const has = (line: string) => expect(g.slurmConf.split('\n')).toContain(line)
    has('NodeName=ws1 NodeAddr=10.250.99.2 CPUs=2 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=22800 Features="static,bigmem" Weight=1')
    has('NodeName=ws2 NodeAddr=10.250.99.3 CPUs=2 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=22800 Features="static" Weight=5')
    has('SuspendExcNodes=ws1,ws2')
    has('SrunPortRange=60001-63000')
    has('SlurmctldParameters=enable_configless,idle_on_node_suspend')
    has('PartitionName=compute Nodes=demo-c5-xlarge-[0001-0002],ws1 Default=YES State=UP')
    has('PartitionName=big Nodes=ws2 Default=NO State=UP')
    has('SlurmctldHost=demo-mgmt(10.250.99.1)')
    expect(g.slurmConf).not.toContain('SlurmctldHost=demo-mgmt(127.0.0.1)')
    // The static lines are not CLOUD nodes.
    expect(g.slurmConf).not.toMatch(/^NodeName=ws\d.*State=CLOUD/m)
    // cloud_reg_addrs stays where the provider needs it.
    expect(gen(limits(TWO), 'aws').slurmConf).toContain('SlurmctldParameters=enable_configless,idle_on_node_suspend,cloud_reg_addrs')
  })

  it('returns SlurmctldHost to the provider\'s default when the last machine leaves; a cluster that never had any keeps its line', () => {
    const withMachines = gen(limits(TWO)).slurmConf
    const after = gen(limits([]), 'local', withMachines).slurmConf
    expect(after).toContain('SlurmctldHost=demo-mgmt(127.0.0.1)\n')
    expect(after).not.toMatch(/enable_configless|SuspendExcNodes|SrunPortRange|NodeName=ws/)
    // The same as a cluster that never had joined machines.
    expect(after).toBe(gen(limits([])).slurmConf)
    // An admin's own SlurmctldHost address is left alone without joined machines.
    const own = gen(limits([]), 'local').slurmConf.replace('SlurmctldHost=demo-mgmt(127.0.0.1)', 'SlurmctldHost=demo-mgmt(192.0.2.7)')
    expect(gen(limits([]), 'local', own).slurmConf).toBe(own)
  })

  it('lists joined machines in finish --json\'s node documents, each with its kind', () => {
    const g = gen(limits([ws('ws1', '10.250.99.2')]))
    const docs = [...nodeDocuments(g.groups, g.staticNodes)]
    expect(docs.map((d) => [d.name, d.kind, d.address])).toEqual([
      ['demo-c5-xlarge-0001', 'elastic', null],
      ['demo-c5-xlarge-0002', 'elastic', null],
      ['ws1', 'static', '10.250.99.2'],
    ])
    expect(docs[2]).toMatchObject({shape: null, cpus: 2, realMemory: 22800, features: ['static'], partitions: ['compute'], gres: null})
  })
})

describe('SlurmctldHost outside the block', () => {
  const base = renderBase({clusterId: 'x', provider: 'local', controllerHost: 'x-mgmt', slurmUser: 'slurm', accounting: false}, providerModule('local').slurm)

  it('sets or drops the address of the first line, keeping the name; backups and the block untouched', () => {
    const conf = `${base}SlurmctldHost=x-backup(10.0.0.9)\n# STARTNODES\nSlurmctldHost=in-block\n# ENDNODES\n`
    const set = withSlurmctldHost(conf, '10.250.99.1')
    expect(set).toContain('SlurmctldHost=x-mgmt(10.250.99.1)\n')
    expect(set).toContain('SlurmctldHost=x-backup(10.0.0.9)\n')
    expect(set).toContain('SlurmctldHost=in-block\n')
    expect(withSlurmctldHost(set, undefined)).toBe(conf)
    // CitC's older ControlMachine= becomes SlurmctldHost=.
    expect(withSlurmctldHost('ControlMachine=mgmt\n', '10.0.0.1')).toBe('SlurmctldHost=mgmt(10.0.0.1)\n')
    expect(withSlurmctldHost('ClusterName=x\n', '10.0.0.1')).toBe('ClusterName=x\n')
  })

  it('the base renderer writes the same value', () => {
    const withAddr = renderBase({clusterId: 'x', provider: 'local', controllerHost: 'x-mgmt', controllerAddr: '127.0.0.1', slurmUser: 'slurm', accounting: false}, providerModule('local').slurm)
    expect(withSlurmctldHost(base, '127.0.0.1')).toBe(withAddr)
  })
})

describe('keys the block writes only with joined machines', () => {
  it('are the admin\'s outside the block until the block writes them', () => {
    const existing = 'ClusterName=x\nSrunPortRange=50000-51000\nSuspendExcNodes=a\n'
    const without = '# STARTNODES\nNodeName=a State=CLOUD\n# ENDNODES\n'
    expect(mergeSlurmConf(existing, without)).toBe(existing + without)
    const withThem = '# STARTNODES\nSuspendExcNodes=ws1\nSrunPortRange=60001-63000\n# ENDNODES\n'
    expect(mergeSlurmConf(existing, withThem)).toBe(`ClusterName=x\n${DISPLACED_PREFIX}SrunPortRange=50000-51000\n${DISPLACED_PREFIX}SuspendExcNodes=a\n${withThem}`)
  })
})
