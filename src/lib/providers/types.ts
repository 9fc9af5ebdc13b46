// The node driver interface: what Slurm's power saving needs from a provider. One per provider
// (local first; aws, google, oracle fit the same shape). Called by `citc node resume|suspend|fail`
// on the management node, with the nodes' shape/AD/arch read back from their Slurm features.

export interface NodeSpec {
  name: string
  shape: string
  ad?: number
  arch?: string
}

export interface NodeOutcome {
  name: string
  ok: boolean
  /** Why it failed, in one line a user can act on (reported to Slurm as the node's reason). */
  error?: string
}

export interface NodeDriver {
  /** Start every node; never throws for one node's failure: each outcome says. */
  resume(nodes: NodeSpec[], log: (message: string) => void): Promise<NodeOutcome[]>
  /** Stop every node, making sure it is gone. */
  suspend(nodes: NodeSpec[], log: (message: string) => void): Promise<NodeOutcome[]>
  /** Every node the provider has running for this cluster (for destroy and orphan checks). */
  running(): Promise<string[]>
}
