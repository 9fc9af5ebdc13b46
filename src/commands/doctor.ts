import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {EXIT_CODES, usageError} from '../lib/errors.js'
import {MAX_FILES} from '../lib/tasks/doctor/security-collect.js'
import {PROVIDER_NAMES} from '../lib/providers/registry.js'

export default class Doctor extends BaseCommand<typeof Doctor> {
  static summary = 'Check the tools citc needs (and their versions) and the cloud credentials it finds; with -c, a cluster’s monitoring; with --security, what on its management node others can read or reach'
  static description = `Node.js >= 20; Terraform >= 1.5 or OpenTofu and npm for clouds; ansible-playbook for local; ssh and
ssh-keygen; the clouds' CLIs destroy's sweep uses (aws, gcloud, oci); and, per cloud, the credentials
found in the environment and the usual files, and the one citc would use. Without a cluster nothing goes
over the network.

With -c NAME (or CITC_CLUSTER), also that cluster's monitoring, where it runs (this machine for a local
cluster, else over SSH to its management node): the collector is fresh (citc.prom's last success
within 3 collection intervals, and slurmctld answered it), Prometheus answers, and each of its targets
that is down with its last error. A cluster made with --no-monitoring has none, which is no failure.

With --security -c NAME (instead of the checks above), the cluster's management node, as root there:
the listening sockets and who can reach them (loopback, the cluster network, every interface); files
under /etc/citc, /etc/slurm and the shared filesystem that others can read and that are secret, by
name or because they hold one of the cluster's passwords (compared on the node, never shown); the
secret files' modes and owners (/etc/citc/secrets, munge.key, slurmdbd.conf — not on the shared
filesystem); homes others can read or write; NFS exports that do not squash root. Each finding comes
with the command that fixes it. The scan is bounded (homes not entered, files over 1 MiB not read, at
most ${MAX_FILES} entries; the report says when it stopped there).

Exits ${EXIT_CODES.remote} when a required tool is missing, the monitoring needs attention, or (--security) any finding (the report says what to do).`

  static examples = [
    '<%= config.bin %> doctor',
    '<%= config.bin %> doctor --provider aws',
    '<%= config.bin %> doctor -c demo',
    '<%= config.bin %> doctor --json',
    {description: 'What on demo’s management node others can read or reach, with the fixes', command: '<%= config.bin %> doctor --security -c demo'},
  ]

  static flags = {
    security: Flags.boolean({default: false, description: 'check the cluster’s management node instead: sockets, secret files, homes, exports (needs -c NAME or CITC_CLUSTER)'}),
    provider: Flags.option({char: 'p', options: PROVIDER_NAMES, multiple: true, description: 'check only what these providers need (default: all)'} as const)(),
    // Tests only: another cluster.json than /etc/citc/cluster.json for a local cluster. docs/stand-ins.md, src/lib/stand-in.ts.
    'stand-in': Flags.string({hidden: true, description: 'a stand-in file (tests): its clusterJson instead of /etc/citc/cluster.json; with --security, its securityRoot instead of /'}),
  }

  async run() {
    if (this.flags.security) return this.security()
    const {ALL_SCOPES, doctor, doctorLines, withMonitoring} = await import('../lib/tasks/doctor/check-machine.js')
    let report = await doctor(this.flags.provider ?? ALL_SCOPES)
    if (this.flags.cluster) {
      const {checkMonitoring} = await import('../lib/tasks/doctor/check-monitoring.js')
      const {readStandInFile} = await import('../lib/stand-in.js')
      const clusterJson = this.flags['stand-in'] ? readStandInFile(this.flags['stand-in']).clusterJson : undefined
      report = withMonitoring(report, await checkMonitoring(this.config.dataDir, this.flags.cluster, clusterJson ? {clusterJson} : {}))
    }
    return this.verdict(report, doctorLines(report))
  }

  private async security() {
    if (!this.flags.cluster) throw usageError('--security checks one cluster’s management node: say which', 'pass -c NAME (or set CITC_CLUSTER), e.g. citc doctor --security -c demo')
    const {checkSecurity, securityLines} = await import('../lib/tasks/doctor/check-security.js')
    const {readStandInFile} = await import('../lib/stand-in.js')
    const standIn = this.flags['stand-in'] ? readStandInFile(this.flags['stand-in']) : undefined
    const report = await checkSecurity(this.config.dataDir, this.flags.cluster, {
      ...(standIn?.securityRoot ? {root: standIn.securityRoot} : {}),
      ...(standIn?.clusterJson ? {clusterJson: standIn.clusterJson} : {}),
    })
    return this.verdict(report, securityLines(report))
  }

  /**
   * An ok report is the command's result (oclif prints it under --json); one that is not is printed here
   * (this.log says nothing under --json) and the command exits 4.
   */
  private verdict<R extends {ok: boolean}>(report: R, lines: string[]): R {
    for (const l of lines) this.log(l)
    if (report.ok) return report
    if (this.jsonEnabled()) this.logJson(report)
    this.exit(EXIT_CODES.remote)
  }
}
