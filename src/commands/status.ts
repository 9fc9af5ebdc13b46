import {BaseCommand} from '../lib/base-command.js'
import {clusterStatus, nodeTable} from '../lib/tasks/status.js'

export default class Status extends BaseCommand<typeof Status> {
  static summary = 'Show a cluster: its controller’s health and every node, powered-down ones included'
  static examples = ['<%= config.bin %> status', '<%= config.bin %> status -c demo --json']

  async run() {
    const doc = await clusterStatus(this.config.dataDir, this.flags.cluster)
    this.log(`Cluster ${doc.cluster} (${doc.provider}, ${doc.origin}) — management node: ${doc.managementNode}`)
    this.log(`Controller: ${doc.controller.up ? 'UP' : 'NOT ANSWERING'} (${doc.controller.confPath})`)
    const s = doc.summary
    this.log(`Nodes: ${doc.nodes.length} (${s.up} up, ${s['powering-up']} starting, ${s['powering-down']} stopping, ${s.down} powered down)\n`)
    this.log(nodeTable(doc.nodes))
    return doc
  }
}
