// A cloud cluster's record (cluster.yaml's `cloud:` section) turned back into what the workflows need:
// the inputs to render its Terraform directory, the environment that makes Terraform (and the sweep's
// CLI) use the credentials chosen at create time, and the sweeper of leftovers.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import type {ClusterPaths} from '../cluster/registry.js'
import type {CloudSettings, ClusterRecord} from '../cluster/schema.js'
import {CitcError} from '../errors.js'
import type {CloudInputs, CredentialSource, ImageOs} from './cloud-inputs.js'
import {cloudModule, isCloud, type CloudProvider} from './registry.js'
import type {CloudSweeper, SweepContext} from './sweep.js'

export {isCloud} from './registry.js'


/** Where citc keeps a cluster's generated keys (in keys/, mode 0600). */
export const KEY_FILES = {
  admin: 'admin_ed25519',
  adminPublic: 'admin_ed25519.pub',
  hostKey: 'mgmt_host_ed25519',
  hostKeyPublic: 'mgmt_host_ed25519.pub',
  knownHosts: 'known_hosts',
} as const

/** The address of a management node Terraform has not made yet (.invalid never resolves: RFC 2606). */
export const PENDING_HOST = 'pending.invalid'

/** The login user the image has before Terraform says (cloud-init authorizes the admin key for it). */
export function defaultMgmtUser(imageOs: ImageOs | undefined): string {
  return imageOs === 'debian-12' ? 'admin' : 'ubuntu'
}

export function cloudOf(record: ClusterRecord): {provider: CloudProvider; cloud: CloudSettings} {
  if (!isCloud(record.provider) || !record.cloud) {
    throw new CitcError('usage', `${record.name} is not a cloud cluster made by citc create (provider ${record.provider}${record.cloud ? '' : ', no cloud section in cluster.yaml'})`, {
      hint: record.origin === 'registered' ? `it was registered with \`citc cluster add\`: \`citc cluster remove ${record.name}\` forgets it (nothing on the cluster changes)` : undefined,
    })
  }
  return {provider: record.provider, cloud: record.cloud}
}

export interface ClusterKeys {
  /** The admin's public key line. */
  sshPublicKey: string
  /** The management node's host private key (OpenSSH PEM). */
  sshHostKey: string
  sshHostKeyPublic: string
}

/** The cluster's keys from keys/. */
export function readClusterKeys(paths: ClusterPaths): ClusterKeys {
  const key = (f: string) => readFileSync(join(paths.keysDir, f), 'utf8')
  return {sshPublicKey: key(KEY_FILES.adminPublic).trim(), sshHostKey: key(KEY_FILES.hostKey), sshHostKeyPublic: key(KEY_FILES.hostKeyPublic).trim()}
}

/** The Terraform inputs for a cluster: its recorded settings and its keys. */
export function cloudInputsFor(record: ClusterRecord, keys: ClusterKeys): CloudInputs {
  const {provider, cloud} = cloudOf(record)
  const common = {
    clusterId: record.name,
    region: cloud.region,
    mgmtShape: cloud.mgmtShape,
    imageOs: cloud.imageOs,
    sshCidr: cloud.sshCidr,
    ...keys,
  }
  // The module's inputs() makes its own kind of CloudInputs (the registry only knows the common part).
  return cloudModule(provider).cloud.inputs(common, cloud) as CloudInputs
}

/** The credential source recorded for the cluster, as the provider's terraformEnv() takes it. */
function credentialSourceOf(provider: CloudProvider, cloud: CloudSettings): CredentialSource | undefined {
  const recorded = cloudModule(provider).cloud.credentialSource(cloud)
  if (recorded) return recorded
  return cloud.credentials === 'env' ? {provider, id: 'env', kind: 'environment', label: '', isDefault: true} : undefined
}

/** Environment for Terraform: the credentials chosen at create time. */
export function terraformEnvFor(record: ClusterRecord): Record<string, string | undefined> {
  const {provider, cloud} = cloudOf(record)
  return cloudModule(provider).cloud.terraformEnv(credentialSourceOf(provider, cloud))
}

/**
 * What the cloud's CLI is run with on this machine for the cluster (destroy's sweep, the image
 * builders' listing): its region and the credentials Terraform used. The provider adds its own
 * (google/oracle sweep.ts: toolContext).
 */
export function sweepContextFor(record: ClusterRecord, opts: {logFile?: string; signal?: AbortSignal} = {}): SweepContext {
  const {cloud} = cloudOf(record)
  return {clusterId: record.name, region: cloud.region, zone: cloud.zone, project: cloud.project, env: terraformEnvFor(record), logFile: opts.logFile, signal: opts.signal}
}

/** The sweeper of leftovers tagged with the cluster, using the same credentials as Terraform. */
export function sweeperFor(record: ClusterRecord, opts: {logFile?: string; signal?: AbortSignal} = {}): CloudSweeper {
  const {provider, cloud} = cloudOf(record)
  return cloudModule(provider).cloud.sweeper(sweepContextFor(record, opts), cloud)
}

