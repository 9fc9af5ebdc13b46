// What `citc create --provider aws|google|oracle` needs for a new cluster, from flags, a cluster
// config file (--config) or — on a terminal — a wizard, asking in this order: provider (askProvider in
// resolve-create.ts); the credentials found (saying which one will be used); region and zone;
// management shape; who may reach SSH on it (ssh-cidr.ts proposes this machine's public address);
// cluster name; node limits (optional).
// Every question has a flag; a value in the config file counts as given; without a terminal nothing
// is asked: a default is taken where there is one, else the missing value is an error naming its flag.
import {readCreateLimits} from '../finish/limits-file.js'
import {homedir} from 'node:os'
import {resolve} from 'node:path'

import {clusterRegistry} from '../../cluster/registry.js'
import type {CloudSettings} from '../../cluster/schema.js'
import {InvalidInputError, type InputProblem} from '../../errors.js'
import {promptsOf, type Io} from '../../io.js'
import {expandHome, type CredentialSource, type DiscoveryContext} from '../../providers/cloud-inputs.js'
import type {CreateQuestions} from '../../providers/module.js'
import {cloudModule, type CloudProvider} from '../../providers/registry.js'
import {configPath, configValue, type LoadedConfig} from './config-file.js'
import {givenFlag, IMAGE_OS, type CreateSettings} from './create-request.js'
import {clusterName} from './cluster-name.js'
import {askSshCidr, excludesThisMachine, learnPublicAddress, NO_ADDRESS_SOURCES, type AddressSources} from './ssh-cidr.js'

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
  return problems.map((p) => {
    // A problem about flags given together ("--user/--fingerprint/--key-file") is located at the first.
    const flag = p.where.split('/')[0].replace(/^--/, '')
    const at = configWhere[flag]
    return at ? {where: at, path: flag, message: p.message} : p
  })
}

export function discoveryContext(): DiscoveryContext {
  return {env: process.env, home: process.env.HOME || homedir()}
}

/**
 * Resolve every answer for a new cloud cluster. `config` (from --config) fills what `given` (the
 * flags) does not say. `addresses`: where the SSH question learns this machine's public address
 * (read only when it is asked; by default nowhere: the command passes this machine's).
 */
export async function resolveCloudCreate(
  io: Io,
  provider: CloudProvider,
  given: CreateSettings,
  dataDir: string,
  config?: LoadedConfig,
  ctx: DiscoveryContext = discoveryContext(),
  addresses: AddressSources = NO_ADDRESS_SOURCES,
): Promise<ResolvedCloudCreate> {
  const ask = io.interactive && !io.yes
  const prompts = promptsOf(io)
  const module = cloudModule(provider)
  const spec = module.cloud
  const configWhere: Record<string, string> = {}
  /** A flag's value, else the config file's (remembering where it was written). */
  const value = (flag: string): string | undefined => {
    const f = givenFlag(given, flag)
    if (f !== undefined) return String(f)
    const c = configValue(config, flag)
    if (c === undefined) return undefined
    configWhere[flag] = config!.yaml.where([flag])
    return String(c)
  }
  const relativeToConfig = (flag: string, path: string) => (configWhere[flag] && config ? configPath(config, path) : path)
  const required = (flag: string, what: string): never => {
    throw new InvalidInputError([{where: `--${flag}`, message: `${what} is needed, and there is no terminal to ask on: pass --${flag}`}])
  }
  const q: CreateQuestions = {
    ask,
    io,
    prompts,
    ctx,
    given: value,
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
  let region = value('region') ?? source?.region
  if (!value('region') && ask) region = await prompts.input({message: 'Region:', default: region ?? spec.defaults.region})
  region ??= spec.defaults.region
  let zone = value('zone')
  if (!zone && ask) zone = await prompts.input({message: spec.zoneQuestion, default: spec.defaultZone(region, source)})
  zone ??= spec.defaultZone(region, source)

  const cloud: CloudSettings = {region, zone, mgmtShape: spec.defaults.mgmtShape}
  if (source) cloud.credentials = source.id
  Object.assign(cloud, await spec.askSettings(q, source))

  // 3. The management node's shape (and image, and who may reach SSH).
  let shape = value('mgmt-shape')
  if (!shape && ask) shape = await prompts.input({message: 'Shape of the management node:', default: spec.defaults.mgmtShape})
  cloud.mgmtShape = shape ?? spec.defaults.mgmtShape
  const imageOs = value('image-os')
  if (imageOs !== undefined) {
    const os = IMAGE_OS.find((o) => o === imageOs)
    if (!os) throw new InvalidInputError([{where: configWhere['image-os'] ?? '--image-os', message: 'must be ubuntu-24.04 or debian-12'}])
    cloud.imageOs = os
  }
  let sshCidr = value('ssh-cidr')
  if (sshCidr === undefined && ask) {
    const learned = await learnPublicAddress(addresses)
    sshCidr = await askSshCidr(prompts, learned)
    const outside = excludesThisMachine(sshCidr, learned)
    if (outside) io.note(`note: ${outside}.`)
  }
  // Not given and not asked: left out of cluster.yaml, and Terraform gets DEFAULT_SSH_CIDR (create warns).
  if (sshCidr !== undefined) cloud.sshCidr = sshCidr

  // 4. The cluster's name.
  const name = await clusterName(value('name'), configWhere.name ?? '--name', ask ? prompts : undefined)
  const registry = clusterRegistry(dataDir)
  registry.assertNameFree(name)
  if (spec.nameClash) {
    // A cluster whose cluster.yaml cannot be read is not this create's problem: left out.
    const clash = spec.nameClash(name, cloud, registry.scan().flatMap((e) => (e.record ? [e.record] : [])))
    if (clash) throw new InvalidInputError([{where: configWhere.name ?? '--name', message: clash}])
  }

  // 5. Node limits (optional: `citc finish` can set them later).
  let limitsFile = value('limits')
  if (!limitsFile && ask) {
    limitsFile = (await prompts.input({message: 'Node limits file (limits.yaml; empty: none yet, set them later with citc finish):', default: ''})).trim() || undefined
  }
  let limits: ResolvedCloudCreate['limits']
  if (limitsFile) {
    const path = relativeToConfig('limits', limitsFile)
    limits = {text: readCreateLimits(path, configWhere.limits ?? '--limits'), file: path}
  }
  return {provider, name, cloud, credential: source, limits, configWhere}
}
