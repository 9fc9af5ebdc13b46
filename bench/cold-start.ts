// `citc --help` cold start against `node -e 0` (goal: ≤ 3×). Needs a build (npm run build).
// Run: npx tsx bench/cold-start.ts
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

const RUNS = 15
const bin = join(import.meta.dirname, '..', 'bin', 'run.js')

function median(argv: string[]): number {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    const r = spawnSync(process.execPath, argv, {stdio: 'ignore'})
    ms.push(performance.now() - t0)
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`)
  }
  ms.sort((a, b) => a - b)
  return ms[Math.floor(RUNS / 2)]
}

const base = median(['-e', '0'])
const help = median([bin, '--help'])
const finishHelp = median([bin, 'finish', '--help'])
console.log(`node -e 0            median ${base.toFixed(0)} ms (${RUNS} runs)`)
console.log(`citc --help          median ${help.toFixed(0)} ms  = ${(help / base).toFixed(2)}× node -e 0`)
console.log(`citc finish --help   median ${finishHelp.toFixed(0)} ms  = ${(finishHelp / base).toFixed(2)}× node -e 0`)
