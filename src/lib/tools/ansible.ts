// The Ansible adapter: runs one of citc's playbooks through a Transport (on this machine, or on a
// management node over SSH) and follows its output as it streams: the task now running (for the
// task list), the task that failed and why, and the PLAY RECAP. A run succeeds only when the recap is
// there and shows failed=0 and unreachable=0 for every host.
// Parsing is pure (the functions and the parser class below); runPlaybook does the I/O.
import {appendFileSync, mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import {CitcError, cancelled} from '../errors.js'
import type {OutputStream} from './exec.js'

export interface HostStats {
  ok: number
  changed: number
  unreachable: number
  failed: number
  skipped: number
  rescued: number
  ignored: number
}

export type Recap = Record<string, HostStats>

export interface FailedTask {
  /** The task as Ansible names it, e.g. "common : Install packages". */
  name: string
  host: string
  /** One line or a few: Ansible's msg, with the command's stderr when that says more. */
  message: string
  /** The loop item, when one item of a loop failed. */
  item?: string
  unreachable: boolean
}

export interface PlaybookResult {
  ok: boolean
  recap: Recap
  /** The last failure that was not ignored or rescued; for a run that never got going, Ansible's ERROR!. */
  failedTask?: FailedTask
  /** The last lines of output (stdout and stderr), for an error message. */
  lastLines: string[]
  exitCode: number
}

// ---------------------------------------------------------------------------------------------
// Line parsers

const TASK_RE = /^(?:TASK|RUNNING HANDLER) \[(.+)\] \**\s*$/
const RECAP_RE = /^(\S+)\s+:\s+((?:[a-z]+=\d+\s*)+)$/
const FAILURE_RE = /^(fatal|failed): \[([^\]]+)\](?:: (FAILED|UNREACHABLE)!)?(?: \(item=(.*?)\))? => (.*)$/

/** "TASK [common : Install packages] ****" → "common : Install packages" (also RUNNING HANDLER). */
export function parseTaskLine(line: string): string | undefined {
  return TASK_RE.exec(line.trimEnd())?.[1]
}

/** One host's line of the PLAY RECAP. */
export function parseRecapLine(line: string): {host: string; stats: HostStats} | undefined {
  const m = RECAP_RE.exec(line.trim())
  if (!m) return undefined
  const counts: Record<string, number> = {}
  for (const pair of m[2].trim().split(/\s+/)) {
    const [k, v] = pair.split('=')
    counts[k] = Number(v)
  }
  if (counts.ok === undefined || counts.failed === undefined || counts.unreachable === undefined) return undefined
  const stats: HostStats = {
    ok: counts.ok,
    changed: counts.changed ?? 0,
    unreachable: counts.unreachable,
    failed: counts.failed,
    skipped: counts.skipped ?? 0,
    rescued: counts.rescued ?? 0,
    ignored: counts.ignored ?? 0,
  }
  return {host: m[1], stats}
}

/** "fatal: [host]: FAILED! => {json}" / "failed: [host] (item=x) => {json}" → who failed and why. */
export function parseFailureLine(line: string): Omit<FailedTask, 'name'> | undefined {
  const m = FAILURE_RE.exec(line.trimEnd())
  if (!m) return undefined
  const [, , host, what, item, payload] = m
  let result: Record<string, unknown> | undefined
  try {
    const parsed: unknown = JSON.parse(payload)
    if (parsed && typeof parsed === 'object') result = parsed as Record<string, unknown>
  } catch {
    // Not JSON (a callback of another shape): keep the text.
  }
  const unreachable = what === 'UNREACHABLE' || result?.unreachable === true
  return {
    host,
    item,
    unreachable,
    message: result ? failureMessage(result) : payload.trim(),
  }
}

/** The useful part of a failed result: msg, and the command's own error output when msg is generic. */
export function failureMessage(result: Record<string, unknown>): string {
  if (typeof result.censored === 'string') return "the output is hidden (no_log: the task handles a secret)"
  const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '')
  let msg = str(result.msg)
  if (!msg && Array.isArray(result.results)) {
    const items = result.results as Array<Record<string, unknown>>
    const firstFailed = items.find((r) => r && (r.failed === true || r.unreachable === true))
    if (firstFailed) msg = failureMessage(firstFailed)
  }
  const stderr = str(result.stderr)
  const stdout = str(result.stdout)
  const detail = stderr || (msg === 'non-zero return code' ? stdout : '')
  const tail = detail.split('\n').slice(-5).join('\n')
  const rc = typeof result.rc === 'number' ? ` (exit ${result.rc})` : ''
  if (msg === 'non-zero return code' || !msg) {
    const head = `${msg || 'failed'}${rc}`
    return tail ? `${head}: ${tail}` : head
  }
  return tail && !msg.includes(tail) ? `${msg}\n${tail}` : msg
}

// ---------------------------------------------------------------------------------------------
// The streaming parser

export interface OutputParserOptions {
  /** Called with each task's name as it starts (TASK and RUNNING HANDLER lines). */
  onTask?: (name: string) => void
  /** How many lines to keep for lastLines. */
  keepLines?: number
}

/**
 * Feed it the default callback's output in chunks of any size, per stream; it keeps the state
 * needed to say what is running, what failed, and how the play ended.
 */
export class PlaybookOutputParser {
  private readonly partial: Record<string, string> = {}
  private readonly tail: string[] = []
  private readonly keep: number
  private currentTask: string | undefined
  private inRecap = false
  private pendingFailure: FailedTask | undefined
  private lastFailure: FailedTask | undefined
  private error: string[] | undefined
  readonly recap: Recap = {}

  constructor(private readonly opts: OutputParserOptions = {}) {
    this.keep = opts.keepLines ?? 40
  }

  push(chunk: string, stream: string = 'stdout'): void {
    const text = (this.partial[stream] ?? '') + chunk
    const lines = text.split(/\r?\n/)
    this.partial[stream] = lines.pop() ?? ''
    for (const line of lines) this.line(line)
  }

  /** Flush what is left of unterminated lines. */
  end(): void {
    for (const stream of Object.keys(this.partial)) {
      const rest = this.partial[stream]
      this.partial[stream] = ''
      if (rest) this.line(rest)
    }
    this.settleFailure()
  }

  get task(): string | undefined {
    return this.currentTask
  }

  get lastLines(): string[] {
    return [...this.tail]
  }

  /** The failure that counts: the last one not ignored, or Ansible's own ERROR!. */
  get failure(): FailedTask | undefined {
    this.settleFailure()
    if (this.lastFailure) return this.lastFailure
    if (this.error) {
      return {name: this.currentTask ?? 'ansible-playbook', host: '', message: this.error.join('\n').trim(), unreachable: false}
    }
    return undefined
  }

  result(exitCode: number): PlaybookResult {
    return summarize({recap: this.recap, failedTask: this.failure, lastLines: this.lastLines, exitCode})
  }

  private line(raw: string): void {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '')
    if (line.trim() !== '') {
      this.tail.push(line)
      if (this.tail.length > this.keep) this.tail.shift()
    }
    if (this.error && line.trim() !== '' && !line.startsWith('[WARNING]')) {
      // ERROR! messages go on for a few lines (the offending line, a caret).
      if (this.error.length < 12) this.error.push(line)
      return
    }
    if (line.trim() === '...ignoring') {
      this.pendingFailure = undefined
      return
    }
    const task = parseTaskLine(line)
    if (task !== undefined) {
      this.settleFailure()
      this.inRecap = false
      this.currentTask = task
      this.opts.onTask?.(task)
      return
    }
    if (/^PLAY RECAP \**\s*$/.test(line)) {
      this.settleFailure()
      this.inRecap = true
      return
    }
    if (/^PLAY \[.*\] \**\s*$/.test(line)) {
      this.settleFailure()
      this.inRecap = false
      return
    }
    if (this.inRecap) {
      const r = parseRecapLine(line)
      if (r) this.recap[r.host] = r.stats
      return
    }
    if (line.startsWith('ERROR! ')) {
      // Ansible gave up (a syntax error, a missing file): that is the failure, not an earlier one.
      this.pendingFailure = undefined
      this.lastFailure = undefined
      this.error = [line.slice('ERROR! '.length)]
      return
    }
    const f = parseFailureLine(line)
    if (f) {
      // A loop prints one line per failed item, then (when unreachable) a summary line without an
      // item: keep the item's line, it is the specific one.
      if (this.pendingFailure && this.pendingFailure.host === f.host && !f.item && this.pendingFailure.item) return
      this.settleFailure()
      this.pendingFailure = {name: this.currentTask ?? '(no task)', ...f}
    }
  }

  /** A failure stands once the next thing is not "...ignoring". (A rescued one stands too, until the
   *  recap says failed=0: summarize() ignores failures when the run succeeded.) */
  private settleFailure(): void {
    if (this.pendingFailure) {
      this.lastFailure = this.pendingFailure
      this.pendingFailure = undefined
    }
  }
}

/** Success: a recap, and no host failed or unreachable in it. */
export function recapSucceeded(recap: Recap): boolean {
  const hosts = Object.values(recap)
  return hosts.length > 0 && hosts.every((s) => s.failed === 0 && s.unreachable === 0)
}

function summarize(r: {recap: Recap; failedTask?: FailedTask; lastLines: string[]; exitCode: number}): PlaybookResult {
  const ok = recapSucceeded(r.recap) && r.exitCode === 0
  let failedTask = ok ? undefined : r.failedTask
  if (!ok && !failedTask) {
    const why = Object.keys(r.recap).length === 0
      ? `ansible-playbook exited ${r.exitCode} without a PLAY RECAP`
      : `ansible-playbook exited ${r.exitCode}`
    failedTask = {name: 'ansible-playbook', host: '', message: why, unreachable: false}
  }
  return {ok, recap: r.recap, failedTask, lastLines: r.lastLines, exitCode: r.exitCode}
}

// ---------------------------------------------------------------------------------------------
// Running it

/**
 * Where a playbook runs: any Transport (transport/types.ts), named here by the part this adapter uses
 * — tools sit below transport (transport/local.ts runs programs through exec.ts).
 */
export interface PlaybookHost {
  readonly description: string
  run(
    argv: string[],
    opts: {
      env: Record<string, string>
      signal?: AbortSignal
      timeoutMs: number
      onOutput: (chunk: string, stream: OutputStream) => void
      stopIfCitcDies: boolean
    },
  ): Promise<{exitCode: number}>
}

export interface RunPlaybookOptions {
  /** The playbook, as a path on the machine the transport reaches (e.g. .../playbooks/management.yml). */
  playbookPath: string
  /** A JSON file of variables on that machine (written by citc, mode 0600): passed as -e @file. */
  extraVarsPath?: string
  /** Working directory for ansible-playbook (default: the playbook's directory). */
  cwd?: string
  /** Default "localhost," with a local connection: citc runs playbooks on the node they configure. */
  inventory?: string
  connection?: string
  /** Every chunk of output: a file (appended, mode 0600) or a function. */
  logFile?: string | ((chunk: string) => void)
  /** Called with each task's name as it starts. */
  onTask?: (name: string) => void
  signal?: AbortSignal
  /** Default 60 minutes (a first run installs packages). */
  timeoutMs?: number
  /** Extra environment (merged over playbookEnv()). */
  env?: Record<string, string>
}

/** The environment ansible-playbook runs with: plain default-callback output that the parser reads. */
export function playbookEnv(playbookPath: string): Record<string, string> {
  return {
    ANSIBLE_CONFIG: `${dirname(playbookPath)}/ansible.cfg`,
    ANSIBLE_STDOUT_CALLBACK: 'default',
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_FORCE_COLOR: '0',
    ANSIBLE_HOST_KEY_CHECKING: 'False',
    ANSIBLE_RETRY_FILES_ENABLED: 'False',
    ANSIBLE_LOCALHOST_WARNING: 'False',
    // Ansible refuses to run under a non-UTF-8 locale.
    LC_ALL: 'C.UTF-8',
    LANG: 'C.UTF-8',
    PYTHONUNBUFFERED: '1',
  }
}

/** argv for ansible-playbook (run in `cwd` through env -C, since a Transport runs argv as given). */
export function playbookArgv(opts: Pick<RunPlaybookOptions, 'playbookPath' | 'extraVarsPath' | 'cwd' | 'inventory' | 'connection'>): string[] {
  const cwd = opts.cwd ?? dirname(opts.playbookPath)
  const argv = ['env', '-C', cwd, 'ansible-playbook', '-i', opts.inventory ?? 'localhost,', '-c', opts.connection ?? 'local', opts.playbookPath]
  if (opts.extraVarsPath) argv.push('-e', `@${opts.extraVarsPath}`)
  return argv
}

export class PlaybookError extends CitcError {
  readonly result: PlaybookResult
  constructor(playbook: string, result: PlaybookResult, logHint?: string) {
    const f = result.failedTask
    const where = f ? `task "${f.name}"${f.host ? ` on ${f.host}` : ''}${f.item ? ` (item ${f.item})` : ''}` : 'the run'
    super('remote', `${playbook} failed at ${where}${f?.unreachable ? ' (host unreachable)' : ''}: ${f?.message ?? 'unknown error'}`, {
      hint: logHint,
      details: {playbook, failedTask: f, recap: result.recap, exitCode: result.exitCode, lastLines: result.lastLines},
    })
    this.result = result
  }
}

/**
 * Run a playbook and follow it. Resolves with the result when every host ends with failed=0 and
 * unreachable=0; otherwise rejects with a PlaybookError (exit code 4) naming the failed task, carrying
 * the recap and the last lines. Cancelled through `signal`: rejects with a cancelled error (130).
 */
export async function runPlaybook(transport: PlaybookHost, opts: RunPlaybookOptions): Promise<PlaybookResult> {
  const log = logSink(opts.logFile)
  const parser = new PlaybookOutputParser({onTask: opts.onTask})
  const argv = playbookArgv(opts)
  log?.(`# ${new Date().toISOString()} ${transport.description}: ${argv.join(' ')}\n`)
  let exitCode: number
  try {
    const r = await transport.run(argv, {
      env: {...playbookEnv(opts.playbookPath), ...opts.env},
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? 60 * 60 * 1000,
      // A playbook of a killed citc must not run on beside the next run's.
      stopIfCitcDies: true,
      onOutput: (chunk, stream) => {
        log?.(chunk)
        parser.push(chunk, stream)
      },
    })
    exitCode = r.exitCode
  } catch (error) {
    parser.end()
    if (opts.signal?.aborted) throw cancelled(`${basename(opts.playbookPath)} cancelled${parser.task ? ` during "${parser.task}"` : ''}`)
    throw error
  }
  parser.end()
  log?.(`# ${new Date().toISOString()} exit ${exitCode}\n`)
  if (opts.signal?.aborted) throw cancelled(`${basename(opts.playbookPath)} cancelled${parser.task ? ` during "${parser.task}"` : ''}`)
  const result = parser.result(exitCode)
  if (!result.ok) {
    const hint = typeof opts.logFile === 'string' ? `full Ansible output: ${opts.logFile}` : undefined
    throw new PlaybookError(basename(opts.playbookPath), result, hint)
  }
  return result
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

function logSink(logFile: RunPlaybookOptions['logFile']): ((chunk: string) => void) | undefined {
  if (logFile === undefined) return undefined
  if (typeof logFile === 'function') return logFile
  mkdirSync(dirname(logFile), {recursive: true, mode: 0o700})
  return (chunk) => appendFileSync(logFile, chunk, {mode: 0o600})
}
