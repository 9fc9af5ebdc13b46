// limits → the files finish writes. Pure: the caller brings the limits, catalogue and current files.
import type {Limits} from './limits-types.js'
import type {ShapeCatalogue} from '../shapes/types.js'
import {buildNodeGroups, type NodeGroup, nodeName, type PartitionDef, type StaticNode} from './nodes.js'
import type {SlurmProfile} from './profile.js'
import {
  type BaseInput,
  chainedPrologs,
  type ElasticSettings,
  extractManagedBlock,
  mergeSlurmConf,
  renderBase,
  renderGresConf,
  renderManagedBlock,
  sitePrologSlurmctld,
  withSlurmctldHost,
} from './render.js'

export interface Generated {
  groups: NodeGroup[]
  /** Joined machines (limits.yaml's static:). */
  staticNodes: StaticNode[]
  partitions: PartitionDef[]
  block: string
  slurmConf: string
  gresConf: string
}

export function generateConfig(input: {
  provider: string
  /** What the provider needs of Slurm (its module's `slurm` part). */
  slurm: SlurmProfile
  clusterId: string
  limits: Limits
  catalogue: ShapeCatalogue
  elastic: ElasticSettings
  /** The slurm.conf the cluster has now; without one, a new base is rendered from `base`. */
  current?: string
  base: BaseInput
}): Generated {
  const {groups, staticNodes, partitions} = buildNodeGroups(input.limits, {
    clusterId: input.clusterId,
    provider: input.provider,
    catalogue: input.catalogue,
    sharedNodeAddress: input.slurm.sharedNodeAddress,
  })
  const block = renderManagedBlock({
    slurm: input.slurm,
    groups,
    staticNodes,
    partitions,
    elastic: input.elastic,
    settings: input.limits.settings,
    // limits.yaml's slurm: PrologSlurmctld, else one the cluster's slurm.conf already runs.
    chainedPrologSlurmctld:
      input.limits.prologSlurmctld !== undefined
        ? chainedPrologs(input.limits.prologSlurmctld, input.elastic.programsDir)
        : sitePrologSlurmctld(input.current, input.elastic.programsDir),
  })
  const merged = mergeSlurmConf(input.current ?? renderBase(input.base, input.slurm), block)
  // Joined machines reach slurmctld at their controller address; when the last one leaves,
  // SlurmctldHost returns to the provider's. A cluster that never had any keeps its line untouched.
  const hadStatic = hasStaticNodes(input.current)
  const slurmConf =
    staticNodes.length > 0 ? withSlurmctldHost(merged, staticNodes[0].controller) : hadStatic ? withSlurmctldHost(merged, input.base.controllerAddr) : merged
  return {groups, staticNodes, partitions, block, slurmConf, gresConf: renderGresConf(groups)}
}

/** The managed block of a slurm.conf has joined machines (only they turn configless on). */
function hasStaticNodes(conf: string | undefined): boolean {
  const block = conf === undefined ? undefined : extractManagedBlock(conf)
  return block !== undefined && /^SlurmctldParameters=\S*\benable_configless\b/m.test(block)
}

/**
 * The `nodes` document of `finish --json`: one entry per node, as scripts expect; `kind` tells a
 * provider's elastic node from a joined machine (static, which has no shape: null).
 */
export function* nodeDocuments(groups: NodeGroup[], staticNodes: StaticNode[] = []) {
  for (const g of groups) {
    for (let i = 1; i <= g.count; i++) {
      yield {
        name: nodeName(g.prefix, i),
        kind: 'elastic' as 'elastic' | 'static',
        shape: g.shape,
        ad: g.ad ?? null,
        cpus: g.cpus,
        realMemory: g.realMemory,
        features: g.features,
        gres: g.gpu ? `gpu:${g.gpu.model}:${g.gpu.count}` : null,
        partitions: g.partitions,
        address: null as string | null,
      }
    }
  }
  for (const n of staticNodes) {
    yield {
      name: n.name,
      kind: 'static' as 'elastic' | 'static',
      shape: null as string | null,
      ad: null,
      cpus: n.cpus,
      realMemory: n.realMemory,
      features: n.features,
      gres: null,
      partitions: n.partitions,
      address: n.address as string | null,
    }
  }
}
