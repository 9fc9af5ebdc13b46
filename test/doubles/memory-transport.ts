// A Transport held in memory, for unit tests of logic that drives a management node (finish,
// add-user) without sshd or a daemon: files in a map, commands answered by scripts the test gives,
// every call recorded in order. A few file commands the workflows use to move files into place
// (mv, cp, rm, mkdir, test -e/-d/-x) act on the map, so a test can assert what the node holds at the
// end; a script for the same command takes precedence (to make it fail). A command with neither a
// script nor a built-in rejects: a test never passes because an unexpected command "succeeded".
import {posix} from 'node:path'

import {checkResult} from '../../src/lib/transport/check.js'
import type {RunOptions, RunResult, Transport} from '../../src/lib/transport/types.js'

export interface RecordedCall {
  op: 'run' | 'check' | 'readFile' | 'writeFile'
  argv?: string[]
  path?: string
  /** What was fed on stdin (run/check), or written (writeFile), as text. */
  data?: string
  mode?: number
  env?: Record<string, string>
}

/** Which commands a script answers: an argv prefix, a pattern on the argv joined by spaces, or a test. */
export type Match = readonly string[] | RegExp | ((argv: string[]) => boolean)

/** The answer: a fixed result (missing fields: exit 0, no output), or computed from the call. */
export type Reply = Partial<RunResult> | ((argv: string[], opts: RunOptions, node: MemoryTransport) => Partial<RunResult> | Promise<Partial<RunResult>>)

interface Script {
  match: Match
  reply: Reply
  /** How many more calls it answers (undefined: every one). */
  left?: number
}

interface MemoryFile {
  data: Buffer
  mode: number
}

const matches = (m: Match, argv: string[]): boolean => {
  if (typeof m === 'function') return m(argv)
  if (m instanceof RegExp) return m.test(argv.join(' '))
  return m.length <= argv.length && m.every((word, i) => argv[i] === word)
}

export class MemoryTransport implements Transport {
  readonly description: string
  readonly calls: RecordedCall[] = []
  private readonly files = new Map<string, MemoryFile>()
  private readonly dirs = new Set<string>(['/'])
  private readonly scripts: Script[] = []
  closed = false

  constructor(opts: {files?: Record<string, string | Buffer>; dirs?: string[]; description?: string} = {}) {
    this.description = opts.description ?? 'the memory node'
    for (const d of opts.dirs ?? []) this.addDir(d)
    for (const [path, data] of Object.entries(opts.files ?? {})) this.put(path, data)
  }

  // ---- the test's side -------------------------------------------------------------------------

  /** Answer commands matching `match`; the latest script given wins over earlier ones. */
  on(match: Match, reply: Reply = {}, opts: {times?: number} = {}): this {
    this.scripts.unshift({match, reply, left: opts.times})
    return this
  }

  /** Answer the next matching command only. */
  once(match: Match, reply: Reply = {}): this {
    return this.on(match, reply, {times: 1})
  }

  /** Put a file (its directories are made). */
  put(path: string, data: string | Buffer, mode = 0o644): this {
    this.addDir(posix.dirname(path))
    this.files.set(path, {data: Buffer.from(data), mode})
    return this
  }

  addDir(path: string): this {
    for (let p = posix.normalize(path); !this.dirs.has(p); p = posix.dirname(p)) this.dirs.add(p)
    return this
  }

  text(path: string): string | undefined {
    return this.files.get(path)?.data.toString('utf8')
  }

  mode(path: string): number | undefined {
    return this.files.get(path)?.mode
  }

  exists(path: string): boolean {
    return this.files.has(path) || this.dirs.has(path)
  }

  /** Every file path, sorted. */
  paths(): string[] {
    return [...this.files.keys()].sort()
  }

  /** The argv of every command run (run and check), in order. */
  commands(): string[][] {
    return this.calls.filter((c) => c.argv).map((c) => c.argv!)
  }

  // ---- Transport -------------------------------------------------------------------------------

  async run(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    this.record('run', argv, opts)
    return this.answer(argv, opts)
  }

  async check(argv: string[], opts: RunOptions = {}): Promise<RunResult> {
    this.record('check', argv, opts)
    return checkResult(argv, await this.answer(argv, opts), this.description)
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    this.calls.push({op: 'readFile', path})
    const f = this.files.get(path)
    return f ? Buffer.from(f.data) : undefined
  }

  async writeFile(path: string, data: string | Buffer, opts: {mode?: number} = {}): Promise<void> {
    this.calls.push({op: 'writeFile', path, data: String(data), mode: opts.mode})
    // As over SFTP or on a disk: the directory must be there.
    if (!this.dirs.has(posix.dirname(path))) throw new Error(`${posix.dirname(path)}: no such directory on ${this.description}`)
    this.files.set(path, {data: Buffer.from(data), mode: opts.mode ?? 0o644})
  }

  async close(): Promise<void> {
    this.closed = true
  }

  // ---- inside ----------------------------------------------------------------------------------

  private record(op: 'run' | 'check', argv: string[], opts: RunOptions) {
    this.calls.push({op, argv: [...argv], ...(opts.stdin === undefined ? {} : {data: String(opts.stdin)}), ...(opts.env ? {env: opts.env} : {})})
  }

  private async answer(argv: string[], opts: RunOptions): Promise<RunResult> {
    opts.signal?.throwIfAborted()
    const script = this.scripts.find((s) => (s.left === undefined || s.left > 0) && matches(s.match, argv))
    if (script) {
      if (script.left !== undefined) script.left--
      const r = typeof script.reply === 'function' ? await script.reply(argv, opts, this) : script.reply
      return {stdout: r.stdout ?? '', stderr: r.stderr ?? '', exitCode: r.exitCode ?? 0}
    }
    const builtin = this.builtin(argv)
    if (builtin) return builtin
    throw new Error(`${this.description}: no script for ${JSON.stringify(argv)} (give one with .on())`)
  }

  /** mv -f, cp [-p] [-R -T], rm [-f|-rf], mkdir [-p] [-m MODE], test -e|-d|-x: on the map ("--" ends options). */
  private builtin(argv: string[]): RunResult | undefined {
    const ok = (): RunResult => ({stdout: '', stderr: '', exitCode: 0})
    const fail = (stderr: string): RunResult => ({stdout: '', stderr, exitCode: 1})
    const [cmd, ...rest] = argv
    const flags = new Set<string>()
    const operands: string[] = []
    for (let i = 0, options = true; i < rest.length; i++) {
      const a = rest[i]
      if (options && a === '--') options = false
      else if (options && cmd === 'mkdir' && a === '-m') i++ // its mode: directories have none here
      else if (options && /^-[a-zA-Z]+$/.test(a)) for (const c of a.slice(1)) flags.add(c)
      else operands.push(a)
    }
    switch (cmd) {
      case 'mv':
      case 'cp': {
        if (operands.length !== 2) return undefined
        const [from, to] = operands
        if (!this.dirs.has(posix.dirname(to))) return fail(`${cmd}: cannot create '${to}': No such file or directory`)
        if (cmd === 'cp' && flags.has('R') && flags.has('T') && this.dirs.has(from)) {
          // cp -R -T DIR TO: DIR's contents into TO.
          for (const d of [...this.dirs]) if (d.startsWith(from + '/')) this.addDir(to + d.slice(from.length))
          for (const [f, v] of [...this.files]) if (f.startsWith(from + '/')) this.files.set(to + f.slice(from.length), {data: Buffer.from(v.data), mode: v.mode})
          this.addDir(to)
          return ok()
        }
        const f = this.files.get(from)
        if (!f) return fail(`${cmd}: cannot stat '${from}': No such file or directory`)
        this.files.set(to, {data: Buffer.from(f.data), mode: f.mode})
        if (cmd === 'mv') this.files.delete(from)
        return ok()
      }
      case 'rm': {
        for (const p of operands) {
          if (this.dirs.has(p) && !flags.has('r')) return fail(`rm: cannot remove '${p}': Is a directory`)
          if (!this.exists(p) && !flags.has('f')) return fail(`rm: cannot remove '${p}': No such file or directory`)
          this.files.delete(p)
          for (const f of [...this.files.keys()]) if (f.startsWith(p + '/')) this.files.delete(f)
          for (const d of [...this.dirs]) if (d === p || d.startsWith(p + '/')) this.dirs.delete(d)
        }
        return ok()
      }
      case 'mkdir': {
        for (const p of operands) {
          if (this.exists(p) && !flags.has('p')) return fail(`mkdir: cannot create directory '${p}': File exists`)
          if (!flags.has('p') && !this.dirs.has(posix.dirname(p))) return fail(`mkdir: cannot create directory '${p}': No such file or directory`)
          this.addDir(p)
        }
        return ok()
      }
      case 'test': {
        if (rest.length !== 2) return undefined
        const [flag, p] = rest
        if (flag === '-d') return this.dirs.has(p) ? ok() : fail('')
        if (flag === '-e') return this.exists(p) ? ok() : fail('')
        if (flag === '-x') return ((this.files.get(p)?.mode ?? 0) & 0o111) !== 0 ? ok() : fail('')
        return undefined
      }
      default:
        return undefined
    }
  }
}
