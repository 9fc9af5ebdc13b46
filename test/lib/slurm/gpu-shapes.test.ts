// The catalogues' current GPU shapes (AWS p5/g6/g6e, Google a3/g2, Oracle BM.GPU.H100.8) rendered into
// slurm.conf and gres.conf, snapshotted, and read back by Slurm's own parsers: slurm.conf by scontrol,
// gres.conf by `slurmd -G` (prints the GPUs slurmd would register for one node, then exits; no daemon).
//
// The local catalogue's GPU shapes (this machine's GPUs, a stand-in list) give one gres.conf line per node,
// each with its own devices; slurmd -G reads each node's line back.
//
// slurmd stats every File= of gres.conf and waits for a missing one, so for `slurmd -G` the test points
// /dev/nvidiaN at links to /dev/null in a temp dir (a character device, as the real ones are): the lines
// are otherwise byte for byte the rendered ones, and the Count slurmd reports is what it parsed.
import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import type {Limits} from '../../../src/lib/slurm/limits-types.js'
import {catalogueFor} from '../../../src/lib/providers/catalogues.js'
import {generateConfig} from '../../../src/lib/slurm/generate.js'
import {nodeName} from '../../../src/lib/slurm/nodes.js'
import type {LocalGpu} from '../../../src/lib/providers/local/gpus.js'
import {localCatalogue} from '../../../src/lib/providers/local/shapes.js'
import {defaultElasticSettings} from '../../../src/lib/slurm/render.js'
import {providerModule} from '../../../src/lib/providers/registry.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-gpu-shapes-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const devDir = join(dir, 'dev')
mkdirSync(devDir)
for (let i = 0; i < 8; i++) symlinkSync('/dev/null', join(devDir, `nvidia${i}`))

type Cloud = 'aws' | 'google' | 'oracle'

const limits = (entries: Array<[shape: string, count: number, ad?: number]>): Limits => ({
  entries: entries.map(([shape, count, ad]) => ({shape, count, where: 'limits.yaml:1:1', ...(ad === undefined ? {} : {ad})})),
  staticNodes: [],
  partitions: [],
  settings: {},
})

function generate(provider: Cloud, l: Limits) {
  return generateConfig({
    provider,
    slurm: providerModule(provider).slurm,
    clusterId: 'gpu',
    limits: l,
    catalogue: catalogueFor(provider),
    elastic: defaultElasticSettings(providerModule(provider).slurm.power),
    base: {clusterId: 'gpu', provider, controllerHost: 'gpu-mgmt', slurmUser: 'slurm', accounting: false},
  })
}

/** scontrol reads the whole slurm.conf (non-zero on an unknown key or a bad line). */
function scontrolReads(conf: string): {status: number | null; stderr: string} {
  const file = join(dir, `s${Math.random().toString(36).slice(2)}.conf`)
  writeFileSync(file, conf)
  const r = spawnSync('scontrol', ['show', 'hostnames', 'x'], {env: {...process.env, SLURM_CONF: file}, encoding: 'utf8'})
  if (r.error) throw new Error(`scontrol is needed for this test: ${r.error.message}`)
  return {status: r.status, stderr: r.stderr}
}

/** What `slurmd -G -N node` prints: its reading of gres.conf (devices moved to the temp dir) for that node. */
function slurmdGres(slurmConf: string, gresConf: string, node: string): string {
  const sub = mkdtempSync(join(dir, 'conf-'))
  // slurmd reads gres.conf from slurm.conf's directory; its spool directory must not be the machine's.
  writeFileSync(join(sub, 'slurm.conf'), slurmConf.replace(/^SlurmdSpoolDir=.*$/m, `SlurmdSpoolDir=${join(sub, 'spool')}`))
  writeFileSync(join(sub, 'gres.conf'), gresConf.replaceAll('File=/dev/nvidia', `File=${devDir}/nvidia`))
  const r = spawnSync('slurmd', ['-G', '-N', node], {env: {...process.env, SLURM_CONF: join(sub, 'slurm.conf')}, encoding: 'utf8', timeout: 15_000})
  if (r.error) throw new Error(`slurmd is needed for this test: ${r.error.message}`)
  expect(r.status, r.stderr).toBe(0)
  return r.stdout + r.stderr
}

const cases: Array<{provider: Cloud; entries: Array<[string, number, number?]>; gres: Record<string, string>}> = [
  {
    provider: 'aws',
    entries: [['p5.48xlarge', 2], ['g6.xlarge', 3], ['g6.12xlarge', 1], ['g6e.48xlarge', 1]],
    gres: {
      'gpu-p5-48xlarge': 'Name=gpu Type=h100 Count=8',
      'gpu-g6-xlarge': 'Name=gpu Type=l4 Count=1',
      'gpu-g6-12xlarge': 'Name=gpu Type=l4 Count=4',
      'gpu-g6e-48xlarge': 'Name=gpu Type=l40s Count=8',
    },
  },
  {
    provider: 'google',
    entries: [['a3-highgpu-8g', 2], ['a3-highgpu-2g', 1], ['g2-standard-24', 4]],
    gres: {
      'gpu-a3-highgpu-8g': 'Name=gpu Type=h100 Count=8',
      'gpu-a3-highgpu-2g': 'Name=gpu Type=h100 Count=2',
      'gpu-g2-standard-24': 'Name=gpu Type=l4 Count=2',
    },
  },
  {
    provider: 'oracle',
    entries: [['BM.GPU.H100.8', 2, 1]],
    gres: {'gpu-bm-gpu-h100-8-ad1': 'Name=gpu Type=h100 Count=8'},
  },
]

describe.each(cases)('$provider GPU shapes', ({provider, entries, gres}) => {
  const g = generate(provider, limits(entries))

  it('match the snapshots, and scontrol reads the slurm.conf', async () => {
    await expect(g.slurmConf).toMatchFileSnapshot(`__snapshots__/gpu-${provider}.slurm.conf`)
    await expect(g.gresConf).toMatchFileSnapshot(`__snapshots__/gpu-${provider}.gres.conf`)
    expect(g.slurmConf).toContain('GresTypes=gpu')
    const r = scontrolReads(g.slurmConf)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('keep File= lines (Debian has no NVML), one device per GPU, and slurmd -G counts them', () => {
    expect(g.gresConf).not.toMatch(/AutoDetect/i)
    for (const group of g.groups) {
      const last = group.gpu!.count - 1
      expect(g.gresConf).toContain(`NodeName=${group.hostlist} Name=gpu Type=${group.gpu!.model} File=/dev/nvidia${last === 0 ? '0' : `[0-${last}]`}\n`)
      const out = slurmdGres(g.slurmConf, g.gresConf, nodeName(group.prefix, 1))
      expect(out).toContain(`Gres ${gres[group.prefix]} `)
      expect(out).not.toMatch(/fatal|not a valid character/)
    }
  })
})

describe('local GPU shapes: this machine\'s devices, one line per node', () => {
  // 4 H100 at minors 0, 2, 3, 5 and an L4 at minor 1 (minors need not follow the bus order or be contiguous).
  const gpu = (type: string, minor: number): LocalGpu => ({modelName: `NVIDIA ${type.toUpperCase()}`, type, minor, device: `/dev/nvidia${minor}`, bus: `0000:${minor}:00.0`})
  const catalogue = localCatalogue({cpus: 16, cores: 8, memoryMiB: 65536, arch: 'x86_64', gpus: [gpu('h100', 0), gpu('l4', 1), gpu('h100', 2), gpu('h100', 3), gpu('h100', 5)]})
  const generateLocal = (entries: Array<[string, number]>) =>
    generateConfig({
      provider: 'local',
      slurm: providerModule('local').slurm,
      clusterId: 'ws',
      limits: {...limits([]), entries: entries.map(([shape, count]) => ({shape, count, where: 'limits.yaml:1:1'}))},
      catalogue,
      elastic: defaultElasticSettings(providerModule('local').slurm.power),
      base: {clusterId: 'ws', provider: 'local', controllerHost: 'ws-mgmt', slurmUser: 'root', accounting: false},
    })

  it('one node per GPU: each node its own /dev/nvidiaN; slurmd -G finds one GPU of the right type on each', async () => {
    const g = generateLocal([['local.small', 2], ['local.h100x1', 4], ['local.l4x1', 1]])
    await expect(g.slurmConf).toMatchFileSnapshot('__snapshots__/gpu-local.slurm.conf')
    await expect(g.gresConf).toMatchFileSnapshot('__snapshots__/gpu-local.gres.conf')
    expect(g.gresConf.split('\n').filter((l) => l.startsWith('NodeName='))).toEqual([
      'NodeName=ws-local-h100x1-0001 Name=gpu Type=h100 File=/dev/nvidia0',
      'NodeName=ws-local-h100x1-0002 Name=gpu Type=h100 File=/dev/nvidia2',
      'NodeName=ws-local-h100x1-0003 Name=gpu Type=h100 File=/dev/nvidia3',
      'NodeName=ws-local-h100x1-0004 Name=gpu Type=h100 File=/dev/nvidia5',
      'NodeName=ws-local-l4x1-0001 Name=gpu Type=l4 File=/dev/nvidia1',
    ])
    expect(g.slurmConf).toContain('Gres=gpu:h100:1')
    const r = scontrolReads(g.slurmConf)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    for (const [node, minor] of [['ws-local-h100x1-0001', 0], ['ws-local-h100x1-0004', 5]] as const) {
      const out = slurmdGres(g.slurmConf, g.gresConf, node)
      expect(out).toContain('Gres Name=gpu Type=h100 Count=1 ')
      expect(out).toContain(`${devDir}/nvidia${minor}`)
      expect(out).not.toMatch(/fatal|not a valid character/)
    }
    expect(slurmdGres(g.slurmConf, g.gresConf, 'ws-local-l4x1-0001')).toContain('Gres Name=gpu Type=l4 Count=1 ')
  })

  it('all GPUs in one node: one File= list of its devices; slurmd -G counts all four', () => {
    const g = generateLocal([['local.h100x4', 1]])
    expect(g.gresConf).toContain('NodeName=ws-local-h100x4-0001 Name=gpu Type=h100 File=/dev/nvidia[0,2-3,5]\n')
    expect(g.slurmConf).toContain('Gres=gpu:h100:4')
    expect(scontrolReads(g.slurmConf).status).toBe(0)
    const out = slurmdGres(g.slurmConf, g.gresConf, 'ws-local-h100x4-0001')
    expect(out).toContain('Gres Name=gpu Type=h100 Count=4 ')
    expect(out).not.toMatch(/fatal|not a valid character/)
  })

  it('GPU shapes get small port ranges after the CPU shapes\', whose ports do not move', () => {
    const g = generateLocal([['local.small', 1], ['local.large', 1], ['local.h100x1', 4], ['local.h100x4', 1], ['local.l4x1', 1]])
    expect(g.groups.map((x) => [x.shape, x.sharedAddress?.firstPort])).toEqual([
      ['local.small', 17_001],
      ['local.large', 17_001 + 2 * 9999],
      ['local.h100x1', 17_001 + 3 * 9999],
      ['local.h100x4', 17_001 + 3 * 9999 + 4],
      ['local.l4x1', 17_001 + 3 * 9999 + 5],
    ])
  })
})
