// `citc destroy NAME`: the workflow of the cluster's provider module's kind of management node — this
// machine (stop the daemons citc started, remove its configuration) or a cloud VM (power down,
// terminate by tag, terraform destroy, sweep). Each is imported only when it runs.
import {clusterRegistry} from '../../cluster/registry.js'
import type {Io} from '../../io.js'
import {providerModule} from '../../providers/registry.js'

export interface DestroyOptions {
  /** Clouds: do not look for instances or leftovers tagged with the cluster. */
  skipSweep: boolean
}

export async function destroyCluster(io: Io, name: string, dataDir: string, packageRoot: string, options: DestroyOptions): Promise<object> {
  switch (providerModule(clusterRegistry(dataDir).get(name).provider).managementNode) {
    case 'this-machine': {
      const {destroyLocal} = await import('./destroy-local.js')
      return destroyLocal(io, name, dataDir, packageRoot)
    }
    case 'cloud-vm': {
      const {destroyCloud} = await import('./destroy-cloud.js')
      return destroyCloud(io, name, dataDir, options)
    }
  }
}
