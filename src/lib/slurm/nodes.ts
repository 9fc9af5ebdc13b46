// From validated limits and a shape catalogue to node groups: one group per shape (and AD on oracle),
// which becomes exactly one NodeName line. Pure: no I/O.
import type {Limits, LimitsEntry, PartitionSpec, StaticNodeSpec} from './limits-types.js'
import type {Arch, Gpu, Shape, ShapeCatalogue} from '../shapes/types.js'
import type {SlurmProfile} from './profile.js'

export const DEFAULT_PARTITION = 'compute'
/** Slurm's largest usable node Weight. */
export const MAX_WEIGHT = 65_533
/** Node names have four digits (CitC's `-NNNN`): at most this many nodes per group. */
export const MAX_COUNT = 9999

export interface NodeGroup {
  shape: string
  ad?: number
  count: number
  /** Node name prefix, e.g. "demo-c5-xlarge" (names are prefix-0001 …). */
  prefix: string
  /** Compressed hostlist of every node in the group, e.g. "demo-c5-xlarge-[0001-0004]". */
  hostlist: string
  sockets: number
  coresPerSocket: number
  threadsPerCore: number
  cpus: number
  realMemory: number
  arch: Arch
  gpu?: Gpu
  /** Node features in order: shape=…, ad=… (providers with availability domains), arch=…, then the user's extra ones. */
  features: string[]
  weight: number
  partitions: string[]
  /** Nodes sharing one address (SlurmProfile.sharedNodeAddress): it, and the slurmd port of the group's first node (one port per node). */
  sharedAddress?: {addr: string; firstPort: number}
}

/** A joined machine (limits.yaml's static:) as slurm.conf describes it: one static NodeName line. */
export interface StaticNode {
  name: string
  /** NodeAddr. */
  address: string
  /** The management node's address as the machine reaches it (SlurmctldHost's addr). */
  controller: string
  sockets: number
  coresPerSocket: number
  threadsPerCore: number
  cpus: number
  realMemory: number
  /** "static", then the user's extra ones. */
  features: string[]
  weight: number
  partitions: string[]
}

/** A joined machine's Weight when limits.yaml gives none: lower than any elastic group's, so it fills first. */
export const STATIC_WEIGHT = 1

export interface PartitionDef {
  name: string
  default: boolean
  maxTime?: string
  options: Record<string, string>
  /** Hostlists of the groups in this partition, then the joined machines' names (empty = no nodes). */
  nodes: string[]
}

/** CitC's name rule: shape lower-cased, "." and "_" become "-"; the cluster id always leads. */
export function nodePrefix(clusterId: string, shape: string, ad?: number): string {
  const s = shape.toLowerCase().replace(/[._]/g, '-')
  return ad === undefined ? `${clusterId}-${s}` : `${clusterId}-${s}-ad${ad}`
}

/** Node numbers: four digits, zero padded, from 1, as CitC. */
const nodeNumber = (n: number) => String(n).padStart(4, '0')

/** Name of the n-th node (1-based) of a prefix. */
export const nodeName = (prefix: string, n: number) => `${prefix}-${nodeNumber(n)}`

/**
 * Hostlist of nodes 1..count of a prefix, without building the names (a hot path at 100k nodes).
 * One range is always valid: limits.yaml caps a count at 9,999, far below Slurm's 65,536 per range.
 */
export function groupHostlist(prefix: string, count: number): string {
  return count === 1 ? nodeName(prefix, 1) : `${prefix}-[${nodeNumber(1)}-${nodeNumber(count)}]`
}

/**
 * One value of a node's Features ("shape=c5.xlarge,ad=2,arch=x86_64,…"), which is how the node
 * programs, the plan and status learn a node's shape, AD and arch back from Slurm.
 */
export function featureValue(features: string | undefined, key: string): string | undefined {
  return (features ?? '')
    .split(',')
    .find((f) => f.startsWith(key + '='))
    ?.slice(key.length + 1)
}

/**
 * Smaller and cheaper shapes get lower weights, so Slurm fills them first. Derived from the shape
 * alone (not from its rank among the others) so adding a shape never changes the other groups' lines.
 */
export function shapeWeight(shape: Shape): number {
  const cpus = shape.sockets * shape.coresPerSocket * shape.threadsPerCore
  const gib = Math.ceil(shape.realMemoryMiB / 1024)
  const w = 1 + cpus * 64 + gib + (shape.gpu?.count ?? 0) * 4096
  return Math.min(MAX_WEIGHT, w)
}

export interface BuildOptions {
  clusterId: string
  /** The provider's name (for messages). */
  provider: string
  catalogue: ShapeCatalogue
  /** The provider's nodes share one address and are told apart by port. */
  sharedNodeAddress?: SlurmProfile['sharedNodeAddress']
}

/**
 * Nodes sharing one address: each shape has its own range of ports, in catalogue order, so growing one
 * group never moves another group's ports (which would redefine nodes that may be running). A shape has
 * MAX_COUNT ports, or as many as its nodes can be when its GPUs are one machine's devices (at most
 * devices / GPUs per node): a handful of GPU shapes after the CPU ones still ends far below port 65,535.
 */
export function shapePortOffsets(catalogue: ShapeCatalogue): Map<string, number> {
  const offsets = new Map<string, number>()
  let next = 0
  for (const name of catalogue.names()) {
    offsets.set(name, next)
    const gpu = catalogue.get(name)?.gpu
    next += gpu?.devices ? Math.max(1, Math.floor(gpu.devices.length / gpu.count)) : MAX_COUNT
  }
  return offsets
}

export function buildNodeGroups(limits: Limits, opts: BuildOptions): {groups: NodeGroup[]; staticNodes: StaticNode[]; partitions: PartitionDef[]} {
  const partitionSpecs: PartitionSpec[] =
    limits.partitions.length > 0 ? limits.partitions : [{name: DEFAULT_PARTITION, default: true, options: {}}]
  const defaultPartition = (partitionSpecs.find((p) => p.default) ?? partitionSpecs[0]).name

  const shared = opts.sharedNodeAddress
  const portOffsets = shared ? shapePortOffsets(opts.catalogue) : new Map<string, number>()
  const groups = limits.entries.map((entry) => {
    const group = toGroup(entry, opts, defaultPartition)
    if (shared) group.sharedAddress = {addr: shared.addr, firstPort: shared.firstPort + portOffsets.get(entry.shape)!}
    return group
  })

  const staticNodes = limits.staticNodes.map((spec) => toStaticNode(spec, defaultPartition))

  const partitions = partitionSpecs.map((p) => ({
    name: p.name,
    default: p.name === defaultPartition,
    maxTime: p.maxTime,
    options: p.options,
    nodes: [...groups.filter((g) => g.partitions.includes(p.name)).map((g) => g.hostlist), ...staticNodes.filter((n) => n.partitions.includes(p.name)).map((n) => n.name)],
  }))
  return {groups, staticNodes, partitions}
}

function toStaticNode(spec: StaticNodeSpec, defaultPartition: string): StaticNode {
  const h = spec.hardware
  return {
    name: spec.name,
    address: spec.address,
    controller: spec.controller,
    sockets: h.sockets,
    coresPerSocket: h.coresPerSocket,
    threadsPerCore: h.threadsPerCore,
    cpus: h.sockets * h.coresPerSocket * h.threadsPerCore,
    realMemory: h.realMemory,
    features: ['static', ...(spec.features ?? [])],
    weight: spec.weight ?? STATIC_WEIGHT,
    partitions: spec.partitions ?? [defaultPartition],
  }
}

function toGroup(entry: LimitsEntry, opts: BuildOptions, defaultPartition: string): NodeGroup {
  const shape = opts.catalogue.get(entry.shape)
  // parseLimits has already refused unknown shapes; reaching this is a bug, not bad input.
  if (!shape) throw new Error(`internal: shape ${entry.shape} vanished from the ${opts.provider} catalogue`)
  const prefix = nodePrefix(opts.clusterId, entry.shape, entry.ad)
  const gpu = entry.gpu ?? shape.gpu
  return {
    shape: entry.shape,
    ad: entry.ad,
    count: entry.count,
    prefix,
    hostlist: groupHostlist(prefix, entry.count),
    sockets: shape.sockets,
    coresPerSocket: shape.coresPerSocket,
    threadsPerCore: shape.threadsPerCore,
    cpus: shape.sockets * shape.coresPerSocket * shape.threadsPerCore,
    realMemory: shape.realMemoryMiB,
    arch: shape.arch,
    gpu,
    features: [
      `shape=${entry.shape}`,
      ...(entry.ad === undefined ? [] : [`ad=${entry.ad}`]),
      `arch=${shape.arch}`,
      ...(entry.features ?? []),
    ],
    weight: entry.weight ?? shapeWeight(shape),
    partitions: entry.partitions ?? [defaultPartition],
  }
}
