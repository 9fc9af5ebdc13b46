// A cloud cluster's record (cluster.yaml's `cloud:` section) turned back into what the workflows need:
// the inputs to render its Terraform directory, the environment that makes Terraform (and the sweep's
// CLI) use the credentials chosen at create time, and the sweeper of leftovers. Its keys and its
// pending address are cluster/'s (cluster/keys.ts, cluster/schema.ts).
import {CitcError} from '../errors.js'
import type {CloudInputs, CommonCloudInputs, CredentialSource, ImageOs} from './cloud-inputs.js'
import type {CloudSettings, ClusterView} from './cluster-view.js'
import {cloudModule, isCloud, type CloudProvider} from './registry.js'
import type {CloudSweeper, SweepContext} from './sweep.js'


/** The login user the image has before Terraform says (cloud-init authorizes the admin key for it). */
export function defaultMgmtUser(imageOs: ImageOs | undefined): string {
  return imageOs === 'debian-12' ? 'admin' : 'ubuntu'
}

export function cloudOf(record: ClusterView): {provider: CloudProvider; cloud: CloudSettings} {
  if (!isCloud(record.provider) || !record.cloud) {
    throw new CitcError('usage', `${record.name} is not a cloud cluster made by citc create (provider ${record.provider}${record.cloud ? '' : ', no cloud section in cluster.yaml'})`, {
      hint: record.origin === 'registered' ? `it was registered with \`citc cluster add\`: \`citc cluster remove ${record.name}\` forgets it (nothing on the cluster changes)` : undefined,
    })
  }
  return {provider: record.provider, cloud: record.cloud}
}

/** The Terraform inputs for a cluster: its recorded settings and its keys (cluster/keys.ts readClusterKeys). */
export function cloudInputsFor(record: ClusterView, keys: Pick<CommonCloudInputs, 'sshPublicKey' | 'sshHostKey' | 'sshHostKeyPublic'>): CloudInputs {
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
export function terraformEnvFor(record: ClusterView): Record<string, string | undefined> {
  const {provider, cloud} = cloudOf(record)
  return cloudModule(provider).cloud.terraformEnv(credentialSourceOf(provider, cloud))
}

/**
 * What the cloud's CLI is run with on this machine for the cluster (destroy's sweep, the image
 * builders' listing): its region and the credentials Terraform used. The provider adds its own
 * (google/oracle sweep.ts: toolContext).
 */
export function sweepContextFor(record: ClusterView, opts: {logFile?: string; signal?: AbortSignal} = {}): SweepContext {
  const {cloud} = cloudOf(record)
  return {clusterId: record.name, region: cloud.region, zone: cloud.zone, project: cloud.project, env: terraformEnvFor(record), logFile: opts.logFile, signal: opts.signal}
}

/** The sweeper of leftovers tagged with the cluster, using the same credentials as Terraform. */
export function sweeperFor(record: ClusterView, opts: {logFile?: string; signal?: AbortSignal} = {}): CloudSweeper {
  const {provider, cloud} = cloudOf(record)
  return cloudModule(provider).cloud.sweeper(sweepContextFor(record, opts), cloud)
}

