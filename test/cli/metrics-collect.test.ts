// `citc metrics collect` as the timer runs it (the built CLI, a stand-in cluster.json) against a real
// slurmctld 22.05 of the test's own (test/helpers/slurm.ts) with two real slurmd for two elastic nodes,
// so that nodes are in every power state the collector names: on (registered, a job on it), stop_pending
// (registered, a job on it, asked to power down after it), starting, stopping, off, off and drained,
// off and down. Then slurmctld is stopped: up 0, the last figures kept, exit 0, no crash.
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {readNodeEvents, recordNodeEvents} from '../../src/lib/metrics/node-events.js'
import {sleep} from '../../src/lib/proc.js'
import {freePort, slurmSandbox, type SlurmSandbox} from '../helpers/slurm.js'
import {waitFor} from '../helpers/wait.js'
import {citc} from '../helpers/cli.js'

let sb: SlurmSandbox
let dir: string
let standIn: string
const slurmds: ChildProcess[] = []

const run = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, {env: sb.env, encoding: 'utf8', timeout: 20_000})
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}${r.stdout}`)
  return r.stdout
}
const state = (name: string) => /State=(\S+)/.exec(run('scontrol', ['show', 'node', name, '-o']))?.[1] ?? ''
/** 22.05 keeps POWER_UP (the request) on a node that registered: IDLE+CLOUD+POWER_UP is on. */
const registered = (s: string) => s.startsWith('IDLE+CLOUD') && !/POWERING_UP|NOT_RESPONDING/.test(s)
const update = (...args: string[]) => run('scontrol', ['update', ...args])
const lines = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
const prom = () => readFileSync(join(dir, 'citc.prom'), 'utf8')

beforeAll(async () => {
  sb = await slurmSandbox('tst')
  const [p1, p2] = [await freePort(), await freePort()]
  for (const n of ['tst-small-0001', 'tst-small-0002']) mkdirSync(join(sb.dir, 'spool', n), {recursive: true})
  writeFileSync(
    sb.confPath,
    sb.base +
      [
        `SlurmdPidFile=${join(sb.dir, 'slurmd-%n.pid')}`,
        `SlurmdLogFile=${join(sb.dir, 'slurmd-%n.log')}`,
        'SlurmdParameters=config_overrides',
        'SuspendProgram=/bin/true',
        'ResumeProgram=/bin/true',
        'SuspendTime=3600',
        'SuspendTimeout=600',
        'ResumeTimeout=900',
        'PrivateData=cloud',
        'ReturnToService=2',
        // As citc's clouds: a cloud node's address is the one its slurmd registers from.
        'SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs',
        `NodeName=tst-small-0001 CPUs=2 RealMemory=1000 Features=shape=local.small,arch=x86_64 State=CLOUD Port=${p1}`,
        `NodeName=tst-small-0002 CPUs=2 RealMemory=1000 Features=shape=local.small,arch=x86_64 State=CLOUD Port=${p2}`,
        'NodeName=tst-small-[0003-0006] CPUs=2 RealMemory=1000 Features=shape=local.small,arch=x86_64 State=CLOUD',
        'NodeName=tst-big-[0001-0002] CPUs=8 RealMemory=8000 Features=shape=local.big,arch=x86_64 State=CLOUD',
        'PartitionName=compute Nodes=tst-small-[0001-0006] Default=YES MaxTime=INFINITE State=UP',
        'PartitionName=big Nodes=tst-big-[0001-0002] MaxTime=INFINITE State=UP',
        '',
      ].join('\n'),
  )
  await sb.startController()
  for (const name of ['tst-small-0001', 'tst-small-0002']) {
    update(`NodeName=${name}`, 'State=POWER_UP')
    slurmds.push(spawn('/usr/sbin/slurmd', ['-D', '-N', name, '-f', sb.confPath], {env: sb.env, stdio: 'ignore'}))
  }
  await waitFor('both slurmd to register', () => ['tst-small-0001', 'tst-small-0002'].every((n) => registered(state(n))), 60_000, 500).catch((error: Error) => {
    const log = (f: string) => spawnSync('tail', ['-n', '15', join(sb.dir, f)], {encoding: 'utf8'}).stdout
    throw new Error(`${error.message}\n${run('scontrol', ['show', 'node', 'tst-small-[0001-0002]', '-o'])}\n${log('slurmd-tst-small-0001.log')}\n${log('slurmctld.log')}`)
  })
  for (const name of ['tst-small-0001', 'tst-small-0002']) run('sbatch', ['-o', '/dev/null', '-p', 'compute', '-w', name, '-n', '1', '--wrap', 'sleep 120'])
  await waitFor('the jobs to run', () => ['tst-small-0001', 'tst-small-0002'].every((n) => state(n).startsWith('MIXED')), 30_000, 250)
  // After its job: POWER_DOWN without POWERING_DOWN yet.
  update('NodeName=tst-small-0002', 'State=POWER_DOWN_ASAP')
  update('NodeName=tst-small-0003', 'State=POWER_UP')
  update('NodeName=tst-small-0004', 'State=POWER_UP')
  update('NodeName=tst-small-0004', 'State=POWER_DOWN_FORCE')
  update('NodeName=tst-small-0005', 'State=DRAIN', 'Reason=disk full')
  update('NodeName=tst-small-0006', 'State=DOWN', 'Reason=citc: capacity: InsufficientInstanceCapacity for local.small')
  run('sbatch', ['-o', '/dev/null', '-H', '-p', 'big', '-n', '4', '--array=0-9', '--wrap', 'true'])
  // slurmctld's power thread acts on the requests a moment later: until then 0004 is only POWER_UP+POWER_DOWN.
  await waitFor('0003 powering up and 0004 powering down', () => state('tst-small-0003').includes('POWERING_UP') && state('tst-small-0004').includes('POWERING_DOWN'), 30_000, 250)

  dir = join(sb.dir, 'metrics')
  mkdirSync(dir)
  const clusterJson = join(sb.dir, 'cluster.json')
  writeFileSync(
    clusterJson,
    JSON.stringify({
      version: 1, name: 'tst', provider: 'local', sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: '/opt/citc/bin',
      // For `citc node resume`: a node whose "slurmd" exits at once (a start failure of class other), all in the sandbox.
      driver: {runDir: join(sb.dir, 'run'), logDir: join(sb.dir, 'node-logs'), slurmd: '/bin/false', slurmdPidFile: join(sb.dir, 'node-%n.pid'), imagesDir: join(sb.dir, 'images'), startTimeoutS: 5},
      confPath: sb.confPath, elasticLog: join(sb.dir, 'elastic.log'),
      monitoring: {dir, prometheusUrl: 'http://127.0.0.1:9090', computeExporterPort: 9100, every: 30},
    }),
  )
  standIn = join(sb.dir, 'stand-in.json')
  writeFileSync(standIn, JSON.stringify({clusterJson}))
  // What two node programs counted.
  recordNodeEvents(dir, {resumeRequests: [{shape: 'local.small'}, {shape: 'local.small'}], startFailures: [{shape: 'local.small', reason: 'capacity'}]})
}, 120_000)

afterAll(async () => {
  spawnSync('scancel', ['-u', 'root'], {env: sb?.env, timeout: 20_000})
  for (const d of slurmds) d.kill('SIGTERM')
  await sleep(500)
  for (const d of slurmds) if (d.exitCode === null) d.kill('SIGKILL')
  await sb?.stop()
}, 60_000)

describe('citc metrics collect against slurmctld', () => {
  it('counts nodes in every power state, from the flags', async () => {
    const r = await citc(['metrics', 'collect', '--stand-in', standIn])
    expect([r.code, r.stderr]).toEqual([0, ''])
    const text = prom()
    expect(lines(text, 'citc_slurm_up')).toEqual(['citc_slurm_up 1'])
    const nodes = lines(text, 'citc_slurm_nodes')
    const node = (partition: string, st: string, power: string, drain = false) => `citc_slurm_nodes{partition="${partition}",state="${st}",power="${power}",drain="${drain}",responding="true"}`
    expect(nodes).toContain(`${node('compute', 'mixed', 'on')} 1`)
    expect(nodes).toContain(`${node('compute', 'mixed', 'stop_pending', true)} 1`)
    expect(nodes).toContain(`${node('big', 'idle', 'off')} 2`)
    expect(nodes).toContain(`${node('compute', 'idle', 'off', true)} 1`)
    expect(nodes).toContain(`${node('compute', 'down', 'off')} 1`)
    const byPower = (power: string) => nodes.filter((l) => l.includes(`power="${power}"`)).reduce((s, l) => s + Number(l.split(' ').at(-1)), 0)
    // starting: POWERING_UP and not responding yet; stopping: POWERING_DOWN.
    expect(Object.fromEntries(['on', 'stop_pending', 'starting', 'stopping', 'off'].map((p) => [p, byPower(p)]))).toEqual({on: 1, stop_pending: 1, starting: 1, stopping: 1, off: 4})
    expect(text).toContain('citc_slurm_node_info{node="tst-small-0006",shape="local.small",partition="compute",state="down",power="off",reason="citc: capacity: InsufficientInstanceCapacity for local.small"} 1')
    expect(text).toContain('citc_slurm_node_cpus{node="tst-small-0001",kind="alloc"} 1')
    expect(lines(text, 'citc_slurm_node_idle_seconds')).toEqual(['citc_slurm_node_idle_seconds{node="tst-small-0001"} 0'])
    expect(lines(text, 'citc_slurm_jobs')).toEqual(['citc_slurm_jobs{partition="big",state="pending",reason="JobHeldUser"} 10', 'citc_slurm_jobs{partition="compute",state="running"} 2'])
    expect(text).toContain('citc_node_resume_requests_total{shape="local.small"} 2\n')
    expect(text).toContain('citc_node_start_failures_total{shape="local.small",reason="capacity"} 1\n')
    // sdiag's figure: 3 submissions at least (two jobs and one array).
    expect(Number(/^citc_slurm_jobs_submitted_total (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(3)
  }, 60_000)

  it("lists only the node that is on in nodes.json, at the address it registered from", () => {
    expect(JSON.parse(readFileSync(join(dir, 'nodes.json'), 'utf8'))).toEqual([{targets: ['127.0.0.1:9100'], labels: {node: 'tst-small-0001', partition: 'compute', shape: 'local.small'}}])
  })

  it('writes what promtool check metrics accepts', () => {
    const r = spawnSync('promtool', ['check', 'metrics'], {input: prom(), encoding: 'utf8', timeout: 20_000})
    expect([r.status, `${r.stdout}${r.stderr}`]).toEqual([0, ''])
  })

  it('keeps collecting with --every until SIGTERM, then exits 0', async () => {
    const file = join(dir, 'citc.prom')
    const mtimes = new Set<number>()
    let child: ChildProcess | undefined
    const done = citc(['metrics', 'collect', '--every', '1', '--stand-in', standIn], {onSpawn: (c) => (child = c), timeoutMs: 60_000})
    await waitFor('three cycles', () => (mtimes.add(statSync(file).mtimeMs), mtimes.size >= 4), 30_000, 100)
    const signalled = Date.now()
    child!.kill('SIGTERM')
    const r = await done
    expect([r.code, r.stderr]).toEqual([0, ''])
    // It ends the cycle it is in (against a real slurmctld, seconds on a loaded machine), then exits:
    // a bound far from this machine's speed; one that ignored SIGTERM would run until citc's 60 s.
    expect(Date.now() - signalled).toBeLessThan(30_000)
  }, 60_000)

  it("has `citc node resume` count its nodes and failures by shape and class, and rewrite nodes.json", async () => {
    const nodesFile = join(dir, 'nodes.json')
    rmSync(nodesFile)
    rmSync(join(dir, 'citc.prom'))
    const r = await citc(['node', 'resume', 'tst-big-0001', '--stand-in', standIn], {timeoutMs: 60_000})
    // It collected while its nodes were changing (Prometheus sees a start that lasts seconds).
    expect(lines(prom(), 'citc_slurm_up')).toEqual(['citc_slurm_up 1'])
    // Its one node failed: exit 1, reported to Slurm; the counts and nodes.json are written all the same.
    expect(r.code).toBe(1)
    expect(readNodeEvents(dir)).toEqual({version: 1, resumeRequests: {'local.small': 2, 'local.big': 1}, startFailures: {'local.small': {capacity: 1}, 'local.big': {other: 1}}})
    expect(JSON.parse(readFileSync(nodesFile, 'utf8')).map((g: {labels: {node: string}}) => g.labels.node)).toEqual(['tst-small-0001'])
    const c = await citc(['metrics', 'collect', '--stand-in', standIn])
    expect(c.code).toBe(0)
    expect(lines(prom(), 'citc_node_start_failures_total')).toEqual([
      'citc_node_start_failures_total{shape="local.big",reason="other"} 1',
      'citc_node_start_failures_total{shape="local.small",reason="capacity"} 1',
    ])
  }, 90_000)

  it('when slurmctld is stopped: up 0, the last figures and nodes.json kept, exit 0 with the reason on stderr and in the elastic log', async () => {
    const before = prom()
    const nodesBefore = readFileSync(join(dir, 'nodes.json'), 'utf8')
    // The jobs go first (their slurmstepd would outlive slurmctld and the test).
    run('scancel', ['-u', 'root'])
    await waitFor('the jobs to end', () => ['tst-small-0001', 'tst-small-0002'].every((n) => !/MIXED|COMPLETING/.test(state(n))), 30_000, 250)
    const pid = sb.controllerPid()!
    process.kill(pid, 'SIGTERM')
    await waitFor('slurmctld to stop', () => !sb.ping() && spawnSync('kill', ['-0', String(pid)]).status !== 0, 30_000, 200)
    const r = await citc(['metrics', 'collect', '--stand-in', standIn], {timeoutMs: 90_000})
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/slurmctld did not answer; wrote .*citc\.prom with citc_slurm_up 0/)
    const after = prom()
    expect(lines(after, 'citc_slurm_up')).toEqual(['citc_slurm_up 0'])
    for (const name of ['citc_slurm_nodes', 'citc_slurm_node_info', 'citc_slurm_jobs', 'citc_node_start_failures_total']) expect(lines(after, name), name).toEqual(lines(before, name))
    expect(lines(after, 'citc_collect_errors_total')).toEqual(['scontrol', 'sdiag', 'squeue'].map((c) => `citc_collect_errors_total{command="${c}"} 1`))
    expect(readFileSync(join(dir, 'nodes.json'), 'utf8')).toBe(nodesBefore)
    expect(readFileSync(join(sb.dir, 'elastic.log'), 'utf8')).toMatch(/citc-metrics\[\d+\] metrics: slurmctld did not answer/)
    const check = spawnSync('promtool', ['check', 'metrics'], {input: after, encoding: 'utf8', timeout: 20_000})
    expect([check.status, `${check.stdout}${check.stderr}`]).toEqual([0, ''])
  }, 120_000)
})
