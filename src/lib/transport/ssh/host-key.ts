// Host keys: OpenSSH's fingerprint of a key, and a probe that connects only far enough to see the
// server's key (nothing is authenticated). citc pins a host key by its fingerprint; a key that does
// not match is refused, never accepted (HostKeyMismatchError).
import {createHash} from 'node:crypto'

import ssh2 from 'ssh2' // the default import: named imports fail in plain Node ESM

import {HostKeyMismatchError, remoteError} from '../../errors.js'
import {connectFailure, handshakeTimeout, type SshError} from './failures.js'

export {FINGERPRINT} from '../../ssh-fingerprint.js'

/** OpenSSH's fingerprint of a raw public key blob: `SHA256:` + base64 (no padding) of its SHA-256. */
export function sshFingerprint(rawKey: Buffer): string {
  return `SHA256:${createHash('sha256').update(rawKey).digest('base64').replace(/=+$/, '')}`
}

/** The algorithm named at the start of a raw key blob (its first SSH string), e.g. `ssh-ed25519`. */
function keyAlgorithm(rawKey: Buffer): string {
  try {
    const n = rawKey.readUInt32BE(0)
    return rawKey.subarray(4, 4 + n).toString('latin1')
  } catch {
    return 'unknown'
  }
}

/** The refusal of a raw host key that is not the pinned one. */
export function hostKeyMismatch(where: string, expected: string, rawKey: Buffer): HostKeyMismatchError {
  return new HostKeyMismatchError(where, expected, sshFingerprint(rawKey), keyAlgorithm(rawKey))
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
 * The server's host key itself (algorithm and base64 blob, as a known_hosts line wants it), checked
 * against the pinned fingerprint: for writing a known_hosts file the system's `ssh` can use. Nothing
 * is authenticated; a key that does not match is refused like connectSsh refuses it.
 */
export async function fetchPinnedHostKey(o: {host: string; port: number; hostKeyFingerprint: string; timeoutMs?: number}): Promise<string> {
  const key = await probeHostKey(o)
  if (sshFingerprint(key) !== o.hostKeyFingerprint) throw hostKeyMismatch(`${o.host}:${o.port}`, o.hostKeyFingerprint, key)
  return `${keyAlgorithm(key)} ${key.toString('base64')}`
}

/**
 * Connect only far enough to see the server's host key, then refuse it: nothing is authenticated,
 * no session is opened. The raw key blob, for fingerprints and known_hosts lines.
 */
async function probeHostKey(o: {host: string; port: number; timeoutMs?: number}): Promise<Buffer> {
  const where = `${o.host}:${o.port}`
  const timeoutMs = o.timeoutMs ?? 15_000
  const client = new ssh2.Client()
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      let seen: Buffer | undefined
      // ssh2's readyTimeout covers the handshake; this one also covers a TCP connect that hangs.
      const hardTimer = setTimeout(() => reject(handshakeTimeout(where, timeoutMs)), timeoutMs + 2000)
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
