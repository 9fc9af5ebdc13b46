// The Transport over SSH: connect, check the pinned host key, log in with the key, then hand the
// connection to commands (exec.ts) and files (sftp.ts).
// - The host key is pinned: SHA-256 of the raw key (OpenSSH's `SHA256:` fingerprint) must equal the
//   fingerprint citc recorded; anything else is refused before authentication, never accepted.
import ssh2 from 'ssh2' // the default import: named imports fail in plain Node ESM

import {InvalidInputError, remoteError} from '../../errors.js'
import {checkResult} from '../check.js'
import {commandRunner} from './exec.js'
import {cancelledError, connectFailure, handshakeTimeout, type SshError} from './failures.js'
import {FINGERPRINT, hostKeyMismatch, sshFingerprint} from './host-key.js'
import {loadPrivateKey} from './keys.js'
import {sftpFiles} from './sftp.js'
import {forwardLocal} from './tunnel.js'
import type {Connection, SshTransport} from './types.js'

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

/** Connect with the pinned host key and the given key; resolves once authenticated. */
export async function connectSsh(o: SshConnectOptions): Promise<SshTransport> {
  if (!FINGERPRINT.test(o.hostKeyFingerprint)) {
    throw new InvalidInputError([
      {where: 'host key fingerprint', message: `"${o.hostKeyFingerprint}" is not an OpenSSH SHA256 fingerprint (SHA256: and 43 base64 characters)`},
    ])
  }
  const privateKey = await loadPrivateKey(o.privateKey)
  const where = `${o.host}:${o.port}`
  const description = `${o.user}@${where}`
  const timeoutMs = o.readyTimeoutMs ?? 20_000
  if (o.signal?.aborted) throw cancelledError(`connecting to ${description}`, o.signal.reason)

  const client = new ssh2.Client()
  let closed = false
  client.on('close', () => {
    closed = true
  })

  await new Promise<void>((resolve, reject) => {
    /** The host key the server showed, when it was not the pinned one. */
    let refusedKey: Buffer | undefined
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
    const hardTimer = setTimeout(() => settle(handshakeTimeout(where, timeoutMs)), timeoutMs + 2000)
    o.signal?.addEventListener('abort', onAbort, {once: true})
    client.once('ready', onReady)
    client.on('error', (error: SshError) => {
      if (refusedKey) settle(hostKeyMismatch(where, o.hostKeyFingerprint, refusedKey))
      else settle(connectFailure(error, o.user, where, timeoutMs))
    })
    client.on('close', () => settle(refusedKey ? hostKeyMismatch(where, o.hostKeyFingerprint, refusedKey) : remoteError(`connection to ${where} closed during the SSH handshake`)))
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
          if (sshFingerprint(key) === o.hostKeyFingerprint) return true
          refusedKey = Buffer.from(key)
          return false
        },
      })
    } catch (error) {
      // ssh2 parses the key synchronously: a passphrase-protected or malformed key lands here.
      settle(new InvalidInputError([{where: typeof o.privateKey === 'string' ? o.privateKey : 'private key', message: (error as Error).message}]))
    }
  })

  const conn: Connection = {
    client,
    description,
    get closed() {
      return closed
    },
  }
  const run = commandRunner(conn)
  const {readFile, writeFile} = sftpFiles(conn, run)

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
    forwardLocal: (remoteHost, remotePort) => forwardLocal(conn, remoteHost, remotePort),
    close,
  }
}
