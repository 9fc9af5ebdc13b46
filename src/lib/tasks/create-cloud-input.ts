// What `citc create --provider aws|google|oracle` needs, from flags, a cluster config file (--config)
// or — on a terminal — a wizard, asking in this order: provider; the credentials found (saying which
// one will be used); region and zone; management shape; cluster name; node limits (optional).
// Every question has a flag; a value in the config file counts as given; without a terminal nothing
// is asked: a default is taken where there is one, else the missing value is an error naming its flag.
import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, isAbsolute, resolve} from 'node:path'
import {input, select} from '@inquirer/prompts'
import {z} from 'zod'

import {clusterRegistry} from '../cluster/registry.js'
import {CLUSTER_NAME} from '../cluster/schema.js'
import {parseYamlDocument, zodProblems, byPosition, type YamlFile} from '../config/yaml.js'
import {InvalidInputError, type InputProblem} from '../errors.js'
import type {Io} from '../io.js'
import type {CloudSettings} from '../providers/cloud-cluster.js'
import {cloudProvider, expandHome, tildePath, type CloudProvider, type CredentialSource, type DiscoveryContext} from '../providers/cloud.js'
import {oracleCredentialInputs} from '../providers/oracle/index.js'
import {randomClusterName} from './create/random-name.js'

/** The keys of a cluster config file: the flags' names without "--". */
export const clusterConfigSchema = z.strictObject({
  provider: z.enum(['local', 'aws', 'google', 'oracle']).optional(),
  name: z.string().regex(CLUSTER_NAME, 'must start with a lower-case letter and have at most 31 of a-z, 0-9 and "-"').optional(),
  region: z.string().min(1).optional(),
  zone: z.union([z.string().min(1), z.number().int()]).optional(),
  project: z.string().min(1).optional(),
  profile: z.string().min(1).optional(),
  credentials: z.string().min(1).optional(),
  'mgmt-shape': z.string().min(1).optional(),
  'image-os': z.enum(['ubuntu-24.04', 'debian-12']).optional(),
  'ssh-cidr': z.string().min(1).optional(),
  tenancy: z.string().min(1).optional(),
  compartment: z.string().min(1).optional(),
  user: z.string().min(1).optional(),
  fingerprint: z.string().min(1).optional(),
  'key-file': z.string().min(1).optional(),
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

export interface CloudCreateFlags {
  provider?: string
  name?: string
  limits?: string
  region?: string
  zone?: string
  project?: string
  profile?: string
  credentials?: string
  'mgmt-shape'?: string
  'image-os'?: string
  'ssh-cidr'?: string
  tenancy?: string
  compartment?: string
  user?: string
  fingerprint?: string
  'key-file'?: string
}

/**
 * The flags only some providers take, and for a cloud cluster's settings where cluster.yaml keeps them
 * (fixed once the cluster is made).
 */
const PROVIDER_FLAGS: Record<string, {providers: readonly string[]; recorded?: (c: CloudSettings) => string | undefined}> = {
  force: {providers: ['local']},
  'ssh-timeout': {providers: ['aws', 'google', 'oracle']},
  region: {providers: ['aws', 'google', 'oracle'], recorded: (c) => c.region},
  zone: {providers: ['aws', 'google', 'oracle'], recorded: (c) => c.zone},
  project: {providers: ['google'], recorded: (c) => c.project},
  profile: {providers: ['aws', 'oracle'], recorded: (c) => c.profile},
  credentials: {providers: ['google'], recorded: (c) => c.credentialsFile},
  'mgmt-shape': {providers: ['aws', 'google', 'oracle'], recorded: (c) => c.mgmtShape},
  'image-os': {providers: ['aws', 'google', 'oracle'], recorded: (c) => c.imageOs},
  'ssh-cidr': {providers: ['aws', 'google', 'oracle'], recorded: (c) => c.sshCidr},
  tenancy: {providers: ['oracle'], recorded: (c) => c.tenancyOcid},
  compartment: {providers: ['oracle'], recorded: (c) => c.compartmentOcid},
  user: {providers: ['oracle'], recorded: (c) => c.userOcid},
  fingerprint: {providers: ['oracle'], recorded: (c) => c.fingerprint},
  'key-file': {providers: ['oracle'], recorded: (c) => c.privateKeyPath},
}

/**
 * Flags that would be ignored, refused rather than dropped without a word: a flag of another provider
 * (`--project` for aws, any cloud flag for local), or, for a cluster that exists, a setting that
 * differs from the one it was created with (they are fixed: Terraform made the resources from them).
 */
export function unusableFlags(provider: string, flags: Record<string, unknown>, existing?: {name: string; cloud?: CloudSettings}): InputProblem[] {
  const problems: InputProblem[] = []
  for (const [flag, spec] of Object.entries(PROVIDER_FLAGS)) {
    const value = flags[flag]
    if (value === undefined || value === false) continue
    if (!spec.providers.includes(provider)) {
      const takers = spec.providers.length === 3 ? 'cloud providers' : spec.providers.join(' and ')
      problems.push({where: `--${flag}`, message: `is for ${takers}, not ${provider}: leave it out`})
      continue
    }
    if (!existing?.cloud || !spec.recorded) continue
    const recorded = spec.recorded(existing.cloud)
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

/**
 * Google's node-program permission is fenced by instance name prefix (`<id>-`, templates/terraform/
 * google/iam.tf: IAM conditions have no regular expressions). Two clusters of one project where one
 * name is the other's plus "-…" (lab, lab-x) would reach each other's nodes: refused, as far as this
 * machine knows the project's clusters.
 */
export function nameClash(name: string, project: string | undefined, clusters: Array<{name: string; provider: string; cloud?: {project?: string}}>): string | undefined {
  for (const c of clusters) {
    if (c.provider !== 'google' || c.cloud?.project !== project || c.name === name) continue
    if (name.startsWith(`${c.name}-`) || c.name.startsWith(`${name}-`)) {
      return `clashes with cluster ${c.name} in project ${project}: each cluster's node programs may manage instances named <cluster>-…, so one name must not be the other's followed by "-"; choose another name`
    }
  }
  return undefined
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

/** Google's zones are not all "-a": take the source's, the default's, or "-b" (offered in every region). */
export function defaultZone(provider: CloudProvider, region: string, source?: CredentialSource): string {
  const d = cloudProvider(provider).defaults
  if (provider === 'oracle') return d.zone
  if (source?.zone && source.zone.startsWith(region)) return source.zone
  if (region === d.region) return d.zone
  return provider === 'aws' ? `${region}a` : `${region}-b`
}

/** A Google key file given with --credentials: its account and project, read from it. */
function googleKeySource(file: string, ctx: DiscoveryContext): CredentialSource {
  let key: {client_email?: string; project_id?: string} = {}
  let problem: string | undefined
  try {
    key = JSON.parse(readFileSync(file, 'utf8')) as typeof key
  } catch (error) {
    problem = `cannot read it as a JSON key file (${(error as NodeJS.ErrnoException).code ?? 'not JSON'})`
  }
  return {
    provider: 'google',
    id: `file:${file}`,
    label: `${key.client_email ?? 'key file'} from ${tildePath(file, ctx.home)} (--credentials)`,
    kind: 'key-file',
    file,
    account: key.client_email,
    project: key.project_id,
    isDefault: true,
    problem,
  }
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
  const spec = cloudProvider(provider)
  const configWhere: Record<string, string> = {}
  /** A flag's value, else the config file's (remembering where it was written). */
  const given = (flag: keyof CloudCreateFlags & keyof ClusterConfig): string | undefined => {
    const f = flags[flag]
    if (f !== undefined) return f
    const c = config?.values[flag]
    if (c === undefined) return undefined
    configWhere[flag] = config!.yaml.where([flag])
    return String(c)
  }
  const relativeToConfig = (flag: string, path: string) => (configWhere[flag] && config && !isAbsolute(path) ? resolve(dirname(config.file), path) : path)
  const required = (flag: string, what: string): never => {
    throw new InvalidInputError([{where: `--${flag}`, message: `${what} is needed, and there is no terminal to ask on: pass --${flag}`}])
  }

  // 1. Credentials: what was found, and which one will be used.
  const sources = spec.discoverCredentials(ctx)
  let source: CredentialSource | undefined
  const profile = given('profile')
  const keyFile = given('credentials')
  if (provider !== 'google' && profile) {
    source = sources.find((s) => s.profile === profile)
    if (!source) {
      if (provider === 'oracle') throw new InvalidInputError([{where: configWhere.profile ?? '--profile', message: `there is no profile ${profile} in ~/.oci/config`}])
      source = {provider, id: `profile:${profile}`, label: `AWS profile ${profile}`, kind: 'profile', profile, isDefault: true, problem: 'not found in ~/.aws/credentials or ~/.aws/config'}
    }
  } else if (provider === 'google' && keyFile) {
    const file = resolve(expandHome(relativeToConfig('credentials', keyFile), ctx.home))
    source = sources.find((s) => s.file === file) ?? googleKeySource(file, ctx)
  } else if (provider === 'oracle' && given('user')) {
    source = undefined // the API key's fields are given one by one
  } else if (ask && sources.length > 1) {
    const id = await select({
      message: `Which ${spec.title} credentials should citc (Terraform) use?`,
      choices: sources.map((s) => ({name: `${s.label}${s.problem ? ` — ${s.problem}` : ''}`, value: s.id})),
      default: (sources.find((s) => s.isDefault) ?? sources[0]).id,
    })
    source = sources.find((s) => s.id === id)
  } else {
    source = sources.find((s) => s.isDefault) ?? sources[0]
  }
  if (source) io.note(`Credentials: ${source.label || source.id} will be used${source.problem ? ` (note: ${source.problem})` : ''}.`)
  else if (!(provider === 'oracle' && given('user'))) {
    io.note(
      `Credentials: none found for ${spec.title} in the environment or the usual files; Terraform will look for them itself, and \`terraform plan\` will say if there are none.`,
    )
  }

  // 2. Region and zone (and the project or compartment that go with them).
  let region = given('region') ?? source?.region
  if (!given('region') && ask) region = await input({message: 'Region:', default: region ?? spec.defaults.region})
  region ??= spec.defaults.region
  let zone = given('zone')
  if (!zone && ask) zone = await input({message: provider === 'oracle' ? 'Availability domain (1, 2 or 3):' : 'Zone:', default: defaultZone(provider, region, source)})
  zone ??= defaultZone(provider, region, source)

  const cloud: CloudSettings = {region, zone, mgmtShape: spec.defaults.mgmtShape}
  if (source) cloud.credentials = source.id
  if (provider === 'aws' && source?.kind === 'profile') cloud.profile = source.profile
  if (provider === 'google') {
    if (source?.kind === 'key-file' && source.file) cloud.credentialsFile = source.file
    let project = given('project') ?? source?.project
    if (!given('project') && ask) project = await input({message: 'Google Cloud project ID:', default: project, required: true})
    if (!project) required('project', 'the Google Cloud project')
    cloud.project = project
  }
  if (provider === 'oracle') {
    if (source) {
      const fromProfile = oracleCredentialInputs(source, ctx)
      cloud.tenancyOcid = fromProfile.tenancyOcid || undefined
      if (fromProfile.configFileProfile) cloud.profile = fromProfile.configFileProfile
      else {
        cloud.userOcid = fromProfile.userOcid
        cloud.fingerprint = fromProfile.fingerprint
        cloud.privateKeyPath = fromProfile.privateKeyPath
      }
    }
    const user = given('user')
    const fingerprint = given('fingerprint')
    const keyPath = given('key-file')
    if (user !== undefined) cloud.userOcid = user
    if (fingerprint !== undefined) cloud.fingerprint = fingerprint
    if (keyPath !== undefined) cloud.privateKeyPath = resolve(expandHome(relativeToConfig('key-file', keyPath), ctx.home))
    cloud.tenancyOcid = given('tenancy') ?? cloud.tenancyOcid
    if (!cloud.tenancyOcid && ask) cloud.tenancyOcid = await input({message: 'Tenancy OCID:', required: true})
    if (!cloud.tenancyOcid) required('tenancy', 'the tenancy OCID (or --profile, a profile of ~/.oci/config)')
    let compartment = given('compartment')
    if (!compartment && ask) compartment = await input({message: 'Compartment OCID (default: the root compartment):', default: cloud.tenancyOcid})
    if (!compartment) {
      io.note(
        "Compartment: the tenancy's root compartment (pass --compartment to use another). OCI policies cannot be limited by freeform tag, " +
          "so the management node's node programs may manage every instance in the compartment: a compartment of the cluster's own is the safer choice.",
      )
    }
    cloud.compartmentOcid = compartment ?? cloud.tenancyOcid
  }

  // 3. The management node's shape (and image, and who may reach SSH).
  let shape = given('mgmt-shape')
  if (!shape && ask) shape = await input({message: 'Shape of the management node:', default: spec.defaults.mgmtShape})
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
    name = await input({message: 'Cluster name:', default: randomClusterName(), validate: (v) => CLUSTER_NAME.test(v) || 'lowercase letters, digits and -, starting with a letter (≤ 31)'})
  }
  name ??= randomClusterName()
  if (!CLUSTER_NAME.test(name)) {
    throw new InvalidInputError([{where: configWhere.name ?? '--name', message: `"${name}" is not a cluster name: lowercase letters, digits and -, starting with a letter, at most 31 characters`}])
  }
  const registry = clusterRegistry(dataDir)
  registry.assertNameFree(name)
  if (provider === 'google') {
    // A cluster whose cluster.yaml cannot be read is not this create's problem: left out.
    const clash = nameClash(name, cloud.project, registry.scan().flatMap((e) => (e.record ? [e.record] : [])))
    if (clash) throw new InvalidInputError([{where: configWhere.name ?? '--name', message: clash}])
  }

  // 5. Node limits (optional: `citc finish` can set them later).
  let limitsFile = given('limits')
  if (!limitsFile && ask) {
    limitsFile = (await input({message: 'Node limits file (limits.yaml; empty: none yet, set them later with citc finish):', default: ''})).trim() || undefined
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
