import {Args, Flags} from '@oclif/core'

import {BaseCommand, waitFlag} from '../../lib/base-command.js'

export default class NodeRemove extends BaseCommand<typeof NodeRemove> {
  static summary = 'Take joined machines out of the cluster: drain, wait for their jobs, clean them up'

  static description = `Each NAME is a machine joined with \`citc node add\`. It is drained and its jobs run to their end (--force requeues them instead); then, over SSH, slurmd is stopped and disabled and the cluster's munge key and settings are removed (unless --keep-software; an unreachable machine is a warning, not a failure). The cluster's limits.yaml and slurm.conf drop it and slurmctld restarts.`

  static examples = [
    {description: 'Remove ws1 once its jobs have ended', command: '<%= config.bin %> node remove ws1'},
    {description: 'Requeue its jobs instead of waiting, without a question', command: '<%= config.bin %> node remove ws1 --force --yes'},
    {description: 'Leave the machine as it is (only the cluster forgets it)', command: '<%= config.bin %> node remove ws2 --keep-software'},
  ]

  static strict = false

  static args = {
    name: Args.string({required: true, description: 'a joined machine’s node name (more may follow)'}),
  }

  static flags = {
    force: Flags.boolean({default: false, description: 'requeue the machines’ jobs instead of waiting for them'}),
    'keep-software': Flags.boolean({default: false, description: 'do not touch the machines (slurmd, munge key and settings stay)'}),
    key: Flags.string({description: 'the private key that logs in to the machines (default: ~/.ssh/id_ed25519, id_ecdsa or id_rsa)'}),
    'drain-timeout': Flags.integer({default: 86_400, min: 1, description: 'seconds to wait for the machines’ jobs before giving up (they stay drained)', helpValue: 'SECONDS'}),
    wait: waitFlag,
  }

  async run() {
    const {runNodeRemove} = await import('../../lib/tasks/joined/remove-workflow.js')
    const f = this.flags
    return runNodeRemove(
      this.io(),
      {cluster: f.cluster, names: this.argList, force: f.force, keepSoftware: f['keep-software'], key: f.key, drainTimeoutS: f['drain-timeout'], wait: f.wait},
      this.config.dataDir,
    )
  }
}
