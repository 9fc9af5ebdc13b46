// The local provider: this machine is the management node, and compute nodes are slurmd processes
// the node driver starts here (driver.ts). No cloud part: no Terraform, credentials or sweeper.
import type {ProviderModule} from '../module.js'
import {localNodeConfig, type LocalNodeConfig} from './node-config.js'

export const localModule: ProviderModule<'local', LocalNodeConfig> = {
  name: 'local',
  title: 'this machine, no cloud account',
  shapes: async () => {
    const {localCatalogue} = await import('./shapes.js')
    return (opts = {}) => localCatalogue(opts.host)
  },
  availabilityDomains: false,
  nodeConfig: localNodeConfig,
  flags: {
    force: {kind: 'boolean', description: 'take over this machine even though a Slurm controller citc did not make is running'},
  },
  nodeDriver: async () => (await import('./driver.js')).localNodeDriver,
  async imageBuilder() {
    const {localImageBuilder} = await import('./image-builder.js')
    return localImageBuilder
  },
}
