import {BaseCommand} from '../lib/base-command.js'

export default class Status extends BaseCommand<typeof Status> {
  static summary = 'Show a cluster: its controller’s health and every node, powered-down ones included'
  static description = 'Cloud clusters also show their region, zone and the Terraform outputs (in --json); a management node that cannot be reached is reported, not an error.'
  static examples = ['<%= config.bin %> status', '<%= config.bin %> status -c demo --json']

  async run() {
    const {clusterStatus, controllerInfoText, needsAdminText, nodeTable, waitingJobsText} = await import('../lib/tasks/status/cluster-status.js')
    const doc = await clusterStatus(this.config.dataDir, this.flags.cluster)
    this.log(`Cluster ${doc.cluster} (${doc.provider}, ${doc.origin}) — management node: ${doc.managementNode}`)
    if (doc.cloud) this.log(`Cloud: ${doc.cloud.region}${doc.cloud.zone ? ` / ${doc.cloud.zone}` : ''}${doc.cloud.project ? ` (project ${doc.cloud.project})` : ''}, management shape ${doc.cloud.mgmtShape}${doc.phase === 'creating' ? ' — create has not finished (citc create --resume)' : ''}`)
    this.log(`Controller: ${doc.controller.up ? 'UP' : 'NOT ANSWERING'}${doc.controllerInfo?.version ? `, Slurm ${doc.controllerInfo.version}` : ''} (${doc.controller.confPath})${doc.controller.error ? ` — ${doc.controller.error}` : ''}`)
    const s = doc.summary
    this.log(`Nodes: ${doc.nodes.length} (${s.up} up, ${s['powering-up']} starting, ${s['powering-down']} stopping, ${s.down} powered down)\n`)
    this.log(nodeTable(doc.nodes) + controllerInfoText(doc) + waitingJobsText(doc) + needsAdminText(doc))
    return doc
  }
}
