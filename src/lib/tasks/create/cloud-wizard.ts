// What `citc create --provider aws|google|oracle` needs, from flags, a cluster config file (--config)
// or — on a terminal — a wizard, asking in this order: provider; the credentials found (saying which
// one will be used); region and zone; management shape; cluster name; node limits (optional).
// Every question has a flag; a value in the config file counts as given; without a terminal nothing
// is asked: a default is taken where there is one, else the missing value is an error naming its flag.
import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, isAbsolute, resolve} from 'node:path'
import {z} from 'zod'

import {clusterRegistry} from '../../cluster/registry.js'
import {CLUSTER_NAME, type CloudSettings} from '../../cluster/schema.js'
import {parseYamlDocument, zodProblems, byPosition, type YamlFile} from '../../config/yaml.js'
import {InvalidInputError, type InputProblem} from '../../errors.js'
import {promptsOf, type Io} from '../../io.js'
import {expandHome, type CredentialSource, type DiscoveryContext} from '../../providers/cloud-inputs.js'
import type {CreateQuestions} from '../../providers/module.js'
import {CLOUD_PROVIDER_NAMES, cloudModule, PROVIDER_MODULES, PROVIDER_NAMES, type CloudProvider, type Provider} from '../../providers/registry.js'
import {randomClusterName} from './random-name.js'

/** Flags of `citc create` every cloud takes, and where cluster.yaml keeps each (fixed once the cluster is made). */
const CLOUD_FLAGS: Record<string, ((c: CloudSettings) => string | undefined) | undefined> = {
  'ssh-timeout': undefined,
  region: (c) => c.region,
  zone: (c) => c.zone,
  'mgmt-shape': (c) => c.mgmtShape,
  'image-os': (c) => c.imageOs,
  'ssh-cidr': (c) => c.sshCidr,
}

/** The cloud providers' own string flags (--project, --profile, --tenancy …), as config file keys. */
const providerConfigKeys = Object.fromEntries(
  PROVIDER_MODULES.flatMap((m) => Object.entries(m.cloud?.flags ?? {}))
    .filter(([, spec]) => spec.kind === 'string')
    .map(([flag]) => [flag, z.string().min(1).optional()]),
)

/** The keys of a cluster config file: the flags' names without "--". */
export const clusterConfigSchema = z.strictObject({
  provider: z.enum(PROVIDER_NAMES as [Provider, ...Provider[]]).optional(),
  name: z.string().regex(CLUSTER_NAME, 'must start with a lower-case letter and have at most 31 of a-z, 0-9 and "-"').optional(),
  region: z.string().min(1).optional(),
  zone: z.union([z.string().min(1), z.number().int()]).optional(),
  'mgmt-shape': z.string().min(1).optional(),
  'image-os': z.enum(['ubuntu-24.04', 'debian-12']).optional(),
  'ssh-cidr': z.string().min(1).optional(),
  ...providerConfigKeys,
  /** A limits.yaml, relative to the config file. */
  limits: z.string().min(1).optional(),
  'suspend-time': z.number().int().min(10).optional(),
})
export type ClusterConfig = z.output<typeof clusterConfigSchema>
const CONFIG_KEYS = Object.keys(clusterConfigSchema.shape)

export interface LoadedConfig {
  file: string
  values: ClusterConfig
  yaml: YamlFile
}

/** Read and validate --config: every problem at file:line:col. */
export function loadClusterConfig(file: string): LoadedConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new InvalidInputError([{where: '--config', message: `cannot read ${file} (${(error as NodeJS.ErrnoException).code})`}])
  }
  const yaml = parseYamlDocument(text, file)
  const value = yaml.value ?? {}
  const result = clusterConfigSchema.safeParse(value, {reportInput: true})
  if (!result.success) {
    throw new InvalidInputError(byPosition(zodProblems(result.error.issues, yaml, {keysAt: (p) => (p.length === 0 ? CONFIG_KEYS : undefined)})), `fix ${file} at the lines shown`)
  }
  return {file, values: result.data, yaml}
}

/** The flags (and config file values) create takes for a cloud: the common ones and every provider's own. */
export interface CloudCreateFlags {
  name?: string
  limits?: string
  region?: string
  zone?: string
  'mgmt-shape'?: string
  'image-os'?: string
  'ssh-cidr'?: string
  /** A provider's own flags (--project, --profile …): see its module. */
  [flag: string]: unknown
}

/** Which providers take a flag, and for each where cluster.yaml keeps its value. */
function flagTakers(): Map<string, Map<Provider, ((c: CloudSettings) => string | undefined) | undefined>> {
  const takers = new Map<string, Map<Provider, ((c: CloudSettings) => string | undefined) | undefined>>()
  const add = (flag: string, provider: Provider, recorded?: (c: CloudSettings) => string | undefined) => {
    if (!takers.has(flag)) takers.set(flag, new Map())
    takers.get(flag)!.set(provider, recorded)
  }
  for (const m of PROVIDER_MODULES) {
    if (m.cloud) for (const [flag, recorded] of Object.entries(CLOUD_FLAGS)) add(flag, m.name, recorded)
    for (const [flag, spec] of Object.entries(m.cloud?.flags ?? m.flags ?? {})) add(flag, m.name, spec.recorded ? (c) => spec.recorded!(c) : undefined)
  }
  return takers
}

/**
 * Flags that would be ignored, refused rather than dropped without a word: a flag of another provider
 * (`--project` for aws, any cloud flag for local), or, for a cluster that exists, a setting that
 * differs from the one it was created with (they are fixed: Terraform made the resources from them).
 */
export function unusableFlags(provider: Provider, flags: Record<string, unknown>, existing?: {name: string; cloud?: CloudSettings}): InputProblem[] {
  const problems: InputProblem[] = []
  for (const [flag, byProvider] of flagTakers()) {
    const value = flags[flag]
    if (value === undefined || value === false) continue
    if (!byProvider.has(provider)) {
      const names = [...byProvider.keys()]
      const takers = names.length === CLOUD_PROVIDER_NAMES.length && names.every((p) => (CLOUD_PROVIDER_NAMES as readonly string[]).includes(p)) ? 'cloud providers' : names.join(' and ')
      problems.push({where: `--${flag}`, message: `is for ${takers}, not ${provider}: leave it out`})
      continue
    }
    const recordedOf = byProvider.get(provider)
    if (!existing?.cloud || !recordedOf) continue
    const recorded = recordedOf(existing.cloud)
    const same = recorded !== undefined && (recorded === String(value) || (isAbsolute(recorded) && recorded === resolve(String(value))))
    if (!same) {
      problems.push({
        where: `--${flag}`,
        message: `cluster ${existing.name} exists and was created with ${recorded === undefined ? `no --${flag}` : `--${flag} ${recorded}`}; a cluster's settings are fixed once made: leave --${flag} out to continue it, or choose another --name`,
      })
    }
  }
  return problems
}

/** Why `name` cannot be used next to the clusters this machine knows, by the provider's own rule (undefined: it can). */
export function nameClash(provider: CloudProvider, name: string, settings: CloudSettings, clusters: Array<{name: string; provider: string; cloud?: object}>): string | undefined {
  return cloudModule(provider).cloud.nameClash?.(name, settings, clusters)
}

export interface ResolvedCloudCreate {
  provider: CloudProvider
  name: string
  cloud: CloudSettings
  /** The credentials that will be used, for the summary (undefined: none found; Terraform looks itself). */
  credential?: CredentialSource
  limits?: {text: string; file: string}
  /** Where each value came from a config file: flag → "file:line:col" (to locate problems). */
  configWhere: Record<string, string>
}

/** Flag name (without --) → where a problem about it is reported. */
export function locateProblems(problems: InputProblem[], configWhere: Record<string, string>): InputProblem[] {
  const aliases: Record<string, string> = {'--user/--fingerprint/--key-file': '--user'}
  return problems.map((p) => {
    const flag = (aliases[p.where] ?? p.where).replace(/^--/, '')
    const at = configWhere[flag]
    return at ? {where: at, path: flag, message: p.message} : p
  })
}

export function discoveryContext(): DiscoveryContext {
  return {env: process.env, home: process.env.HOME || homedir()}
}

/** The zone a region defaults to on this provider (the credentials' own zone when it is in the region). */
export function defaultZone(provider: CloudProvider, region: string, source?: CredentialSource): string {
  return cloudModule(provider).cloud.defaultZone(region, source)
}

/**
 * Resolve every answer for a cloud cluster. `config` (from --config) fills what flags do not say.
 */
export async function resolveCloudCreate(
  io: Io,
  provider: CloudProvider,
  flags: CloudCreateFlags,
  dataDir: string,
  config?: LoadedConfig,
  ctx: DiscoveryContext = discoveryContext(),
): Promise<ResolvedCloudCreate> {
  const ask = io.interactive && !io.yes
  const prompts = promptsOf(io)
  const module = cloudModule(provider)
  const spec = module.cloud
  const configWhere: Record<string, string> = {}
  /** A flag's value, else the config file's (remembering where it was written). */
  const given = (flag: string): string | undefined => {
    const f = flags[flag]
    if (f !== undefined) return String(f)
    const c = (config?.values as Record<string, unknown> | undefined)?.[flag]
    if (c === undefined) return undefined
    configWhere[flag] = config!.yaml.where([flag])
    return String(c)
  }
  const relativeToConfig = (flag: string, path: string) => (configWhere[flag] && config && !isAbsolute(path) ? resolve(dirname(config.file), path) : path)
  const required = (flag: string, what: string): never => {
    throw new InvalidInputError([{where: `--${flag}`, message: `${what} is needed, and there is no terminal to ask on: pass --${flag}`}])
  }
  const q: CreateQuestions = {
    ask,
    io,
    prompts,
    ctx,
    given,
    where: (flag) => configWhere[flag] ?? `--${flag}`,
    path: (flag, value) => resolve(expandHome(relativeToConfig(flag, value), ctx.home)),
    required,
    invalid: (flag, message) => new InvalidInputError([{where: configWhere[flag] ?? `--${flag}`, message}]),
  }

  // 1. Credentials: what was found, and which one will be used.
  const sources = await spec.discoverCredentials(ctx)
  let source: CredentialSource | undefined
  const named = await spec.credentialsFromFlags(q, sources)
  if (named !== undefined) {
    source = named ?? undefined // null: the key is given field by field
  } else if (ask && sources.length > 1) {
    const id = await prompts.select({
      message: `Which ${module.title} credentials should citc (Terraform) use?`,
      choices: sources.map((s) => ({name: `${s.label}${s.problem ? ` — ${s.problem}` : ''}`, value: s.id})),
      default: (sources.find((s) => s.isDefault) ?? sources[0]).id,
    })
    source = sources.find((s) => s.id === id)
  } else {
    source = sources.find((s) => s.isDefault) ?? sources[0]
  }
  if (source) io.note(`Credentials: ${source.label || source.id} will be used${source.problem ? ` (note: ${source.problem})` : ''}.`)
  else if (named !== null) {
    io.note(
      `Credentials: none found for ${module.title} in the environment or the usual files; Terraform will look for them itself, and \`terraform plan\` will say if there are none.`,
    )
  }

  // 2. Region and zone (and the project or compartment that go with them).
  let region = given('region') ?? source?.region
  if (!given('region') && ask) region = await prompts.input({message: 'Region:', default: region ?? spec.defaults.region})
  region ??= spec.defaults.region
  let zone = given('zone')
  if (!zone && ask) zone = await prompts.input({message: spec.zoneQuestion, default: spec.defaultZone(region, source)})
  zone ??= spec.defaultZone(region, source)

  const cloud: CloudSettings = {region, zone, mgmtShape: spec.defaults.mgmtShape}
  if (source) cloud.credentials = source.id
  Object.assign(cloud, await spec.askSettings(q, source))

  // 3. The management node's shape (and image, and who may reach SSH).
  let shape = given('mgmt-shape')
  if (!shape && ask) shape = await prompts.input({message: 'Shape of the management node:', default: spec.defaults.mgmtShape})
  cloud.mgmtShape = shape ?? spec.defaults.mgmtShape
  const imageOs = given('image-os')
  if (imageOs !== undefined) {
    if (imageOs !== 'ubuntu-24.04' && imageOs !== 'debian-12') throw new InvalidInputError([{where: configWhere['image-os'] ?? '--image-os', message: 'must be ubuntu-24.04 or debian-12'}])
    cloud.imageOs = imageOs
  }
  const sshCidr = given('ssh-cidr')
  if (sshCidr !== undefined) cloud.sshCidr = sshCidr

  // 4. The cluster's name.
  let name = given('name')
  if (!name && ask) {
    name = await prompts.input({message: 'Cluster name:', default: randomClusterName(), validate: (v) => CLUSTER_NAME.test(v) || 'lowercase letters, digits and -, starting with a letter (≤ 31)'})
  }
  name ??= randomClusterName()
  if (!CLUSTER_NAME.test(name)) {
    throw new InvalidInputError([{where: configWhere.name ?? '--name', message: `"${name}" is not a cluster name: lowercase letters, digits and -, starting with a letter, at most 31 characters`}])
  }
  const registry = clusterRegistry(dataDir)
  registry.assertNameFree(name)
  if (spec.nameClash) {
    // A cluster whose cluster.yaml cannot be read is not this create's problem: left out.
    const clash = spec.nameClash(name, cloud, registry.scan().flatMap((e) => (e.record ? [e.record] : [])))
    if (clash) throw new InvalidInputError([{where: configWhere.name ?? '--name', message: clash}])
  }

  // 5. Node limits (optional: `citc finish` can set them later).
  let limitsFile = given('limits')
  if (!limitsFile && ask) {
    limitsFile = (await prompts.input({message: 'Node limits file (limits.yaml; empty: none yet, set them later with citc finish):', default: ''})).trim() || undefined
  }
  let limits: ResolvedCloudCreate['limits']
  if (limitsFile) {
    const path = relativeToConfig('limits', limitsFile)
    try {
      limits = {text: readFileSync(path, 'utf8'), file: path}
    } catch (error) {
      throw new InvalidInputError([{where: configWhere.limits ?? '--limits', message: `cannot read ${path} (${(error as NodeJS.ErrnoException).code})`}])
    }
  }
  return {provider, name, cloud, credential: source, limits, configWhere}
}
