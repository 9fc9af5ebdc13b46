import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {USAGE_BY} from '../lib/usage/aggregate.js'

export default class Usage extends BaseCommand<typeof Usage> {
  static summary = 'Report who used what: jobs, CPU-, GPU-, memory- and node-hours per shape, and an estimated cost'

  static description = `From Slurm's accounting (sacct, every user's jobs): the part of each job inside the window [--since, --until) — running jobs up to now — grouped by account, user, node shape (from the nodes' shape= feature) or day (UTC). Times are UTC. The window defaults to the current month so far.

With a prices file (--prices FILE, or prices.yaml in the cluster's citc directory), each row gets an estimated cost: node-hours of each shape times its price per node-hour (see examples/prices.yaml); shapes without a price are listed, not guessed.

On a terminal each row has a bar; --csv gives a spreadsheet; --json a versioned document (version 1: {version, cluster, since, until, by, currency, rows, totals, unpricedShapes}; see src/lib/usage/schema.ts), the stable schema for a portal agent.`

  static examples = [
    {description: 'This month so far, per account', command: '<%= config.bin %> usage'},
    {description: 'Per user in October, priced', command: '<%= config.bin %> usage --since 2026-10-01 --until 2026-11-01 --by user --prices prices.yaml'},
    {description: 'The last 7 days per day, for a spreadsheet', command: '<%= config.bin %> usage --since 7d --by day --csv > usage.csv'},
    {description: 'As JSON, of a named cluster', command: '<%= config.bin %> usage -c prod --by shape --json'},
  ]

  static flags = {
    since: Flags.string({description: 'start of the window, inclusive: YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (UTC), today, yesterday, or 7d / 12h / 2w ago (default: the 1st of this month)'}),
    until: Flags.string({description: 'end of the window, exclusive, in the same forms (default: now)'}),
    by: Flags.option({options: USAGE_BY, default: 'account' as const, description: 'what each row is'})(),
    csv: Flags.boolean({default: false, description: 'print CSV (for spreadsheets) instead of a table'}),
    prices: Flags.string({description: 'prices file: currency and price per node-hour of each shape (default: the cluster’s prices.yaml, if any)'}),
  }

  async run() {
    const {runUsage} = await import('../lib/tasks/usage/usage-report.js')
    const f = this.flags
    return runUsage(this.io(), {cluster: f.cluster, since: f.since, until: f.until, by: f.by, csv: f.csv, prices: f.prices}, this.config.dataDir)
  }
}
