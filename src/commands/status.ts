import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'

export default class Status extends BaseCommand<typeof Status> {
  static summary = 'Show a cluster: its controller’s health and every node, powered-down ones included'
  static description = `Cloud clusters also show their region, zone and the Terraform outputs (in --json); a management node that cannot be reached is reported, not an error.

With --watch the status is asked again every --interval seconds (default 10, at least 5) until Ctrl-C, over one session with the management node kept open between refreshes (a refresh that fails shows its error and the next one connects again). On a terminal it is redrawn in place; piped, each refresh follows the last under a timestamped header line; with --json each refresh is one JSON document on one line (NDJSON), the same as status --json plus "refreshedAt". Prometheus is not needed: the figures come from Slurm.`

  static examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status -c demo --json',
    '<%= config.bin %> status --watch',
    '<%= config.bin %> status -c demo --watch --interval 30',
    '<%= config.bin %> status --watch --json | jq -c \'{refreshedAt, summary}\'',
  ]

  static flags = {
    watch: Flags.boolean({description: 'refresh the status every --interval seconds until Ctrl-C (with --json: one document per line per refresh)'}),
    interval: Flags.integer({min: 5, dependsOn: ['watch'], description: 'seconds between two refreshes of --watch (default 10, at least 5)'}),
  }

  async run() {
    if (this.flags.watch) {
      const {DEFAULT_INTERVAL_S, watchStatus} = await import('../lib/tasks/status/watch.js')
      await watchStatus({dataDir: this.config.dataDir, cluster: this.flags.cluster, intervalS: this.flags.interval ?? DEFAULT_INTERVAL_S, json: this.jsonEnabled(), out: process.stdout})
      return
    }
    const {clusterStatus} = await import('../lib/tasks/status/cluster-status.js')
    const {statusText} = await import('../lib/tasks/status/status-text.js')
    const doc = await clusterStatus(this.config.dataDir, this.flags.cluster)
    this.log(statusText(doc))
    return doc
  }
}
