// Files over SFTP on an SSH connection. Writes are atomic: temp file in the target's directory,
// fsync, chmod, then rename(2) over the target (posix-rename@openssh.com, else `mv -f`). On any error
// or abort the temp file is removed while the connection still lives; if the connection itself drops
// the target is untouched but a hidden `.<name>.citc-tmp-<hex>` may stay behind.
import type {SFTPWrapper} from 'ssh2'

import {CitcError, remoteError} from '../../errors.js'
import {checkResult} from '../check.js'
import {tempPathFor} from '../local.js'
import type {RunOptions, RunResult} from '../types.js'
import {cancelledError} from './failures.js'
import type {Connection, SshTransport} from './types.js'

/** Bytes per SFTP write call: abort is checked between calls. */
const WRITE_CHUNK = 1 << 20
/** SFTP status code for "no such file". */
const SFTP_NO_SUCH_FILE = 2
/** What ssh2 throws for an SFTP extension the server did not announce (fsync@, posix-rename@openssh.com). */
const UNSUPPORTED = /not support/i

/** A failed SFTP request, with the server's status code (SSH_FX_*) when it sent one. */
class SftpError extends CitcError {
  constructor(
    message: string,
    readonly status: unknown,
    cause: unknown,
  ) {
    super('remote', message, {cause})
  }
}

const sftpStatus = (error: unknown) => (error instanceof SftpError ? error.status : undefined)

type Run = (argv: string[], opts?: RunOptions) => Promise<RunResult>

/** Transport.readFile and writeFile over the connection (`run` for the `mv -f` fallback). */
export function sftpFiles(conn: Connection, run: Run): Pick<SshTransport, 'readFile' | 'writeFile'> {
  const {client, description} = conn

  // The SFTP session, opened on first use and shared.
  let session: Promise<SFTPWrapper> | undefined
  const sftp = (): Promise<SFTPWrapper> => {
    if (conn.closed) return Promise.reject(remoteError(`the connection to ${description} is closed`))
    session ??= new Promise<SFTPWrapper>((resolve, reject) => {
      client.sftp((error, s) => {
        if (error) {
          session = undefined
          reject(remoteError(`cannot open an SFTP session on ${description}: ${error.message}`, {cause: error, hint: 'citc needs the SFTP subsystem of sshd (Subsystem sftp ... in sshd_config)'}))
          return
        }
        s.on('close', () => {
          session = undefined
        })
        resolve(s)
      })
    })
    return session
  }

  /** Promisify one SFTP call; failures become remote errors naming the path. */
  const op = <T>(what: string, call: (cb: (error: (Error & {code?: unknown}) | null | undefined, value?: T) => void) => void) =>
    new Promise<T>((resolve, reject) => {
      if (conn.closed) return reject(remoteError(`${what} on ${description}: the connection is closed`))
      try {
        call((error, value) => (error ? reject(new SftpError(`${what} on ${description}: ${error.message}`, error.code, error)) : resolve(value as T)))
      } catch (error) {
        reject(remoteError(`${what} on ${description}: ${(error as Error).message}`, {cause: error}))
      }
    })

  async function readFile(path: string): Promise<Buffer | undefined> {
    const s = await sftp()
    try {
      return await op<Buffer>(`cannot read ${path}`, (cb) => s.readFile(path, cb))
    } catch (error) {
      if (sftpStatus(error) === SFTP_NO_SUCH_FILE) return undefined
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
            if (sftpStatus(error) === SFTP_NO_SUCH_FILE) return 0o644
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
        if (!UNSUPPORTED.test(error.message)) throw error // an old server without fsync@openssh.com
      })
      const h = handle
      handle = undefined
      await op(`cannot close ${tmp}`, (cb) => s.close(h, cb))
      checkAbort()
      try {
        await op(`cannot rename ${tmp} to ${path}`, (cb) => s.ext_openssh_rename(tmp, path, cb))
      } catch (error) {
        if (!UNSUPPORTED.test((error as Error).message)) throw error
        await run(['mv', '-f', tmp, path], {timeoutMs: 60_000}).then((r) => checkResult(['mv', '-f', tmp, path], r, description))
      }
      created = false
    } catch (error) {
      // Clean up while the connection lives (bounded: a dead connection must not hang us).
      if (!conn.closed) {
        const bounded = <T>(p: Promise<T>) => Promise.race([p, new Promise((r) => setTimeout(r, 5000).unref())]).catch(() => {})
        if (handle) await bounded(op('close', (cb) => s.close(handle!, cb)))
        if (created) await bounded(op('unlink', (cb) => s.unlink(tmp, cb)))
      }
      if (conn.closed && !(error instanceof CitcError && error.kind === 'cancelled')) {
        throw remoteError(`the connection to ${description} was lost while writing ${path} (${path} is unchanged)`, {cause: error})
      }
      throw error
    }
  }

  return {readFile, writeFile}
}
