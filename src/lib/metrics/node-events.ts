// node-events.json: the node programs' counters (resume requests by shape, start failures by shape and
// reason), kept in the collector's directory because the programs are short-lived processes that
// slurmctld starts on every power event. Several may run at once (a resume and a fail, two resumes of
// different hostlists), so every update reads, adds and writes under one lock file; the collector only
// reads the file (a rename makes every version whole) and renders the two counter families.
import {closeSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync} from 'node:fs'
import {join} from 'node:path'

import {pidAlive} from '../proc.js'
import type {FamilyDef} from './exposition.js'
import {sampleLine} from './exposition.js'
import {writeAtomic} from './write.js'

export const NODE_EVENTS_FILE = 'node-events.json'
const LOCK_FILE = `${NODE_EVENTS_FILE}.lock`

export interface NodeEvents {
  version: 1
  /** Nodes asked to start, by shape. */
  resumeRequests: Record<string, number>
  /** Nodes that failed to start, by shape, then by reason (a FailureClass of providers/node-failures.ts, or "other"). */
  startFailures: Record<string, Record<string, number>>
}

export interface NodeEventBatch {
  resumeRequests?: Array<{shape: string}>
  startFailures?: Array<{shape: string; reason: string}>
}

export const emptyNodeEvents = (): NodeEvents => ({version: 1, resumeRequests: {}, startFailures: {}})

/** The counters plus one batch. Pure. */
export function addNodeEvents(events: NodeEvents, batch: NodeEventBatch): NodeEvents {
  const out: NodeEvents = {version: 1, resumeRequests: {...events.resumeRequests}, startFailures: Object.fromEntries(Object.entries(events.startFailures).map(([s, r]) => [s, {...r}]))}
  for (const {shape} of batch.resumeRequests ?? []) out.resumeRequests[shape] = (out.resumeRequests[shape] ?? 0) + 1
  for (const {shape, reason} of batch.startFailures ?? []) {
    const byReason = (out.startFailures[shape] ??= {})
    byReason[reason] = (byReason[reason] ?? 0) + 1
  }
  return out
}

const isCounts = (v: unknown): v is Record<string, number> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0)

/** The file's text → the counters; throws, saying what is wrong, on anything else. Pure. */
export function parseNodeEvents(text: string): NodeEvents {
  const doc = JSON.parse(text) as Partial<NodeEvents>
  if (doc?.version !== 1 || !isCounts(doc.resumeRequests) || doc.startFailures === null || typeof doc.startFailures !== 'object' || !Object.values(doc.startFailures).every(isCounts)) {
    throw new Error('not the node programs\' counters (version 1, resumeRequests, startFailures)')
  }
  return {version: 1, resumeRequests: doc.resumeRequests, startFailures: doc.startFailures}
}

/** The counters in `dir`; none yet (no node program ran) is all zeros. Throws when the file is unreadable or damaged. */
export function readNodeEvents(dir: string): NodeEvents {
  const file = join(dir, NODE_EVENTS_FILE)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyNodeEvents()
    throw new Error(`cannot read ${file}: ${(e as Error).message}`)
  }
  try {
    return parseNodeEvents(text)
  } catch (e) {
    throw new Error(`${file} is damaged (${(e as Error).message}): remove it to start the counters afresh`)
  }
}

export interface LockOptions {
  /** How long to wait for another program's lock before giving up (default 5 s: the update itself takes milliseconds). */
  waitMs?: number
  /** A lock older than this is left by a program that died or hung: taken over (default 60 s). */
  staleMs?: number
}

const POLL_MS = 10

/**
 * Add one batch to `dir`/node-events.json under the lock. A damaged file is started afresh (the
 * counters reset, which Prometheus's rate() reads as a restart) rather than losing every later event;
 * the caller logs what this returns then. Throws when the lock cannot be had in time or the file
 * cannot be written.
 */
export function recordNodeEvents(dir: string, batch: NodeEventBatch, opts: LockOptions = {}): {reset?: string} {
  if ((batch.resumeRequests?.length ?? 0) + (batch.startFailures?.length ?? 0) === 0) return {}
  const release = acquireLock(join(dir, LOCK_FILE), opts)
  try {
    let events: NodeEvents
    let reset: string | undefined
    try {
      events = readNodeEvents(dir)
    } catch (e) {
      reset = (e as Error).message
      events = emptyNodeEvents()
    }
    writeAtomic(join(dir, NODE_EVENTS_FILE), JSON.stringify(addNodeEvents(events, batch)) + '\n')
    return reset ? {reset} : {}
  } finally {
    release()
  }
}

/**
 * An O_EXCL lock file holding the owner's pid. Waits (bounded) while a live program holds it; a lock
 * whose owner is gone, or older than staleMs, is taken over by renaming it away — only one waiter's
 * rename succeeds. If that rename caught a lock just made by another waiter (the stale one was
 * replaced between our read and our rename), it is linked back, which fails if yet another exists.
 */
function acquireLock(file: string, opts: LockOptions): () => void {
  const deadline = Date.now() + (opts.waitMs ?? 5000)
  const staleMs = opts.staleMs ?? 60_000
  const mine = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2)}\n`
  for (;;) {
    try {
      const fd = openSync(file, 'wx', 0o644)
      try {
        writeSync(fd, mine)
      } finally {
        closeSync(fd)
      }
      return () => {
        try {
          if (readFileSync(file, 'utf8') === mine) rmSync(file, {force: true})
        } catch {
          // Gone already (taken over as stale): nothing to release.
        }
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot make the lock ${file}: ${(e as Error).message} (is the directory writable by this user?)`)
    }
    const holder = readHolder(file, staleMs)
    if (holder?.stale) takeOver(file, holder.content)
    else if (Date.now() >= deadline) throw new Error(`${file} is held by pid ${holder?.pid ?? '?'} for more than ${opts.waitMs ?? 5000} ms: counts of this run are lost`)
    else sleepSync(POLL_MS)
  }
}

function readHolder(file: string, staleMs: number): {content: string; pid: number; stale: boolean} | undefined {
  try {
    const content = readFileSync(file, 'utf8')
    const pid = Number(content.split(' ')[0])
    const age = Date.now() - statSync(file).mtimeMs
    // An empty file is a lock being written this instant, unless it is old.
    const dead = content !== '' && !(Number.isInteger(pid) && pid > 0 && pidAlive(pid))
    return {content, pid, stale: dead || age > staleMs}
  } catch {
    return undefined // released meanwhile: try again at once
  }
}

function takeOver(file: string, seen: string) {
  const aside = `${file}.stale.${process.pid}`
  try {
    renameSync(file, aside)
  } catch {
    return // another waiter took it over first, or it was released
  }
  try {
    if (readFileSync(aside, 'utf8') !== seen) linkSync(aside, file)
  } catch {
    // EEXIST: a third program holds the lock now; the one we moved still believes it holds its own.
  } finally {
    rmSync(aside, {force: true})
  }
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

export const NODE_EVENT_FAMILIES: readonly FamilyDef[] = [
  {name: 'citc_node_resume_requests_total', type: 'counter', help: 'Nodes slurmctld asked citc to start (citc node resume), by shape.'},
  {name: 'citc_node_start_failures_total', type: 'counter', help: 'Nodes that failed to start, by shape and reason (capacity, quota, throttled, transient, config, auth, other).'},
]

/** The two families' sample lines. Pure. */
export function nodeEventLines(events: NodeEvents): Map<string, string[]> {
  const [resume, failures] = NODE_EVENT_FAMILIES.map((f) => f.name)
  return new Map([
    [resume, Object.entries(events.resumeRequests).map(([shape, n]) => sampleLine(resume, {shape}, n))],
    [failures, Object.entries(events.startFailures).flatMap(([shape, byReason]) => Object.entries(byReason).map(([reason, n]) => sampleLine(failures, {shape, reason}, n)))],
  ])
}
