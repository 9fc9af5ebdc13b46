import {Args} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {clusterRegistry} from '../lib/cluster/registry.js'
import {destroyLocal} from '../lib/tasks/destroy-local.js'

export default class Destroy extends BaseCommand<typeof Destroy> {
  static summary = 'Take a cluster away: power down every node, stop its daemons, remove what citc created'
  static description = `Asks you to type the cluster's name (or --yes). Local clusters: every slurmd node is stopped, then slurmctld, slurmdbd and the services citc started; the configuration, state, accounting and directory data and /mnt/shared are removed. Packages installed with apt stay installed. citc's state for the cluster is deleted only after all of that succeeded, so a failed destroy can be run again.`

  static examples = ['<%= config.bin %> destroy lab', '<%= config.bin %> destroy lab --yes --json']
  static args = {name: Args.string({description: 'the cluster (default: -c, or the only cluster)'})}

  async run() {
    const name = clusterRegistry(this.config.dataDir).resolveName(this.args.name ?? this.flags.cluster)
    return destroyLocal(this.io(), name, this.config.dataDir, this.config.root)
  }
}
