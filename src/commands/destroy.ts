import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'

export default class Destroy extends BaseCommand<typeof Destroy> {
  static summary = 'Take a cluster away: power down every node, then remove everything citc made for it'
  static description = `Asks you to type the cluster's name (or --yes).

Cloud clusters: every running compute node is powered down through the management node (a dead
management node is a warning: the next step finds its machines), then compute instances still tagged
cluster=<name> are terminated (before Terraform deletes the network they use), then \`terraform
destroy\` removes what Terraform made, then a sweep deletes what is still tagged (images, snapshots,
stray instances) — both sweeps with the cloud's CLI (aws, gcloud or oci) and the same credentials.
A cluster registered with \`citc cluster add\` was not made by citc: \`citc cluster remove\` forgets it.

Local clusters: every slurmd node is stopped, then slurmctld, slurmdbd and the services citc started;
the configuration, state, accounting and directory data and /mnt/shared are removed. Packages
installed with apt stay installed.

citc's state for the cluster is deleted only after all of that succeeded, so a failed destroy says
what remains and can be run again.`

  static examples = [
    '<%= config.bin %> destroy lab',
    '<%= config.bin %> destroy lab --yes --json',
    {description: 'A cloud cluster, when its leftovers were checked by hand', command: '<%= config.bin %> destroy lab --yes --skip-sweep'},
  ]

  static args = {name: Args.string({description: 'the cluster (default: -c, or the only cluster)'})}
  static flags = {
    'skip-sweep': Flags.boolean({default: false, description: 'clouds: do not look for instances or leftovers tagged with the cluster (only after checking yourself)'}),
  }

  async run() {
    const {clusterRegistry} = await import('../lib/cluster/registry.js')
    const {destroyCluster} = await import('../lib/tasks/destroy/destroy-cluster.js')
    const name = clusterRegistry(this.config.dataDir).resolveName(this.args.name ?? this.flags.cluster)
    return destroyCluster(this.io(), name, this.config.dataDir, this.config.root, {skipSweep: this.flags['skip-sweep']})
  }
}
