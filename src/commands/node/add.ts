import {Args, Flags} from '@oclif/core'

import {BaseCommand, waitFlag} from '../../lib/base-command.js'

export default class NodeAdd extends BaseCommand<typeof NodeAdd> {
  static summary = 'Join machines you already have to the cluster as static nodes (Ansible over SSH)'

  static description = `Each HOST (an address the management node reaches) becomes a static Slurm node: slurmd at the controller's version (pinned and held on Debian 12), munge with the cluster's key, users from the cluster's directory, the shared filesystem over NFS (or --shared none), slurmd fetching its configuration from slurmctld (configless). Joined machines are never powered down and are used before elastic nodes.

First, read-only and for every machine at once: its SSH host key (shown to confirm, or --host-key; then pinned — a changed key is refused), the OS and architecture, an existing Slurm or munge (refused unless --adopt), the Slurm version rule (slurmd never newer than slurmctld, at most two releases older), clock skew, a unique node name, local accounts clashing with directory users, and the ports both ways (6817, 6818, 636, 2049, 60001-63000): a blocked one is named with the firewall rule to add — citc never changes a joined machine's firewall nor your rules on the management node (a local cluster's management machine gets citc's own guard, which opens slurmctld's port to each machine that joins). Nothing is changed until every check passes and you confirm.

Then the machines are configured, the cluster's limits.yaml (static:) and slurm.conf gain them, slurmctld restarts, and each must be IDLE and run a one-task job before the command succeeds. Running it again changes nothing. Local clusters only in this version.`

  static examples = [
    {description: 'Join one machine, confirming its host key on the terminal', command: '<%= config.bin %> node add 192.168.1.20'},
    {description: 'Without a terminal: the fingerprint pinned up front, a name, a partition', command: '<%= config.bin %> node add 192.168.1.21 --name ws2 --host-key SHA256:… --partition gpu --yes'},
    {description: 'Two machines at once, their fingerprints in the same order', command: '<%= config.bin %> node add 10.0.0.5 10.0.0.6 --host-key SHA256:… --host-key SHA256:… --yes'},
    {description: 'Check a machine only, change nothing', command: '<%= config.bin %> node add 10.0.0.7 --dry-run'},
    {description: 'Log in as a sudo user with its own key; no NFS', command: '<%= config.bin %> node add lab-3 --user admin --key ~/.ssh/lab --shared none'},
  ]

  static strict = false

  static args = {
    host: Args.string({required: true, description: 'the machine: an address or name the management node reaches (more may follow)'}),
  }

  static flags = {
    name: Flags.string({description: 'its Slurm node name (one machine only; default: its host name)'}),
    user: Flags.string({default: 'root', description: 'the SSH user (root, or one with passwordless sudo)'}),
    port: Flags.integer({default: 22, min: 1, max: 65_535, description: 'the SSH port'}),
    key: Flags.string({description: 'the private key that logs in (default: ~/.ssh/id_ed25519, id_ecdsa or id_rsa)'}),
    'host-key': Flags.string({multiple: true, description: 'the machine’s SSH host key fingerprint (SHA256:…), instead of confirming it on a terminal; one per HOST, in their order'}),
    partition: Flags.string({description: 'the partition it joins (default: the default partition)'}),
    features: Flags.string({description: 'extra Slurm features, comma-separated (e.g. bigmem,ssd)'}),
    shared: Flags.option({options: ['nfs', 'none'] as const, default: 'nfs' as const, description: 'mount the cluster’s /mnt/shared over NFS, or not (none: jobs there do not see the cluster’s homes)'})(),
    adopt: Flags.boolean({default: false, description: 'take over a machine that already runs Slurm or munge (its configuration is kept as /etc/citc-*.orig)'}),
    'dry-run': Flags.boolean({default: false, description: 'run the checks and show the plan; change nothing'}),
    wait: waitFlag,
  }

  async run() {
    const {runNodeAdd} = await import('../../lib/tasks/joined/add-workflow.js')
    const {parseFeatures} = await import('../../lib/tasks/joined/flags.js')
    const f = this.flags
    return runNodeAdd(
      this.io(),
      {
        cluster: f.cluster,
        hosts: this.argList,
        name: f.name,
        user: f.user,
        port: f.port,
        key: f.key,
        hostKeys: f['host-key'] ?? [],
        partition: f.partition,
        features: parseFeatures(f.features),
        shared: f.shared,
        adopt: f.adopt,
        dryRun: f['dry-run'],
        wait: f.wait,
      },
      this.config.dataDir,
    )
  }
}
