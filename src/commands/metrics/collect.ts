// `citc metrics collect`: the collector (src/lib/tasks/metrics/collect-main.ts). A hidden node program
// like `citc node sync`: run by the citc-metrics timer or service on the management node, as the Slurm user.
import {Command, Flags} from '@oclif/core'

export default class MetricsCollect extends Command {
  static hidden = true
  static summary = "Write the cluster's Slurm metrics (citc.prom) and the powered-on nodes (nodes.json) for Prometheus"
  static description = `Run every 30 s on the management node by the citc-metrics timer (or its service's --every loop where systemd does not run), as the Slurm user. Each run makes three Slurm calls (scontrol show node, one squeue, sdiag), whatever the number of nodes and jobs, and writes into cluster.json's monitoring.dir: citc.prom (node_exporter's textfile directory) and nodes.json (Prometheus's list of compute nodes to scrape). When slurmctld does not answer, citc.prom says citc_slurm_up 0 and keeps the last figures, and the run still exits 0; the elastic log (/var/log/citc/elastic.log) says when that starts and ends.`
  static examples = [
    {description: 'One run, as the timer does', command: '<%= config.bin %> metrics collect'},
    {description: 'Keep running, one run every 30 s (the service where systemd does not run)', command: '<%= config.bin %> metrics collect --every 30'},
  ]
  static flags = {
    every: Flags.integer({min: 1, helpValue: 'SECONDS', description: 'keep running: one run every SECONDS until stopped (SIGTERM or SIGINT end it, exit 0)'}),
    // Tests and benchmarks only: docs/stand-ins.md, src/lib/stand-in.ts.
    'stand-in': Flags.string({hidden: true, description: 'a stand-in file (tests): another cluster.json'}),
  }

  async run() {
    const {flags} = await this.parse(MetricsCollect)
    const {metricsCollectMain} = await import('../../lib/tasks/metrics/collect-main.js')
    const code = await metricsCollectMain({every: flags.every, standInFile: flags['stand-in']})
    if (code !== 0) this.exit(code)
  }
}
