// An exclusive lock on a directory (a cluster's), across processes on this machine.
//
// `<dir>/lock` is created with O_EXCL and holds {pid, what, since, host, start, token}. A lock whose
// process is gone (dead PID, a zombie, or the PID reused by a later process) is stale and is taken
// over, with a note. A live holder makes acquireLock refuse at once, or poll until it is released
// when `wait` is set (bounded by timeoutMs).
//
// withLock releases in `finally`; the lock is also released when the process exits (an 'exit'
// listener), and release() is idempotent, so a SIGINT handler may call it too. A lock file is only
// ever removed by the holder whose token it carries, or by a takeover after its holder is gone.
//
// Not for network file systems: O_EXCL and the PID check assume one machine. A lock written on
// another host is never taken over automatically.
import {randomBytes} from 'node:crypto'
import {closeSync, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'

import {cancelled, CitcError} from '../errors.js'
import {pidAlive, procStat, sleep} from '../proc.js'

export interface LockInfo {
  pid: number
  /** What holds it, as the user typed it: "citc finish". */
  what: string
  /** ISO time it was taken. */
  since: string
  host: string
  /** The holder's start time (Linux /proc clock ticks since boot), to tell a reused PID; absent if unknown. */
  start?: number
  /** Random: who may remove this lock file. */
  token: string
}

export interface LockOptions {
  /** Wait for a live holder to release it (default false: refuse at once). Given (true or false) by
   *  commands that have a --wait flag, which the refusal then suggests. */
  wait?: boolean
  /** How long to wait at most (default 30 minutes). */
  timeoutMs?: number
  /** Poll interval while waiting (default 250 ms). */
  pollMs?: number
  /** Where notes go (a stale lock taken over, waiting for a holder); default stderr. */
  note?: (message: string) => void
  /** Stops waiting (as a cancellation, exit 130). */
  signal?: AbortSignal
  /** What the lock guards, in messages (default "this cluster"). */
  label?: string
}

export interface LockHandle {
  readonly path: string
  readonly info: LockInfo
  readonly released: boolean
  /** Remove the lock if it is still ours. Idempotent, synchronous (safe in signal and exit handlers). */
  release(): void
}

const LOCK_FILE = 'lock'
/** An unreadable lock file (a holder between create and write) is stale after this long. */
const UNREADABLE_GRACE_MS = 10_000

/** Whether the holder described by `info` still runs (on this host). */
function holderAlive(info: Pick<LockInfo, 'pid' | 'start'>): boolean {
  if (!pidAlive(info.pid)) return false
  const start = info.start === undefined ? undefined : procStat(info.pid)?.start
  // A different start time: the PID now belongs to another process.
  return start === undefined || start === info.start
}

type Seen = {kind: 'gone'} | {kind: 'held'; raw: string; info: LockInfo} | {kind: 'unreadable'; raw: string; ageMs: number}

function parseInfo(raw: string): LockInfo | undefined {
  try {
    const v = JSON.parse(raw) as Partial<LockInfo>
    if (Number.isInteger(v.pid) && typeof v.what === 'string' && typeof v.since === 'string' && typeof v.token === 'string') {
      return {host: '', ...v} as LockInfo
    }
  } catch {
    // fall through
  }
  return undefined
}

function look(file: string): Seen {
  let raw: string
  let mtimeMs: number
  try {
    mtimeMs = statSync(file).mtimeMs
    raw = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {kind: 'gone'}
    throw error
  }
  const info = parseInfo(raw)
  return info ? {kind: 'held', raw, info} : {kind: 'unreadable', raw, ageMs: Date.now() - mtimeMs}
}

function tryCreate(file: string, info: LockInfo): boolean {
  let fd: number
  try {
    fd = openSync(file, 'wx', 0o600)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code === 'ENOENT') throw new Error(`cannot lock ${file}: its directory does not exist`)
    throw error
  }
  try {
    writeSync(fd, JSON.stringify(info) + '\n')
  } finally {
    closeSync(fd)
  }
  return true
}

/**
 * Remove a stale lock file, but only if it still is the one judged stale: it is renamed aside first
 * and compared; if another process replaced it meanwhile, it is put back.
 */
function takeOver(file: string, rawSeen: string): boolean {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    renameSync(file, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  let raw = ''
  try {
    raw = readFileSync(aside, 'utf8')
  } catch {
    // vanished: nothing to compare
  }
  if (raw !== rawSeen) {
    try {
      linkSync(aside, file) // put back a live holder's lock (fails if yet another one exists: theirs wins)
    } catch {
      // leave it
    }
  }
  try {
    unlinkSync(aside)
  } catch {
    // already gone
  }
  return raw === rawSeen
}

function two(n: number) {
  return String(n).padStart(2, '0')
}

/** "12:01:02" today, "2026-11-20 12:01:02" another day (local time). */
export function formatSince(iso: string, now = new Date()): string {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  const time = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`
  const sameDay = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate()
  return sameDay ? time : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${time}`
}

function describeHolder(seen: Exclude<Seen, {kind: 'gone'}>): string {
  if (seen.kind === 'unreadable') return 'another citc command (its lock file is being written)'
  const {info} = seen
  const where = info.host && info.host !== hostname() ? ` on ${info.host}` : ''
  return `another ${info.what} (pid ${info.pid}${where})`
}

function busyError(file: string, seen: Exclude<Seen, {kind: 'gone'}>, label: string, waitedMs?: number, hasWaitFlag = false): CitcError {
  const holder = describeHolder(seen)
  const since = seen.kind === 'held' ? ` since ${formatSince(seen.info.since)}` : ''
  const details = {lock: seen.kind === 'held' ? {pid: seen.info.pid, what: seen.info.what, since: seen.info.since, host: seen.info.host} : {file}}
  const hint = `the lock is released when that command ends; if no citc is running, delete ${file}`
  if (waitedMs !== undefined) {
    const mins = waitedMs >= 60_000 ? `${Math.round(waitedMs / 60_000)} min` : `${Math.round(waitedMs / 1000)} s`
    return new CitcError('usage', `gave up after ${mins}: ${holder} has held ${label}${since}`, {hint, details})
  }
  const retry = hasWaitFlag ? 'wait for it or retry with --wait' : 'run this again when it has finished'
  return new CitcError('usage', `${holder} has held ${label}${since}; ${retry}`, {hint, details})
}

/** Take the lock on `dir` for `what` (e.g. "citc finish"); see the file's header. */
export async function acquireLock(dir: string, what: string, opts: LockOptions = {}): Promise<LockHandle> {
  const file = join(dir, LOCK_FILE)
  const timeoutMs = opts.timeoutMs ?? 30 * 60_000
  const pollMs = opts.pollMs ?? 250
  const label = opts.label ?? 'this cluster'
  const note = opts.note ?? ((m: string) => process.stderr.write(m + '\n'))
  const started = Date.now()
  const info: LockInfo = {
    pid: process.pid,
    what,
    since: new Date().toISOString(),
    host: hostname(),
    token: randomBytes(12).toString('hex'),
  }
  const start = procStat(process.pid)?.start
  if (start !== undefined) info.start = start

  let announced = false
  for (;;) {
    if (opts.signal?.aborted) throw cancelled(`cancelled while waiting for the lock on ${label}`)
    info.since = new Date().toISOString()
    if (tryCreate(file, info)) return handle(file, info)

    const seen = look(file)
    if (seen.kind === 'gone') continue
    const stale =
      seen.kind === 'held'
        ? (!seen.info.host || seen.info.host === hostname()) && !holderAlive(seen.info)
        : seen.ageMs > UNREADABLE_GRACE_MS
    if (stale) {
      if (takeOver(file, seen.raw)) {
        note(
          seen.kind === 'held'
            ? `note: taking over a stale lock: ${seen.info.what} (pid ${seen.info.pid}) took it at ${formatSince(seen.info.since)} and is gone`
            : `note: taking over a stale, unreadable lock file ${file}`,
        )
      }
      continue
    }
    if (!opts.wait) throw busyError(file, seen, label, undefined, opts.wait !== undefined)
    const waited = Date.now() - started
    if (waited >= timeoutMs) throw busyError(file, seen, label, waited)
    if (!announced) {
      announced = true
      note(`waiting for ${describeHolder(seen).replace(/^another /, '')} to release ${label}…`)
    }
    await sleep(Math.min(pollMs, timeoutMs - waited), opts.signal)
  }
}

function handle(file: string, info: LockInfo): LockHandle {
  let released = false
  const release = () => {
    if (released) return
    released = true
    process.removeListener('exit', release)
    try {
      const current = parseInfo(readFileSync(file, 'utf8'))
      if (current?.token === info.token) unlinkSync(file)
    } catch {
      // gone already (e.g. the cluster's directory was removed under the lock)
    }
  }
  process.on('exit', release)
  return {
    path: file,
    info,
    get released() {
      return released
    },
    release,
  }
}

/** Run `fn` holding the lock on `dir`; the lock is released when fn settles. */
export async function withLock<T>(dir: string, what: string, fn: (lock: LockHandle) => Promise<T> | T, opts: LockOptions = {}): Promise<T> {
  const lock = await acquireLock(dir, what, opts)
  try {
    return await fn(lock)
  } finally {
    lock.release()
  }
}
