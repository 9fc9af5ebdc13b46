// Processes on this machine, as Linux's /proc shows them, and waiting: the one place for both
// (the lock, the exec wrapper and the local node driver all need to know whether a pid still runs).
import {readFileSync} from 'node:fs'
import {constants as osConstants} from 'node:os'

export interface ProcStat {
  /** R, S, D, Z (zombie), … */
  state: string
  /** Parent process id. */
  ppid: number
  /** Process group id. */
  pgrp: number
  /** Start time in clock ticks after boot: with the pid, it names one process even across pid reuse. */
  start: number
}

/** Fields of /proc/PID/stat, or undefined if there is no such process (or no /proc). */
export function procStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return {state: fields[0], ppid: Number(fields[1]), pgrp: Number(fields[2]), start: Number(fields[19])}
  } catch {
    return undefined
  }
}

/** The pid runs and is not a zombie (a zombie holds no port and runs nothing). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const stat = procStat(pid)
  return stat === undefined ? process.platform !== 'linux' : stat.state !== 'Z'
}

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(done, ms)
    signal?.addEventListener('abort', done, {once: true})
    function done() {
      clearTimeout(t)
      signal?.removeEventListener('abort', done)
      resolve()
    }
  })
}

/** A signal's number from its name ("SIGKILL" or, as SSH reports it, "KILL"); 0 if unknown. */
export function signalNumber(name: string | undefined): number {
  if (!name) return 0
  const signals = osConstants.signals as Record<string, number>
  return signals[name] ?? signals[`SIG${name}`] ?? 0
}
