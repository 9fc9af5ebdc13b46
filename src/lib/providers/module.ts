// What one provider is to citc: the contract every folder under providers/ fulfils (registry.ts lists
// them). Everything provider-specific sits behind it, so the rest of citc asks the module instead of
// comparing provider names.
//
// Load time: registry.ts imports every module, and every command imports registry.ts (for its flag
// options) — including the node programs slurmctld starts on each power event. So a module's own
// file stays light: no zod at run time (its settings come as a factory handed zod by cluster/schema.ts),
// no execa (sweepers import tools/exec.js when they run), no prompt library (questions go through
// Io), and its shape catalogue, node driver and image builder are imported only when asked for.
import type {z as Zod} from 'zod'

import type {InputProblem} from '../errors.js'
import type {Io, Prompts} from '../io.js'
import type {ShapeCatalogue} from '../shapes/types.js'
import type {SlurmProfile} from '../slurm/profile.js'
import type {CloudErrorHints} from '../tools/terraform.js'
import type {CommonCloudInputs, CommonCloudSettings, CredentialSource, DiscoveryContext, ProviderDefaults} from './cloud-inputs.js'
import type {TerraformOutputValues} from './cloud-node-config.js'
import type {ImageBuilderFactory} from './image-types.js'
import type {CloudSweeper, SweepContext} from './sweep.js'
import type {NodeDriverFactory} from './types.js'

/** A flag of `citc create` only some providers take (its description is prefixed by the provider's name). */
export interface CreateFlagSpec<S = object> {
  kind: 'string' | 'boolean'
  description: string
  /** Where cluster.yaml keeps it once the cluster is made (such a setting is fixed from then on). */
  recorded?(settings: CommonCloudSettings & Partial<S>): string | undefined
}

/**
 * The provider's section (`driver`) of the management node's /etc/citc/cluster.json: what its node
 * driver needs (cluster/management-contract.ts puts the sections of all modules in one schema).
 */
export interface NodeConfigSection<D = unknown> {
  /** The section's schema, built with the zod it is given (the registry loads no zod). */
  schema(z: typeof Zod): Zod.ZodType<D>
  /** Clouds: the section made from Terraform's outputs (unchecked: the contract checks it against `schema`). */
  fromOutputs?(outputs: TerraformOutputValues): unknown
}

/** The zod shape of a provider's own fields in cluster.yaml's `cloud:` section, built with the zod it is given. */
export type SettingsShape<S> = (z: typeof Zod) => {[K in keyof S]-?: Zod.ZodType<S[K]>}

/** What a provider's create questions may use: the flags (or --config) given, and how to ask. */
export interface CreateQuestions {
  /** Ask for what is missing (a terminal, and no --yes). */
  ask: boolean
  io: Io
  prompts: Prompts
  ctx: DiscoveryContext
  /** A flag's value, else the config file's (the file's position is remembered for problems). */
  given(flag: string): string | undefined
  /** Where a problem about a flag is reported: the config file's line, or "--flag". */
  where(flag: string): string
  /** An absolute path for a flag's value (relative to the config file when given there; ~ expanded). */
  path(flag: string, value: string): string
  /** A value that must be given, and there is no terminal to ask on. */
  required(flag: string, what: string): never
  /** The error for a flag's value, located where it was given. */
  invalid(flag: string, message: string): Error
}

/** What a cloud provider adds: credentials, Terraform, sweeping and the create questions. */
export interface CloudPart<S = object, I extends CommonCloudInputs = CommonCloudInputs> {
  defaults: ProviderDefaults
  /** The provider's fields of cluster.yaml's `cloud:` section (the common ones are cluster/schema.ts's). */
  settings: SettingsShape<S>
  /** `citc create` flags only this provider takes. */
  flags: Record<string, CreateFlagSpec<S>>

  // Credentials
  /** Credentials found in the environment and the usual files; the default first (no network call; imported when asked). */
  discoverCredentials(ctx: DiscoveryContext): Promise<CredentialSource[]>
  /** The credential source recorded in cluster.yaml, as terraformEnv takes it. */
  credentialSource(settings: CommonCloudSettings & Partial<S>): CredentialSource | undefined
  /** Environment for Terraform (and the sweeper's tool) so it uses `source`; undefined removes a variable. */
  terraformEnv(source: CredentialSource | undefined): Record<string, string | undefined>

  // Create questions, in the wizard's order
  /**
   * The credentials the flags name (--profile, a key file…): a source, null when the flags give the key
   * itself field by field, undefined when they name none (the wizard then offers what was found).
   */
  credentialsFromFlags(q: CreateQuestions, found: CredentialSource[]): Promise<CredentialSource | null | undefined>
  /** The zone question ("Zone:") and its default for a region. */
  zoneQuestion: string
  defaultZone(region: string, source?: CredentialSource): string
  /** The provider's own settings from the credentials chosen and the flags, asking for what is missing. */
  askSettings(q: CreateQuestions, source: CredentialSource | undefined): Promise<Partial<S>>
  /** Why this name cannot be used next to the clusters this machine knows (undefined: it can). */
  nameClash?(name: string, settings: CommonCloudSettings & Partial<S>, clusters: Array<{name: string; provider: string; cloud?: object}>): string | undefined

  // Terraform (templates/terraform/<name>/)
  /** Every variable citc may write in citc.auto.tfvars.json (each is declared in variables.tf). */
  variables: readonly string[]
  /** Outputs citc reads after apply (each is declared in outputs.tf). */
  outputs: readonly string[]
  /** The Terraform inputs for a cluster's recorded settings (common inputs given). */
  inputs(common: CommonCloudInputs, settings: CommonCloudSettings & Partial<S>): I
  /** Problems with the provider-specific inputs, located by flag. */
  check(inputs: I): InputProblem[]
  /**
   * The tfvars for these inputs (pure; defaults filled in, absent optional values left out). `shapes`
   * is this provider's catalogue (the management node's architecture is its shape's).
   */
  tfvars(inputs: I, shapes: ShapeCatalogue): Record<string, string | number>
  /** The wording of the hints for this cloud's own errors (create and destroy hand it to tools/terraform.ts). */
  errorHints: CloudErrorHints

  /** The Packer plugin (github.com/hashicorp/<name>) of its source in templates/packer/cloud.pkr.hcl. */
  packerPlugin: string

  // Leftovers
  /** The command-line tool the sweeper drives, and how to install it. */
  sweepTool: {tool: string; install: string}
  sweeper(ctx: SweepContext, settings: CommonCloudSettings & Partial<S>): CloudSweeper
}

/**
 * Where a provider's clusters have their management node. It decides how citc reaches it and which
 * create and destroy workflows make and take it away:
 * - 'this-machine': the machine citc runs on (commands run here; nothing to reach over SSH, nothing to
 *   register with `citc cluster add`): tasks/create/create-local.ts, tasks/destroy/destroy-local.ts;
 * - 'cloud-vm': a VM its cloud part's Terraform makes, reached over SSH with the pinned host key (or a
 *   machine registered with `citc cluster add`): tasks/create/create-cloud.ts, tasks/destroy/destroy-cloud.ts.
 * Compute nodes are another matter: they come by node group, whatever the management node is.
 */
export type ManagementNodeKind = 'this-machine' | 'cloud-vm'

/** A tool `citc doctor` checks on this machine for a provider (beyond the clouds' Terraform, npm and sweep tool). */
export interface DoctorTool {
  name: string
  /** What needs it: "create and destroy with --provider local". */
  purpose: string
  required: boolean
  /** How to read its version: the arguments, and a pattern whose first group is the version. */
  version: {args: string[]; pick: RegExp}
  /** How to get it when it is missing. */
  install: string
}

export interface CatalogueOptions {
  /** local only: the machine the nodes run on (default: this one). */
  host?: {cpus: number; memoryMiB: number; cores?: number; arch?: 'x86_64' | 'arm64'}
  /** local only: where this machine's NVIDIA GPUs are listed (proc/driver/nvidia/gpus): '/' unless a stand-in's driver.gpuRoot. */
  gpuRoot?: string
}

export interface ProviderModule<N extends string = string, D = unknown> {
  name: N
  /** "Amazon Web Services": the wizard's choice says "aws — Amazon Web Services". */
  title: string
  /**
   * The shape catalogue (limits.yaml's shape names), imported when asked for: the tables are the
   * modules' largest files and most commands (the node programs) never look a shape up.
   * providers/catalogues.ts imports every catalogue once, for the commands that do.
   */
  shapes(): Promise<(opts?: CatalogueOptions) => ShapeCatalogue>
  /**
   * The numbered availability domains nodes are placed in (limits give a count per AD, node features
   * carry ad=N, and the management node's shape is subtracted once from its AD's limit), or false.
   */
  availabilityDomains: false | readonly number[]
  /** `citc create` flags of a provider without a cloud part (local). */
  flags?: Record<string, CreateFlagSpec>
  /** Where its clusters' management node is: how citc reaches it, which workflows create and destroy it. */
  managementNode: ManagementNodeKind
  /** What its clusters need of Slurm: SlurmUser, the controller's address, plugins, power-saving timings, node addresses. */
  slurm: SlurmProfile
  /** Tools `citc doctor` checks for it on this machine (the cloud part's are checked for every cloud). */
  doctorTools?: readonly DoctorTool[]
  /** Its section of the management node's cluster.json: the node driver's settings there. */
  nodeConfig: NodeConfigSection<D>
  /** The node driver's factory (imported when asked for: only node programs need it). */
  nodeDriver(): Promise<NodeDriverFactory>
  /** The image builder (`citc rebuild-image`, create's first image; imported when asked for). */
  imageBuilder(): Promise<ImageBuilderFactory | undefined>
  cloud?: CloudPart
}

/** A provider with a cloud part: its cluster.json section is made from its Terraform outputs. */
export interface CloudModule<N extends string = string, S = object, I extends CommonCloudInputs = CommonCloudInputs, D = unknown> extends ProviderModule<N, D> {
  cloud: CloudPart<S, I>
  nodeConfig: Required<NodeConfigSection<D>>
  managementNode: 'cloud-vm'
}

/**
 * A sweeper whose implementation (and the tools/exec.js it runs the cloud's CLI with) is imported
 * when it is first used: the modules are imported by every command, sweeping happens in one.
 */
export function lazySweeper(tool: string, load: () => Promise<CloudSweeper>): CloudSweeper {
  let loaded: Promise<CloudSweeper> | undefined
  const sweeper = () => (loaded ??= load())
  return {
    tool,
    list: async (kinds) => (await sweeper()).list(kinds),
    delete: async (resource) => (await sweeper()).delete(resource),
  }
}
