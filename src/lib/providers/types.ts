// The node driver interface: what Slurm's power saving and the watchdog need from a provider. One per
// provider (local: slurmd processes on this machine; aws, google, oracle: cloud-driver.ts over each
// cloud's CloudApi). Called by `citc node resume|suspend|fail|sync` on the management node, with the
// nodes' shape/AD/arch read back from their Slurm features.
import type {DriverStandIn} from '../stand-in.js'
import type {NodeFailure} from './node-failures.js'

export interface NodeSpec {
  name: string
  shape: string
  ad?: number
  arch?: string
  /** GPUs slurm.conf gives the node (its Gres=gpu:…); absent: none, or not known. */
  gpus?: number
}

export interface NodeOutcome {
  name: string
  ok: boolean
  /** Why it failed, in one line a user can act on (reported to Slurm as the node's reason). */
  error?: string
  /** A cloud's refusal, classified (node-failures.ts): error is then failureReason() of it. */
  failure?: NodeFailure
  /** The machine that runs (or ran) the node. */
  instanceId?: string
  privateIp?: string
  /** Resume found the node's machine already there (pending or running) and launched none. */
  adopted?: boolean
  /** Create calls made for this node (retries included). */
  attempts?: number
}

/** One compute machine of the cluster, as the provider lists it (local: a node's slurmd). */
export interface CloudInstance {
  id: string
  /** The Slurm node it runs (its name tag / instance name / display name). */
  name: string
  state: 'pending' | 'running' | 'stopping' | 'terminated'
  /** Epoch ms. */
  launchedAt: number
  privateIp?: string
  shape?: string
}

/** What a driver call may use besides its nodes: the log, the clock and how long it has. */
export interface DriverContext {
  /** One line to the elastic log. */
  log(message: string): void
  /** Epoch ms; injected so tests run retries without real waits. */
  now(): number
  sleep(ms: number): Promise<void>
  /** Epoch ms by which every outcome must be known: retries stop before it. */
  deadline: number
}

/** The image a node would boot, as the cluster records it (the GPU check of the resume program). */
export interface BootImage {
  name: string
  version: string
  /** The NVIDIA driver it carries; null: none; undefined: not recorded. */
  gpuDriver?: string | null
}

export interface NodeDriver {
  /**
   * The image a new node of `arch` would boot, for drivers whose GPU nodes load the NVIDIA driver from
   * it (the clouds'); undefined when there is none. The local driver has no such method: its nodes
   * are to use this machine's own driver (issue #22, the GPU workstation), whatever the image holds.
   */
  bootImage?(arch: string): BootImage | undefined
  /** Start every node; never throws for one node's failure: each outcome says. */
  resume(nodes: NodeSpec[], ctx: DriverContext): Promise<NodeOutcome[]>
  /** Stop every node; a node with no machine is stopped already (ok). Does not wait for the end. */
  suspend(nodes: NodeSpec[], ctx: DriverContext): Promise<NodeOutcome[]>
  /** Every compute machine of this cluster not yet terminated (for destroy and the watchdog). */
  list(): Promise<CloudInstance[]>
  /** Stop machines by id (the watchdog's orphans): one outcome per id, named by the id's node. */
  terminate(instances: CloudInstance[], ctx: DriverContext): Promise<NodeOutcome[]>
}

/** What every node driver is made from (node-programs.ts driverFor): the cluster, as cluster.json says. */
export interface DriverInput {
  cluster: string
  /** Where the shared filesystem is mounted. */
  sharedDir: string
  /** slurm.conf as slurmctld reads it. */
  confPath: string
  /** The provider's section of cluster.json (its module's nodeConfig): the factory checks it. */
  section: unknown
  /** Tests and benchmarks only (stand-in.ts): doubles and shorter limits. */
  standIn?: DriverStandIn
}

/** A provider's node driver, made from its input (a module's nodeDriver() resolves to one). */
export type NodeDriverFactory = (input: DriverInput) => NodeDriver

/** A context with the real clock, for callers that do not inject one. */
export function realContext(log: (message: string) => void, budgetMs: number): DriverContext {
  return {log, now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), deadline: Date.now() + budgetMs}
}
