// What slurmdbd holds, read through three sacctmgr queries whose argv is built here, and their output
// parsed into an AccountingState. Formats checked against slurmdbd 22.05 (fixtures in
// test/lib/accounts/fixtures): `--parsable2 --noheader` prints one row per line, fields joined by "|"
// with no trailing "|".
//
// Associations are asked for WITH `WOPLimits` ("without parent limits"): plain `show assoc` fills in
// what a child inherits (a child of an account with MaxJobs=10 prints MaxJobs=10 itself; every
// account prints its parent's QOS), which would make citc "change" inherited values forever.
import {remoteError} from '../errors.js'
import type {AccountingState, AccountLimits, AccountState} from './types.js'
import {parseTresList} from './values.js'

/** The association columns citc reads, in this order. */
export const ASSOC_FIELDS = ['Account', 'User', 'Partition', 'ParentName', 'Fairshare', 'GrpTRESMins', 'GrpTRES', 'MaxJobs', 'MaxSubmitJobs', 'MaxWall', 'QOS'] as const

const CLUSTER_NAME = /^[a-z0-9][a-z0-9_-]*$/

function clusterWhere(cluster: string | undefined): string[] {
  if (cluster === undefined) return []
  // A citc cluster name; checked anyway since it lands in sacctmgr's key=value syntax.
  if (!CLUSTER_NAME.test(cluster)) throw new Error(`not a Slurm cluster name: ${JSON.stringify(cluster)}`)
  return ['where', `cluster=${cluster}`]
}

/** sacctmgr arguments (after `sacctmgr`) of the three queries, in the order parseAccountingState takes their output. */
export function stateQueries(cluster?: string): {assoc: string[]; account: string[]; user: string[]} {
  const parsable = ['--parsable2', '--noheader', 'show']
  return {
    assoc: [...parsable, 'assoc', ...clusterWhere(cluster), `format=${ASSOC_FIELDS.join(',')}`, 'WOPLimits'],
    account: [...parsable, 'account', 'format=Account,Descr,Org'],
    // Default accounts are per cluster: without the cluster, sacctmgr shows one of them.
    user: [...parsable, 'user', ...clusterWhere(cluster), 'format=User,DefaultAccount'],
  }
}

const rows = (text: string): string[] => text.split('\n').filter((l) => l.trim() !== '')

function bad(what: string, line: string, why: string): never {
  throw remoteError(`cannot read sacctmgr's ${what} output (${why}): ${JSON.stringify(line)}`, {
    hint: 'is this a Slurm version citc supports (22.05 or later)? run the query by hand with --parsable2 to see what it prints',
  })
}

/** "2-00:00:00", "01:31:00", "30:00" (MM:SS) → minutes. sacctmgr prints whole minutes. */
function wallMinutes(text: string, line: string): number {
  const m = /^(?:(\d+)-)?(\d+):(\d\d)(?::(\d\d))?$/.exec(text)
  if (!m) bad('assoc', line, `MaxWall ${JSON.stringify(text)}`)
  const [, d, a, b, c] = m
  // With three clock fields: HH:MM:SS; with two and no day: MM:SS; with a day: D-HH:MM.
  const minutes = c !== undefined || d !== undefined ? Number(d ?? 0) * 1440 + Number(a) * 60 + Number(b) : Number(a)
  return minutes
}

function count(text: string, field: string, line: string): number | undefined {
  if (text === '') return undefined
  if (!/^\d+$/.test(text)) bad('assoc', line, `${field} ${JSON.stringify(text)}`)
  return Number(text)
}

function limitsOf(f: Record<(typeof ASSOC_FIELDS)[number], string>, line: string): AccountLimits {
  const limits: AccountLimits = {}
  for (const [field, key] of [['GrpTRESMins', 'grpTRESMins'], ['GrpTRES', 'grpTRES']] as const) {
    if (f[field] === '') continue
    const tres = parseTresList(f[field])
    if (!tres) bad('assoc', line, `${field} ${JSON.stringify(f[field])}`)
    limits[key] = tres
  }
  const maxJobs = count(f.MaxJobs, 'MaxJobs', line)
  if (maxJobs !== undefined) limits.maxJobs = maxJobs
  const maxSubmit = count(f.MaxSubmitJobs, 'MaxSubmitJobs', line)
  if (maxSubmit !== undefined) limits.maxSubmitJobs = maxSubmit
  if (f.MaxWall !== '') limits.maxWall = wallMinutes(f.MaxWall, line)
  if (f.Fairshare === 'parent') limits.fairshare = 'parent'
  else if (f.Fairshare !== '') limits.fairshare = count(f.Fairshare, 'Fairshare', line)
  if (f.QOS !== '') limits.qos = f.QOS.split(',').sort()
  return limits
}

export interface SacctmgrOutput {
  assoc: string
  account: string
  user: string
}

/**
 * The output of the three stateQueries, typed. Names are kept as Slurm prints them, even names citc
 * would not write ("bad name" from another tool): the planner refuses to pass those back to sacctmgr.
 */
export function parseAccountingState(out: SacctmgrOutput): AccountingState {
  const accounts = new Map<string, AccountState & {users: string[]}>()
  const userRows: {account: string; user: string}[] = []
  for (const line of rows(out.assoc)) {
    const parts = line.split('|')
    if (parts.length !== ASSOC_FIELDS.length) bad('assoc', line, `${parts.length} fields, expected ${ASSOC_FIELDS.length}`)
    const f = Object.fromEntries(ASSOC_FIELDS.map((k, i) => [k, parts[i]])) as Record<(typeof ASSOC_FIELDS)[number], string>
    if (f.Account === '') bad('assoc', line, 'no account')
    if (f.User !== '') {
      userRows.push({account: f.Account, user: f.User})
      continue
    }
    accounts.set(f.Account, {name: f.Account, parent: f.ParentName, description: '', organisation: '', limits: limitsOf(f, line), users: []})
  }
  const accountTexts: Record<string, {description: string; organisation: string}> = {}
  for (const line of rows(out.account)) {
    const parts = line.split('|')
    if (parts.length < 3) bad('account', line, `${parts.length} fields, expected 3`)
    // A description written by another tool may hold "|": the name is first and the organisation last.
    const text = {description: parts.slice(1, -1).join('|'), organisation: parts.at(-1) as string}
    accountTexts[parts[0]] = text
    const account = accounts.get(parts[0])
    if (account) Object.assign(account, text)
  }
  for (const {account, user} of userRows) {
    const a = accounts.get(account)
    if (!a) bad('assoc', `${account}|${user}`, `user association in an account without its own row`)
    if (!a.users.includes(user)) a.users.push(user)
  }
  const defaultAccounts: Record<string, string> = {}
  for (const line of rows(out.user)) {
    const parts = line.split('|')
    if (parts.length !== 2) bad('user', line, `${parts.length} fields, expected 2`)
    defaultAccounts[parts[0]] = parts[1]
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  const sorted = [...accounts.values()].sort((a, b) => byName(a.name, b.name))
  // Users are shared by the clusters of a slurmdbd: only those with an association here count.
  const members = new Set(userRows.map((r) => r.user))
  const users = Object.keys(defaultAccounts).filter((u) => members.has(u)).sort(byName)
  return {
    accounts: sorted.map((a) => ({...a, users: [...a.users].sort(byName)})),
    defaultAccounts: Object.fromEntries(users.map((u) => [u, defaultAccounts[u]])),
    accountTexts: Object.fromEntries(Object.keys(accountTexts).sort(byName).map((n) => [n, accountTexts[n]])),
  }
}
