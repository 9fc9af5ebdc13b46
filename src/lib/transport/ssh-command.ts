// The command lines of `citc ssh`, written once: the system ssh's arguments to reach a management
// node with its pinned host key only (`citc ssh` runs them; create prints them, quoted by
// shell-quote.ts), and the remote command a user gives after `--`.
import {usageError} from '../errors.js'

export interface SshLogin {
  host: string
  port: number
  user: string
  /** The private key citc logs in with. */
  keyPath: string
}

/** A host's name in a known_hosts line: the host, or `[host]:port` off port 22 (as OpenSSH writes it). */
export const knownHostsName = (host: string, port: number): string => (port === 22 ? host : `[${host}]:${port}`)

export interface PinnedKnownHosts {
  /** A known_hosts file holding the pinned host key only (cluster/management.ts writeKnownHosts). */
  file: string
  /** Its key's algorithm ("ssh-ed25519"), when known. */
  algorithm?: string
}

/**
 * The system ssh's arguments (after the program's name) for a login shell on the node: only the
 * pinned key is trusted (no global known_hosts, a changed key refused), only citc's key offered.
 */
export function sshArgs(login: SshLogin, known: PinnedKnownHosts): string[] {
  return [
    '-o', 'StrictHostKeyChecking=yes',
    '-o', `UserKnownHostsFile=${known.file}`,
    '-o', 'GlobalKnownHostsFile=/dev/null',
    '-o', 'IdentitiesOnly=yes',
    // ssh would offer other algorithms first and find no key of theirs in the file.
    ...(known.algorithm === 'ssh-ed25519' ? ['-o', 'HostKeyAlgorithms=ssh-ed25519'] : []),
    '-i', login.keyPath,
    '-p', String(login.port),
    `${login.user}@${login.host}`,
  ]
}

/**
 * The remote command of `citc ssh [FLAGS] -- COMMAND…`: the words after the first `--`, exactly as
 * given (spaces, quotes, further `--` and flag-like words included); undefined without `--`.
 *
 * `argv` is the command's own argv; `parsedArgs` the words oclif's parser took as arguments (its raw
 * `arg` tokens, in order: flags and their values are not among them). The words before `--` that
 * oclif took as arguments are a mistake (a command without `--`). oclif's own `argv` result is not
 * used for the command: it sorts the words by the first place each occurs, which reorders a command
 * that repeats a word (`echo a b a` became `echo a a b`), and it drops the `--`.
 */
export function remoteCommand(argv: readonly string[], parsedArgs: readonly string[]): string[] | undefined {
  const dashdash = argv.indexOf('--')
  const command = dashdash === -1 ? undefined : argv.slice(dashdash + 1)
  const stray = parsedArgs.slice(0, parsedArgs.length - (command?.length ?? 0))
  if (stray.length > 0) throw usageError(`unexpected argument ${stray[0]}`, `put the command after --, e.g. citc ssh -c NAME -- ${stray.join(' ')}`)
  if (command?.length === 0) throw usageError('no command after --')
  return command
}
