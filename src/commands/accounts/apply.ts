import {Flags} from '@oclif/core'

import {BaseCommand, waitFlag} from '../../lib/base-command.js'

export default class AccountsApply extends BaseCommand<typeof AccountsApply> {
  static summary = 'Make the cluster’s Slurm accounts, their limits and users what accounts.yaml declares'

  static description = `accounts.yaml declares a tree of accounts (parent, description, organisation), their limits (GrpTRESMins and GrpTRES per TRES such as cpu, mem, node, gres/gpu; MaxJobs, MaxSubmitJobs, MaxWall, Fairshare, QOS) and their users (who must be in the cluster's directory: \`citc add-user\`), and optionally each user's default account (users: {NAME: {defaultAccount: ACCOUNT}}). See examples/accounts.yaml.

The file is checked against the cluster (its TRES, QOS and users): every problem is reported at file:line:col and nothing is changed (exit 3). Then the plan is shown (+ added, ~ changed, - removed), confirmed (--yes), applied with sacctmgr, and verified by planning again, which must find nothing left to do. Running it again changes nothing.

Accounts and users the file does not declare are kept, unless --prune: then they are removed, except root, the cluster's default account (where add-user puts users), and any account or user with jobs pending or running (said in the plan with "!"). An interrupted apply keeps what it did; running it again does the rest.

GrpTRESMins is a budget: slurmctld counts every job's TRES-minutes against it (no decay) and holds new jobs once it is used up (reason AssocGrpCPUMinutesLimit and the like). Raise it in the file and apply again.`

  static examples = [
    {description: 'Show what would change, change nothing', command: '<%= config.bin %> accounts apply --file accounts.yaml --dry-run'},
    {description: 'Apply without asking', command: '<%= config.bin %> accounts apply --file accounts.yaml --yes'},
    {description: 'Also remove what the file no longer declares', command: '<%= config.bin %> accounts apply -c prod --file accounts.yaml --prune'},
    {description: 'The plan as JSON', command: '<%= config.bin %> accounts apply --file accounts.yaml --dry-run --json'},
  ]

  static flags = {
    file: Flags.string({char: 'f', description: 'the accounts file', default: 'accounts.yaml'}),
    prune: Flags.boolean({default: false, description: 'remove accounts, and users from accounts, that the file does not declare (never one with active jobs)'}),
    'dry-run': Flags.boolean({default: false, description: 'show the plan and change nothing'}),
    wait: waitFlag,
  }

  async run() {
    const {runAccountsApply} = await import('../../lib/tasks/accounts/apply-accounts.js')
    const f = this.flags
    return runAccountsApply(this.io(), {cluster: f.cluster, file: f.file, prune: f.prune, dryRun: f['dry-run'], wait: f.wait}, this.config.dataDir)
  }
}
