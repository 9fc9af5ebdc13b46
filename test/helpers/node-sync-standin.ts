// A stand-in for citc's CLI in the watchdog's service test (test/playbooks/watchdog-service.test.ts):
// the node-sync program the role installs execs `node <citc> node sync --every N`, and this takes
// citc's place there. It runs citc's own loop (sync-service.ts syncService, what `citc node sync
// --every` runs) with a pass that only records itself — one line per run in $CITC_STANDIN_RUNS
// ("<epoch ms> <pid> <n>") — and fails (throws, as a run whose cloud calls failed does) on the runs
// numbered in $CITC_STANDIN_FAIL (comma-separated). Run with `node --import tsx`.
import {appendFileSync} from 'node:fs'

import {syncService} from '../../src/lib/nodes/sync-service.js'

const [topic, command, flag, every, ...rest] = process.argv.slice(2)
const runs = process.env.CITC_STANDIN_RUNS
if (topic !== 'node' || command !== 'sync' || flag !== '--every' || !/^[1-9]\d*$/.test(every ?? '') || rest.length > 0 || !runs) {
  console.error(`node-sync stand-in: expected \`node sync --every SECONDS\` and CITC_STANDIN_RUNS, got ${JSON.stringify(process.argv.slice(2))}`)
  process.exit(2)
}
const failing = new Set((process.env.CITC_STANDIN_FAIL ?? '').split(',').filter(Boolean).map(Number))
let n = 0
await syncService(Number(every) * 1000, async () => {
  n += 1
  appendFileSync(runs, `${Date.now()} ${process.pid} ${n}\n`)
  if (failing.has(n)) throw new Error(`stand-in run ${n} fails on purpose`)
})
