// Node name → shape, from what slurmctld knows: each citc node carries its shape in its Features
// ("shape=c5.xlarge,arch=x86_64,…", written by finish). The usage report needs it to turn a job's
// node list into node-hours per shape. Pure: the command fetches the nodes (Controller.nodes()).
import {featureValue} from '../slurm/nodes.js'

/**
 * The shape of every node with a shape= feature. Nodes without one (added by hand, or gone from
 * slurm.conf since a job ran on them) are left out: the report counts them as of unknown shape.
 */
export function nodeShapeMap(nodes: readonly {name: string; features?: string}[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const n of nodes) {
    const shape = featureValue(n.features, 'shape')
    if (shape) out.set(n.name, shape)
  }
  return out
}
