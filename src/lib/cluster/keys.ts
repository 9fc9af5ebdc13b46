// The keys citc generates for a cloud cluster, in its state directory's keys/ (mode 0600): the admin's
// login key, the management node's host key (handed over by cloud-init, so it is pinned before the
// first connection) and the known_hosts file the system's `ssh` reads.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import type {ClusterPaths} from './registry.js'

/** Where citc keeps a cluster's generated keys (in keys/, mode 0600). */
export const KEY_FILES = {
  admin: 'admin_ed25519',
  adminPublic: 'admin_ed25519.pub',
  hostKey: 'mgmt_host_ed25519',
  hostKeyPublic: 'mgmt_host_ed25519.pub',
  knownHosts: 'known_hosts',
} as const

export interface ClusterKeys {
  /** The admin's public key line. */
  sshPublicKey: string
  /** The management node's host private key (OpenSSH PEM). */
  sshHostKey: string
  sshHostKeyPublic: string
}

/** The cluster's keys from keys/. */
export function readClusterKeys(paths: Pick<ClusterPaths, 'keysDir'>): ClusterKeys {
  const key = (f: string) => readFileSync(join(paths.keysDir, f), 'utf8')
  return {sshPublicKey: key(KEY_FILES.adminPublic).trim(), sshHostKey: key(KEY_FILES.hostKey), sshHostKeyPublic: key(KEY_FILES.hostKeyPublic).trim()}
}
