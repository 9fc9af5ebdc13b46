// Job start latency on a local cluster: for a 2-node batch job, submit → nodes up, submit → RUNNING
// and submit → done, on cold (powered-down) and warm (already up) nodes; `srun` on cold nodes for
// comparison. Polls every 100 ms (Slurm's accounting has whole seconds only).
// Needs a local cluster on this machine (citc create --provider local --yes; a short
// --suspend-time such as 15 makes the cold runs quicker) and root.
// Run: npx tsx bench/job-latency.ts [runs=5]
import {spawnSync} from 'node:child_process'
import {performance} from 'node:perf_hooks'

const RUNS = Number(process.argv[2] ?? 5)
const env = {...process.env, SLURM_CONF: '/etc/slurm/slurm.conf'}
const sh = (cmd: string, args: string[]) => spawnSync(cmd, args, {env, encoding: 'utf8', cwd: '/tmp', timeout: 300_000})
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function nodes(): Array<{name: string; state: string}> {
  return sh('scontrol', ['show', 'node', '--oneliner', '--all'])
    .stdout.split('\n')
    .filter(Boolean)
    .map((l) => ({name: /NodeName=(\S+)/.exec(l)![1], state: /State=(\S+)/.exec(l)![1]}))
}

const up = (state: string) => !/POWER|DOWN/.test(state) && /IDLE|ALLOC|MIX/.test(state)

async function until(what: string, probe: () => boolean, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(500)
  }
}

interface Run {
  nodesUp: number
  running: number
  done: number
}

/** One 2-node batch job: the three times in ms from submission. */
async function batch(): Promise<Run> {
  const t0 = performance.now()
  const job = sh('sbatch', ['--parsable', '-N2', '-o', '/dev/null', '--wrap', 'srun true']).stdout.trim()
  if (!/^\d+$/.test(job)) throw new Error('sbatch failed')
  const r: Run = {nodesUp: NaN, running: NaN, done: NaN}
  for (;;) {
    const now = performance.now() - t0
    if (Number.isNaN(r.nodesUp) && nodes().filter((n) => up(n.state)).length >= 2) r.nodesUp = now
    const st = sh('squeue', ['-h', '-j', job, '-o', '%T']).stdout.trim()
    if (Number.isNaN(r.running) && (st === 'RUNNING' || st === 'COMPLETING' || st === '')) r.running = now
    if (st === '' || st === 'COMPLETED') {
      r.done = now
      return r
    }
    if (now > 300_000) throw new Error(`job ${job} did not end in 300 s`)
    await sleep(100)
  }
}

/** srun blocks until its step ran: its wall time is submit → done. */
function srun(): number {
  const t0 = performance.now()
  const r = sh('srun', ['-N2', 'true'])
  if (r.status !== 0) throw new Error(r.stderr)
  return performance.now() - t0
}

const s = (ms: number) => (Number.isNaN(ms) ? '   -  ' : `${(ms / 1000).toFixed(1).padStart(5)} s`)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const prolog = /^PrologSlurmctld=(\S+)/m.exec(sh('scontrol', ['show', 'config']).stdout.replace(/^PrologSlurmctld\s+=\s+/m, 'PrologSlurmctld='))?.[1] ?? '(none)'
console.log(`PrologSlurmctld: ${prolog}`)

const results: Record<string, Run[]> = {cold: [], warm: []}
for (let i = 0; i < RUNS; i++) {
  await until('every node powered down', () => nodes().every((n) => n.state.includes('POWERED_DOWN')))
  const cold = await batch()
  results.cold.push(cold)
  const warm = await batch() // right after: the same nodes are still up
  results.warm.push(warm)
  console.log(`run ${i + 1}: cold nodes up ${s(cold.nodesUp)}, RUNNING ${s(cold.running)}, done ${s(cold.done)} | warm RUNNING ${s(warm.running)}, done ${s(warm.done)}`)
}
await until('every node powered down', () => nodes().every((n) => n.state.includes('POWERED_DOWN')))
const srunCold = srun()
for (const kind of ['cold', 'warm'] as const) {
  const rs = results[kind]
  console.log(
    `batch -N2 ${kind} (median of ${rs.length}): nodes up ${s(median(rs.map((r) => r.nodesUp)))}, RUNNING ${s(median(rs.map((r) => r.running)))}, done ${s(median(rs.map((r) => r.done)))}`,
  )
}
console.log(`srun -N2 cold: done ${s(srunCold)}`)
