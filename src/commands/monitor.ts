import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {usageError} from '../lib/errors.js'

export default class Monitor extends BaseCommand<typeof Monitor> {
  static summary = "Watch a cluster over time: a page of charts from its Prometheus, served on this machine, or one PromQL query"

  static description = `Reaches the cluster's Prometheus (on the management node, loopback only: this machine for a local cluster, an SSH tunnel with the pinned host key for a cloud one) and serves one page on 127.0.0.1 behind a random token: nodes by power and state, jobs running and pending, the oldest wait, node start failures by reason, CPUs allocated of total, a table of nodes, and the management node's CPU, memory and disk. It refreshes itself every 15 s. The URL printed (token included) is the key: anyone on this machine with it can read the page. Runs until Ctrl-C.

With --query, prints one PromQL instant query's result instead (--json: {cluster, query, data}, data being Prometheus's own) and starts no server.

Clusters created with --no-monitoring have no Prometheus.`

  static examples = [
    {description: 'Serve the page and open a browser', command: '<%= config.bin %> monitor'},
    {description: 'On a fixed port, without a browser (e.g. over `ssh -L` from your laptop)', command: '<%= config.bin %> monitor -c prod --port 8765 --no-open'},
    {description: 'Nodes by power state, now', command: `<%= config.bin %> monitor --query 'count by (power) (citc_slurm_node_info)'`},
    {description: 'Pending jobs, for a script', command: `<%= config.bin %> monitor -c prod --query 'sum(citc_slurm_jobs{state="pending"})' --json`},
  ]

  static flags = {
    port: Flags.integer({min: 1, max: 65535, description: 'serve the page on this port of 127.0.0.1 (default: a free one)'}),
    open: Flags.boolean({allowNo: true, description: 'open the page in a browser (default: on; never without DISPLAY, nor in CI)'}),
    query: Flags.string({description: 'print the result of one PromQL instant query instead of serving the page'}),
  }

  async run() {
    const {monitorQuery, monitorServe} = await import('../lib/monitoring/monitor.js')
    const f = this.flags
    if (f.query !== undefined) return monitorQuery(this.io(), {dataDir: this.config.dataDir, cluster: f.cluster, query: f.query})
    // The page runs until Ctrl-C: a JSON document would come only at the end, without the URL in time.
    if (this.jsonEnabled()) throw usageError('--json goes with --query: the page server prints its URL for people', 'add --query PROMQL, or leave out --json')
    return monitorServe(this.io(), {dataDir: this.config.dataDir, cluster: f.cluster, port: f.port, open: f.open !== false})
  }
}
