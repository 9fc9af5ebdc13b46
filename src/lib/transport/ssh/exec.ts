// Commands over an SSH connection. argv is turned into one line by shellQuote() (the remote login
// shell must be POSIX: sh, dash, bash, zsh). Timeout and cancel send TERM, then KILL, then close the
// channel.
import {StringDecoder} from 'node:string_decoder'

import type {ClientChannel} from 'ssh2'

import {remoteError} from '../../errors.js'
import {signalNumber} from '../../proc.js'
import {elevatedArgv} from '../elevate.js'
import {shellQuote} from '../../shell-quote.js'
import type {RunOptions, RunResult} from '../types.js'
import {cancelledError} from './failures.js'
import type {Connection} from './types.js'

/** RunOptions.timeoutMs's documented default. */
const DEFAULT_TIMEOUT_MS = 10 * 60_000
/** Between TERM and KILL (and between KILL and giving up on the channel). */
const KILL_GRACE_MS = 3000
/** First line of stderr of every command: the PID of its process group (see run). */
const PID_MARK = 'citc-pid:'
const PID_LINE = new RegExp(`(?:^|\\n)(${PID_MARK}(\\d+)\\n)`)

/**
 * Find the PID line run() asks the remote shell to print on stderr: normally the very first line,
 * but a noisy ~/.bashrc may write before it. Returns the PID and stderr without that line.
 */
export function takePidLine(head: Buffer): {pid: number; rest: Buffer} | undefined {
  const m = PID_LINE.exec(head.toString('latin1')) // latin1: one char per byte, so indexes are byte offsets
  if (!m) return undefined
  const start = m.index + m[0].length - m[1].length
  return {pid: Number(m[2]), rest: Buffer.concat([head.subarray(0, start), head.subarray(start + m[1].length)])}
}

/** The fields of ssh2 1.17.0's Channel that signalChannel uses; none of them is public API. */
type ChannelInternals = {outgoing?: {id: number; state: string}; _client?: {_protocol?: {signal(id: number, signal: string): void}}}

/**
 * Send a signal request on a session channel. ssh2's public Channel.signal() silently does nothing
 * once our side has sent EOF (which run() always does, right after stdin), though the protocol allows
 * it, and ssh2 has no other public way to send it: so, while the channel is open or half-closed, the
 * request goes to ssh2's protocol object — the one reach into ssh2's internals, checked before use,
 * and backed up by `kill` (see run). OpenSSH's sshd delivers it with killpg() to the session's process group.
 */
function signalChannel(ch: ClientChannel, name: string): void {
  const c = ch as unknown as ChannelInternals
  try {
    if (c.outgoing && (c.outgoing.state === 'open' || c.outgoing.state === 'eof') && typeof c._client?._protocol?.signal === 'function') {
      c._client._protocol.signal(c.outgoing.id, name)
    } else ch.signal(name)
  } catch {
    // the channel is gone already
  }
}

/** Transport.run over the connection. */
export function commandRunner(conn: Connection): (argv: string[], opts?: RunOptions) => Promise<RunResult> {
  const {client, description} = conn
  const run = (argv: string[], opts: RunOptions = {}): Promise<RunResult> => {
    if (argv.length === 0) return Promise.reject(new Error('run: empty argv'))
    const what = shellQuote(argv)
    if (opts.signal?.aborted) return Promise.reject(cancelledError(what, opts.signal.reason))
    if (conn.closed) return Promise.reject(remoteError(`cannot run ${what}: the connection to ${description} is closed`))
    // The session's shell is a process group leader (sshd calls setsid): it reports its PID on the
    // first line of stderr (stripped below), then becomes the command. Timeout and cancel signal
    // that whole group: over the protocol (sshd refuses that for root logins) and with `kill`.
    let line: string
    try {
      line = `printf '${PID_MARK}%s\\n' "$$" >&2; exec ${shellQuote(elevatedArgv([], argv, opts.env))}`
    } catch (error) {
      return Promise.reject(new Error(`run: ${(error as Error).message}`))
    }

    return new Promise<RunResult>((resolve, reject) => {
      client.exec(line, (error, ch: ClientChannel) => {
        if (error) {
          reject(remoteError(`cannot start ${what} on ${description}: ${error.message}`, {cause: error}))
          return
        }
        let pid: number | undefined
        const chunks = {stdout: [] as Buffer[], stderr: [] as Buffer[]}
        const collect = (stream: 'stdout' | 'stderr') => {
          const decoder = new StringDecoder('utf8')
          return (data: Buffer) => {
            chunks[stream].push(data)
            const text = decoder.write(data)
            if (text) opts.onOutput?.(text, stream)
          }
        }
        ch.on('data', collect('stdout'))
        const stderr = collect('stderr')
        let head: Buffer | undefined = Buffer.alloc(0)
        ch.stderr.on('data', (data: Buffer) => {
          if (head === undefined) return stderr(data)
          head = Buffer.concat([head, data])
          const found = takePidLine(head)
          if (!found && head.length < 4096) return
          const rest = found ? found.rest : head
          pid = found?.pid
          head = undefined
          if (rest.length > 0) stderr(rest)
          if (pid !== undefined && stopping) killGroup('TERM')
        })
        let exit: {code: number | null; signal?: string} | undefined
        ch.on('exit', (code: number | null, signal?: string) => {
          exit = {code, signal}
        })

        let stopping: 'timeout' | 'abort' | undefined
        const timers: NodeJS.Timeout[] = []
        const killGroup = (name: 'TERM' | 'KILL') => {
          signalChannel(ch, name)
          if (pid !== undefined && !conn.closed) {
            run(['sh', '-c', 'kill -s "$1" -- "-$2"', 'sh', name, String(pid)], {timeoutMs: 10_000}).catch(() => {})
          }
        }
        const stop = (why: 'timeout' | 'abort') => {
          if (stopping) return
          stopping = why
          killGroup('TERM')
          timers.push(
            setTimeout(() => {
              killGroup('KILL')
              ch.close()
              timers.push(setTimeout(finish, KILL_GRACE_MS)) // no close from the server: give up on it
            }, KILL_GRACE_MS),
          )
        }
        const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
        timers.push(setTimeout(() => stop('timeout'), timeoutMs))
        const onAbort = () => stop('abort')
        opts.signal?.addEventListener('abort', onAbort, {once: true})

        let done = false
        function finish() {
          if (done) return
          done = true
          for (const t of timers) clearTimeout(t)
          opts.signal?.removeEventListener('abort', onAbort)
          if (head?.length) stderr(head) // short stderr without a newline, and no PID line
          head = undefined
          if (stopping === 'abort') return reject(cancelledError(what, opts.signal?.reason))
          if (stopping === 'timeout') return reject(remoteError(`timed out after ${timeoutMs / 1000} s on ${description}: ${what}`, {details: {timedOut: true}}))
          if (!exit) return reject(remoteError(`the connection to ${description} was lost while running ${what}`))
          const exitCode = exit.code ?? 128 + signalNumber(exit.signal)
          resolve({stdout: Buffer.concat(chunks.stdout).toString('utf8'), stderr: Buffer.concat(chunks.stderr).toString('utf8'), exitCode})
        }
        ch.on('close', finish)

        // stdin: the bytes given, then EOF (so a command reading stdin never waits for more).
        if (opts.stdin !== undefined) ch.end(opts.stdin)
        else ch.end()
      })
    })
  }
  return run
}
