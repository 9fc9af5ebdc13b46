// What `citc create` was told, typed: the command maps its flags to a CreateRequest and hands it to
// resolveCreate (resolve-create.ts); a --config file's keys fill the same fields. Each field keeps
// its flag's name (SETTING_FLAGS) because problems are reported by flag ("--zone: …") or at the line
// of the config file that gave the value, whose keys are the flag names.
//
// Light on purpose: the command imports it at load time (for its defaults), before any task runs.
import type {ImageOs} from '../../providers/cloud-inputs.js'
import type {Provider} from '../../providers/registry.js'
import type {ManagementNodeStandIn} from '../../stand-in.js'

/** How long create waits for SSH on a new management node (boot + cloud-init). */
export const DEFAULT_SSH_TIMEOUT_S = 600

/** The management node's OS choices (--image-os). */
export const IMAGE_OS = ['ubuntu-24.04', 'debian-12'] as const satisfies readonly ImageOs[]

/**
 * --gpu-nodes: how a local cluster's nodes get this machine's GPUs: one node per GPU, one node with all of
 * a type's GPUs, or no GPU nodes.
 */
export const GPU_NODES = ['per-gpu', 'all', 'none'] as const
export type GpuNodes = (typeof GPU_NODES)[number]

/** The providers' own flags (--project, --key-file, --force …), by the name their module declares. */
export type ProviderFlagValues = Readonly<Record<string, string | boolean | undefined>>

/** A cluster's settings as given to create, by flags or (the same names) a config file. */
export interface CreateSettings {
  name?: string
  limitsFile?: string
  region?: string
  zone?: string
  mgmtShape?: string
  imageOs?: ImageOs
  sshCidr?: string
  sshTimeoutS?: number
  suspendTime?: number
  /** --monitoring / --no-monitoring; undefined: not given (on for a new cluster). */
  monitoring?: boolean
  /** --gpu-nodes (local clusters on a machine with GPUs); undefined: not given (the wizard asks, else per-gpu). */
  gpuNodes?: GpuNodes
  providerFlags: ProviderFlagValues
}

/** Everything `citc create` takes: the settings, and how this run goes. */
export interface CreateRequest extends CreateSettings {
  /** Undefined: the existing cluster's, else the config file's, else asked (local without a terminal). */
  provider?: Provider
  /** -c / CITC_CLUSTER: the cluster meant when neither --name nor the config file names one. */
  currentCluster?: string
  /** --config: a YAML file whose keys are the flags' names; flags win over it. */
  configFile?: string
  resume: boolean
  planOnly: boolean
  /** Clouds: a stand-in management node (the tests' sshd on loopback), from create's hidden --stand-in file. */
  standIn: ManagementNodeStandIn
  /** Clouds: the wizard's address echo (the --stand-in file's addressEcho) instead of ADDRESS_ECHO_URL. */
  addressEcho?: string
  /** Local: stand-in GPUs (the --stand-in file's driver.gpuRoot) instead of this machine's; undefined: '/'. */
  gpuRoot?: string
}

type SettingField = Exclude<keyof CreateSettings, 'providerFlags'>

/** Each setting's flag (without "--"), which is also its key in a config file. */
export const SETTING_FLAGS = {
  name: 'name',
  limitsFile: 'limits',
  region: 'region',
  zone: 'zone',
  mgmtShape: 'mgmt-shape',
  imageOs: 'image-os',
  sshCidr: 'ssh-cidr',
  sshTimeoutS: 'ssh-timeout',
  suspendTime: 'suspend-time',
  monitoring: 'monitoring',
  gpuNodes: 'gpu-nodes',
} as const satisfies Record<SettingField, string>

const FIELD_OF_FLAG = new Map<string, SettingField>(Object.entries(SETTING_FLAGS).map(([field, flag]) => [flag, field as SettingField]))

/** The value given for a flag (a setting's, else a provider's own); undefined when it was not given. */
export function givenFlag(settings: CreateSettings, flag: string): string | number | boolean | undefined {
  const field = FIELD_OF_FLAG.get(flag)
  return field ? settings[field] : settings.providerFlags[flag]
}
