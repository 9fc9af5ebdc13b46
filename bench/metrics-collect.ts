// One collector cycle (`citc metrics collect`) at scale: a real slurmctld 22.05 (test/helpers/slurm.ts's
// sandbox, on a loopback port) with 1,000 CLOUD nodes, all powered down, and 10,000 held pending jobs.
// Goal (issue #21): a cycle < 1 s, and 3 calls to slurmctld per cycle whatever the numbers.
//
// "10,000 jobs pending" here means 10,000 separate job records (sbatch --hold, 10,000 times): squeue
// prints 10,000 lines, the collector's worst case. The same 10,000 as one array (`--array=0-9999`)
// would be ONE line (the collector does not use -r and counts the tasks from %K), so it costs nothing.
// Timed: collectOnce in this process (the three calls, parse, render, citc.prom and nodes.json written),
// median of N; and the whole command as the timer runs it (node bin/run.js metrics collect --stand-in),
// median of N. Needs `npm run build` and root (munged, slurmctld).
// Run: npx tsx bench/metrics-collect.ts [runs=9]
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import type {ManagementContract} from '../src/lib/cluster/management-contract.js'
import {collectOnce, type Monitoring} from '../src/lib/tasks/metrics/collect-main.js'
import {localTransport} from '../src/lib/transport/local.js'
import type {Transport} from '../src/lib/transport/types.js'
import {slurmSandbox} from '../test/helpers/slurm.js'

const RUNS = Number(process.argv[2] ?? 9)
const NODES = 1000
const JOBS = 10_000
const bin = join(import.meta.dirname, '..', 'bin', 'run.js')

const slurm = await slurmSandbox('bench')
try {
  writeFileSync(
    slurm.confPath,
    slurm.base +
      [
        'SuspendProgram=/bin/true', 'ResumeProgram=/bin/true', 'PrivateData=cloud', 'TreeWidth=65533', `MaxJobCount=${JOBS * 2}`,
        `NodeName=bench-c5-xlarge-[0001-${NODES}] State=CLOUD CPUs=4 RealMemory=7000 Features=shape=c5.xlarge,arch=x86_64`,
        `PartitionName=p Nodes=bench-c5-xlarge-[0001-${NODES}] Default=YES`,
        '',
      ].join('\n'),
  )
  await slurm.startController()

  // 10,000 held jobs: 8 shells submitting in parallel (sbatch per job is the slow part of the setup, not the bench).
  const t0 = performance.now()
  const submit = spawnSync(
    'sh',
    ['-c', `seq 1 ${JOBS} | xargs -P 8 -n 250 sh -c 'for i in "$@"; do sbatch --hold --parsable -o /dev/null -p p -n 1 --wrap true >/dev/null || exit 1; done' sh`],
    {env: slurm.env, encoding: 'utf8', timeout: 1_800_000},
  )
  if (submit.status !== 0) throw new Error(`sbatch failed: ${submit.stderr}`)
  const squeueLines = spawnSync('squeue', ['-h', '-t', 'PD'], {env: slurm.env, encoding: 'utf8'}).stdout.trim().split('\n').length
  console.log(`setup: ${NODES} CLOUD nodes powered down, ${squeueLines} pending held jobs (squeue lines without -r) submitted in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

  const dir = join(slurm.dir, 'metrics')
  mkdirSync(dir)
  const cfg = {confPath: slurm.confPath} as ManagementContract
  const monitoring = {dir, computeExporterPort: 9100} as Monitoring
  let calls = 0
  const real = localTransport()
  const counting: Transport = {...real, run: (argv, opts) => (calls++, real.run(argv, opts))}

  const inProcess: number[] = []
  const callsPerCycle: number[] = []
  let last: Awaited<ReturnType<typeof collectOnce>> | undefined
  for (let i = 0; i < RUNS; i++) {
    calls = 0
    const t = performance.now()
    last = await collectOnce(cfg, monitoring, {transport: counting, log: (m) => console.log(`  log: ${m}`)})
    inProcess.push(performance.now() - t)
    callsPerCycle.push(calls)
    if (!last.up) throw new Error(`slurmctld did not answer: ${JSON.stringify(last.errors)}`)
  }

  const clusterJson = join(slurm.dir, 'cluster.json')
  writeFileSync(
    clusterJson,
    JSON.stringify({version: 1, name: 'bench', provider: 'local', driver: {}, sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: '/opt/citc/bin', confPath: slurm.confPath, elasticLog: join(slurm.dir, 'elastic.log'), monitoring: {dir, prometheusUrl: 'http://127.0.0.1:9090', computeExporterPort: 9100, every: 30}}),
  )
  const standIn = join(slurm.dir, 'stand-in.json')
  writeFileSync(standIn, JSON.stringify({clusterJson}))
  const command: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    const r = spawnSync(process.execPath, [bin, 'metrics', 'collect', '--stand-in', standIn], {encoding: 'utf8', timeout: 60_000})
    command.push(performance.now() - t)
    if (r.status !== 0 || r.stderr !== '') throw new Error(`citc metrics collect exited ${r.status}: ${r.stderr}`)
  }

  const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!
  const text = readFileSync(join(dir, 'citc.prom'), 'utf8')
  const samples = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
  const pendingCounted = samples.filter((l) => l.startsWith('citc_slurm_jobs{') && l.includes('state="pending"')).reduce((s, l) => s + Number(l.split(' ').at(-1)), 0)
  const perCall = samples.filter((l) => l.startsWith('citc_collect_duration_seconds')).map((l) => `${/command="(\w+)"/.exec(l)![1]} ${(Number(l.split(' ').at(-1)) * 1000).toFixed(0)} ms`)
  const perNode = samples.filter((l) => l.includes('node="bench-c5-xlarge-0001"')).length
  console.log(`calls to slurmctld per cycle: ${[...new Set(callsPerCycle)].join(', ')} (scontrol show node, squeue, sdiag)`)
  console.log(`one cycle in process (median of ${RUNS}): ${median(inProcess).toFixed(0)} ms  [min ${Math.min(...inProcess).toFixed(0)}, max ${Math.max(...inProcess).toFixed(0)}]; last cycle's calls: ${perCall.join(', ')} (run at once)`)
  console.log(`the whole command, node bin/run.js metrics collect (median of ${RUNS}): ${median(command).toFixed(0)} ms`)
  console.log(`pending jobs counted by citc_slurm_jobs: ${pendingCounted}`)
  console.log(`citc.prom: ${statSync(join(dir, 'citc.prom')).size} bytes, ${samples.length} series (${perNode} per node); nodes.json: ${statSync(join(dir, 'nodes.json')).size} bytes (${last!.targets} targets: every node is powered down)`)
  // Prometheus stores ~1-2 bytes per sample (prometheus.io storage docs): an estimate, not a measurement.
  const perDay = (series: number, every: number) => (series * 86_400) / every
  console.log(`estimate: citc.prom's series per node scraped every 15 s (job "management") = ${perDay(perNode, 15).toFixed(0)} samples per node-day ≈ ${((perDay(perNode, 15) * 1.5) / 1024).toFixed(0)} KiB per node-day at 1.5 bytes/sample`)
} finally {
  spawnSync('scancel', ['-u', 'root'], {env: slurm.env, timeout: 60_000})
  await slurm.stop()
}
