// limits → the files finish writes. Pure: the caller brings the limits, catalogue and current files.
import type {Limits} from './limits-types.js'
import type {ShapeCatalogue} from '../shapes/types.js'
import {buildNodeGroups, type NodeGroup, nodeName, type PartitionDef} from './nodes.js'
import type {SlurmProfile} from './profile.js'
import {type BaseInput, type ElasticSettings, mergeSlurmConf, renderBase, renderGresConf, renderManagedBlock, chainedPrologs, sitePrologSlurmctld} from './render.js'

export interface Generated {
  groups: NodeGroup[]
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
  const {groups, partitions} = buildNodeGroups(input.limits, {
    clusterId: input.clusterId,
    provider: input.provider,
    catalogue: input.catalogue,
    sharedNodeAddress: input.slurm.sharedNodeAddress,
  })
  const block = renderManagedBlock({
    slurm: input.slurm,
    groups,
    partitions,
    elastic: input.elastic,
    settings: input.limits.settings,
    // limits.yaml's slurm: PrologSlurmctld, else one the cluster's slurm.conf already runs.
    chainedPrologSlurmctld:
      input.limits.prologSlurmctld !== undefined
        ? chainedPrologs(input.limits.prologSlurmctld, input.elastic.programsDir)
        : sitePrologSlurmctld(input.current, input.elastic.programsDir),
  })
  const slurmConf = mergeSlurmConf(input.current ?? renderBase(input.base, input.slurm), block)
  return {groups, partitions, block, slurmConf, gresConf: renderGresConf(groups)}
}

/** The `nodes` document of `finish --json`: one entry per node, as scripts expect. */
export function* nodeDocuments(groups: NodeGroup[]) {
  for (const g of groups) {
    for (let i = 1; i <= g.count; i++) {
      yield {
        name: nodeName(g.prefix, i),
        shape: g.shape,
        ad: g.ad ?? null,
        cpus: g.cpus,
        realMemory: g.realMemory,
        features: g.features,
        gres: g.gpu ? `gpu:${g.gpu.model}:${g.gpu.count}` : null,
        partitions: g.partitions,
      }
    }
  }
}
