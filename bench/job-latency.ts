// Time from submitting a 2-node job to it running, on cold (powered-down) local nodes, and how
// much of it is the nodes starting. Needs a local cluster on this machine (citc create --provider
// local --yes) and root. Run: npx tsx bench/job-latency.ts [runs]
import {spawnSync} from 'node:child_process'
import {performance} from 'node:perf_hooks'

const RUNS = Number(process.argv[2] ?? 3)
const env = {...process.env, SLURM_CONF: '/etc/slurm/slurm.conf'}
const sh = (cmd: string, args: string[]) => spawnSync(cmd, args, {env, encoding: 'utf8', cwd: '/tmp', timeout: 300_000})
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function nodes(): Array<{name: string; state: string}> {
  return sh('scontrol', ['show', 'node', '--oneliner', '--all'])
    .stdout.split('\n')
    .filter(Boolean)
    .map((l) => ({name: /NodeName=(\S+)/.exec(l)![1], state: /State=(\S+)/.exec(l)![1]}))
}

async function allPoweredDown(timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs
  while (!nodes().every((n) => n.state.includes('POWERED_DOWN'))) {
    if (Date.now() > deadline) throw new Error('nodes did not power down')
    await sleep(1000)
  }
}

async function once(kind: 'sbatch' | 'srun') {
  await allPoweredDown()
  const t0 = performance.now()
  let nodesUp = 0
  let running = 0
  const job =
    kind === 'sbatch'
      ? sh('sbatch', ['--parsable', '-N2', '-o', '/dev/null', '--wrap', 'srun sleep 1']).stdout.trim()
      : undefined
  if (kind === 'srun') {
    // srun blocks until the step ran: its wall time is submit → done.
    const r = sh('srun', ['-N2', 'hostname'])
    running = performance.now() - t0
    if (r.status !== 0) throw new Error(r.stderr)
    return {nodesUp: NaN, running}
  }
  for (;;) {
    const now = performance.now() - t0
    const ns = nodes()
    if (!nodesUp && ns.filter((n) => !/POWER/.test(n.state) && /IDLE|ALLOC|MIX/.test(n.state)).length >= 2) nodesUp = now
    const st = sh('squeue', ['-h', '-j', job!, '-o', '%T']).stdout.trim()
    if (st === 'RUNNING' || st === 'COMPLETING' || st === '') {
      running = now
      break
    }
    if (now > 300_000) throw new Error('job did not start in 300 s')
    await sleep(200)
  }
  return {nodesUp, running}
}

for (const kind of ['sbatch', 'srun'] as const) {
  for (let i = 0; i < RUNS; i++) {
    const r = await once(kind)
    const up = Number.isNaN(r.nodesUp) ? '' : `nodes up after ${(r.nodesUp / 1000).toFixed(1)} s, `
    console.log(`${kind} -N2 on cold nodes, run ${i + 1}: ${up}${kind === 'srun' ? 'done' : 'running'} after ${(r.running / 1000).toFixed(1)} s`)
  }
}
