// The fault suite as a figure (issue #23): runs the vitest project `faults` (test/faults) with a
// report file, then prints one line per class of fault and the total:
//   faults: N injected, N survived, lost 0, stuck 0
// Each injected fault is one injectFault call (test/helpers/fault-record.ts): survived means the
// cluster came back with nothing lost and nothing left stuck. Needs root and `npm run build` (the
// suite runs the built CLI, and one file makes a whole local cluster: 15–25 min on 2 cores).
// Run: npm run build && npx tsx bench/faults.ts [test/faults/FILE …]   (--table: the fault → seen → recovery table)
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {FAULT_CLASSES, type FaultClass, type FaultRecord} from '../test/helpers/fault-record.js'

const args = process.argv.slice(2)
const table = args.includes('--table')
const files = args.filter((a) => a !== '--table')
const dir = mkdtempSync(join(tmpdir(), 'citc-bench-faults-'))
const report = join(dir, 'faults.jsonl')
const t0 = Date.now()
const run = spawnSync('npx', ['vitest', 'run', '--project', 'faults', ...files], {stdio: ['ignore', 'inherit', 'inherit'], env: {...process.env, CITC_FAULTS_REPORT: report}})
const minutes = ((Date.now() - t0) / 60_000).toFixed(1)

let records: FaultRecord[] = []
try {
  records = readFileSync(report, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as FaultRecord)
} catch {
  // no fault ran
}
rmSync(dir, {recursive: true, force: true})

const sum = (rs: FaultRecord[]) => ({
  injected: rs.length,
  survived: rs.filter((r) => r.survived).length,
  lost: rs.reduce((n, r) => n + r.lost, 0),
  stuck: rs.reduce((n, r) => n + r.stuck, 0),
})
const line = (label: string, rs: FaultRecord[]) => {
  const s = sum(rs)
  return `${label}: ${s.injected} injected, ${s.survived} survived, lost ${s.lost}, stuck ${s.stuck}`
}

console.log(`\nfault suite: vitest exit ${run.status}, ${minutes} min`)
for (const cls of Object.keys(FAULT_CLASSES) as FaultClass[]) {
  const rs = records.filter((r) => r.class === cls)
  console.log(`  ${line(cls, rs)}${rs.length === 0 ? ' (not run)' : ''}`)
}
for (const r of records.filter((r) => !r.survived)) console.log(`  NOT SURVIVED: ${r.fault}: ${r.error ?? `${r.lost} lost, ${r.stuck} stuck`}`)
console.log(line('faults', records))
if (table) {
  console.log('\n| fault | what the user sees | what recovers it |\n|---|---|---|')
  for (const r of records) console.log(`| ${r.fault} | ${r.seen.replace(/\|/g, '\\|')} | ${r.recovery.replace(/\|/g, '\\|')} |`)
}
process.exitCode = run.status ?? 1
