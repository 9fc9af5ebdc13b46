// What a kind of cluster needs of Slurm beyond its node limits. Each provider module's `slurm` part
// (providers/module.ts) is one of these; finish hands it to the renderers (render.ts, nodes.ts), which
// then never ask which provider a cluster is on.

/** Slurm's power saving: seconds, and nodes per minute (0: no limit). */
export interface PowerTimings {
  /** Seconds a node stays idle before it is powered down. */
  suspendTime: number
  resumeTimeout: number
  suspendTimeout: number
  resumeRate: number
  suspendRate: number
}

export interface SlurmProfile {
  /** SlurmUser: the account slurmctld runs as. */
  user: string
  /**
   * The address nodes reach slurmctld on whatever the management node's name resolves to
   * (SlurmctldHost=name(addr)); undefined: its name.
   */
  controllerAddr?: string
  /** Power-saving defaults (a cluster's own settings override the timings). */
  power: PowerTimings
  /** Nodes come back from a power cycle with another address: slurmctld takes the one a node registers from (cloud_reg_addrs). */
  nodesRegisterAddress: boolean
  /** ProctrackType, TaskPlugin and JobAcctGatherType: how slurmd tracks and confines a job's processes. */
  plugins: {proctrack: string; task: string; jobacctGather: string}
  /**
   * Elastic nodes that share one address and are told apart by port (slurmd processes on one machine):
   * the address, and the first port of the first shape's range (nodes.ts gives each shape its own).
   * Undefined: every node has an address of its own. It concerns the provider's elastic groups (the
   * ones limits.yaml makes); another kind of group carries its own addresses (NodeGroup.sharedAddress
   * is per group, and the renderer reads only that).
   */
  sharedNodeAddress?: {addr: string; firstPort: number}
}
