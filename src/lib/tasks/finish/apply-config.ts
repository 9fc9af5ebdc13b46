// Applying a generated configuration to a cluster, safely: upload, validate with Slurm's own parser,
// back up, swap each file atomically, reconfigure or restart, verify — and put the backup back if
// slurmctld does not come up with the new files. Nodes that leave are powered down first.
import {DEFAULT_PROGRAMS_DIR} from '../../cluster/schema.js'
import {CitcError, remoteError} from '../../errors.js'
import {parseConfLines} from '../../slurm/conf-parse.js'
import {expandHostlist} from '../../slurm/hostlist.js'
import {Controller, isBusy, isPoweredUp} from '../../slurm/controller.js'
import type {Generated} from '../../slurm/generate.js'
import {type FinishPlan, gresPath} from '../../slurm/plan.js'
import type {Transport} from '../../transport/types.js'
import {sleep} from '../../proc.js'
import {generateAndPlan, type GenerateRequest} from './generate-config.js'

export interface ClusterState {
  currentConf?: string
  currentGres?: string
  controllerUp: boolean
  /** citc's PrologSlurmctld is installed on the management node (a registered cluster may lack it). */
  launchPrologInstalled: boolean
  /** A finish was killed between its first rename and slurmctld running the result (its pending mark is there). */
  interrupted: boolean
}

const dirOf = (confPath: string) => confPath.replace(/\/[^/]*$/, '')
/**
 * Written before finish's first rename, removed once slurmctld verifiably runs the files (the new
 * ones, or the old ones again after a rollback). A finish killed in between leaves it: files on disk
 * that slurmctld may not run. The next finish or create sees it and restarts slurmctld (settleUnchanged).
 */
export const pendingMark = (confPath: string) => `${dirOf(confPath)}/.slurm.conf.citc-pending`
/** The upload's names: a finish killed before its renames leaves them. */
const uploads = (confPath: string) => [`${dirOf(confPath)}/.slurm.conf.citc-next`, `${dirOf(confPath)}/.gres.conf.citc-next`]

/** What the cluster runs now. */
export async function readClusterState(transport: Transport, controller: Controller, programsDir: string): Promise<ClusterState> {
  const [conf, gres, prolog, pending] = await Promise.all([
    transport.readFile(controller.confPath),
    transport.readFile(gresPath(controller.confPath)),
    transport.run(['test', '-x', `${programsDir}/prolog-slurmctld`], {timeoutMs: 20_000}),
    transport.readFile(pendingMark(controller.confPath)),
  ])
  const controllerUp = conf ? await controller.ping() : false
  // Node states are read later, and only for the nodes a plan touches (a cluster may have 100k).
  return {
    currentConf: conf?.toString('utf8'),
    currentGres: gres?.toString('utf8'),
    controllerUp,
    launchPrologInstalled: prolog.exitCode === 0,
    interrupted: pending !== undefined,
  }
}

export interface ApplyOptions {
  transport: Transport
  controller: Controller
  plan: FinishPlan
  generated: Generated
  state: ClusterState
  /** Cancel busy nodes' jobs when they leave the configuration (otherwise refuse). */
  force: boolean
  signal?: AbortSignal
  /** Progress for the task list. */
  report?: (message: string) => void
  /** Seconds to wait for slurmctld to answer after a restart. */
  controllerTimeoutS?: number
  /** Seconds to wait for removed nodes to power down. */
  powerDownTimeoutS?: number
  now?: () => Date
}

export interface ApplyResult {
  backup?: string
  action: 'restart' | 'reconfigure' | 'none'
  poweredDown: string[]
}

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')

/**
 * Apply a plan: power down nodes that leave, upload and validate, back up, swap, restart or
 * reconfigure, verify — and on any failure after the swap, restore the backup and bring slurmctld back.
 */
export async function applyFinish(o: ApplyOptions): Promise<ApplyResult> {
  const {transport, controller, plan, generated} = o
  const report = o.report ?? (() => {})
  const confPath = controller.confPath
  const gres = gresPath(confPath)
  const dir = dirOf(confPath)

  // 1. Upload next to the live files and validate with Slurm's own parser, before touching anything.
  const t = stamp((o.now ?? (() => new Date()))())
  const [nextConf, nextGres] = uploads(confPath)
  const pending = pendingMark(confPath)
  o.signal?.throwIfAborted()
  report('uploading the new slurm.conf and gres.conf')
  await transport.writeFile(nextConf, generated.slurmConf, {mode: 0o644})
  await transport.writeFile(nextGres, generated.gresConf, {mode: 0o644})
  const problem = await controller.validate(nextConf)
  if (problem) {
    await transport.run(['rm', '-f', nextConf, nextGres])
    throw remoteError(`Slurm rejects the generated slurm.conf; nothing was changed:\n${problem}`, {
      hint: 'this is a bug in citc or a bad setting under slurm: in limits.yaml; run with --verbose and report it',
    })
  }
  o.signal?.throwIfAborted()

  // 2. Nodes that leave the configuration: never orphaned. Busy ones need --force.
  let poweredDown: string[]
  try {
    poweredDown = await powerDownRemoved(o, report)
  } catch (error) {
    await transport.run(['rm', '-f', nextConf, nextGres])
    throw error
  }
  o.signal?.throwIfAborted()

  // 3. Backup (a failure here changes nothing but leaves no temp file), then each file renamed into
  //    place; from the first rename on, a failure restores the backup.
  let backup: string | undefined
  if (o.state.currentConf !== undefined) {
    backup = `${dir}/backups/slurm.conf.${t}`
    report(`backing up to ${backup}`)
    try {
      await transport.check(['mkdir', '-p', `${dir}/backups`])
      await transport.check(['cp', '-p', confPath, backup])
      if (o.state.currentGres !== undefined) await transport.check(['cp', '-p', gres, `${dir}/backups/gres.conf.${t}`])
    } catch (error) {
      // A full disk leaves a partial copy: remove it with the uploads (nothing else was touched).
      await transport.run(['rm', '-f', nextConf, nextGres, backup, `${dir}/backups/gres.conf.${t}`])
      throw error
    }
  }

  // An earlier interrupted finish's mark means slurmctld may run older files: restart, whatever the plan.
  const action = plan.needsRestart || !o.state.controllerUp || o.state.interrupted ? 'restart' : 'reconfigure'
  try {
    report('swapping in the new configuration')
    await transport.writeFile(pending, `${t}\n`, {mode: 0o644})
    await transport.check(['mv', '-f', nextGres, gres])
    await transport.check(['mv', '-f', nextConf, confPath])
    await activate(o, action, report)
    await transport.check(['rm', '-f', pending])
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    try {
      await rollback(o, backup, t, report)
    } catch (rollbackError) {
      throw remoteError(
        `the new configuration did not take: ${why}\nRolling back failed too: ${rollbackError instanceof Error ? rollbackError.message : String(rollbackError)}`,
        {hint: `restore ${backup ?? 'the previous slurm.conf'} over ${confPath} by hand and restart slurmctld; the rejected file is ${confPath}.rejected-${t}`},
      )
    }
    throw remoteError(
      `the new configuration did not take: ${why}\n` +
        (backup ? `The previous slurm.conf was restored from ${backup} and slurmctld is running it again.` : 'There was no previous slurm.conf to restore.'),
      {hint: `see slurmctld's log on the management node; the rejected file is kept as ${confPath}.rejected-${t}`},
    )
  }
  return {backup, action, poweredDown}
}

/**
 * Nodes that leave the configuration, and running nodes whose definition changes (a local node's
 * port, a cloud node's size): powered down before the swap, so none is orphaned or left running
 * with a definition Slurm no longer has.
 */
async function powerDownRemoved(o: ApplyOptions, report: (m: string) => void): Promise<string[]> {
  const affected = [o.plan.removedNodes, ...o.plan.redefinedNodes].filter(Boolean).join(',')
  if (!affected) return []
  if (!o.state.controllerUp) {
    if (o.plan.removedNodeCount === 0 || o.force) return []
    throw remoteError(`slurmctld is not running, so citc cannot tell whether the ${o.plan.removedNodeCount} node(s) leaving the configuration are running: ${o.plan.removedNodes}`, {
      hint: 'start slurmctld and run finish again, or pass --force if you know those nodes are not running (they would be orphaned otherwise)',
    })
  }
  const leaving = await o.controller.nodes(affected)
  const up = leaving.filter(isPoweredUp)
  if (up.length === 0) return []
  const busy = up.filter(isBusy)
  if (busy.length > 0 && !o.force) {
    throw new CitcError('invalidInput', `${busy.length} node(s) leaving or changing in the configuration are running jobs: ${busy.map((n) => n.name).join(', ')}`, {
      hint: 'wait for their jobs to end, or pass --force to cancel those jobs and power the nodes down',
    })
  }
  const names = up.map((n) => n.name)
  const list = names.join(',')
  report(`draining and powering down ${names.length} node(s) that leave or change in the configuration`)
  // Only nodes that leave are drained: a drain would outlive the restart on nodes that stay.
  const removed = new Set(o.plan.removedNodes ? expandHostlist(o.plan.removedNodes) : [])
  const draining = names.filter((n) => removed.has(n))
  if (draining.length > 0) await o.controller.update([`NodeName=${draining.join(',')}`, 'State=DRAIN', 'Reason=citc finish: removed from limits.yaml'])
  await o.controller.update([`NodeName=${list}`, 'State=POWER_DOWN_FORCE'])
  const deadline = Date.now() + (o.powerDownTimeoutS ?? 300) * 1000
  for (;;) {
    o.signal?.throwIfAborted()
    const still = (await o.controller.nodes(list)).filter((n) => !n.state.includes('POWERED_DOWN'))
    if (still.length === 0) return names
    if (Date.now() > deadline) {
      throw remoteError(`nodes did not power down in time: ${still.map((n) => `${n.name} (${n.state.join('+')})`).join(', ')}`, {
        hint: 'nothing was changed in slurm.conf; check the elastic log on the management node and run finish again',
      })
    }
    await sleep(1000)
  }
}

async function activate(o: ApplyOptions, action: 'restart' | 'reconfigure', report: (m: string) => void): Promise<void> {
  const timeoutMs = (o.controllerTimeoutS ?? 60) * 1000
  report(action === 'restart' ? 'restarting slurmctld' : 'scontrol reconfigure')
  if (action === 'restart') await o.controller.restart()
  else await o.controller.reconfigure()
  report('verifying that slurmctld answers and knows the nodes')
  if (!(await o.controller.waitUp(timeoutMs, {pidFile: pidFileOf(o.generated.slurmConf)}))) {
    throw new Error(`slurmctld did not come up with the new configuration (it exited, or did not answer within ${timeoutMs / 1000} s)`)
  }
  const configured = [...o.generated.groups.map((g) => g.hostlist), ...o.generated.staticNodes.map((n) => n.name)]
  const expected = o.generated.groups.reduce((n, g) => n + g.count, 0) + o.generated.staticNodes.length
  const known = configured.length === 0 ? 0 : (await o.controller.nodes(configured.join(','))).length
  if (known !== expected) throw new Error(`slurmctld knows ${known} of the ${expected} configured nodes`)
  // Joined machines' slurmd run configless: they get the new slurm.conf only when slurmctld pushes it,
  // which a restart does not do. Reconfigure now that slurmctld runs the new node lines (never instead
  // of the restart: on 22.05.8 a reconfigure that adds a NodeName line kills slurmctld).
  const s = o.plan.staticNodes
  if (action === 'restart' && s.added.length + s.removed.length + s.changed.length > 0) {
    report('scontrol reconfigure (joined machines fetch the new slurm.conf)')
    await o.controller.reconfigure()
    if (!(await o.controller.waitUp(timeoutMs, {pidFile: pidFileOf(o.generated.slurmConf)}))) {
      throw new Error(`slurmctld stopped answering after scontrol reconfigure (it did not within ${timeoutMs / 1000} s)`)
    }
  }
}

/** SlurmctldPidFile of a slurm.conf (Slurm's default when unset). */
function pidFileOf(conf: string): string {
  const line = parseConfLines(conf).find((e) => e.key.toLowerCase() === 'slurmctldpidfile')
  return line?.value || '/var/run/slurmctld.pid'
}

async function rollback(o: ApplyOptions, backup: string | undefined, t: string, report: (m: string) => void): Promise<void> {
  const confPath = o.controller.confPath
  const dir = dirOf(confPath)
  report('rolling back to the previous configuration')
  await o.transport.run(['cp', '-p', confPath, `${confPath}.rejected-${t}`])
  if (!backup) return
  await o.transport.check(['cp', '-p', backup, `${dir}/.slurm.conf.citc-restore`])
  await o.transport.check(['mv', '-f', `${dir}/.slurm.conf.citc-restore`, confPath])
  const gres = gresPath(confPath)
  if (o.state.currentGres === undefined) {
    await o.transport.check(['rm', '-f', gres])
  } else {
    await o.transport.check(['cp', '-p', `${dir}/backups/gres.conf.${t}`, `${dir}/.gres.conf.citc-restore`])
    await o.transport.check(['mv', '-f', `${dir}/.gres.conf.citc-restore`, gres])
  }
  await o.controller.restart()
  const restored = o.state.currentConf ?? ''
  if (!(await o.controller.waitUp((o.controllerTimeoutS ?? 60) * 1000, {pidFile: pidFileOf(restored)}))) {
    throw remoteError('rollback restored the previous slurm.conf, but slurmctld does not answer', {
      hint: `log in to the management node and check slurmctld (service slurmctld status); backup: ${backup}`,
    })
  }
  // slurmctld runs the old files again: nothing is pending.
  await o.transport.run(['rm', '-f', pendingMark(confPath)])
}

/** Why slurmctld must be (re)started although the configuration does not change, or undefined. */
export function settleReason(state: ClusterState): string | undefined {
  if (state.interrupted) return 'an earlier citc finish was interrupted after changing slurm.conf: slurmctld is restarted so that it runs the file'
  if (!state.controllerUp) return 'slurmctld is not running: it is started with the configuration it has'
  return undefined
}

/**
 * With nothing to change: bring slurmctld in line with the files on disk — start it when it is down,
 * restart it when an interrupted finish left it running older ones (its pending mark) — verify it
 * knows the configured nodes, and remove what an interrupted finish left (the mark, its uploads).
 */
export async function settleUnchanged(o: Omit<ApplyOptions, 'force'>): Promise<ApplyResult> {
  const reason = settleReason(o.state)
  const report = o.report ?? (() => {})
  if (reason) {
    report(reason)
    try {
      await activate({...o, force: false}, 'restart', report)
    } catch (error) {
      throw remoteError(`slurmctld does not run the configuration on disk: ${error instanceof Error ? error.message : String(error)}`, {
        hint: `see slurmctld's log on the management node; ${o.controller.confPath} is the configuration it was started with`,
      })
    }
  }
  await o.transport.check(['rm', '-f', pendingMark(o.controller.confPath), ...uploads(o.controller.confPath)])
  return {action: reason ? 'restart' : 'none', poweredDown: []}
}

/**
 * Finish without a confirmation step, for workflows that already have the user's go-ahead
 * (create): read, generate, apply if anything changed — and, with nothing to change, still start a
 * slurmctld that is not running (a re-run of create after the machine restarted).
 */
export async function finishUnattended(o: {
  transport: Transport
  controller: Controller
  request: Omit<GenerateRequest, 'current'>
  signal?: AbortSignal
  report?: (m: string) => void
}): Promise<{plan: FinishPlan; result?: ApplyResult}> {
  const state = await readClusterState(o.transport, o.controller, o.request.elastic?.programsDir ?? DEFAULT_PROGRAMS_DIR)
  const {generated, plan} = generateAndPlan(state, o.request, o.controller.confPath)
  if (!plan.changed) {
    const result = await settleUnchanged({transport: o.transport, controller: o.controller, plan, generated, state, signal: o.signal, report: o.report})
    return {plan, ...(result.action === 'none' ? {} : {result})}
  }
  const result = await applyFinish({transport: o.transport, controller: o.controller, plan, generated, state, force: false, signal: o.signal, report: o.report})
  return {plan, result}
}
