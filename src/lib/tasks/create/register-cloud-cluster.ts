// The cluster a cloud create works on, in the registry before any step runs: a new one registered
// (phase "creating", its keys generated and its management node's host key pinned, its inputs checked
// first), or an existing one checked against this run's flags.
import {join} from 'node:path'

import type {ClusterPaths, ClusterRegistry} from '../../cluster/registry.js'
import {KEY_FILES} from '../../cluster/keys.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {InvalidInputError, usageError} from '../../errors.js'
import type {Io} from '../../io.js'
import {cloudInputsFor, cloudOf, defaultMgmtUser} from '../../providers/cloud-cluster.js'
import {tfvarsFor} from '../../providers/cloud.js'
import {monitoringSettings} from '../../providers/monitoring-setting.js'
import {cloudModule} from '../../providers/registry.js'
import {generateEd25519KeyPair} from '../../transport/ssh/index.js'
import {locateProblems, type ResolvedCloudCreate} from './cloud-wizard.js'
import type {CreateCloudOptions} from './create-cloud.js'

/** The keys of a new cluster, generated here, and its inputs checked before anything is written. */
function prepareNew(r: ResolvedCloudCreate, paths: ClusterPaths) {
  const admin = generateEd25519KeyPair(`citc-admin@${r.name}`)
  const host = generateEd25519KeyPair(`citc-host@${r.name}-mgmt`)
  const draft = {
    name: r.name,
    provider: r.provider,
    createdAt: new Date().toISOString(),
    origin: 'created' as const,
    cloud: r.cloud,
    mgmt: {host: PENDING_HOST, port: 22, user: 'root', keyPath: join(paths.keysDir, KEY_FILES.admin), hostKeyFingerprint: host.fingerprint},
  } as ClusterRecord
  // The inputs as Terraform will get them: every problem reported now, by flag or config line.
  const inputs = cloudInputsFor(draft, {sshPublicKey: admin.publicKey, sshHostKey: host.privateKey, sshHostKeyPublic: host.publicKey})
  try {
    tfvarsFor(inputs)
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(locateProblems(error.problems, r.configWhere), error.hint)
    throw error
  }
  return {admin, host}
}

/** A new cluster in the registry (phase "creating"), its keys written, its host key pinned. */
export function registerNew(io: Io, r: ResolvedCloudCreate, given: {suspendTime?: number; monitoring?: boolean}, registry: ClusterRegistry) {
  const settings = {...(given.suspendTime ? {suspendTime: given.suspendTime} : {}), ...monitoringSettings(given.monitoring)}
  const {name, provider} = r
  const paths = registry.paths(name)
  const {admin, host} = prepareNew(r, paths)
  const mgmtAd = cloudModule(provider).availabilityDomains ? Number(r.cloud.zone) : undefined
  registry.create(
    {
      name,
      provider,
      createdAt: new Date().toISOString(),
      origin: 'created',
      phase: 'creating',
      mgmt: {
        host: PENDING_HOST,
        port: 22,
        user: defaultMgmtUser(r.cloud.imageOs),
        keyPath: join(paths.keysDir, KEY_FILES.admin),
        // Pinned now: the first connection already checks it.
        hostKeyFingerprint: host.fingerprint,
        hostname: 'mgmt',
        shape: r.cloud.mgmtShape,
        ...(mgmtAd ? {ad: mgmtAd} : {}),
        sudo: true,
      },
      cloud: r.cloud,
      ...(Object.keys(settings).length > 0 ? {settings} : {}),
    },
    () => {
      registry.writeKey(name, KEY_FILES.admin, admin.privateKey)
      registry.writeKey(name, KEY_FILES.adminPublic, `${admin.publicKey}\n`)
      registry.writeKey(name, KEY_FILES.hostKey, host.privateKey)
      registry.writeKey(name, KEY_FILES.hostKeyPublic, `${host.publicKey}\n`)
    },
  )
  io.note(`Cluster ${name}: state in ${paths.dir}; the management node's host key is pinned (${host.fingerprint}).`)
}

/** An existing cluster to continue or re-run: refused before the lock if it is not this run's kind of cluster. */
export function checkExisting(opts: CreateCloudOptions, registry: ClusterRegistry) {
  const {name} = opts
  const record = registry.get(name)
  cloudOf(record)
  if (opts.resolved && opts.resolved.provider !== record.provider) {
    throw usageError(`cluster ${name} exists and is a ${record.provider} cluster`, 'choose another --name, or leave --provider out to continue it')
  }
}

/**
 * An existing cluster continued or re-run with its recorded settings; only SuspendTime may change.
 * It writes cluster.yaml: call it under the cluster's lock (another command may be writing it).
 */
export function updateExisting(io: Io, opts: CreateCloudOptions, registry: ClusterRegistry) {
  const {name, suspendTime} = opts
  const record = registry.get(name)
  if (!opts.resume) io.note(`Cluster ${name} exists: re-running every step with its recorded settings (they converge).`)
  // The one setting that may change after create: finish applies it (with the limits).
  if (suspendTime && Number(record.settings?.suspendTime) !== suspendTime) {
    registry.update(name, (r) => {
      r.settings = {...r.settings, suspendTime}
    })
    io.note(`SuspendTime is now ${suspendTime} s (slurm.conf gets it when finish runs).`)
  }
}
