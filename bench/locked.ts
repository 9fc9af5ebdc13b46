// Run a command while holding the machine lock the system tests take (test/helpers/system-lock.ts),
// so a benchmark that sets this machine up as a cluster never overlaps them.
// Run: npx tsx bench/locked.ts bash bench/run-job-latency-ab.sh 5
import {spawnSync} from 'node:child_process'

import {lockSystem} from '../test/helpers/system-lock.js'

const [cmd, ...args] = process.argv.slice(2)
const lock = await lockSystem(`bench: ${[cmd, ...args].join(' ')}`)
try {
  const r = spawnSync(cmd, args, {stdio: 'inherit'})
  process.exitCode = r.status ?? 1
} finally {
  lock.release()
}
