// Stand-in GPUs for a local cluster's shape catalogue (tests only): cluster.json's standIn.driver.gpuRoot,
// where the local node driver finds them too (docs/stand-ins.md#gpus). A local cluster's cluster.json is on
// this machine, so finish reads it before connecting, when it validates limits.yaml.
import {readFileSync} from 'node:fs'

import {CLUSTER_JSON} from '../../cluster/management-contract.js'
import {providerModule, type Provider} from '../../providers/registry.js'
import {clusterJsonStandInSchema} from '../../stand-in.js'

/**
 * cluster.json's stand-in GPUs, if it names some. Only that field is read: the node programs check the
 * whole file, and a cluster.json finish cannot read (or none yet, during create) means no stand-in.
 */
export function standInGpuRoot(clusterJson: string | undefined): string | undefined {
  if (!clusterJson) return undefined
  try {
    const parsed = clusterJsonStandInSchema.safeParse((JSON.parse(clusterJson) as {standIn?: unknown}).standIn ?? {})
    return parsed.success ? parsed.data.driver?.gpuRoot : undefined
  } catch {
    return undefined
  }
}

/** A this-machine provider's (local's) stand-in GPUs from this machine's cluster.json; clouds: none. */
export function thisMachineGpuRoot(provider: Provider, clusterJson = CLUSTER_JSON): string | undefined {
  if (providerModule(provider).managementNode !== 'this-machine') return undefined
  let text: string
  try {
    text = readFileSync(clusterJson, 'utf8')
  } catch {
    return undefined
  }
  return standInGpuRoot(text)
}
