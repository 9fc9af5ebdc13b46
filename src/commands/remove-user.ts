import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'

export default class RemoveUser extends BaseCommand<typeof RemoveUser> {
  static summary = 'Remove a user: their Slurm associations, their directory entry and, if asked, their home'

  static description = `Removes, on the cluster's management node: the user's Slurm accounting associations (sacctmgr delete user), then their LDAP entry. The home on the shared filesystem is kept unless --delete-home is given (and then only a home directly under the cluster's home root, as add-user makes it, is deleted).

Everything is checked before anything is changed: an unknown user is refused (with the closest names), and so is a user with active jobs (pending, running, suspended or completing, as squeue shows them): wait for them to end, or pass --force to cancel them first (scancel, then up to 60 s until squeue lists none). What will go is shown and confirmed (--yes skips the question; without a terminal, --yes is required).

If a step fails, the error says what was removed and what is left, with the commands to finish by hand.`

  static examples = [
    {description: 'Remove alice; her home stays', command: '<%= config.bin %> remove-user alice'},
    {description: 'Remove bob and delete his home, without a question', command: '<%= config.bin %> remove-user bob --delete-home --yes'},
    {description: 'Cancel carol’s jobs first, on a named cluster', command: '<%= config.bin %> remove-user carol --force -c prod'},
    {description: 'In a script: what was removed, as JSON', command: '<%= config.bin %> remove-user dave --yes --json'},
  ]

  static args = {
    username: Args.string({required: true, description: 'login name of the user to remove'}),
  }

  static flags = {
    'delete-home': Flags.boolean({default: false, description: 'also delete the user’s home and everything in it (default: keep it)'}),
    force: Flags.boolean({default: false, description: 'cancel the user’s active jobs first (default: refuse while they have some)'}),
    wait: Flags.boolean({default: false, description: 'if another citc command holds the cluster, wait for it instead of refusing'}),
  }

  async run() {
    const {runRemoveUser} = await import('../lib/tasks/remove-user/remove-user.js')
    const f = this.flags
    return runRemoveUser(this.io(), {cluster: f.cluster, username: this.args.username, deleteHome: f['delete-home'], force: f.force, wait: f.wait}, this.config.dataDir)
  }
}
