// Running programs on this machine: the only module that imports execa (spawnDetached, imported when it
// runs), and the only one that starts processes. run() is node:child_process alone: the node programs
// slurmctld starts on every power event run scontrol through it, and execa's ~100 modules took
// ~0.1 s of each start (bench/node-cold-start.ts).
// - run() never rejects on a non-zero exit (check exitCode); it rejects when the program cannot be
//   started, on timeout (remote error, exit 4) and on cancellation (cancelled, exit 130).
// - Every child is the leader of its own process group; a timeout or an abort signals the whole
//   group (SIGTERM, then SIGKILL after a grace period), so shells and their children go too.
// - Output can be streamed (onOutput) and appended, line by line with timestamps, to a log file.
import {type ChildProcess, spawn} from 'node:child_process'
import {closeSync, constants, fsyncSync, mkdirSync, openSync, readdirSync, writeSync} from 'node:fs'
import {access, stat} from 'node:fs/promises'
import {delimiter, dirname, join, resolve} from 'node:path'
import {StringDecoder} from 'node:string_decoder'

import {CitcError, remoteError} from '../errors.js'
import {shellQuote} from '../shell-quote.js'
import {procStat, signalNumber, sleep} from '../proc.js'

export type OutputStream = 'stdout' | 'stderr'

export interface ExecOptions {
  cwd?: string
  /** Added to this process's environment. */
  env?: Record<string, string | undefined>
  /** Bytes for stdin; without it stdin is /dev/null. */
  input?: string | Buffer
  timeoutMs?: number
  signal?: AbortSignal
  /** Each chunk of output as it arrives (UTF-8 characters are never split across chunks). */
  onOutput?: (chunk: string, stream: OutputStream) => void
  /** Append the command line and all its output, each line with a timestamp (file mode 0600). */
  logFile?: string
  /** Between SIGTERM and SIGKILL when a timeout or abort stops the process group. Default 5 s. */
  killGraceMs?: number
  /**
   * Stop the program's process group even if citc dies without running its exit hook (SIGKILL, the
   * OOM killer): for what changes the machine or a cloud (ansible-playbook, packer, terraform), so a
   * re-run never works beside an orphan of the run before. Costs one shell for citc's life (the reaper).
   */
  stopIfCitcDies?: boolean
}

export interface ExecResult {
  stdout: string
  stderr: string
  /** The exit status; 128+n when the program was killed by signal n. */
  exitCode: number
}

/** Does the process group still have a live member? Zombies (not yet reaped, e.g. orphans in a
 *  container whose PID 1 does not reap) count as gone. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (process.platform !== 'linux') return true
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = procStat(Number(entry)) // undefined: exited meanwhile
    if (stat && stat.pgrp === pgid && stat.state !== 'Z') return true
  }
  return false
}

function killGroup(pgid: number, sig: NodeJS.Signals) {
  try {
    process.kill(-pgid, sig)
  } catch {
    // the group is gone already
  }
}

/** Line-buffered, timestamped appends to a log file (synchronous writes keep the order exact). */
function openLog(file: string) {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  const fd = openSync(file, 'a', 0o600)
  const partial: Record<OutputStream, string> = {stdout: '', stderr: ''}
  const line = (text: string) => writeSync(fd, `[${new Date().toISOString()}] ${text}\n`)
  const tag = (stream: OutputStream) => (stream === 'stderr' ? '[stderr] ' : '')
  return {
    line,
    output(chunk: string, stream: OutputStream) {
      const lines = (partial[stream] + chunk).split('\n')
      partial[stream] = lines.pop()!
      for (const l of lines) line(tag(stream) + l)
    },
    close(summary: string) {
      for (const stream of ['stdout', 'stderr'] as const) if (partial[stream]) line(tag(stream) + partial[stream])
      line(summary)
      closeSync(fd)
    },
  }
}

/** Process groups of children still running: if citc exits (Ctrl-C, an error), they get SIGTERM.
 *  execa's own cleanup skips detached children, and ours are detached to have their own group. */
const running = new Set<number>()
let exitHook = false
function track(pgid: number) {
  running.add(pgid)
  if (exitHook) return
  exitHook = true
  process.once('exit', () => {
    for (const g of running) killGroup(g, 'SIGTERM')
  })
}

/**
 * The reaper: a shell in a session of its own that outlives citc and reads, on a pipe only citc holds,
 * the process groups to stop ("+ PGID GRACE_SECONDS") and those that ended ("- PGID"). When citc dies,
 * however it dies, the pipe ends: the groups still listed get SIGTERM, and SIGKILL once the longest
 * grace has passed with one still alive. One per citc process, started with the first child that asks
 * for it. (Node has no prctl(PR_SET_PDEATHSIG), and it would reach only the direct child anyway:
 * ansible-playbook's workers and their tasks run on after their parent's SIGTERM.) Exported for its test.
 * dash's kill takes no `--`: a negative number after the signal is a process group.
 */
export const REAPER = `groups=' ' grace=0
while IFS=' ' read -r op id secs; do
  case $op in
    +) groups="$groups$id "; [ "$secs" -gt "$grace" ] && grace=$secs ;;
    -) case $groups in *" $id "*) groups="\${groups%% $id *} \${groups#* $id }" ;; esac ;;
  esac
done
[ -z "\${groups# }" ] && exit 0
for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
while [ "$grace" -gt 0 ]; do
  alive=
  for g in $groups; do kill -0 "-$g" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && exit 0
  sleep 1
  grace=$((grace - 1))
done
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
exit 0`
let reaper: ChildProcess | undefined
function reap(line: string) {
  if (!reaper) {
    reaper = spawn('/bin/sh', ['-c', REAPER], {stdio: ['pipe', 'ignore', 'ignore'], detached: true})
    reaper.on('error', () => {}) // no /bin/sh: the exit hook alone stops children, as before
    reaper.stdin?.on('error', () => {})
    // Neither the reaper nor its pipe keeps citc running.
    reaper.unref()
    ;(reaper.stdin as unknown as {unref?: () => void} | null)?.unref?.()
  }
  reaper.stdin?.write(line + '\n')
}

type Exit = {code: number | null; signal: NodeJS.Signals | null} | {cause: Error}

/** When the child has exited and its output is read to the end; or why it never started. */
function exited(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    child.on('error', (error) => {
      if (child.pid === undefined) resolve({cause: error})
    })
    child.once('close', (code, signal) => resolve({code, signal}))
  })
}

export async function run(file: string, args: string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const what = shellQuote([file, ...args])
  if (opts.signal?.aborted) throw new CitcError('cancelled', `cancelled before starting: ${what}`, {cause: opts.signal.reason})
  const log = opts.logFile ? openLog(opts.logFile) : undefined
  log?.line(`$ ${what}${opts.input === undefined ? '' : ' <stdin not logged>'}`)

  // Own process group (detached), so the whole group can be signalled; environment added to ours.
  const child = spawn(file, args, {
    cwd: opts.cwd,
    env: opts.env ? {...process.env, ...opts.env} : process.env,
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true,
  })
  const ended = exited(child)
  if (opts.input !== undefined && child.stdin) {
    // A program that exits without reading its input closes the pipe: its exit status says what happened.
    child.stdin.on('error', () => {})
    child.stdin.end(opts.input)
  }

  const chunks: Record<OutputStream, Buffer[]> = {stdout: [], stderr: []}
  for (const stream of ['stdout', 'stderr'] as const) {
    const decoder = new StringDecoder('utf8')
    const readable = child[stream]
    readable?.on('data', (data: Buffer) => {
      chunks[stream].push(data)
      const text = decoder.write(data)
      if (!text) return
      log?.output(text, stream)
      opts.onOutput?.(text, stream)
    })
    readable?.on('end', () => {
      const rest = decoder.end()
      if (!rest) return
      log?.output(rest, stream)
      opts.onOutput?.(rest, stream)
    })
  }

  const grace = opts.killGraceMs ?? 5000
  let stopping: 'timeout' | 'abort' | undefined
  let killTimer: NodeJS.Timeout | undefined
  const stop = (why: 'timeout' | 'abort') => {
    if (stopping || child.pid === undefined) return
    stopping = why
    killGroup(child.pid, 'SIGTERM')
    killTimer = setTimeout(() => killGroup(child.pid!, 'SIGKILL'), grace)
  }
  const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => stop('timeout'), opts.timeoutMs)
  const onAbort = () => stop('abort')
  opts.signal?.addEventListener('abort', onAbort, {once: true})

  if (child.pid !== undefined) track(child.pid)
  if (child.pid !== undefined && opts.stopIfCitcDies) reap(`+ ${child.pid} ${Math.ceil(grace / 1000)}`)
  let result: Exit
  try {
    result = await ended
  } finally {
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', onAbort)
  }
  if (stopping && child.pid !== undefined) {
    // The leader is gone; anything left in its group gets the rest of the grace period, then SIGKILL.
    const deadline = Date.now() + grace
    while (groupAlive(child.pid) && Date.now() < deadline) await sleep(50)
    killGroup(child.pid, 'SIGKILL')
  }
  clearTimeout(killTimer)
  if (child.pid !== undefined) running.delete(child.pid)
  if (child.pid !== undefined && opts.stopIfCitcDies) reap(`- ${child.pid}`)

  const stdout = Buffer.concat(chunks.stdout).toString('utf8')
  const stderr = Buffer.concat(chunks.stderr).toString('utf8')
  if ('cause' in result) {
    // Never started (not found, not executable, bad cwd).
    const why = result.cause.message
    log?.close(`failed to start: ${why}`)
    throw remoteError(`cannot run ${file}: ${why}`, {hint: `check that ${file} is installed and on PATH`, cause: result.cause})
  }
  const exitCode = result.code ?? 128 + signalNumber(result.signal ?? undefined)
  log?.close(stopping ? `${stopping === 'timeout' ? 'timed out' : 'cancelled'} (exit ${exitCode})` : `exit ${exitCode}`)

  if (stopping === 'abort') throw new CitcError('cancelled', `cancelled: ${what}`, {cause: opts.signal?.reason})
  if (stopping === 'timeout') {
    throw remoteError(`timed out after ${opts.timeoutMs! / 1000} s: ${what}`, {details: {exitCode, timedOut: true}})
  }
  return {stdout, stderr, exitCode}
}


/** The absolute path of an executable found on PATH (or the path itself if it contains a /). */
export async function which(cmd: string, path = process.env.PATH ?? ''): Promise<string | undefined> {
  const candidates = cmd.includes('/') ? [cmd] : path.split(delimiter).filter(Boolean).map((d) => join(d, cmd))
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK)
      const st = await stat(candidate)
      // access(X_OK) is true for root on any file: also require an execute bit.
      if (st.isFile() && (st.mode & 0o111) !== 0) return resolve(candidate)
    } catch {
      // not here
    }
  }
  return undefined
}

/**
 * Start a long-running program that outlives this process (own session/process group, stdin from
 * /dev/null, stdout and stderr appended to logFile). Returns its PID; stopping it is the caller's job.
 * execa is imported here, when a program is started this way (the local driver's nodes), not with this module.
 */
export async function spawnDetached(file: string, args: string[], opts: {logFile: string; cwd?: string; env?: Record<string, string>}): Promise<number> {
  mkdirSync(dirname(opts.logFile), {recursive: true, mode: 0o700})
  const fd = openSync(opts.logFile, 'a', 0o600)
  try {
    writeSync(fd, `[${new Date().toISOString()}] $ ${shellQuote([file, ...args])}\n`)
    fsyncSync(fd)
    const {execa} = await import('execa')
    const child = execa(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      cleanup: false,
      reject: false,
      stdin: 'ignore',
      // execa's types list only fds 3-9, but any open descriptor is handed to the child as is.
      stdout: fd as 3,
      stderr: fd as 3,
    })
    child.unref()
    if (child.pid === undefined) throw remoteError(`cannot start ${file}`, {hint: `check that ${file} exists and is executable`})
    return child.pid
  } finally {
    closeSync(fd)
  }
}

/**
 * Run `file args` attached to this terminal (stdin, stdout, stderr inherited), for `citc ssh`'s
 * interactive shell through the system's OpenSSH client (a TTY, window size, escape characters).
 * Resolves with its exit code (128+n when killed by signal n).
 */
export function runAttached(file: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {stdio: 'inherit'})
    // Ctrl-C goes to the whole foreground group: the child handles it; citc just waits for it.
    const ignore = () => {}
    process.on('SIGINT', ignore)
    const done = () => process.off('SIGINT', ignore)
    child.on('error', (error) => {
      done()
      reject(remoteError(`cannot run ${file}: ${error.message}`, {hint: `install the OpenSSH client (${file})`}))
    })
    child.once('exit', (code, signal) => {
      done()
      resolve(code ?? 128 + signalNumber(signal ?? undefined))
    })
  })
}
