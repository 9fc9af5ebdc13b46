import {Args, Flags} from '@oclif/core'

import {BaseCommand, waitFlag} from '../lib/base-command.js'

export default class AddUser extends BaseCommand<typeof AddUser> {
  static summary = 'Add a user: a directory account with SSH keys, a home and a Slurm association'

  static description = `Creates, on the cluster's management node: an LDAP entry (inetOrgPerson + posixAccount, uid from 10001 up, group users), a home on the shared filesystem (0700, from /etc/skel) with ~/.ssh/authorized_keys, a random password stored only in ~/.password (readable by the user alone), and a Slurm accounting association (by default in the cluster's own account, named after the cluster, which is created if missing; an account given with --account, or account: in the --from file, must exist already: declare it in accounts.yaml and run \`citc accounts apply\`). At the end the user must resolve on the management node.

--key is repeatable and takes a public key ("ssh-ed25519 AAAA… comment"), a path to a .pub file, or an https:// or file:// URL such as https://github.com/NAME.keys. Every key is parsed, FIDO security keys (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com) as OpenSSH reads them; DSA keys and RSA keys under 2048 bits are refused, and so is a URL that fails, times out or returns no keys.

Everything is checked before anything is changed; if a step fails afterwards, what was made is undone. With --from, every user of the file is checked first, and the file is added all or nothing. users.yaml is a list of {username, firstName, surname, keys: [...], account?}.`

  static examples = [
    {description: 'A user with their GitHub keys', command: '<%= config.bin %> add-user alice --first-name Alice --surname Liddell --key https://github.com/alice.keys'},
    {description: 'With a key file, in a Slurm account declared with `citc accounts apply`', command: '<%= config.bin %> add-user bob --first-name Bob --surname Ross --key ~/keys/bob.pub --account painters'},
    {description: 'Several users from a file, on a named cluster', command: '<%= config.bin %> add-user --from users.yaml -c prod'},
    {description: 'Ask for what is missing (on a terminal)', command: '<%= config.bin %> add-user'},
  ]

  static args = {
    username: Args.string({description: 'login name: a lower-case letter, then a-z, 0-9, "_" or "-" (at most 32)'}),
  }

  static flags = {
    'first-name': Flags.string({description: 'the user’s first name (asked on a terminal if missing)'}),
    surname: Flags.string({description: 'the user’s surname (asked on a terminal if missing)'}),
    key: Flags.string({multiple: true, description: 'SSH public key, .pub file, or https:// / file:// URL (repeatable)'}),
    account: Flags.string({description: 'an existing Slurm account for the user (default: the cluster’s own, named after it)'}),
    from: Flags.string({description: 'add every user of this YAML file (all checked first, added all or nothing)'}),
    wait: waitFlag,
  }

  async run() {
    const {runAddUser} = await import('../lib/tasks/add-user/add-user-workflow.js')
    const f = this.flags
    return runAddUser(
      this.io(),
      {cluster: f.cluster, username: this.args.username, firstName: f['first-name'], surname: f.surname, keys: f.key ?? [], account: f.account, from: f.from, wait: f.wait},
      this.config.dataDir,
    )
  }
}
