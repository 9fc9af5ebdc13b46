// limits.yaml after parsing and validation (config/limits.ts): what finish turns into slurm.conf. Here, by
// the node model that reads it, so the parser imports the model and not the other way round.
import type {Gpu} from '../shapes/types.js'

export interface LimitsEntry {
  /** Shape name exactly as written (must exist in the provider's catalogue). */
  shape: string
  /** Oracle availability domain (1, 2, 3 …); undefined on other providers. */
  ad?: number
  /** Maximum number of nodes of this shape (in this AD). Positive integer, after any management-node subtraction. */
  count: number
  /** Partitions this shape's nodes join; undefined = the default partition. */
  partitions?: string[]
  /** Slurm Weight override; undefined = derived from the shape (smaller/cheaper first). */
  weight?: number
  /** Extra node features, added after shape=,ad=,arch=. */
  features?: string[]
  /** GPU override (count/model) for shapes the catalogue gets wrong or does not know. */
  gpu?: Gpu
  /** Where the entry was written, "limits.yaml:3:1", for later messages. */
  where: string
}

export interface PartitionSpec {
  name: string
  default: boolean
  /** Slurm MaxTime, e.g. "1-00:00:00" or "UNLIMITED". */
  maxTime?: string
  /** Any other partition options, as Slurm spells them (e.g. {OverSubscribe: "NO"}). */
  options: Record<string, string>
}

/**
 * A machine that already exists and joined the cluster (limits.yaml's static:): one static NodeName
 * line with its own address, never powered down. Added and removed by `citc node add/remove`.
 */
export interface StaticNodeSpec {
  /** Slurm NodeName (^[a-z][a-z0-9-]{0,39}$), never one of the elastic names (`<clusterId>-…`). */
  name: string
  /** NodeAddr: IPv4, IPv6 or DNS name that slurmctld and srun connect to. */
  address: string
  /** The management node's address as this machine reaches it (SlurmctldHost's addr, conf-server, LDAP, NFS). */
  controller: string
  /** How citc logs in: user, port, the pinned host key, and the private key's path on the management node (node add's --key). */
  ssh: {user: string; port: number; hostKey: string; key?: string}
  /** realMemory in MiB as written to slurm.conf. */
  hardware: {sockets: number; coresPerSocket: number; threadsPerCore: number; realMemory: number}
  /** The slurmd version installed (for status). */
  slurmVersion?: string
  shared: 'nfs' | 'none'
  /** Partitions it joins; undefined = the default partition. */
  partitions?: string[]
  /** Extra node features, after "static". */
  features?: string[]
  /** Slurm Weight; undefined = 1. */
  weight?: number
  /** Where the entry was written, "limits.yaml:12:3". */
  where: string
}

export interface Limits {
  entries: LimitsEntry[]
  /** Joined machines (static:), in the order written; [] when there are none. */
  staticNodes: StaticNodeSpec[]
  /** Named partitions; empty = one "compute" partition with every node, Default=YES (as CitC). */
  partitions: PartitionSpec[]
  /** User-seeded slurm.conf settings (never a key citc manages). Key as Slurm spells it. */
  settings: Record<string, string>
  /** limits.yaml's slurm: PrologSlurmctld: the site's own program, chained by citc's (which owns the key). */
  prologSlurmctld?: string
}
