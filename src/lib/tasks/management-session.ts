// A session with a cluster's management node, written once: connect (as root unless told otherwise),
// write every command to the run's log file, and close when the work ends — done, failed or
// interrupted. Workflows open theirs with `wf.connect()` (workflow.ts: the workflow's Ctrl-C handling
// and clean-ups close it); the read-only commands (users, usage, accounts, status, nodes,
// rebuild-image --list), `citc ssh -- COMMAND`, cluster add's checks and destroy's power-down with
// `withManagementNode`, which gives them what a workflow would: Ctrl-C closes the session and ends in
// a `cancelled` error (exit 130, no stack trace).
import type {ClusterRecord} from '../cluster/schema.js'
import {cancelled} from '../errors.js'
import {withLog} from '../transport/logged.js'
import {connectManagement} from '../cluster/management-node.js'
import type {Transport} from '../transport/types.js'
import {withInterrupts} from './interrupts.js'

/** How to reach the node: a cluster's record (its management node), or a connection made another way (create-local: this machine). */
export type SessionTarget = ClusterRecord | ((signal: AbortSignal) => Promise<Transport>)

export interface SessionOptions {
  /** Every command, its exit code and its output are written here (transport/logged.ts). */
  logFile?: string
  /** Root on the management node (the default), or the login user (a cloud cluster's status, `citc ssh`). */
  asRoot?: boolean
  readyTimeoutMs?: number
}

/** Connect, logged when `logFile` is given. The caller closes it (wf.connect and withManagementNode do). */
export async function openSession(to: SessionTarget, o: SessionOptions & {signal: AbortSignal}): Promise<Transport> {
  const transport =
    typeof to === 'function'
      ? await to(o.signal)
      : await connectManagement(to, {asRoot: o.asRoot ?? true, signal: o.signal, ...(o.readyTimeoutMs === undefined ? {} : {readyTimeoutMs: o.readyTimeoutMs})})
  return o.logFile ? withLog(transport, o.logFile) : transport
}

export interface ManagementNodeOptions<T> extends SessionOptions {
  /** As the user typed it ("citc users"): an interrupt ends in "citc users interrupted". */
  command: string
  /** A caller's signal (a workflow's step): it is obeyed, and no Ctrl-C handler of this session's own is installed. */
  signal?: AbortSignal
  /** When the node cannot be reached: what to return instead of the connection's error (status shows what citc knows); may throw. */
  unreachable?: (error: unknown) => T
  /** A failed close after a success is no error: the work is done (destroy's power-down must not report nodes it stopped as running). */
  closeQuietly?: boolean
}

/**
 * Run `fn` with a session on the management node, closed whatever happens. Ctrl-C / SIGTERM (or the
 * caller's signal) closes the session at once — which ends what `fn` waits for — and ends in a
 * `cancelled` error. After a success, a failure to close is the error; after a failure, the failure is.
 */
export async function withManagementNode<T>(to: SessionTarget, o: ManagementNodeOptions<T>, fn: (transport: Transport, signal: AbortSignal) => Promise<T>): Promise<T> {
  return o.signal ? inSession(to, o, o.signal, fn) : withInterrupts((signal) => inSession(to, o, signal, fn))
}

async function inSession<T>(to: SessionTarget, o: ManagementNodeOptions<T>, signal: AbortSignal, fn: (transport: Transport, signal: AbortSignal) => Promise<T>): Promise<T> {
  const interruptedError = () => cancelled(`${o.command} interrupted`)
  let transport: Transport
  try {
    transport = await openSession(to, {...o, signal})
  } catch (error) {
    if (signal.aborted) throw interruptedError()
    if (o.unreachable) return o.unreachable(error)
    throw error
  }
  let onAbort: (() => void) | undefined
  const interrupted = new Promise<never>((_, reject) => {
    onAbort = () => reject(interruptedError())
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, {once: true})
  })
  // Whichever loses the race below settles unobserved: neither may become an unhandled rejection.
  interrupted.catch(() => {})
  const work = Promise.resolve().then(() => fn(transport, signal))
  work.catch(() => {})
  let result: T
  try {
    result = await Promise.race([work, interrupted])
  } catch (error) {
    await transport.close().catch(() => {})
    throw signal.aborted ? interruptedError() : error
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort)
  }
  await (o.closeQuietly ? transport.close().catch(() => {}) : transport.close())
  return result
}
