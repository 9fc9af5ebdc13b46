import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {resolveCreateInput} from '../lib/tasks/create-wizard.js'
import {createLocal} from '../lib/tasks/create-local.js'

export default class Create extends BaseCommand<typeof Create> {
  static summary = 'Create an elastic Slurm cluster (provider local: on this machine, no cloud needed)'

  static description = `With --provider local (the default), this machine becomes the cluster's management node: citc installs Slurm, munge, MariaDB (accounting) and OpenLDAP (users) with apt and Ansible, writes slurm.conf from the limits, and runs compute nodes as slurmd processes that Slurm starts when jobs need them and stops when they are idle. Needs root on Debian 12 or Ubuntu 24.04.

On a terminal, a short wizard asks what no flag says; --yes takes the defaults. Re-running create converges (changes nothing that is right); --resume continues after a failure or Ctrl-C.`

  static examples = [
    {description: 'A local cluster with the defaults (4 small nodes)', command: '<%= config.bin %> create --provider local --yes'},
    {description: 'Named, with your own limits and a 2-minute idle time', command: '<%= config.bin %> create --name lab --limits limits.yaml --suspend-time 120 --yes'},
    {description: 'Continue after a failure', command: '<%= config.bin %> create --name lab --resume --yes'},
  ]

  static flags = {
    provider: Flags.string({char: 'p', options: ['local'], description: 'where the cluster runs (cloud providers: not yet)'}),
    name: Flags.string({char: 'n', description: 'cluster name (default: two random words, as CitC)'}),
    limits: Flags.string({char: 'l', description: 'limits file: node shapes and counts (default: local.small: 4)'}),
    'suspend-time': Flags.integer({min: 10, description: 'seconds an idle node runs before it is powered down', default: 60}),
    resume: Flags.boolean({description: 'continue a create that failed or was interrupted, skipping the steps done', default: false}),
    force: Flags.boolean({description: 'take over this machine even though a Slurm controller citc did not make is running', default: false}),
  }

  async run() {
    const io = this.io()
    const input = await resolveCreateInput(io, this.flags, this.config.dataDir)
    return createLocal(io, {...input, packageRoot: this.config.root}, this.config.dataDir)
  }
}
