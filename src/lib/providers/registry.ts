// The providers citc knows: the one list. The `Provider` type, every `--provider` flag's options, the
// wizard's choices, cluster.yaml's settings schema and cluster.json's driver sections are derived
// from it. Adding a provider is its folder, its templates/terraform/<name>/ and one line here
// (README.md in this folder).
//
// Every command imports this file (for its flag options), the node programs included: the modules it
// lists are light (see module.ts), so this costs no zod, execa or shape table at start.
import {awsModule} from './aws/index.js'
import {googleModule} from './google/index.js'
import {localModule} from './local/index.js'
import type {CloudModule, CloudPart, NodeConfigSection, ProviderModule} from './module.js'
import {oracleModule} from './oracle/index.js'

/** In the wizard's order: local first (the default, no cloud account needed). */
export const PROVIDER_MODULES = [localModule, awsModule, googleModule, oracleModule] as const

type Modules = (typeof PROVIDER_MODULES)[number]
export type Provider = Modules['name']
/** The providers with a cloud part (Terraform, credentials, sweeper). */
export type CloudProvider = Extract<Modules, {cloud: object}>['name']

type SettingsOf<M> = M extends {cloud: CloudPart<infer S, infer _I>} ? S : never
type InputsOf<M> = M extends {cloud: CloudPart<infer _S, infer I>} ? I : never
/** The Terraform inputs of one cloud cluster: the common ones and its provider's (AwsInputs | …). */
export type CloudInputs = InputsOf<Modules>
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never
/** Every provider's own fields of cluster.yaml's `cloud:` section, together (each provider has its own). */
export type ProviderSettings = Intersection<SettingsOf<Modules>>

type NodeConfigOf<M> = M extends {nodeConfig: NodeConfigSection<infer D>} ? D : never
/** Each provider's section of the management node's cluster.json (cluster/management-contract.ts), by provider. */
export type NodeConfigs = {[M in Modules as M['name']]: NodeConfigOf<M>}

export const PROVIDER_NAMES: readonly Provider[] = PROVIDER_MODULES.map((m) => m.name)
export const CLOUD_PROVIDER_NAMES: readonly CloudProvider[] = PROVIDER_MODULES.flatMap((m) => (isCloudModule(m) ? [m.name as CloudProvider] : []))

function isCloudModule(m: ProviderModule): m is CloudModule {
  return m.cloud !== undefined
}

export function isCloud(name: string): name is CloudProvider {
  return (CLOUD_PROVIDER_NAMES as readonly string[]).includes(name)
}

/** The module of a provider (a name not in the list is citc's own mistake: cluster.yaml is validated). */
export function providerModule(name: Provider | string): ProviderModule {
  const m = PROVIDER_MODULES.find((p) => p.name === name)
  if (!m) throw new Error(`internal: no provider module named ${name}`)
  return m
}

/** The module of a cloud provider. */
export function cloudModule(name: CloudProvider | string): CloudModule {
  const m = providerModule(name)
  if (!isCloudModule(m)) throw new Error(`internal: provider ${name} has no cloud part`)
  return m
}
