// `citc --help` cold start against `node -e 0` (goal: ≤ 2×, issue #24). Needs a build (npm run build).
// Each run is timed twice: wall clock, and the process's CPU time (user + system, process.cpuUsage() at
// exit, written by a preloaded script that every run gets alike) — on a machine shared with other work
// the CPU time is the steadier figure. All commands are interleaved run by run, so a
// burst of load hits them alike. `--baseline DIR` adds another built checkout's bin/run.js (e.g. main:
// `git archive main | tar -x -C DIR`, link node_modules, `npm run build` there) for before/after in one run.
// Run: npx tsx bench/cold-start.ts [--runs 15] [--baseline DIR]
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

const argv = process.argv.slice(2)
const value = (name: string) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const RUNS = Number(value('--runs') ?? 15)
const baseline = value('--baseline')
const bin = join(import.meta.dirname, '..', 'bin', 'run.js')
const work = mkdtempSync(join(tmpdir(), 'citc-cold-start-'))
const cpuFile = join(work, 'cpu.out')
const preload = join(work, 'cpu.cjs')
writeFileSync(preload, `process.on('exit', () => { const u = process.cpuUsage(); require('node:fs').writeFileSync(${JSON.stringify(cpuFile)}, String((u.user + u.system) / 1000)) })\n`)

function once(args: string[]): {ms: number; cpuMs: number} {
  const t0 = performance.now()
  const r = spawnSync(process.execPath, ['-r', preload, ...args], {stdio: 'ignore'})
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`)
  return {ms, cpuMs: Number(readFileSync(cpuFile, 'utf8'))}
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const cases: Array<[string, string[]]> = [
  ['node -e 0', ['-e', '0']],
  ['citc --help', [bin, '--help']],
  ['citc finish --help', [bin, 'finish', '--help']],
  ['citc accounts --help', [bin, 'accounts', '--help']],
  ...(baseline
    ? ([
        ['baseline citc --help', [join(baseline, 'bin', 'run.js'), '--help']],
        ['baseline citc finish --help', [join(baseline, 'bin', 'run.js'), 'finish', '--help']],
      ] as Array<[string, string[]]>)
    : []),
]
const times = cases.map(() => ({ms: [] as number[], cpuMs: [] as number[]}))
try {
  for (let i = 0; i < RUNS; i++) {
    cases.forEach(([, args], k) => {
      const t = once(args)
      times[k].ms.push(t.ms)
      times[k].cpuMs.push(t.cpuMs)
    })
  }
} finally {
  rmSync(work, {recursive: true, force: true})
}
const base = {ms: median(times[0].ms), cpuMs: median(times[0].cpuMs)}
console.log(`median of ${RUNS} runs each, interleaved; ratios against node -e 0 (wall, and CPU time)`)
cases.forEach(([label], k) => {
  const ms = median(times[k].ms)
  const cpu = median(times[k].cpuMs)
  console.log(`${label.padEnd(30)} wall ${ms.toFixed(0).padStart(5)} ms = ${(ms / base.ms).toFixed(2)}×   cpu ${cpu.toFixed(0).padStart(5)} ms = ${(cpu / base.cpuMs).toFixed(2)}×`)
})
