// `citc create`'s one service: from what the command was told (a CreateRequest) to what createLocal
// or createCloud takes. The decisions are all here: the --config file under the flags; which cluster
// is meant (--resume without a name continues the one being created); its provider (an existing
// cluster's own, else --provider or the file's, else the wizard's first question); the flags that
// provider or that cluster cannot use; and a new cluster's answers (local-wizard.ts, cloud-wizard.ts).
import {existsSync} from 'node:fs'
import {join, resolve} from 'node:path'

import {clusterRegistry, type ClusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {InvalidInputError, usageError} from '../../errors.js'
import {promptsOf, type Io} from '../../io.js'
import {monitoringOn} from '../../providers/monitoring-setting.js'
import type {DiscoveryContext} from '../../providers/cloud-inputs.js'
import {isCloud, PROVIDER_MODULES, providerModule, type CloudProvider, type Provider} from '../../providers/registry.js'
import type {CreateCloudOptions} from './create-cloud.js'
import {discoveryContext, resolveCloudCreate} from './cloud-wizard.js'
import {loadClusterConfig, withConfig, type LoadedConfig} from './config-file.js'
import type {CreateLocalInput} from './create-local.js'
import {DEFAULT_SSH_TIMEOUT_S, givenFlag, type CreateRequest} from './create-request.js'
import {resolveLocalCreate} from './local-wizard.js'
import {systemAddressSources, type AddressSources} from './ssh-cidr.js'
import {unusableFlags} from './unusable-flags.js'
import {readCreateLimits} from '../finish/limits-file.js'

/**
 * What to run, by where the provider's management node is (its module's managementNode): createLocal's
 * input for this machine, createCloud's options for a cloud VM.
 */
export type CreatePlan = {workflow: 'this-machine'; provider: Provider; local: CreateLocalInput} | {workflow: 'cloud-vm'; provider: CloudProvider; cloud: CreateCloudOptions}

export interface CreateContext {
  dataDir: string
  /** The citc package on this machine (createLocal's and createCloud's packageRoot). */
  packageRoot: string
  /** Where a new cloud cluster's credentials are looked for (default: this process's environment and home). */
  discovery?: DiscoveryContext
  /** Where the wizard's SSH question learns this machine's public address (default: its interfaces, then ADDRESS_ECHO_URL). */
  addresses?: AddressSources
}

/** Where the cluster runs: the first question of the wizard (the registry's first provider, local, without a terminal). */
export async function askProvider(io: Io): Promise<Provider> {
  const [first] = PROVIDER_MODULES
  if (!io.interactive || io.yes) return first.name
  return promptsOf(io).select<Provider>({
    message: 'Where should the cluster run?',
    choices: PROVIDER_MODULES.map((m) => ({name: `${m.name} — ${m.title}`, value: m.name})),
  })
}

export async function resolveCreate(io: Io, request: CreateRequest, context: CreateContext): Promise<CreatePlan> {
  const config = request.configFile ? loadClusterConfig(request.configFile) : undefined
  const given = withConfig(request, config)
  const registry = clusterRegistry(context.dataDir)
  const {name, existing} = clusterMeant(registry, given.name ?? request.currentCluster, request.resume)

  // The cluster to continue decides the provider.
  const wanted = request.provider ?? config?.values.provider
  if (existing && wanted && wanted !== existing.provider) {
    throw usageError(`cluster ${name} exists and is a ${existing.provider} cluster, not ${wanted}`, 'choose another --name, or leave --provider out to continue it')
  }
  const provider = existing?.provider ?? wanted ?? (await askProvider(io))
  // A flag or --config key this provider (or this existing cluster) would ignore is refused, where it was given.
  const unusable = unusableFlags(provider, given, existing).map((p) => {
    const key = p.where.replace(/^--/, '')
    return givenFlag(request, key) === undefined && config ? {...p, where: config.yaml.where([key]), path: key} : p
  })
  if (existing && given.monitoring !== undefined && given.monitoring !== monitoringOn(existing)) {
    const flag = given.monitoring ? 'monitoring' : 'no-monitoring'
    const was = monitoringOn(existing) ? 'with monitoring' : 'with --no-monitoring'
    unusable.push({
      where: request.monitoring === undefined && config ? config.yaml.where(['monitoring']) : `--${flag}`,
      ...(request.monitoring === undefined && config ? {path: 'monitoring'} : {}),
      message: `cluster ${existing.name} exists and was created ${was}; it is fixed once made: leave it out to continue the cluster, or destroy it and create it again`,
    })
  }
  // Clouds have no GPUs of this machine to share out: their GPU shapes are named in the limits file.
  if (given.gpuNodes !== undefined && providerModule(provider).managementNode !== 'this-machine') {
    unusable.push({...gpuNodesFrom(request, config), message: `is for the local provider (this machine's GPUs), not ${provider}: leave it out, and name GPU shapes in the limits file`})
  }
  if (unusable.length > 0) throw new InvalidInputError(unusable)

  if (providerModule(provider).managementNode === 'this-machine') {
    if (request.planOnly) throw usageError(`--plan-only is for cloud providers (there is no Terraform plan for ${provider})`)
    const {sshPort, citcPrefix, playbook, imageRoot} = request.standIn
    if (sshPort || citcPrefix || playbook || imageRoot) throw usageError("--stand-in's managementNode is for cloud providers")
    // A local cluster that exists keeps the limits it was made with, unless this run gives some.
    const stored = given.limitsFile ? undefined : existing ? storedLimits(registry.paths(existing.name).dir) : undefined
    const input = await resolveLocalCreate(io, {
      name,
      limitsFile: given.limitsFile ?? stored,
      limitsStored: stored !== undefined,
      ...(request.gpuRoot ? {gpuRoot: request.gpuRoot} : {}),
      suspendTime: given.suspendTime,
      monitoring: given.monitoring,
      ...(given.gpuNodes === undefined ? {} : {gpuNodes: {value: given.gpuNodes, from: gpuNodesFrom(request, config)}}),
      resume: request.resume,
      force: given.providerFlags.force === true,
    })
    return {workflow: 'this-machine', provider, local: {...input, provider, packageRoot: context.packageRoot}}
  }
  if (!isCloud(provider)) throw new Error(`internal: provider ${provider} makes its management node in a cloud but has no cloud part`)

  const common = {
    resume: request.resume,
    planOnly: request.planOnly,
    sshTimeoutS: given.sshTimeoutS ?? DEFAULT_SSH_TIMEOUT_S,
    packageRoot: context.packageRoot,
    suspendTime: given.suspendTime,
    monitoring: given.monitoring,
    standIn: {...request.standIn, playbook: request.standIn.playbook && resolve(request.standIn.playbook), imageRoot: request.standIn.imageRoot && resolve(request.standIn.imageRoot)},
  }
  if (existing) {
    const limits = given.limitsFile ? {file: given.limitsFile, text: readCreateLimits(given.limitsFile, '--limits')} : undefined
    return {workflow: 'cloud-vm', provider, cloud: {...common, name: existing.name, limits}}
  }
  const resolved = await resolveCloudCreate(io, provider, {...request, name}, context.dataDir, config, context.discovery ?? discoveryContext(), context.addresses ?? systemAddressSources(request.addressEcho))
  return {workflow: 'cloud-vm', provider, cloud: {...common, name: resolved.name, resolved}}
}

/**
 * The cluster this create is about: the one named, else with --resume the only one being created
 * (or the only one there is). --resume with no such cluster is refused.
 */
function clusterMeant(registry: ClusterRegistry, named: string | undefined, resume: boolean): {name?: string; existing?: ClusterRecord} {
  let name = named
  // A cluster whose cluster.yaml cannot be read is not one to continue: left out.
  const known = registry.scan().flatMap((e) => (e.record ? [e.record] : []))
  if (!name && resume) {
    const creating = known.filter((r) => r.phase === 'creating')
    name = creating.length === 1 ? creating[0].name : known.length === 1 ? known[0].name : undefined
  }
  const existing = name ? known.find((r) => r.name === name) : undefined
  if (resume && !existing) {
    throw usageError(name ? `no cluster named "${name}" to continue` : 'no cluster to continue: say which with --name', 'see `citc cluster list`')
  }
  return {name, existing}
}

/** Where --gpu-nodes was given: the flag, else the config file's line. */
function gpuNodesFrom(request: CreateRequest, config: LoadedConfig | undefined): {where: string; path?: string} {
  return request.gpuNodes === undefined && config ? {where: config.yaml.where(['gpu-nodes']), path: 'gpu-nodes'} : {where: '--gpu-nodes'}
}

/** The limits a local cluster was made with (kept in its state dir), if any. */
function storedLimits(dir: string): string | undefined {
  const file = join(dir, 'limits.yaml')
  return existsSync(file) ? file : undefined
}
