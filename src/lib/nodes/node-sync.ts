// `citc node sync`: the watchdog that keeps the cloud (or this machine's slurmd processes) and Slurm
// agreeing (issue #11 "Watchdog"). Run every 60 s on the management node — a systemd timer, or the
// citc-node-sync service's loop where systemd does not run (roles/citc_programs) — one run at a time.
// Per run: Slurm's nodes and the driver's list() → planSync (sync-plan.ts, pure) → each action done
// and logged as one line to the elastic log; what the next run must remember (and a heartbeat) goes to
// <stateDir>/state.json.
//
// Checked against this machine's slurmctld 22.05.8 before writing the actions (PrivateData=cloud):
// after `State=DOWN Reason=…` then `State=POWER_DOWN_FORCE` a node ends IDLE+CLOUD+POWERED_DOWN with
// the reason kept — so the `citc: capacity:`/`citc: quota:` reasons the resume program sets stay
// readable here, but the node is schedulable again once powered down (hence the cooldown hold). A
// DRAINed powered-down node given `State=RESUME` becomes IDLE+POWERED_DOWN+NOT_RESPONDING and still
// powers up for a job; a release therefore also powers it down (POWER_DOWN_FORCE), which clears
// NOT_RESPONDING, so the stuck rule does not take it for stuck 5 minutes later.
import {existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {pidAlive} from '../proc.js'
import type {CloudInstance, DriverContext, NodeDriver} from '../providers/types.js'
import type {Controller, NodeState} from '../slurm/controller.js'
import {featureValue} from '../slurm/nodes.js'
import {emptyMemory, planSync, type SyncAction, type SyncMemory, type SyncSettings} from './sync-plan.js'

export const SYNC_STATE_DIR = '/var/lib/citc/node-sync'

export interface SyncStateFile {
  version: 1
  /** Epoch ms of the last run that finished (the heartbeat). */
  lastRun: number
  memory: SyncMemory
}

export interface SyncActionResult {
  kind: SyncAction['kind']
  /** The node(s) or instance acted on. */
  target: string
  ok: boolean
  error?: string
  log: string
}

export interface SyncResult {
  actions: SyncActionResult[]
  /** Nodes kept DOWN for an admin (a quota, permission or setting refusal). */
  adminDown: Array<{name: string; reason: string}>
  instances: number
  nodes: number
}

export interface SyncDeps {
  driver: NodeDriver
  controller: Pick<Controller, 'nodes' | 'update'>
  ctx: DriverContext
  stateDir: string
  settings?: Partial<SyncSettings>
}

function readState(file: string): SyncStateFile | undefined {
  if (!existsSync(file)) return undefined
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as SyncStateFile
    return s.version === 1 && s.memory ? s : undefined
  } catch {
    return undefined // a torn file: start afresh (loses at most one run's memory)
  }
}

/** One run at a time: a pid lock file; one left by a dead run is taken over. */
function lock(stateDir: string): (() => void) | undefined {
  const file = join(stateDir, 'lock')
  for (let i = 0; i < 2; i++) {
    try {
      writeFileSync(file, `${process.pid}\n`, {flag: 'wx'})
      return () => rmSync(file, {force: true})
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = Number(readFileSync(file, 'utf8').trim())
      if (Number.isInteger(holder) && holder > 0 && pidAlive(holder)) return undefined
      rmSync(file, {force: true})
    }
  }
  return undefined
}

/**
 * The nodes the watchdog looks after: Slurm's CLOUD nodes, which have instances. Joined machines
 * (`citc node add`: static lines, no CLOUD) have none, and must never be put down as "instance gone".
 */
export const elasticNodes = <N extends {state: string[]}>(nodes: N[]): N[] => nodes.filter((n) => n.state.includes('CLOUD'))

const nodeOf = (n: NodeState) => {
  const ad = featureValue(n.features, 'ad')
  return {name: n.name, state: n.state, reason: n.reason, shape: featureValue(n.features, 'shape') ?? 'unknown', ad: ad ? Number(ad) : undefined, arch: featureValue(n.features, 'arch')}
}

/** A run that did nothing, and why. */
export interface SyncSkipped {
  skipped: string
}

/**
 * The cloud's machines, or an error that says so: without the list nothing can be judged (an empty one
 * would make every node look vanished), so the run does nothing and the next one, a minute later,
 * tries again — what a cloud API outage comes to (issue #23, fault 5).
 */
async function listInstances(driver: NodeDriver): Promise<CloudInstance[]> {
  try {
    return await driver.list()
  } catch (error) {
    // The SDKs' errors carry the cloud's code as their name (InternalError, TimeoutError).
    const message = error instanceof Error ? `${error.name && error.name !== 'Error' ? `${error.name}: ` : ''}${error.message.split('\n', 1)[0]}` : String(error)
    throw new Error(`could not list the cluster's instances: ${message}; nothing done (the next run tries again)`, {cause: error})
  }
}

/** One watchdog run; skipped when another run holds the lock (the other one acts). */
export async function runNodeSync(d: SyncDeps): Promise<SyncResult | SyncSkipped> {
  mkdirSync(d.stateDir, {recursive: true})
  const release = lock(d.stateDir)
  if (!release) {
    d.ctx.log('node sync: another run is still working; this one does nothing')
    return {skipped: 'another run is still working'}
  }
  try {
    const stateFile = join(d.stateDir, 'state.json')
    const [all, instances] = await Promise.all([d.controller.nodes(), listInstances(d.driver)])
    const states = elasticNodes(all)
    const plan = planSync({
      nodes: states.map(nodeOf),
      instances: instances.map((i) => ({name: i.name, id: i.id, launchedAt: i.launchedAt, state: i.state})),
      memory: readState(stateFile)?.memory ?? emptyMemory(),
      now: d.ctx.now(),
      settings: d.settings,
    })
    const results: SyncActionResult[] = []
    for (const a of plan.actions) results.push(await act(a, instances, d))
    const state: SyncStateFile = {version: 1, lastRun: d.ctx.now(), memory: plan.memory}
    writeFileSync(`${stateFile}.tmp`, `${JSON.stringify(state, null, 2)}\n`)
    // rename is atomic: a status read never sees half a file.
    renameSync(`${stateFile}.tmp`, stateFile)
    return {actions: results, adminDown: plan.adminDown, instances: instances.length, nodes: states.length}
  } finally {
    release()
  }
}

async function act(a: SyncAction, instances: CloudInstance[], d: SyncDeps): Promise<SyncActionResult> {
  const target = a.kind === 'terminate' ? `${a.id} (${a.name})` : a.kind === 'down-and-power-down' || a.kind === 'keep-down' ? a.node : a.nodes.join(',')
  d.ctx.log(a.log)
  try {
    switch (a.kind) {
      case 'terminate': {
        const instance = instances.find((i) => i.id === a.id) ?? {id: a.id, name: a.name, state: 'running' as const, launchedAt: 0}
        const [outcome] = await d.driver.terminate([instance], d.ctx)
        if (outcome && !outcome.ok) throw new Error(outcome.error ?? 'terminate failed')
        break
      }
      case 'down-and-power-down':
        await d.controller.update([`NodeName=${a.node}`, 'State=DOWN', `Reason=${a.reason}`])
        await d.controller.update([`NodeName=${a.node}`, 'State=POWER_DOWN_FORCE'])
        break
      case 'keep-down':
        await d.controller.update([`NodeName=${a.node}`, 'State=DOWN', `Reason=${a.reason}`])
        break
      case 'hold':
        await d.controller.update([`NodeName=${a.nodes.join(',')}`, 'State=DRAIN', `Reason=${a.reason}`])
        break
      case 'release': {
        // RESUME is refused for a node neither drained nor down — the failed node itself when it powered
        // down only after its cooldown ended, its `citc: capacity:` reason still on it. Draining first
        // makes every one of them resumable, and RESUME clears the reason (which would start a new cooldown).
        const nodes = `NodeName=${a.nodes.join(',')}`
        await d.controller.update([nodes, 'State=DRAIN', 'Reason=citc: capacity cooldown over'])
        await d.controller.update([nodes, 'State=RESUME'])
        await d.controller.update([nodes, 'State=POWER_DOWN_FORCE'])
        break
      }
    }
    return {kind: a.kind, target, ok: true, log: a.log}
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n', 1)[0]! : String(error)
    d.ctx.log(`node sync: FAILED ${a.kind} ${target}: ${message}`)
    return {kind: a.kind, target, ok: false, error: message, log: a.log}
  }
}

export interface SyncProgramOptions {
  stateDir?: string
  settings?: Partial<SyncSettings>
  /** Also print each line here (the command's stdout unless --json). */
  echo?: (line: string) => void
}

/** One run on the management node: cluster.json, its driver, slurmctld through scontrol, the elastic log. */
export async function syncFromHost(o: SyncProgramOptions = {}): Promise<SyncResult | SyncSkipped> {
  const [{driverFor, elasticLogger, PROGRAM_BUDGET_MS}, {readNodeHostConfig}, {Controller}, {localTransport}, {realContext}] = await Promise.all([
    import('../tasks/node/node-programs.js'),
    import('../tasks/node/host-config.js'),
    import('../slurm/controller.js'),
    import('../transport/local.js'),
    import('../providers/types.js'),
  ])
  const cfg = readNodeHostConfig()
  // Before `citc finish` there is no Slurm to agree with (the service starts with the management node).
  if (!existsSync(cfg.confPath)) return {skipped: `${cfg.confPath} does not exist yet (citc finish writes it)`}
  const file = elasticLogger(cfg.elasticLog, 'citc-node-sync')
  const log = (m: string) => {
    file(m)
    o.echo?.(m)
  }
  // Each run must end well before the next (60 s): the same budget as a suspend.
  const ctx = realContext(log, PROGRAM_BUDGET_MS.suspend)
  try {
    return await runNodeSync({driver: await driverFor(cfg), controller: new Controller(localTransport(), {confPath: cfg.confPath}), ctx, stateDir: o.stateDir ?? SYNC_STATE_DIR, settings: o.settings})
  } catch (error) {
    log(`node sync: ERROR ${error instanceof Error ? error.message : String(error)}`)
    throw error
  }
}
