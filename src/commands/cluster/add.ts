import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../lib/base-command.js'
import {CLOUD_PROVIDER_NAMES} from '../../lib/providers/registry.js'

export default class ClusterAdd extends BaseCommand<typeof ClusterAdd> {
  static summary = 'Register a Slurm cluster that exists already, so citc can manage it'

  static description = `The management node must be reachable over SSH and have the CitC layout (slurm.conf at /mnt/shared/etc/slurm/slurm.conf unless --conf-path says otherwise). Its SSH host key is shown for you to confirm — or given with --host-key-fingerprint — and pinned: citc refuses to connect if it ever changes. The private key is copied into the cluster's state (mode 0600).`

  static examples = [
    '<%= config.bin %> cluster add prod --host 203.0.113.10 --user citc --key ~/.ssh/citc --provider aws',
    '<%= config.bin %> cluster add prod --host 203.0.113.10 --user citc --key ~/.ssh/citc --provider oracle --mgmt-shape VM.Standard2.1 --mgmt-ad 1 --host-key-fingerprint SHA256:abc…',
  ]

  static args = {name: Args.string({required: true, description: 'name for the cluster (its cluster id, used in node names)'})}

  static flags = {
    host: Flags.string({required: true, description: 'management node address'}),
    port: Flags.integer({default: 22, min: 1, max: 65_535, description: 'SSH port'}),
    user: Flags.string({required: true, description: 'SSH user (root, or one with passwordless sudo)'}),
    key: Flags.string({required: true, description: 'path to the SSH private key'}),
    provider: Flags.option({required: true, options: CLOUD_PROVIDER_NAMES, description: 'cloud the cluster runs on'} as const)(),
    'host-key-fingerprint': Flags.string({description: 'the management node’s SSH host key, SHA256:… (required without a terminal)'}),
    'conf-path': Flags.string({default: '/mnt/shared/etc/slurm/slurm.conf', description: 'slurm.conf on the management node'}),
    'programs-dir': Flags.string({default: '/usr/local/libexec/citc', description: 'where the node programs (resume, suspend, resume-fail) live on the management node'}),
    'restart-command': Flags.string({description: 'command that restarts slurmctld there (default: service slurmctld restart)'}),
    'mgmt-shape': Flags.string({description: 'oracle: the management node’s shape (subtracted once from limits)'}),
    'mgmt-ad': Flags.integer({min: 1, description: 'oracle: the management node’s availability domain'}),
  }

  async run() {
    const {addCluster} = await import('../../lib/tasks/cluster/add-cluster.js')
    const f = this.flags
    return addCluster(
      this.io(),
      {
        name: this.args.name,
        host: f.host,
        port: f.port,
        user: f.user,
        key: f.key,
        provider: f.provider,
        hostKeyFingerprint: f['host-key-fingerprint'],
        confPath: f['conf-path'],
        programsDir: f['programs-dir'],
        restartCommand: f['restart-command']?.split(/\s+/).filter(Boolean),
        mgmtShape: f['mgmt-shape'],
        mgmtAd: f['mgmt-ad'],
      },
      this.config.dataDir,
    )
  }
}
