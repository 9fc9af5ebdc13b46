// `citc create --config cluster.yaml`: a YAML file whose keys are create's flags without "--", read
// and validated (every problem at file:line:col), and its values as typed settings under the flags.
import {readFileSync} from 'node:fs'
import {dirname, isAbsolute, resolve} from 'node:path'
import {z} from 'zod'

import {CLUSTER_NAME} from '../../cluster/schema.js'
import {byPosition, parseYamlDocument, zodProblems, type YamlFile} from '../../config/yaml.js'
import {InvalidInputError} from '../../errors.js'
import {PROVIDER_MODULES, PROVIDER_NAMES, type Provider} from '../../providers/registry.js'
import {GPU_NODES, IMAGE_OS, type CreateSettings} from './create-request.js'

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
  'image-os': z.enum(IMAGE_OS).optional(),
  'ssh-cidr': z.string().min(1).optional(),
  ...providerConfigKeys,
  /** A limits.yaml, relative to the config file. */
  limits: z.string().min(1).optional(),
  'suspend-time': z.number().int().min(10).optional(),
  monitoring: z.boolean().optional(),
  'gpu-nodes': z.enum(GPU_NODES).optional(),
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

/** A config file's value for a key (a flag's name), if it has one. */
export function configValue(config: LoadedConfig | undefined, key: string): string | number | undefined {
  return (config?.values as Record<string, string | number | undefined> | undefined)?.[key]
}

/** A path the config file gives, relative to the file (a path from a flag is the caller's). */
export function configPath(config: LoadedConfig, path: string): string {
  return isAbsolute(path) ? path : resolve(dirname(config.file), path)
}

/**
 * The settings given by flags, and for each one no flag gave, the config file's value (its limits
 * path made relative to the file). Positions in the file are the caller's to look up (config.yaml).
 */
export function withConfig(flags: CreateSettings, config?: LoadedConfig): CreateSettings {
  if (!config) return flags
  const c = config.values
  const providerFlags: Record<string, string | boolean | undefined> = {...flags.providerFlags}
  for (const key of Object.keys(providerConfigKeys)) providerFlags[key] ??= configValue(config, key)?.toString()
  return {
    name: flags.name ?? c.name,
    limitsFile: flags.limitsFile ?? (c.limits === undefined ? undefined : configPath(config, c.limits)),
    region: flags.region ?? c.region,
    zone: flags.zone ?? c.zone?.toString(),
    mgmtShape: flags.mgmtShape ?? c['mgmt-shape'],
    imageOs: flags.imageOs ?? c['image-os'],
    sshCidr: flags.sshCidr ?? c['ssh-cidr'],
    sshTimeoutS: flags.sshTimeoutS, // not a config key: how long this run waits
    suspendTime: flags.suspendTime ?? c['suspend-time'],
    monitoring: flags.monitoring ?? c.monitoring,
    gpuNodes: flags.gpuNodes ?? c['gpu-nodes'],
    providerFlags,
  }
}
