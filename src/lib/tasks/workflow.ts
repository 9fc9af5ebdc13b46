// One shape for the cluster workflows (create, finish, add-user, destroy): the plumbing each of them
// needs, written once, so that a workflow is its checks, its steps and its summary.
//
//   lock       the cluster's state dir is held for the whole run (cluster/lock.ts), as `command`
//   interrupt  Ctrl-C / SIGTERM abort `signal`; a failure after it reaches `rewrap` as interrupted (one
//              that is not a CitcError becomes a `cancelled` one: exit 130, not 1), and the clean-ups run
//              before the lock is released
//   journal    a step with a `journal` name is marked done when it succeeds (with what it returned, if
//              anything); with `resume`, a step done in an earlier run is skipped; a `reset` forgets
//              them all but the ones it is told to `keep`
//   logs       `logFile('ansible')` is <cluster>/logs/ansible-<stamp>.log, one stamp for the whole run
//   session    `wf.connect(record)` opens the management node (management-session.ts), logged to the
//              run's log (`log.kind`), and closes it when the workflow ends
//   errors     a failure of the steps (or of `guard`ed work) goes through the workflow's `rewrap`, which
//              says how to go on (`--resume`, the log to read) — or, without one, is made to name the
//              run's full log (`log`); errors before the steps keep their own hint
//
//   return clusterWorkflow({paths, command: 'citc create', renderer, journal: {resume, reset}, rewrap}, async (wf) => {
//     const transport = await wf.connect(record)    // closed when the workflow ends
//     const ctx = {...wf.context, record}            // the steps' typed context
//     await wf.steps([installAnsible, configure], ctx)
//     return {...}
//   })
//
// A step is a small named function over that context (listr2 shows its title, output and duration).
import {join} from 'node:path'

import type {ListrTask} from 'listr2'

import type {RendererName} from '../base-command.js'
import {Journal} from '../cluster/journal.js'
import {type LockOptions, withLock} from '../cluster/lock.js'
import type {ClusterPaths} from '../cluster/registry.js'
import {cancelled, CitcError} from '../errors.js'
import type {Transport} from '../transport/types.js'
import {taskList, withInterrupts} from './listr.js'
import {openSession, type SessionOptions, type SessionTarget} from './management-session.js'

/** What every step gets, whatever the workflow. */
export interface WorkflowContext {
  /** Aborted on Ctrl-C / SIGTERM: pass it to everything that waits. */
  readonly signal: AbortSignal
  readonly journal: Journal
  /** Whether this run continues an earlier one (--resume): journaled steps done then are skipped. */
  readonly resume: boolean
  /** A log file of this run in the cluster's logs/: `<kind>-<stamp>.log`. */
  logFile(kind: string): string
  /** The skip message for a journaled step done in an earlier run (with --resume), else false. */
  doneEarlier(step: string): string | false
}

/** What a step may change on its line in the task list. */
export interface StepTask {
  title: string
  output: string
}

export interface Step<Ctx> {
  /** Its line in the task list (a function: from the context, when the list starts); the step may change it. */
  title: string | ((ctx: Ctx) => string)
  /**
   * The journal's name for the step (existing clusters' journals use these names: never rename one).
   * Marked done when the step succeeds, with what `run` returned as its data (unless undefined); with
   * --resume, skipped when done in an earlier run — unless `always`.
   */
  journal?: string
  /** Run even when the journal says done (what it makes does not outlive a run: a connection, a render). */
  always?: boolean
  /** Another reason to skip: its message, or false. Asked after the journal. */
  skip?: (ctx: Ctx) => string | false
  run: (ctx: Ctx, task: StepTask) => unknown
  /** How listr2 shows the step's output: `outputBar: 1` keeps the last line under a long step. */
  rendererOptions?: {outputBar?: number; persistentOutput?: boolean}
}

export interface WorkflowSpec {
  /** The cluster's state paths: its dir is locked, its journal and logs/ used. */
  paths: Pick<ClusterPaths, 'dir' | 'journal' | 'logsDir'>
  /** Who holds the lock, as the user typed it: "citc create". */
  command: string
  renderer: RendererName
  /** Lock options: `wait` (and its bound) for commands with a --wait flag. */
  lock?: Pick<LockOptions, 'wait' | 'timeoutMs'>
  /**
   * Journaled workflows: `reset` forgets every step first (a plain re-run converges every step again),
   * except those in `keep`: records of what outlives a run (create's "apply-started": Terraform may
   * have made something, and destroy trusts the journal on that).
   */
  journal?: {resume: boolean; reset: boolean; keep?: readonly string[]}
  /**
   * The error a failed step ends with. Gets CitcErrors only: an error of another kind passes
   * unchanged, unless the run was interrupted (then it becomes a `cancelled` one first).
   * `interrupted`: Ctrl-C was pressed, or the error is a cancellation.
   */
  rewrap?: (error: CitcError, run: {interrupted: boolean; logFile: (kind: string) => string}) => Error
  /**
   * The run's log of the management node, `<kind>-<stamp>.log`: `wf.connect()` writes it, and (without
   * a `rewrap`) a failure names it — its own hint, else "full log: FILE".
   */
  log?: FullLog
}

export interface FullLog {
  kind: string
  /** Failures that changed nothing and say all there is (bad input, a refusal): passed unchanged. */
  passThrough?: (error: CitcError) => boolean
  /** The log also in the error's details (`logFile` of the JSON error document). */
  inDetails?: boolean
}

/** A failure that names the run's full log: its own hint if it has one, else "full log: FILE". */
export function namingFullLog(error: CitcError, logFile: string, o: Omit<FullLog, 'kind'> = {}): CitcError {
  if (o.passThrough?.(error)) return error
  return new CitcError(error.kind, error.message, {
    hint: error.hint ?? `full log: ${logFile}`,
    details: o.inDetails ? {...error.details, logFile} : error.details,
    cause: error,
  })
}

export interface Workflow {
  /** The plumbing part of a step context: spread it into the workflow's own (`{...wf.context, record}`). */
  readonly context: WorkflowContext
  readonly signal: AbortSignal
  readonly journal: Journal
  logFile(kind: string): string
  /** Run steps in a task list over `ctx`; a failure is re-wrapped (spec.rewrap). */
  steps<Ctx extends WorkflowContext>(steps: ReadonlyArray<Step<Ctx>>, ctx: Ctx): Promise<Ctx>
  /** Run other work of the workflow (a confirmation between task lists, a library call) with the same re-wrap. */
  guard<T>(fn: () => Promise<T>): Promise<T>
  /** Run `fn` when the workflow ends, failed or not, before the lock is released (last added, first run). */
  cleanup(fn: () => Promise<unknown> | unknown): void
  /**
   * A session with the management node (as root unless told), logged to `<log>-<stamp>.log` (default:
   * the spec's `log.kind`; none: not logged), obeying Ctrl-C, closed when the workflow ends.
   */
  connect(to: SessionTarget, o?: Omit<SessionOptions, 'logFile'> & {log?: string}): Promise<Transport>
}

const DONE_EARLIER = 'done in an earlier run (--resume)'

/** The timestamp in log file names: an ISO time with ":" and "." as "-". */
export function logStamp(now = new Date()): string {
  return now.toISOString().replace(/[:.]/g, '-')
}

/** Lock the cluster, catch interrupts, open its journal, run `body`, clean up. */
export async function clusterWorkflow<R>(spec: WorkflowSpec, body: (wf: Workflow) => Promise<R>): Promise<R> {
  const stamp = logStamp()
  const logFile = (kind: string) => join(spec.paths.logsDir, `${kind}-${stamp}.log`)
  return withLock(
    spec.paths.dir,
    spec.command,
    () =>
      withInterrupts(async (signal) => {
        const journal = new Journal(spec.paths.journal)
        if (spec.journal) {
          journal.load()
          if (spec.journal.reset) resetJournal(journal, spec.journal.keep ?? [])
        }
        const resume = spec.journal?.resume ?? false
        const context: WorkflowContext = {
          signal,
          journal,
          resume,
          logFile,
          doneEarlier: (step) => (resume && journal.done(step) ? DONE_EARLIER : false),
        }
        const failure = (error: unknown): unknown => {
          const interrupted = signal.aborted || (error instanceof CitcError && error.kind === 'cancelled')
          const known = error instanceof CitcError ? error : interrupted ? cancelled(`${spec.command} interrupted`) : undefined
          if (!known) return error
          if (spec.rewrap) return spec.rewrap(known, {interrupted, logFile})
          return spec.log ? namingFullLog(known, logFile(spec.log.kind), spec.log) : known
        }
        const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
          try {
            return await fn()
          } catch (error) {
            throw failure(error)
          }
        }
        const cleanups: Array<() => Promise<unknown> | unknown> = []
        const wf: Workflow = {
          context,
          signal,
          journal,
          logFile,
          guard,
          cleanup: (fn) => cleanups.push(fn),
          connect: async (to, {log = spec.log?.kind, ...o} = {}) => {
            const transport = await openSession(to, {...o, signal, ...(log === undefined ? {} : {logFile: logFile(log)})})
            cleanups.push(() => transport.close())
            return transport
          },
          steps: (steps, ctx) => guard(() => taskList(steps.map((s) => listrTask(s, context, ctx)), spec.renderer, ctx).run()),
        }
        let result: R
        try {
          result = await body(wf)
        } catch (error) {
          // Every clean-up runs; the run's own error is the one that counts.
          for (const fn of cleanups.reverse()) await Promise.resolve().then(fn).catch(() => {})
          throw error
        }
        // After a success, every clean-up still runs; the first that failed is the error.
        let firstFailure: unknown
        for (const fn of cleanups.reverse()) await Promise.resolve().then(fn).catch((e) => (firstFailure ??= e))
        if (firstFailure !== undefined) throw firstFailure
        return result
      }),
    spec.lock ?? {},
  )
}

/** Forget every step but those in `keep` (each kept with its data). */
function resetJournal(journal: Journal, keep: readonly string[]): void {
  const kept = keep.filter((step) => journal.done(step)).map((step) => ({step, data: journal.data(step)}))
  journal.reset()
  for (const {step, data} of kept) journal.markDone(step, data)
}

function listrTask<Ctx>(step: Step<Ctx>, wf: WorkflowContext, ctx: Ctx): ListrTask<Ctx> {
  return {
    title: typeof step.title === 'function' ? step.title(ctx) : step.title,
    skip: (ctx) => (step.journal && !step.always ? wf.doneEarlier(step.journal) : false) || (step.skip?.(ctx) ?? false),
    task: async (ctx, task) => {
      const data = await step.run(ctx, task)
      if (step.journal) wf.journal.markDone(step.journal, data)
    },
    ...(step.rendererOptions ? {rendererOptions: step.rendererOptions} : {}),
  }
}
