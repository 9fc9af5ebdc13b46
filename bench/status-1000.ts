// `citc status`, `citc nodes` and `citc finish --dry-run` on a cluster with 1,000 CLOUD nodes defined in a
// real slurmctld 22.05 (goal: status and nodes < 1 s each). The controller is test/helpers/slurm.ts's
// sandbox (own munged, slurmctld on a free loopback port, everything in a temp dir); its slurm.conf is
// what citc finish generates for `local.small: 1000` (ResumeProgram and the others are stand-ins that
// do nothing: no node is started). The cluster is registered as a local cluster in a temp data dir, so
// the commands reach it through the local transport, as on a management node. Each command runs as
// the user runs it (node bin/run.js, text and --json) RUNS times; the median is printed.
//
// Before/after in one run (the machine is noisy): `--baseline DIR` runs DIR/bin/run.js (another built
// checkout, e.g. `git archive main | tar -x -C DIR` then `npm run build` there) interleaved with this
// checkout's, and prints both medians and their ratio. Needs root (munged, slurmctld) and a build.
// Run: npx tsx bench/status-1000.ts [--nodes 1000] [--runs 7] [--baseline DIR] [--profile DIR]
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {clusterRegistry} from '../src/lib/cluster/registry.js'
import {generateFromLimits} from '../src/lib/tasks/finish/generate-config.js'
import {slurmSandbox} from '../test/helpers/slurm.js'
import {check, CITC, median, run, type Run, seconds} from './child.js'

if (process.getuid?.() !== 0) {
  console.error('bench/status-1000.ts: needs root (it starts a munged and a slurmctld of its own)')
  process.exit(2)
}
const argv = process.argv.slice(2)
const value = (name: string) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const NODES = Number(value('--nodes') ?? 1000)
const RUNS = Number(value('--runs') ?? 7)
const baseline = value('--baseline')
/** Where to write one V8 CPU profile per command (node --cpu-prof) instead of timing them. */
const profileDir = value('--profile')
const NAME = 'b1k'

/**
 * One run of citc, timed: wall clock, and the CPU time (user + system) of it and its children (the
 * Slurm clients it runs) from GNU time — on a machine shared with other work, CPU time is the steadier
 * figure of the two.
 */
async function timed(args: string[], env: NodeJS.ProcessEnv): Promise<Run & {cpuMs: number}> {
  const out = join(work, 'time.out')
  const r = await run('/usr/bin/time', ['-o', out, '-f', '%U %S', process.execPath, ...args], {env})
  const [user, sys] = readFileSync(out, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number)
  return {...r, cpuMs: (user + sys) * 1000}
}

function firstDifference(a: string, b: string): string {
  const x = a.split('\n')
  const y = b.split('\n')
  const i = x.findIndex((l, k) => l !== y[k])
  const at = i === -1 ? x.length : i
  return `  line ${at + 1}: baseline ${JSON.stringify(x[at])}\n  line ${at + 1}: this     ${JSON.stringify(y[at])}`
}

const work = mkdtempSync(join(tmpdir(), 'citc-status-1000-'))
const programs = join(work, 'programs')
mkdirSync(programs)
for (const p of ['resume', 'suspend', 'resume-fail', 'prolog-slurmctld']) writeFileSync(join(programs, p), '#!/bin/sh\nexit 0\n', {mode: 0o755})

const sb = await slurmSandbox(NAME)
try {
  const limits = (count: number) => {
    const f = join(work, `limits-${count}.yaml`)
    writeFileSync(f, `local.small: ${count}\n`)
    return f
  }
  const {generated} = generateFromLimits({provider: 'local', clusterId: NAME, limitsText: `local.small: ${NODES}\n`, limitsFile: 'limits.yaml', elastic: {programsDir: programs}, current: sb.base})
  writeFileSync(sb.confPath, generated.slurmConf)
  await sb.startController()
  const dataDir = join(work, 'data')
  clusterRegistry(dataDir).create(
    {name: NAME, provider: 'local', createdAt: new Date().toISOString(), origin: 'created', mgmt: {host: 'localhost', port: 22, user: 'root'}, slurm: {confPath: sb.confPath, programsDir: programs, restartCommand: [sb.restartScript]}},
    () => {},
  )
  const env = {...process.env, CITC_DATA_DIR: dataDir, CITC_CLUSTER: undefined, NODE_ENV: undefined, FORCE_COLOR: '0'}
  const nodes = (await check(process.execPath, [CITC, 'nodes', '-c', NAME, '--json'], {env})).stdout
  const count = (JSON.parse(nodes) as {nodes: unknown[]}).nodes.length
  if (count !== NODES) throw new Error(`citc nodes lists ${count} nodes, the controller was given ${NODES}`)

  const cases: Array<[string, string[]]> = [
    ['status', ['status', '-c', NAME]],
    ['status --json', ['status', '-c', NAME, '--json']],
    ['nodes', ['nodes', '-c', NAME]],
    ['nodes --json', ['nodes', '-c', NAME, '--json']],
    [`finish --dry-run (unchanged)`, ['finish', '-c', NAME, '--dry-run', '--limits', limits(NODES)]],
    [`finish --dry-run (${NODES - 10} nodes: 10 leave)`, ['finish', '-c', NAME, '--dry-run', '--limits', limits(NODES - 10)]],
  ]
  if (profileDir) {
    for (const [label, args] of cases) await check(process.execPath, ['--cpu-prof', '--cpu-prof-dir', join(profileDir, label.replaceAll(/\W+/g, '-')), CITC, ...args], {env})
    console.log(`profiles in ${profileDir}`)
    cases.length = 0
  }
  const bins: Array<[string, string]> = [['this checkout', CITC], ...(baseline ? ([['baseline', join(baseline, 'bin', 'run.js')]] as Array<[string, string]>) : [])]
  const base: Run[] = []
  for (let i = 0; i < RUNS; i++) base.push(await run(process.execPath, ['-e', '0']))
  console.log(`${NODES} CLOUD nodes in slurmctld 22.05 (loopback sandbox); median of ${RUNS} runs each; node -e 0: ${seconds(median(base.map((r) => r.ms)))}`)
  const raw: number[] = []
  for (let i = 0; i < RUNS; i++) raw.push((await check('scontrol', ['show', 'node', '--oneliner', '--all'], {env: sb.env})).ms)
  console.log(`${'scontrol show node --oneliner --all (what status asks)'.padEnd(52)} ${seconds(median(raw))}`)
  for (const [label, args] of cases) {
    const ms = new Map<string, number[]>(bins.map(([b]) => [b, []]))
    const cpu = new Map<string, number[]>(bins.map(([b]) => [b, []]))
    const outputs = new Map<string, string>()
    for (let i = 0; i < RUNS; i++) {
      // Interleaved: a burst of load on the machine hits both alike.
      for (const [b, bin] of bins) {
        const r = await timed([bin, ...args], env)
        if (r.code !== 0) throw new Error(`${b}: citc ${args.join(' ')} exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join('\n')}`)
        ms.get(b)!.push(r.ms)
        cpu.get(b)!.push(r.cpuMs)
        // The log file's name and the steps' timers differ per run (finish): compare the rest.
        outputs.set(b, r.stdout.replaceAll(/"logFile":"[^"]*"/g, '"logFile":…').replaceAll(/\/logs\/\S+/g, '/logs/…').replaceAll(/\[[\d.]+m?s\]/g, '[…s]'))
      }
    }
    const now = median(ms.get('this checkout')!)
    const nowCpu = median(cpu.get('this checkout')!)
    let line = `citc ${label}`.padEnd(48) + ` ${seconds(now)} (cpu ${seconds(nowCpu)})`
    if (baseline) {
      const before = median(ms.get('baseline')!)
      const beforeCpu = median(cpu.get('baseline')!)
      const same = outputs.get('baseline') === outputs.get('this checkout') ? 'same output' : `OUTPUT DIFFERS:\n${firstDifference(outputs.get('baseline')!, outputs.get('this checkout')!)}`
      line += `   baseline ${seconds(before)} (cpu ${seconds(beforeCpu)})   after/before ${(now / before).toFixed(2)} (cpu ${(nowCpu / beforeCpu).toFixed(2)})   ${same}`
    }
    console.log(line)
  }
} finally {
  await sb.stop()
  rmSync(work, {recursive: true, force: true})
}
