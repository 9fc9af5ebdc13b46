import {BaseCommand} from '../../lib/base-command.js'

export default class Accounts extends BaseCommand<typeof Accounts> {
  static summary = 'Show the Slurm accounts: the tree, each one’s limits, users, jobs, and how much of each limit is used'

  static description = `Reads slurmdbd's accounts (sacctmgr), slurmctld's own count of what each account has used against its limits (scontrol show assoc_mgr: GrpTRESMins in TRES-minutes by ended and running jobs, GrpTRES held now) and the jobs now (squeue). An account whose GrpTRESMins is used up is marked LIMIT REACHED, and its pending jobs are listed with Slurm's reason (e.g. AssocGrpCPUMinutesLimit).

--json prints a versioned document (version 1: {version, cluster, generatedAt, accounts: [{name, parent, description, organisation, users, limits, used, jobs, waiting, exhausted}]}; see src/lib/accounts/report.ts), the stable schema for a portal agent. Declare accounts with \`citc accounts apply\`.`

  static examples = [
    {description: 'The accounts of the only cluster', command: '<%= config.bin %> accounts'},
    {description: 'As JSON, of a named cluster', command: '<%= config.bin %> accounts -c prod --json'},
  ]

  async run() {
    const {runShowAccounts} = await import('../../lib/tasks/accounts/show-accounts.js')
    return runShowAccounts(this.io(), {cluster: this.flags.cluster}, this.config.dataDir)
  }
}
