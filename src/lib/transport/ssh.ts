// The Transport over SSH: the only module that imports ssh2.
// - The host key is pinned: SHA-256 of the raw key (OpenSSH's `SHA256:` fingerprint) must equal the
//   fingerprint citc recorded; anything else is refused before authentication, never accepted.
// - Commands are argv arrays, turned into one line by shellQuote() (the remote login shell must be
//   POSIX: sh, dash, bash, zsh). Timeout and cancel send TERM, then KILL, then close the channel.
// - Files go over SFTP; writes are atomic: temp file in the target's directory, fsync, chmod, then
//   rename(2) over the target (posix-rename@openssh.com, else `mv -f`). On any error or abort the
//   temp file is removed while the connection still lives; if the connection itself drops the target
//   is untouched but a hidden `.<name>.citc-tmp-<hex>` may stay behind.
import {createHash} from 'node:crypto'
import {readFile as readLocalFile} from 'node:fs/promises'
import {StringDecoder} from 'node:string_decoder'

import ssh2 from 'ssh2' // the default import: named imports fail in plain Node ESM
import type {ClientChannel, SFTPWrapper} from 'ssh2'

import {signalNumber} from '../proc.js'
import {CitcError, InvalidInputError, remoteError} from '../errors.js'
import {checkResult} from './check.js'
import {elevatedArgv} from './elevate.js'
import {tempPathFor} from './local.js'
import {shellQuote} from './quote.js'
import type {RunOptions, RunResult, Transport} from './types.js'

const {Client} = ssh2

/** RunOptions.timeoutMs's documented default. */
const DEFAULT_TIMEOUT_MS = 10 * 60_000
/** Between TERM and KILL (and between KILL and giving up on the channel). */
const KILL_GRACE_MS = 3000
/** Bytes per SFTP write call: abort is checked between calls. */
const WRITE_CHUNK = 1 << 20
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/
/** First line of stderr of every command: the PID of its process group (see run). */
const PID_MARK = 'citc-pid:'
const PID_LINE = new RegExp(`(?:^|\\n)(${PID_MARK}(\\d+)\\n)`)
/** SFTP status code for "no such file". */
const SFTP_NO_SUCH_FILE = 2

export interface SshConnectOptions {
  host: string
  port: number
  user: string
  /** The private key itself, or the path of the key file. Unencrypted (no passphrase). */
  privateKey: Buffer | string
  /** The pinned host key, as OpenSSH prints it: `SHA256:` and 43 base64 characters. */
  hostKeyFingerprint: string
  /** TCP connect + SSH handshake + authentication. Default 20 s. */
  readyTimeoutMs?: number
  signal?: AbortSignal
}

/** Transport.writeFile with one extra option: cancellation of the upload. */
export interface SshTransport extends Transport {
  writeFile(path: string, data: string | Buffer, opts?: {mode?: number; signal?: AbortSignal}): Promise<void>
}

/** OpenSSH's fingerprint of a raw public key blob: `SHA256:` + base64 (no padding) of its SHA-256. */
export function sshFingerprint(rawKey: Buffer): string {
  return `SHA256:${createHash('sha256').update(rawKey).digest('base64').replace(/=+$/, '')}`
}

/** The algorithm named at the start of a raw key blob, e.g. `ssh-ed25519`. */
function keyAlgorithm(rawKey: Buffer): string {
  try {
    const n = rawKey.readUInt32BE(0)
    return rawKey.subarray(4, 4 + n).toString('latin1')
  } catch {
    return 'unknown'
  }
}

type SshError = Error & {code?: string; level?: string}

function connectFailure(error: SshError, user: string, where: string, timeoutMs: number): CitcError {
  const code = error.code ?? ''
  if (code === 'ECONNREFUSED') {
    return remoteError(`cannot connect to ${where}: connection refused`, {
      hint: 'check that sshd runs there and listens on that port (and that the port is open in the firewall)',
      cause: error,
    })
  }
  if (error.level === 'client-timeout' || code === 'ETIMEDOUT' || /timed out/i.test(error.message)) {
    return remoteError(`cannot connect to ${where}: no SSH handshake within ${timeoutMs / 1000} s`, {
      hint: 'check the address, that the machine is up, and that a firewall or security list lets SSH through',
      cause: error,
    })
  }
  if (error.level === 'client-authentication') {
    return remoteError(`SSH authentication failed for ${user}@${where}`, {
      hint: `check the key: its public half must be in ~${user}/.ssh/authorized_keys there, and the key given must be the matching private key`,
      cause: error,
    })
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return remoteError(`cannot connect to ${where}: unknown host`, {hint: 'check the host name', cause: error})
  }
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') {
    return remoteError(`cannot connect to ${where}: host unreachable`, {hint: 'check the address and the network', cause: error})
  }
  return remoteError(`cannot connect to ${where}: ${error.message}`, {cause: error})
}

function hostKeyMismatch(where: string, expected: string, received: string, algorithm: string): CitcError {
  return remoteError(
    `the host key of ${where} does not match the pinned key (it changed): refusing to connect\n` +
      `  expected ${expected}\n  received ${received} (${algorithm})`,
    {
      hint:
        'if the machine was rebuilt, check its new key on the machine itself (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) ' +
        'before registering it again; otherwise someone may be intercepting the connection',
      details: {expectedFingerprint: expected, receivedFingerprint: received, algorithm},
    },
  )
}

/**
 * Send a signal request on a session channel. ssh2's Channel.signal() silently does nothing once our
 * side has sent EOF (which run() always does, right after stdin), though the protocol allows it: so
 * the request goes to ssh2's protocol object while the channel is open or half-closed.
 * OpenSSH's sshd delivers it with killpg() to the session's process group.
 */
function signalChannel(ch: ClientChannel, name: string): void {
  const c = ch as unknown as {outgoing?: {id: number; state: string}; _client?: {_protocol?: {signal(id: number, signal: string): void}}}
  try {
    if (c.outgoing && (c.outgoing.state === 'open' || c.outgoing.state === 'eof') && c._client?._protocol) {
      c._client._protocol.signal(c.outgoing.id, name)
    } else ch.signal(name)
  } catch {
    // the channel is gone already
  }
}

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

/** ssh2 reports `SIGKILL`; the protocol itself says `KILL`. */

const cancelledError = (what: string, reason?: unknown) => new CitcError('cancelled', `cancelled: ${what}`, {cause: reason})

async function loadKey(privateKey: Buffer | string): Promise<Buffer> {
  if (Buffer.isBuffer(privateKey)) return privateKey
  try {
    return await readLocalFile(privateKey)
  } catch (error) {
    throw new InvalidInputError([{where: privateKey, message: `cannot read the private key (${(error as NodeJS.ErrnoException).code})`}])
  }
}

/** Connect with the pinned host key and the given key; resolves once authenticated. */
export async function connectSsh(o: SshConnectOptions): Promise<SshTransport> {
  if (!FINGERPRINT.test(o.hostKeyFingerprint)) {
    throw new InvalidInputError([
      {where: 'host key fingerprint', message: `"${o.hostKeyFingerprint}" is not an OpenSSH SHA256 fingerprint (SHA256: and 43 base64 characters)`},
    ])
  }
  const privateKey = await loadKey(o.privateKey)
  const where = `${o.host}:${o.port}`
  const description = `${o.user}@${where}`
  const timeoutMs = o.readyTimeoutMs ?? 20_000
  if (o.signal?.aborted) throw cancelledError(`connecting to ${description}`, o.signal.reason)

  const client = new Client()
  let closed = false
  client.on('close', () => {
    closed = true
  })

  await new Promise<void>((resolve, reject) => {
    let mismatch: {received: string; algorithm: string} | undefined
    let settled = false
    const settle = (error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(hardTimer)
      o.signal?.removeEventListener('abort', onAbort)
      client.off('ready', onReady)
      if (error) {
        client.destroy()
        reject(error)
      } else resolve()
    }
    const onReady = () => settle()
    const onAbort = () => settle(cancelledError(`connecting to ${description}`, o.signal?.reason))
    // ssh2's readyTimeout covers the handshake; this one also covers a TCP connect that hangs.
    const hardTimer = setTimeout(
      () => settle(connectFailure(Object.assign(new Error('timed out'), {level: 'client-timeout'}), o.user, where, timeoutMs)),
      timeoutMs + 2000,
    )
    o.signal?.addEventListener('abort', onAbort, {once: true})
    client.once('ready', onReady)
    client.on('error', (error: SshError) => {
      if (mismatch) settle(hostKeyMismatch(where, o.hostKeyFingerprint, mismatch.received, mismatch.algorithm))
      else settle(connectFailure(error, o.user, where, timeoutMs))
    })
    client.on('close', () => settle(mismatch ? hostKeyMismatch(where, o.hostKeyFingerprint, mismatch.received, mismatch.algorithm) : remoteError(`connection to ${where} closed during the SSH handshake`)))
    try {
      client.connect({
        host: o.host,
        port: o.port,
        username: o.user,
        privateKey,
        readyTimeout: timeoutMs,
        // A dead connection (machine gone, network cut) is noticed within a minute, even mid-command.
        keepaliveInterval: 15_000,
        keepaliveCountMax: 4,
        hostVerifier: (key: Buffer) => {
          const received = sshFingerprint(key)
          if (received === o.hostKeyFingerprint) return true
          mismatch = {received, algorithm: keyAlgorithm(key)}
          return false
        },
      })
    } catch (error) {
      // ssh2 parses the key synchronously: a passphrase-protected or malformed key lands here.
      settle(new InvalidInputError([{where: typeof o.privateKey === 'string' ? o.privateKey : 'private key', message: (error as Error).message}]))
    }
  })

  // --- SFTP session, opened on first use and shared ---
  let sftpSession: Promise<SFTPWrapper> | undefined
  const sftp = (): Promise<SFTPWrapper> => {
    if (closed) return Promise.reject(remoteError(`the connection to ${description} is closed`))
    sftpSession ??= new Promise<SFTPWrapper>((resolve, reject) => {
      client.sftp((error, s) => {
        if (error) {
          sftpSession = undefined
          reject(remoteError(`cannot open an SFTP session on ${description}: ${error.message}`, {cause: error, hint: 'citc needs the SFTP subsystem of sshd (Subsystem sftp ... in sshd_config)'}))
          return
        }
        s.on('close', () => {
          sftpSession = undefined
        })
        resolve(s)
      })
    })
    return sftpSession
  }
  /** Promisify one SFTP call; failures become remote errors naming the path. */
  const op = <T>(what: string, call: (cb: (error: (Error & {code?: unknown}) | null | undefined, value?: T) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      if (closed) return reject(remoteError(`${what} on ${description}: the connection is closed`))
      try {
        call((error, value) => (error ? reject(Object.assign(remoteError(`${what} on ${description}: ${error.message}`, {cause: error}), {sftpCode: error.code})) : resolve(value as T)))
      } catch (error) {
        reject(remoteError(`${what} on ${description}: ${(error as Error).message}`, {cause: error}))
      }
    })
  const sftpCode = (error: unknown) => (error as {sftpCode?: unknown}).sftpCode

  // --- commands ---
  const run = (argv: string[], opts: RunOptions = {}): Promise<RunResult> => {
    if (argv.length === 0) return Promise.reject(new Error('run: empty argv'))
    const what = shellQuote(argv)
    if (opts.signal?.aborted) return Promise.reject(cancelledError(what, opts.signal.reason))
    if (closed) return Promise.reject(remoteError(`cannot run ${what}: the connection to ${description} is closed`))
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
          if (pid !== undefined && !closed) {
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

  // --- files ---
  async function readFile(path: string): Promise<Buffer | undefined> {
    const s = await sftp()
    try {
      return await op<Buffer>(`cannot read ${path}`, (cb) => s.readFile(path, cb))
    } catch (error) {
      if (sftpCode(error) === SFTP_NO_SUCH_FILE) return undefined
      throw error
    }
  }

  async function writeFile(path: string, data: string | Buffer, opts: {mode?: number; signal?: AbortSignal} = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    const signal = opts.signal
    const checkAbort = () => {
      if (signal?.aborted) throw cancelledError(`writing ${path} on ${description}`, signal.reason)
    }
    checkAbort()
    const s = await sftp()
    const tmp = tempPathFor(path)
    let handle: Buffer | undefined
    let created = false
    try {
      // Without a mode, keep the mode of the file being replaced (0644 for a new file).
      let mode = opts.mode
      if (mode === undefined) {
        mode = await op<{mode: number}>(`cannot stat ${path}`, (cb) => s.stat(path, cb)).then(
          (st) => st.mode & 0o7777,
          (error) => {
            if (sftpCode(error) === SFTP_NO_SUCH_FILE) return 0o644
            throw error
          },
        )
      }
      // 'wx': O_CREAT|O_EXCL, never through an existing file or link. 0600 until complete.
      handle = await op<Buffer>(`cannot create ${tmp}`, (cb) => s.open(tmp, 'wx', {mode: 0o600}, cb))
      created = true
      for (let off = 0; off < bytes.length; off += WRITE_CHUNK) {
        checkAbort()
        const len = Math.min(WRITE_CHUNK, bytes.length - off)
        await op(`cannot write ${tmp}`, (cb) => s.write(handle!, bytes, off, len, off, cb))
      }
      checkAbort()
      await op(`cannot chmod ${tmp}`, (cb) => s.fchmod(handle!, mode!, cb))
      await op('fsync', (cb) => s.ext_openssh_fsync(handle!, cb)).catch((error: Error) => {
        if (!/not support/i.test(error.message)) throw error // an old server without fsync@openssh.com
      })
      const h = handle
      handle = undefined
      await op(`cannot close ${tmp}`, (cb) => s.close(h, cb))
      checkAbort()
      try {
        await op(`cannot rename ${tmp} to ${path}`, (cb) => s.ext_openssh_rename(tmp, path, cb))
      } catch (error) {
        if (!/not support/i.test((error as Error).message)) throw error
        await run(['mv', '-f', tmp, path], {timeoutMs: 60_000}).then((r) => checkResult(['mv', '-f', tmp, path], r, description))
      }
      created = false
    } catch (error) {
      // Clean up while the connection lives (bounded: a dead connection must not hang us).
      if (!closed) {
        const bounded = <T>(p: Promise<T>) => Promise.race([p, new Promise((r) => setTimeout(r, 5000).unref())]).catch(() => {})
        if (handle) await bounded(op('close', (cb) => s.close(handle!, cb)))
        if (created) await bounded(op('unlink', (cb) => s.unlink(tmp, cb)))
      }
      if (closed && !(error instanceof CitcError && error.kind === 'cancelled')) {
        throw remoteError(`the connection to ${description} was lost while writing ${path} (${path} is unchanged)`, {cause: error})
      }
      throw error
    }
  }

  async function close(): Promise<void> {
    if (closed) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        client.destroy()
        resolve()
      }, 5000)
      client.once('close', () => {
        clearTimeout(timer)
        resolve()
      })
      client.end()
    })
  }

  return {
    description,
    run,
    check: async (argv, opts) => checkResult(argv, await run(argv, opts), description),
    readFile,
    writeFile,
    close,
  }
}

/**
 * Connect only far enough to see the server's host key, then hang up (nothing is authenticated).
 * For `citc cluster add`: the user confirms the fingerprint before citc pins it.
 */
export async function fetchHostKeyFingerprint(o: {host: string; port: number; timeoutMs?: number}): Promise<{fingerprint: string; algorithm: string}> {
  const key = await probeHostKey(o)
  return {fingerprint: sshFingerprint(key), algorithm: keyAlgorithm(key)}
}

/**
 * Connect only far enough to see the server's host key, then refuse it: nothing is authenticated,
 * no session is opened. The raw key blob, for fingerprints and known_hosts lines.
 */
async function probeHostKey(o: {host: string; port: number; timeoutMs?: number}): Promise<Buffer> {
  const where = `${o.host}:${o.port}`
  const timeoutMs = o.timeoutMs ?? 15_000
  const client = new Client()
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      let seen: Buffer | undefined
      const hardTimer = setTimeout(
        () => reject(connectFailure(Object.assign(new Error('timed out'), {level: 'client-timeout'}), 'citc', where, timeoutMs)),
        timeoutMs + 2000,
      )
      const done = () => clearTimeout(hardTimer)
      client.on('error', (error: SshError) => {
        done()
        if (seen) resolve(seen)
        else reject(connectFailure(error, 'citc', where, timeoutMs))
      })
      client.on('close', () => {
        done()
        if (seen) resolve(seen)
        else reject(remoteError(`${where} closed the connection before showing its host key`))
      })
      client.on('ready', () => {
        // Cannot happen (the verifier refuses), but never leave a session open.
        done()
        reject(remoteError(`unexpected: ${where} accepted the probe`))
      })
      client.connect({
        host: o.host,
        port: o.port,
        username: 'citc-host-key-probe',
        readyTimeout: timeoutMs,
        hostVerifier: (key: Buffer) => {
          seen = Buffer.from(key)
          done()
          resolve(seen)
          return false // refuse: we only wanted to see the key
        },
      })
    })
  } finally {
    client.destroy()
  }
}

/** One SSH public key as ssh2's parser reads it (for `citc add-user --key`). */
export interface ParsedPublicKey {
  /** The algorithm, e.g. `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`. */
  type: string
  /** The raw key blob (what the base64 field of an authorized_keys line decodes to), re-encoded by ssh2. */
  blob: Buffer
  /** The public key as PEM (SPKI), for node:crypto (e.g. an RSA key's modulus length). */
  pem: string
  comment: string
  /** True when the text was a private key (then blob and pem are its public half). */
  isPrivate: boolean
}

/** Parse one key (`type base64 [comment]`, or a key file's text) with ssh2's parser; its error otherwise. */
export function parseSshPublicKey(text: string | Buffer): ParsedPublicKey | Error {
  let parsed: ReturnType<typeof ssh2.utils.parseKey>
  try {
    parsed = ssh2.utils.parseKey(text)
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
  if (parsed instanceof Error) return parsed
  const key = Array.isArray(parsed) ? (parsed[0] as typeof parsed | undefined) : parsed
  if (!key) return new Error('no key found')
  try {
    return {type: key.type, blob: key.getPublicSSH(), pem: key.getPublicPEM(), comment: key.comment ?? '', isPrivate: key.isPrivateKey()}
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

// ---------------------------------------------------------------------------------------------
// Key generation (citc create): the admin's key and the management node's host key, made here so the
// host key is known — and pinned — before the machine exists.

export interface GeneratedKeyPair {
  /** OpenSSH private key (PEM, unencrypted): for a 0600 file. */
  privateKey: string
  /** One line: "ssh-ed25519 AAAA… comment". */
  publicKey: string
  /** OpenSSH's SHA256 fingerprint of the public key. */
  fingerprint: string
}

/** A new ed25519 key pair (ssh2's generator: no ssh-keygen needed). */
export function generateEd25519KeyPair(comment: string): GeneratedKeyPair {
  // ssh2 1.x drops a leading zero byte of the 32-byte ed25519 public key (about one key in 256): the
  // pair is then malformed for every SSH implementation. Such a pair is thrown away and made again.
  for (let attempt = 0; attempt < 20; attempt++) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519', {comment})
    const publicKey = pair.public.trim()
    if (parseSshPublicKey(publicKey) instanceof Error) continue
    return {privateKey: pair.private.endsWith('\n') ? pair.private : `${pair.private}\n`, publicKey, fingerprint: publicKeyFingerprint(publicKey)}
  }
  throw new Error('could not generate a well-formed ed25519 key pair in 20 attempts')
}

/** The SHA256 fingerprint of an OpenSSH public key line ("ssh-ed25519 AAAA… [comment]"). */
export function publicKeyFingerprint(publicKeyLine: string): string {
  const parsed = parseSshPublicKey(publicKeyLine)
  if (parsed instanceof Error) throw new InvalidInputError([{where: 'public key', message: parsed.message}])
  return sshFingerprint(parsed.blob)
}

/**
 * The server's host key itself (algorithm and base64 blob, as a known_hosts line wants it), checked
 * against the pinned fingerprint: for writing a known_hosts file the system's `ssh` can use. Nothing
 * is authenticated; a key that does not match is refused like connectSsh refuses it.
 */
export async function fetchPinnedHostKey(o: {host: string; port: number; hostKeyFingerprint: string; timeoutMs?: number}): Promise<string> {
  const key = await probeHostKey(o)
  const received = sshFingerprint(key)
  if (received !== o.hostKeyFingerprint) throw hostKeyMismatch(`${o.host}:${o.port}`, o.hostKeyFingerprint, received, keyAlgorithm(key))
  return `${keyAlgorithm(key)} ${key.toString('base64')}`
}
