// `citc node remove NAME…`: a joined machine leaves the cluster.
//   1. drain it and wait for its jobs (--force requeues them)
//   2. over SSH: slurmd stopped and disabled, the munge key and citc's files removed (node-remove.yml),
//      unless --keep-software; a machine that cannot be reached is a warning, not a failure
//   3. limits.yaml and slurm.conf without it (restart slurmctld, then reconfigure); its host key unpinned
import {clusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError, usageError} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import {sleep} from '../../proc.js'
import {Controller, isBusy} from '../../slurm/controller.js'
import type {StaticNodeSpec} from '../../slurm/limits-types.js'
import type {Transport} from '../../transport/types.js'
import {clusterWorkflow, type Step, type WorkflowContext} from '../workflow.js'
import {withJoinedSession, type JoinedSession} from './joined-session.js'
import {playbookRunFor, runMachinesPlaybook, runManagementPlaybook, type PlaybookRun} from './joined-playbooks.js'
import {defaultKeyPath, JOINED_KNOWN_HOSTS, unpinHostKey} from './machine-access.js'
import {applyStoredLimits, readStoredLimits, storedStaticNodes, withoutJoined} from './stored-limits.js'

export interface NodeRemoveInput {
  cluster?: string
  names: string[]
  force: boolean
  keepSoftware: boolean
  key?: string
  /** Seconds to wait for the machines' jobs to end. */
  drainTimeoutS: number
  wait: boolean
}

interface RemoveContext extends WorkflowContext, JoinedSession {
  io: Io
  input: NodeRemoveInput
  record: ClusterRecord
  dir: string
  limitsText: string
  leaving: StaticNodeSpec[]
  remaining: StaticNodeSpec[]
  warnings: string[]
  requeued: string[]
}

export async function runNodeRemove(io: Io, input: NodeRemoveInput, dataDir: string) {
  if (input.names.length === 0) throw usageError('no node given', 'name the joined machines to remove: citc node remove NAME…')
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const paths = registry.paths(name)
  // Checked before the lock for a quick answer, and again under it.
  const stored = storedStaticNodes(readStoredLimits(paths.dir), record)
  const unknown = input.names.filter((n) => !stored.some((s) => s.name === n))
  if (unknown.length > 0) {
    throw usageError(
      `not a joined machine of ${name}: ${unknown.join(', ')}`,
      stored.length > 0 ? `joined machines: ${stored.map((s) => s.name).join(', ')} (elastic nodes come and go with limits.yaml and citc finish)` : `${name} has no joined machines (elastic nodes come and go with limits.yaml and citc finish)`,
    )
  }
  await confirmOrRefuse(io, `Remove ${input.names.join(', ')} from ${name}${input.force ? ' (their jobs are requeued)' : ' (after their jobs end)'}?`)

  return clusterWorkflow({paths, command: 'citc node remove', renderer: io.renderer, lock: {wait: input.wait, timeoutMs: 30 * 60_000}, log: {kind: 'node-remove'}}, (wf) =>
    withJoinedSession(wf, record, 'node-remove', async (session) => {
      // Read again under the lock: another node add or remove may have run since.
      const limitsText = readStoredLimits(paths.dir)
      const now = storedStaticNodes(limitsText, record)
      const ctx: RemoveContext = {
        ...wf.context,
        ...session,
        io,
        input,
        record,
        dir: paths.dir,
        limitsText,
        leaving: now.filter((s) => input.names.includes(s.name)),
        remaining: now.filter((s) => !input.names.includes(s.name)),
        warnings: [],
        requeued: [],
      }
      if (ctx.leaving.length === 0) throw usageError(`${input.names.join(', ')} left ${name} meanwhile (another citc node remove)`)
      await wf.steps([drain, releaseMachines, updateConfiguration, stopServing], ctx)
      for (const w of ctx.warnings) io.note(`warning: ${w}`)
      io.note(`Removed: ${ctx.leaving.map((s) => s.name).join(', ')}. Full log: ${ctx.log}`)
      return {cluster: name, removed: ctx.leaving.map((s) => s.name), requeued: ctx.requeued, warnings: ctx.warnings, softwareKept: input.keepSoftware}
    }),
  )
}

const drain: Step<RemoveContext> = {
  title: (ctx) => `Drain ${ctx.leaving.map((s) => s.name).join(', ')}${ctx.input.force ? ' and requeue their jobs' : ' and wait for their jobs'}`,
  run: async (ctx, task) => {
    await drainAndEmpty(ctx.controller, ctx.transport, ctx.leaving.map((s) => s.name), {
      force: ctx.input.force,
      timeoutS: ctx.input.drainTimeoutS,
      signal: ctx.signal,
      reason: 'citc node remove',
      report: (m) => (task.output = m),
      requeued: (ids) => ctx.requeued.push(...ids),
    })
  },
}

/** Drain nodes and wait (bounded) until none runs a job; with force, their jobs are requeued first. */
export async function drainAndEmpty(
  controller: Controller,
  t: Transport,
  names: string[],
  o: {force: boolean; timeoutS: number; signal?: AbortSignal; reason: string; report: (m: string) => void; requeued?: (ids: string[]) => void},
): Promise<void> {
  const known = (await controller.nodes(names.join(','))).map((n) => n.name)
  if (known.length === 0) return
  await controller.update([`NodeName=${known.join(',')}`, 'State=DRAIN', `Reason=${o.reason}`])
  if (o.force) {
    const jobs = await t.run(controller.slurmArgv('squeue', ['-h', '-w', known.join(','), '-o', '%A']), {timeoutMs: 30_000})
    const ids = [...new Set(jobs.stdout.split('\n').map((l) => l.trim()).filter(Boolean))]
    if (ids.length > 0) {
      o.report(`requeueing ${ids.length} job(s): ${ids.join(', ')}`)
      // A job that cannot be requeued (not batch, or --no-requeue) is cancelled instead: the node must empty.
      const r = await t.run(controller.slurmArgv('scontrol', ['requeue', ids.join(',')]), {timeoutMs: 30_000})
      if (r.exitCode !== 0) await t.run(controller.slurmArgv('scancel', ids), {timeoutMs: 30_000})
      o.requeued?.(ids)
    }
  }
  const deadline = Date.now() + o.timeoutS * 1000
  for (;;) {
    o.signal?.throwIfAborted()
    const busy = (await controller.nodes(known.join(','))).filter(isBusy)
    if (busy.length === 0) return
    if (Date.now() > deadline) {
      throw new CitcError('remote', `jobs still run on ${busy.map((n) => n.name).join(', ')} after ${o.timeoutS} s; the machines stay drained and joined`, {
        hint: 'wait for the jobs and run citc node remove again, or pass --force to requeue them',
      })
    }
    o.report(`waiting for the jobs on ${busy.map((n) => n.name).join(', ')}`)
    await sleep(2000)
  }
}


const releaseMachines: Step<RemoveContext> = {
  title: 'Stop slurmd on the machines and remove the cluster’s key and settings (over SSH)',
  skip: (ctx) => (ctx.input.keepSoftware ? '--keep-software: the machines are left as they are' : false),
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    for (const s of ctx.leaving) {
      try {
        await releaseMachine(playbookRunFor(ctx, task), s, ctx.input.key)
      } catch (error) {
        ctx.warnings.push(`${s.name} (${s.address}) was not cleaned: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}; stop slurmd and remove /etc/munge/munge.key there by hand`)
      }
    }
  },
}

/** node-remove.yml on one machine, with its pinned key. */
export async function releaseMachine(run: PlaybookRun, s: StaticNodeSpec, key?: string): Promise<void> {
  // The key it joined with (recorded by node add), unless another is given now.
  const keyPath = key ?? s.ssh.key ?? defaultKeyPath()
  const login = {host: s.address, port: s.ssh.port, user: s.ssh.user, keyPath, knownHosts: JOINED_KNOWN_HOSTS}
  await runMachinesPlaybook(run, 'node-remove.yml', [{name: s.name, login, slurmPackage: '', shared: s.shared}], {keep_software: false, shared_dir: '/mnt/shared'})
}

const updateConfiguration: Step<RemoveContext> = {
  title: 'Drop them from limits.yaml and slurm.conf (restart slurmctld, then reconfigure)',
  run: async (ctx, task) => {
    const text = withoutJoined(ctx.limitsText, ctx.leaving.map((s) => s.name))
    await applyStoredLimits({ctx, text, report: (m) => (task.output = m)})
    for (const s of ctx.leaving) await unpinHostKey(ctx.transport, {host: s.address, port: s.ssh.port})
  },
}

const stopServing: Step<RemoveContext> = {
  title: 'Serve only the remaining machines from the management node',
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    await runManagementPlaybook(playbookRunFor(ctx, task), {
      joined_addresses: ctx.remaining.map((s) => s.address),
      controller_addr: ctx.leaving[0].controller,
      shared_mode: ctx.remaining.some((s) => s.shared === 'nfs') ? 'nfs' : 'none',
    })
  },
}
