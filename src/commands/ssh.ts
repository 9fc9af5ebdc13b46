
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
    const {connectManagement, managedHere} = await import('../lib/cluster/management-node.js')
    const {writeKnownHosts} = await import('../lib/cluster/management.js')
    const dashdash = this.argv.indexOf('--')
    const command = dashdash >= 0 ? this.argv.slice(dashdash + 1) : []
    const before = dashdash >= 0 ? this.argv.slice(0, dashdash) : this.argv
    const stray = before.filter((a, i) => !a.startsWith('-') && !['-c', '--cluster'].includes(before[i - 1] ?? ''))
    if (stray.length > 0) throw usageError(`unexpected argument ${stray[0]}`, `put the command after --, e.g. citc ssh -c NAME -- ${stray.join(' ')}`)
    if (dashdash >= 0 && command.length === 0) throw usageError('no command after --')

    const registry = clusterRegistry(this.config.dataDir)
    const name = registry.resolveName(this.flags.cluster)
    const record = registry.get(name)
    if (managedHere(record)) throw usageError(`${name} is a ${record.provider} cluster: its management node is this machine`, 'run the command here directly')

    if (command.length > 0) {
      const transport = await connectManagement(record)
      let exitCode: number
      let stdout = ''
      let stderr = ''
      try {
        const json = this.jsonEnabled()
        const r = await transport.run(command, {
          timeoutMs: 24 * 3600_000,
          onOutput: json ? undefined : (chunk, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(chunk),
        })
        ;({exitCode, stdout, stderr} = r)
      } finally {
        await transport.close()
      }
      const doc = {cluster: name, command, exitCode, stdout, stderr}
      if (exitCode === 0) return doc
      if (this.jsonEnabled()) this.logJson(doc)
      this.exit(exitCode)
    }

    if (this.jsonEnabled()) throw usageError('an interactive shell has no JSON output', 'give a command after -- to use --json')
    const ssh = await which('ssh')
    if (!ssh) throw new CitcError('remote', 'the OpenSSH client (ssh) is not installed', {hint: 'install it (openssh-client), or run a command with citc ssh -- COMMAND'})
    const paths = registry.paths(name)
    const {file, algorithm} = await writeKnownHosts(record, paths)
    const args = [
      '-o', 'StrictHostKeyChecking=yes',
      '-o', `UserKnownHostsFile=${file}`,
      '-o', 'GlobalKnownHostsFile=/dev/null',
      '-o', 'IdentitiesOnly=yes',
      ...(algorithm === 'ssh-ed25519' ? ['-o', 'HostKeyAlgorithms=ssh-ed25519'] : []),
      '-i', record.mgmt.keyPath!,
      '-p', String(record.mgmt.port),
      `${record.mgmt.user}@${record.mgmt.host}`,
    ]
    const code = await runAttached(ssh, args)
    if (code !== 0) this.exit(code)
  }
}
