// Reaching a machine that joins, always from the management node (slurmctld's side of the network, and
// where Ansible runs): its host key read with ssh-keyscan and pinned in a known_hosts file of citc's own
// there (a changed key is refused by ssh itself: StrictHostKeyChecking=yes), and commands run with the
// system ssh, only the pinned key trusted, only the user's key offered.
import {existsSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

import {CitcError, HostKeyMismatchError, remoteError, usageError} from '../../errors.js'
import {shellQuote} from '../../shell-quote.js'
import {sshFingerprint} from '../../transport/ssh/host-key.js'
import {knownHostsName, sshArgs} from '../../transport/ssh-command.js'
import type {RunResult, Transport} from '../../transport/types.js'

/** citc's files about joined machines on the management node. */
export const JOINED_DIR = '/etc/citc/joined'
export const JOINED_KNOWN_HOSTS = `${JOINED_DIR}/known_hosts`

export interface MachineLogin {
  host: string
  port: number
  user: string
  /** The private key, a path on the management node. */
  keyPath: string
  /** The known_hosts file ssh trusts (the pinned keys, or this run's copy with the keys just confirmed). */
  knownHosts: string
}

export interface ScannedKey {
  algorithm: string
  blob: string
  fingerprint: string
}


/** The key citc logs in with when --key is not given: the user's own default SSH key. */
export function defaultKeyPath(home = homedir()): string {
  for (const f of ['id_ed25519', 'id_ecdsa', 'id_rsa']) {
    const p = join(home, '.ssh', f)
    if (existsSync(p)) return p
  }
  throw usageError(`no SSH key in ${join(home, '.ssh')} (id_ed25519, id_ecdsa or id_rsa)`, 'pass --key FILE: the private key that logs in to the machine')
}

/** The machine's host key as the management node sees it (ed25519 preferred), nothing authenticated. */
export async function scanHostKey(t: Transport, host: string, port: number, signal?: AbortSignal): Promise<ScannedKey> {
  for (const type of ['ed25519', 'ecdsa', 'rsa']) {
    const r = await t.run(['ssh-keyscan', '-T', '10', '-p', String(port), '-t', type, host], {timeoutMs: 20_000, signal})
    const line = r.stdout.split('\n').find((l) => l && !l.startsWith('#'))
    if (!line) continue
    const [, algorithm, blob] = line.trim().split(/\s+/)
    if (algorithm && blob) return {algorithm, blob, fingerprint: sshFingerprint(Buffer.from(blob, 'base64'))}
  }
  throw remoteError(`cannot read an SSH host key from ${host}:${port} (from ${t.description})`, {
    hint: `is sshd running on ${host} and port ${port} open to the management node? Try: ssh -p ${port} ${host}`,
  })
}

/**
 * Pin keys: citc's known_hosts (`JOINED_KNOWN_HOSTS`) with each machine's line added, replacing a line
 * for the same host and port (the caller has confirmed the new key), written to `to` — citc's file itself,
 * or a run's own copy in a directory that exists (the keys confirmed before the machines have joined).
 */
export async function pinHostKeys(t: Transport, to: string, keys: {host: string; port: number; key: ScannedKey}[]): Promise<void> {
  const names = new Set(keys.map((k) => knownHostsName(k.host, k.port)))
  const old = (await t.readFile(JOINED_KNOWN_HOSTS))?.toString('utf8') ?? ''
  const kept = old.split('\n').filter((l) => l.trim() && !names.has(l.split(' ')[0]))
  const lines = [...kept, ...keys.map((k) => `${knownHostsName(k.host, k.port)} ${k.key.algorithm} ${k.key.blob}`)]
  if (to === JOINED_KNOWN_HOSTS) await t.check(['mkdir', '-p', '-m', '0700', JOINED_DIR])
  await t.writeFile(to, lines.join('\n') + '\n', {mode: 0o600})
}

/** Drop a machine's line from citc's known_hosts. */
export async function unpinHostKey(t: Transport, login: Pick<MachineLogin, 'host' | 'port'>): Promise<void> {
  const old = (await t.readFile(JOINED_KNOWN_HOSTS))?.toString('utf8')
  if (old === undefined) return
  const name = knownHostsName(login.host, login.port)
  const kept = old.split('\n').filter((l) => l.trim() && l.split(' ')[0] !== name)
  await t.writeFile(JOINED_KNOWN_HOSTS, kept.length > 0 ? kept.join('\n') + '\n' : '', {mode: 0o600})
}

/** A key that is not the one pinned (or given with --host-key): refused, never accepted. */
export function checkPinned(login: MachineLogin, key: ScannedKey, pinned: string): void {
  if (key.fingerprint !== pinned) throw new HostKeyMismatchError(`${login.host}:${login.port}`, pinned, key.fingerprint, key.algorithm)
}

/** The system ssh's argv to run a command on the machine, as root (through sudo -n for another user). */
export function machineArgv(login: MachineLogin, algorithm: string | undefined, command: string[]): string[] {
  const args = sshArgs(login, {file: login.knownHosts, algorithm})
  const asRoot = login.user === 'root' ? command : ['sudo', '-n', ...command]
  return ['ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=15', ...args, '--', shellQuote(asRoot)]
}

/** Run a command on the machine (through the management node). */
export async function onMachine(t: Transport, login: MachineLogin, command: string[], opts: {stdin?: string; timeoutMs?: number; signal?: AbortSignal; algorithm?: string} = {}): Promise<RunResult> {
  const r = await t.run(machineArgv(login, opts.algorithm, command), {stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? 60_000, signal: opts.signal})
  // ssh's own failures exit 255: the machine was not reached, or refused us.
  if (r.exitCode === 255) {
    const why = r.stderr.trim().split('\n').slice(-2).join(' ')
    const changed = /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/.test(r.stderr)
    throw new CitcError('remote', `cannot run commands on ${login.user}@${login.host}:${login.port}: ${why}`, {
      hint: changed
        ? `the machine's host key is not the one citc pinned; if the machine was reinstalled, remove it (citc node remove) and add it again`
        : `check that ${login.user} can log in to ${login.host} with ${login.keyPath} (ssh -i ${login.keyPath} -p ${login.port} ${login.user}@${login.host})`,
    })
  }
  return r
}
