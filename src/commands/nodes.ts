import {BaseCommand} from '../lib/base-command.js'
import {remoteError} from '../lib/errors.js'

export default class Nodes extends BaseCommand<typeof Nodes> {
  static summary = 'List every node of a cluster with its state, powered-down ones included'
  static examples = ['<%= config.bin %> nodes', '<%= config.bin %> nodes -c demo --json']

  async run() {
    const {clusterStatus, nodeTable, waitingJobsText} = await import('../lib/tasks/status/cluster-status.js')
    const doc = await clusterStatus(this.config.dataDir, this.flags.cluster, 'citc nodes')
    // No list without the controller: an empty table would read as "no nodes".
    if (!doc.controller.up) {
      throw remoteError(`cannot list the nodes of ${doc.cluster}: ${doc.controller.error ?? `slurmctld does not answer (${doc.controller.confPath})`}`, {
        hint: `\`citc status -c ${doc.cluster}\` shows what citc knows without it`,
      })
    }
    this.log(nodeTable(doc.nodes) + waitingJobsText(doc))
    return {cluster: doc.cluster, nodes: doc.nodes, waitingJobs: doc.waitingJobs, ...(doc.waitingJobsError ? {waitingJobsError: doc.waitingJobsError} : {})}
  }
}
