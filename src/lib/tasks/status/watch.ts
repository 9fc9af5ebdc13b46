// `citc status --watch`: today's status (from Slurm, no Prometheus needed) again every --interval
// seconds until Ctrl-C. One session with the management node serves every refresh; a refresh that
// fails (node unreachable, controller down) shows its error in place of the figures, drops the
// session (the next refresh connects again) and the watch goes on. Ctrl-C ends it cleanly: the
// session closed, the cursor given back, exit 0.
import {classify} from '../../base-command.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import type {Transport} from '../../transport/types.js'
import {withInterrupts} from '../listr.js'
import {openSession} from '../management-session.js'
import {notMadeYet, statusOn, statusRecord, statusSession, type StatusDocument} from './cluster-status.js'
import {statusText} from './status-text.js'
import {type Screen, screenFor, type ScreenStream} from './watch-screen.js'

export const DEFAULT_INTERVAL_S = 10
export const MIN_INTERVAL_S = 5

/** One refresh: the status, or why it could not be had. */
export type Refresh = {ok: true; doc: StatusDocument} | {ok: false; error: Error & {exitCode?: number}}

export interface StatusSource {
  refresh(signal: AbortSignal): Promise<StatusDocument>
  close(): Promise<void>
}

/**
 * The status of `record` over one session kept between refreshes. A refresh that could not ask the
 * controller (a cloud cluster's status that carries an error, or a thrown error) closes the session:
 * a dead connection is not reused, and the next refresh connects again.
 */
export function statusSource(record: ClusterRecord, connect?: (signal: AbortSignal) => Promise<Transport>): StatusSource {
  let transport: Transport | undefined
  const session = statusSession(record)
  const open = connect ?? ((signal: AbortSignal) => openSession(record, {signal, ...(session.asRoot === undefined ? {} : {asRoot: session.asRoot})}))
  const drop = async () => {
    const t = transport
    transport = undefined
    await t?.close().catch(() => {})
  }
  return {
    async refresh(signal) {
      const notMade = notMadeYet(record)
      if (notMade) return notMade
      if (!transport) {
        try {
          const opened = await open(signal)
          // Ctrl-C while connecting: the watch has already closed its (then empty) session; this one must not outlive it.
          if (signal.aborted) {
            await opened.close().catch(() => {})
            throw new Error('interrupted')
          }
          transport = opened
        } catch (error) {
          if (session.unreachable && !signal.aborted) return session.unreachable(error)
          throw error
        }
      }
      try {
        const doc = await statusOn(record, transport)
        if (doc.controller.error) await drop()
        return doc
      } catch (error) {
        await drop()
        throw error
      }
    },
    close: drop,
  }
}

export interface WatchLoop {
  source: Pick<StatusSource, 'refresh'>
  /** Shows one refresh (`at`: when it started). */
  show: (r: Refresh, at: Date) => void
  intervalMs: number
  signal: AbortSignal
  now?: () => Date
  /** Waits `ms`, or less when `signal` fires. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
}

/** Refresh, show, wait; until the signal fires (at once, even mid-refresh). Returns how many refreshes were shown. */
export async function watchLoop(o: WatchLoop): Promise<number> {
  const now = o.now ?? (() => new Date())
  const sleep = o.sleep ?? abortableSleep
  let shown = 0
  while (!o.signal.aborted) {
    const at = now()
    const r = await untilAborted(
      o.source.refresh(o.signal).then(
        (doc): Refresh => ({ok: true, doc}),
        (error: unknown): Refresh => ({ok: false, error: error instanceof Error ? error : new Error(String(error))}),
      ),
      o.signal,
    )
    if (!r) break
    o.show(r, at)
    shown++
    // The interval runs from the end of a refresh: a slow node never piles refreshes up.
    await sleep(o.intervalMs, o.signal)
  }
  return shown
}

/** The promise's value, or undefined as soon as the signal fires (the promise is left to settle unobserved). */
async function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined
  let onAbort!: () => void
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined)
    signal.addEventListener('abort', onAbort, {once: true})
  })
  try {
    return await Promise.race([p, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, {once: true})
  })
}

const clock = (d: Date) => d.toISOString().slice(11, 19)
const stamp = (d: Date) => d.toISOString().replace(/\.\d+Z$/, 'Z')

/** A refresh for people: the status, or its error and what to do, where the figures would be. */
export function refreshText(r: Refresh): string {
  if (r.ok) return statusText(r.doc)
  const {hint} = classify(r.error)
  return [`Refresh failed: ${r.error.message}`, ...(hint ? [`Try: ${hint}`] : []), '(still watching: the next refresh tries again)'].join('\n')
}

/** A refresh as one line of NDJSON: status's --json document with `refreshedAt`, or an error document as citc's errors are. */
export function refreshJson(r: Refresh, at: Date): string {
  if (r.ok) return JSON.stringify({refreshedAt: stamp(at), ...r.doc})
  const {code, kind, hint, details} = classify(r.error)
  return JSON.stringify({refreshedAt: stamp(at), error: {kind, message: r.error.message, exitCode: code, ...(hint ? {hint} : {}), ...(details ?? {})}})
}

/** How each refresh is shown: NDJSON lines, a frame redrawn in place (terminal), or one block after another. */
export function refreshShower(o: {json: boolean; out: ScreenStream; what: string; intervalS: number; screen?: Screen}): {show: WatchLoop['show']; end: () => void} {
  if (o.json) return {show: (r, at) => void o.out.write(refreshJson(r, at) + '\n'), end: () => {}}
  const screen = o.screen ?? screenFor(o.out)
  const header = o.out.isTTY ? (at: Date) => `Every ${o.intervalS} s: ${o.what} — ${clock(at)} UTC (Ctrl-C to stop)` : (at: Date) => `${stamp(at)} ${o.what} (every ${o.intervalS} s)`
  return {show: (r, at) => screen.show(header(at), refreshText(r)), end: () => screen.end()}
}

/** `citc status --watch`: until Ctrl-C or SIGTERM, which end it normally (exit 0). */
export async function watchStatus(o: {dataDir: string; cluster?: string; intervalS: number; json: boolean; out: ScreenStream}): Promise<void> {
  if (!Number.isInteger(o.intervalS) || o.intervalS < MIN_INTERVAL_S) throw new Error(`internal: --interval ${o.intervalS} below ${MIN_INTERVAL_S} reached the watch`)
  const record = statusRecord(o.dataDir, o.cluster)
  const source = statusSource(record)
  const shower = refreshShower({json: o.json, out: o.out, what: `citc status -c ${record.name}`, intervalS: o.intervalS})
  try {
    await withInterrupts((signal) => watchLoop({source, show: shower.show, intervalMs: o.intervalS * 1000, signal}))
  } finally {
    shower.end()
    await source.close()
  }
}
