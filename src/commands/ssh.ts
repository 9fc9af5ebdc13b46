
import {BaseCommand} from '../lib/base-command.js'
import {CitcError, usageError} from '../lib/errors.js'

export default class Ssh extends BaseCommand<typeof Ssh> {
  static summary = 'Open a shell on the management node, or run one command there, with the pinned host key'
  static description = `Without a command: the system's ssh, with citc's key and a known_hosts file holding only the
management node's pinned host key (StrictHostKeyChecking=yes): a changed key is refused.
With a command after "--": it runs over citc's own SSH connection (host key pinned), its output
is shown as it comes, and citc exits with the command's exit code. The command gets no stdin.`

  static examples = [
    '<%= config.bin %> ssh -c lab',
    '<%= config.bin %> ssh -c lab -- sinfo -N',
    '<%= config.bin %> ssh -c lab --json -- cat /etc/citc/cluster.json',
  ]

  static strict = false

  async run() {
    const {clusterRegistry} = await import('../lib/cluster/registry.js')
    const {which} = await import('../lib/tools/exec.js')
    const {runAttached} = await import('../lib/tools/exec.js')
    const {managedHere} = await import('../lib/cluster/management-node.js')
    const {writeKnownHosts} = await import('../lib/cluster/management.js')
    const {remoteCommand, sshArgs} = await import('../lib/transport/ssh-command.js')
    const {withManagementNode} = await import('../lib/tasks/management-session.js')
    // oclif parses the flags (and says which words are arguments); the command is what follows `--`.
    const {raw} = await this.parse(Ssh)
    const command = remoteCommand(this.argv, raw.flatMap((t) => (t.type === 'arg' ? [t.input] : [])))

    const registry = clusterRegistry(this.config.dataDir)
    const name = registry.resolveName(this.flags.cluster)
    const record = registry.get(name)
    if (managedHere(record)) throw usageError(`${name} is a ${record.provider} cluster: its management node is this machine`, 'run the command here directly')

    if (command) {
      const json = this.jsonEnabled()
      const r = await withManagementNode(record, {command: 'citc ssh', asRoot: false}, (transport, signal) =>
        transport.run(command, {
          // Ctrl-C signals the remote command too, not only the session.
          signal,
          timeoutMs: 24 * 3600_000,
          onOutput: json ? undefined : (chunk, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(chunk),
        }),
      )
      const doc = {cluster: name, command, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr}
      if (r.exitCode === 0) return doc
      if (json) this.logJson(doc)
      this.exit(r.exitCode)
    }

    if (this.jsonEnabled()) throw usageError('an interactive shell has no JSON output', 'give a command after -- to use --json')
    const ssh = await which('ssh')
    if (!ssh) throw new CitcError('remote', 'the OpenSSH client (ssh) is not installed', {hint: 'install it (openssh-client), or run a command with citc ssh -- COMMAND'})
    const known = await writeKnownHosts(record, registry.paths(name))
    const code = await runAttached(ssh, sshArgs({...record.mgmt, keyPath: record.mgmt.keyPath!}, known))
    if (code !== 0) this.exit(code)
  }
}
