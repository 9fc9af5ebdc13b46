// What the steps of a cloud create share (create-cloud.ts builds it): the cluster, Terraform, the
// plan, and — once the SSH step connected — the management node.
import type {ClusterPaths} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import type {CloudProvider} from '../../providers/cloud.js'
import type {PlanSummary, Terraform, TerraformTool} from '../../tools/terraform.js'
import type {SshTransport} from '../../transport/ssh/index.js'
import type {PinnedKnownHosts} from '../../transport/ssh-command.js'
import type {Transport} from '../../transport/types.js'
import type {CreateCloudOptions} from './create-cloud.js'
import type {ManagementContext} from './management-steps.js'

/** The management node as the SSH step left it; closed when the workflow ends. */
export interface ManagementNodeSession {
  ssh?: SshTransport
  /** Root on the node, every command logged (logs/create-<stamp>.log). */
  root?: Transport
  /** Root without the command log: ansible-playbook's output has its own log. */
  rootUnlogged?: Transport
  /** The private directory on the node that uploads go to (made when first needed). */
  uploadDir?: string
  /** The known_hosts file of the pinned key the SSH step wrote (what `citc ssh` uses). */
  knownHosts?: PinnedKnownHosts
}

export interface CloudCreateContext extends ManagementContext {
  name: string
  provider: CloudProvider
  paths: ClusterPaths
  /** Change the cluster's record in the registry; returns it as written. */
  update(change: (record: ClusterRecord) => void): ClusterRecord
  tool: TerraformTool
  tf: Terraform
  /** The plan: this run's, or the one an earlier run journaled (when it got as far as apply). */
  plan?: PlanSummary
  /** What the ssh, install and playbook steps take from create's options. */
  opts: Pick<CreateCloudOptions, 'standIn' | 'sshTimeoutS' | 'packageRoot'>
  node: ManagementNodeSession
}

/** The node's session: the SSH step runs in every run (`always`), before every step that needs it. */
export function connected(node: ManagementNodeSession): Required<Omit<ManagementNodeSession, 'uploadDir' | 'knownHosts'>> {
  // A bug, not a user's problem: a step was ordered before the SSH step.
  if (!node.ssh || !node.root || !node.rootUnlogged) throw new Error('cloud create: a step needs the management node before the SSH step connected')
  return {ssh: node.ssh, root: node.root, rootUnlogged: node.rootUnlogged}
}
