// finish generation at scale: 100,000 nodes over 35 AWS shapes. Prints wall times and the number of
// NodeName lines (goal: < 0.5 s, one line per shape). Run: npx tsx bench/finish.ts
import {performance} from 'node:perf_hooks'

import {awsCatalogue} from '../src/lib/providers/aws/shapes.js'
import {previewDocument} from '../src/lib/tasks/finish/preview.js'
import {generateFromLimits} from '../src/lib/tasks/finish/generate-config.js'
import {planFinish} from '../src/lib/slurm/plan.js'

const TOTAL = 100_000
const SHAPES = 35
const names = awsCatalogue.names().filter((n) => !n.includes('metal')).slice(0, SHAPES)
const per = Math.floor(TOTAL / SHAPES)
const counts = names.map((_, i) => (i < TOTAL - per * SHAPES ? per + 1 : per))
const limitsText = names.map((n, i) => `${n}: ${counts[i]}`).join('\n') + '\n'

function time<T>(label: string, fn: () => T, runs = 5): T {
  let result!: T
  const ms: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    result = fn()
    ms.push(performance.now() - t0)
  }
  ms.sort((a, b) => a - b)
  console.log(`${label.padEnd(48)} median ${ms[Math.floor(runs / 2)].toFixed(1)} ms  (min ${ms[0].toFixed(1)}, max ${ms.at(-1)!.toFixed(1)}, ${runs} runs)`)
  return result
}

const req = {provider: 'aws' as const, clusterId: 'bench', limitsText, limitsFile: 'limits.yaml'}
const {generated} = time('parse + validate + generate (slurm.conf, gres)', () => generateFromLimits(req))
const nodeLines = generated.slurmConf.split('\n').filter((l) => l.startsWith('NodeName=')).length
const nodes = generated.groups.reduce((n, g) => n + g.count, 0)
console.log(`nodes: ${nodes}, shapes: ${names.length}, NodeName lines: ${nodeLines}, slurm.conf: ${generated.slurmConf.length} bytes`)
time('--json document (one entry per node)', () => JSON.stringify(previewDocument('aws', 'bench', generated)).length)
const smaller = generateFromLimits({...req, limitsText: limitsText.replace(/: (\d+)\n/, (_, c) => `: ${Number(c) - 100}\n`)}).generated
time('plan: semantic diff against a 100k-node cluster', () =>
  planFinish({currentConf: smaller.slurmConf, newConf: generated.slurmConf, currentGres: smaller.gresConf, newGres: generated.gresConf, confPath: '/etc/slurm/slurm.conf'}),
)
