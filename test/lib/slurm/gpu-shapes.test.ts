// The catalogues' current GPU shapes (AWS p5/g6/g6e, Google a3/g2, Oracle BM.GPU.H100.8) rendered into
// slurm.conf and gres.conf, snapshotted, and read back by Slurm's own parsers: slurm.conf by scontrol,
// gres.conf by `slurmd -G` (prints the GPUs slurmd would register for one node, then exits; no daemon).
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
