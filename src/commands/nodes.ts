import {BaseCommand} from '../lib/base-command.js'
import {clusterStatus, nodeTable} from '../lib/tasks/status.js'

export default class Nodes extends BaseCommand<typeof Nodes> {
  static summary = 'List every node of a cluster with its state, powered-down ones included'
  static examples = ['<%= config.bin %> nodes', '<%= config.bin %> nodes -c demo --json']

  async run() {
    const doc = await clusterStatus(this.config.dataDir, this.flags.cluster)
    this.log(nodeTable(doc.nodes))
    return {cluster: doc.cluster, nodes: doc.nodes}
  }
}
