import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {EXIT_CODES} from '../lib/errors.js'
import {PROVIDER_NAMES} from '../lib/providers/registry.js'

export default class Doctor extends BaseCommand<typeof Doctor> {
  static summary = 'Check the tools citc needs (and their versions) and the cloud credentials it finds; with -c, a cluster’s monitoring'
  static description = `Node.js >= 20; Terraform >= 1.5 or OpenTofu and npm for clouds; ansible-playbook for local; ssh and
ssh-keygen; the clouds' CLIs destroy's sweep uses (aws, gcloud, oci); and, per cloud, the credentials
found in the environment and the usual files, and the one citc would use. Without a cluster nothing goes
over the network.

With -c NAME (or CITC_CLUSTER), also that cluster's monitoring, where it runs (this machine for a local
cluster, else over SSH to its management node): the collector is fresh (citc.prom's last success
within 3 collection intervals, and slurmctld answered it), Prometheus answers, and each of its targets
that is down with its last error. A cluster made with --no-monitoring has none, which is no failure.

Exits ${EXIT_CODES.remote} when a required tool is missing or the monitoring needs attention (the report says what to do).`

  static examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --provider aws', '<%= config.bin %> doctor -c demo', '<%= config.bin %> doctor --json']

  static flags = {
    provider: Flags.option({char: 'p', options: PROVIDER_NAMES, multiple: true, description: 'check only what these providers need (default: all)'} as const)(),
    // Tests only: another cluster.json than /etc/citc/cluster.json for a local cluster. docs/stand-ins.md, src/lib/stand-in.ts.
    'stand-in': Flags.string({hidden: true, description: 'a stand-in file (tests): its clusterJson instead of /etc/citc/cluster.json'}),
  }

  async run() {
    const {ALL_SCOPES, doctor, doctorLines, withMonitoring} = await import('../lib/tasks/doctor/check-machine.js')
    let report = await doctor(this.flags.provider ?? ALL_SCOPES)
    if (this.flags.cluster) {
      const {checkMonitoring} = await import('../lib/tasks/doctor/check-monitoring.js')
      const {readStandInFile} = await import('../lib/stand-in.js')
      const clusterJson = this.flags['stand-in'] ? readStandInFile(this.flags['stand-in']).clusterJson : undefined
      report = withMonitoring(report, await checkMonitoring(this.config.dataDir, this.flags.cluster, clusterJson ? {clusterJson} : {}))
    }
    if (report.ok) {
      for (const l of doctorLines(report)) this.log(l)
      return report
    }
    if (this.jsonEnabled()) this.logJson(report)
    else for (const l of doctorLines(report)) this.log(l)
    this.exit(EXIT_CODES.remote)
  }
}
