// How a failed SSH connection reads: one message and a "Try:" hint per cause ssh2 reports (its
// documented `code` and `level` fields on the errors of the 'error' event).
import {CitcError, remoteError} from '../../errors.js'

/** An error of ssh2's 'error' event, or a socket error it passes on. */
export type SshError = Error & {code?: string; level?: string}

export function connectFailure(error: SshError, user: string, where: string, timeoutMs: number): CitcError {
  const code = error.code ?? ''
  if (code === 'ECONNREFUSED') {
    return remoteError(`cannot connect to ${where}: connection refused`, {
      hint: 'check that sshd runs there and listens on that port (and that the port is open in the firewall)',
      cause: error,
    })
  }
  if (error.level === 'client-timeout' || code === 'ETIMEDOUT' || /timed out/i.test(error.message)) return handshakeTimeout(where, timeoutMs, error)
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

/** No SSH handshake in time: ssh2's readyTimeout, or our own timer (a TCP connect that hangs). */
export function handshakeTimeout(where: string, timeoutMs: number, cause?: unknown): CitcError {
  return remoteError(`cannot connect to ${where}: no SSH handshake within ${timeoutMs / 1000} s`, {
    hint: 'check the address, that the machine is up, and that a firewall or security list lets SSH through',
    cause,
  })
}

export const cancelledError = (what: string, reason?: unknown) => new CitcError('cancelled', `cancelled: ${what}`, {cause: reason})
