import {BaseCommand} from '../lib/base-command.js'

export default class Users extends BaseCommand<typeof Users> {
  static summary = 'List the cluster’s users: login name, uid, name, home, SSH keys and Slurm account'

  static description = `Reads the cluster's directory on the management node (the people citc add-user made, and any other posixAccount under its People unit), counts the keys in each ~/.ssh/authorized_keys, and asks Slurm's accounting for each user's default account.`

  static examples = [
    {description: 'The users of the only cluster', command: '<%= config.bin %> users'},
    {description: 'As JSON, of a named cluster', command: '<%= config.bin %> users -c prod --json'},
  ]

  async run() {
    const {runListUsers} = await import('../lib/tasks/users/list-users.js')
    return runListUsers(this.io(), {cluster: this.flags.cluster}, this.config.dataDir)
  }
}
