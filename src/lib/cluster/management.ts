// The management node of a cluster citc knows, over SSH with the pinned host key — as the login user,
// or as root (through sudo when the login user is not root: cloud images). Also the known_hosts file
// the system's `ssh` needs to check the same pinned key (`citc ssh`). Whether a cluster's management
// node is reached over SSH at all is its provider's: management-node.ts.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import writeFileAtomic from 'write-file-atomic'

import {CitcError} from '../errors.js'
import {elevated} from '../transport/elevate.js'
import {connectSsh, fetchPinnedHostKey, publicKeyFingerprint, type SshTransport} from '../transport/ssh/index.js'
import {knownHostsName} from '../transport/ssh-command.js'
import type {Transport} from '../transport/types.js'
import {KEY_FILES} from './keys.js'
import type {ClusterPaths} from './registry.js'
import {PENDING_HOST, type ClusterRecord} from './schema.js'

/** Refuse a cluster whose management node does not exist yet (a create that did not get that far). */
function assertReachable(record: ClusterRecord): void {
  if (record.mgmt.host === PENDING_HOST) {
    throw new CitcError('usage', `cluster ${record.name} has no management node yet: its create stopped before Terraform made it`, {
      hint: `continue it with \`citc create --name ${record.name} --resume\`, or take it away with \`citc destroy ${record.name}\``,
    })
  }
}

export interface ManagementOptions {
  signal?: AbortSignal
  /** Run commands as root (sudo -n when the login user is not root and the record says so). */
  asRoot?: boolean
  readyTimeoutMs?: number
}

export async function connectOverSsh(record: ClusterRecord, opts: ManagementOptions = {}): Promise<Transport> {
  assertReachable(record)
  const ssh = await connectSsh({...sshTargetOf(record), readyTimeoutMs: opts.readyTimeoutMs ?? 20_000, signal: opts.signal})
  return opts.asRoot ? asRootOn(record, ssh) : ssh
}

/** Where and as whom to reach the management node, with its pinned host key (cluster.yaml's mgmt). */
export function sshTargetOf(record: ClusterRecord) {
  return {
    host: record.mgmt.host,
    port: record.mgmt.port,
    user: record.mgmt.user,
    privateKey: record.mgmt.keyPath!,
    hostKeyFingerprint: record.mgmt.hostKeyFingerprint!,
  }
}

/** Root on the management node over this login: through sudo when the login user is not root. */
export const asRootOn = (record: ClusterRecord, ssh: SshTransport): Transport => (record.mgmt.sudo ? elevated(ssh) : ssh)

/** The host part of a known_hosts line: "host", or "[host]:port" off port 22. */

/**
 * Write keys/known_hosts with the pinned key only: from keys/mgmt_host_ed25519.pub for clusters citc
 * created (checked against the pinned fingerprint), else fetched from the host and checked against it.
 * Returns its path.
 */
export async function writeKnownHosts(record: ClusterRecord, paths: ClusterPaths): Promise<{file: string; algorithm: string}> {
  assertReachable(record)
  const pinned = record.mgmt.hostKeyFingerprint
  if (!pinned) throw new CitcError('usage', `cluster ${record.name} has no pinned host key`)
  const pubFile = join(paths.keysDir, KEY_FILES.hostKeyPublic)
  let line: string | undefined
  if (existsSync(pubFile)) {
    const pub = readFileSync(pubFile, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')
    if (publicKeyFingerprint(pub) === pinned) line = pub
  }
  line ??= await fetchPinnedHostKey({host: record.mgmt.host, port: record.mgmt.port, hostKeyFingerprint: pinned})
  const file = join(paths.keysDir, KEY_FILES.knownHosts)
  writeFileAtomic.sync(file, `${knownHostsName(record.mgmt.host, record.mgmt.port)} ${line}\n`, {mode: 0o600})
  return {file, algorithm: line.split(' ')[0]}
}
