// `citc accounts`: the tree of accounts with their limits, users, jobs and how much of each limit is
// used — as a versioned JSON document (the stable schema a portal agent reads: what a Cloudrock-style
// agent would push as limits and associations) and as a tree for people. Pure: what slurmdbd and
// slurmctld report in, the document out.
//
// Version 1 (a field is only ever added within a version):
//   version, cluster, generatedAt (ISO 8601 UTC)
//   accounts: parents before children, siblings by name; root first. Each:
//     name, parent (null for root), description, organisation
//     users: [{name, default}]        default: this account is the user's default account
//     limits: {GrpTRESMins?: {tres: minutes}, GrpTRES?: {tres: amount}, MaxJobs?, MaxSubmitJobs?,
//              MaxWall? ("D-HH:MM:SS"), Fairshare? (number | "parent"), QOS? [names]}   memory in MB
//     used:   {GrpTRESMins: {tres: {limit, used}}, GrpTRES: {tres: {limit, used}}}: TRES-minutes used by
//             ended and running jobs (what GrpTRESMins caps; slurmctld's count, whole minutes), TRES
//             held now; only TRES with a limit or some use; limit null when none
//     jobs:   {running, pending}      now, in this account (not its children)
//     waiting: [{jobId, user, reason}]  pending jobs held by a limit (Slurm's reason: Assoc…, QOS…)
//     exhausted: ["GrpTRESMins cpu", …] limits used up: the account's jobs wait until one is raised
import {z} from 'zod'

import type {AssocUsage, LimitUse} from './assoc-usage.js'
import {type AccountLimits, type AccountingState, ROOT_ACCOUNT} from './types.js'
import {formatMinutes} from './values.js'

export const ACCOUNTS_SCHEMA_VERSION = 1

const limitUseSchema = z.strictObject({limit: z.number().nullable(), used: z.number().nonnegative()})
const tresAmounts = z.record(z.string(), z.number())

export const accountReportSchema = z.strictObject({
  name: z.string(),
  parent: z.string().nullable(),
  description: z.string(),
  organisation: z.string(),
  users: z.array(z.strictObject({name: z.string(), default: z.boolean()})),
  limits: z.strictObject({
    GrpTRESMins: tresAmounts.optional(),
    GrpTRES: tresAmounts.optional(),
    MaxJobs: z.number().int().optional(),
    MaxSubmitJobs: z.number().int().optional(),
    MaxWall: z.string().optional(),
    Fairshare: z.union([z.number().int(), z.literal('parent')]).optional(),
    QOS: z.array(z.string()).optional(),
  }),
  used: z.strictObject({GrpTRESMins: z.record(z.string(), limitUseSchema), GrpTRES: z.record(z.string(), limitUseSchema)}),
  jobs: z.strictObject({running: z.number().int().nonnegative(), pending: z.number().int().nonnegative()}),
  waiting: z.array(z.strictObject({jobId: z.string(), user: z.string(), reason: z.string()})),
  exhausted: z.array(z.string()),
})

export const accountsDocumentSchema = z.strictObject({
  version: z.literal(ACCOUNTS_SCHEMA_VERSION),
  cluster: z.string(),
  generatedAt: z.iso.datetime(),
  accounts: z.array(accountReportSchema),
})

export type AccountReport = z.infer<typeof accountReportSchema>
export type AccountsDocument = z.infer<typeof accountsDocumentSchema>

export interface JobNow {
  id: string
  account: string
  user: string
  state: string
  reason: string
}

/** Slurm's reasons for a job held by an association or QOS limit (AssocGrpCPUMinutesLimit, QOSMaxJobsPerUserLimit, …). */
export const isLimitReason = (reason: string): boolean => /^(Assoc|QOS)\w*Limit$/.test(reason)

function limitsDoc(l: AccountLimits): AccountReport['limits'] {
  return {
    ...(l.grpTRESMins ? {GrpTRESMins: {...l.grpTRESMins}} : {}),
    ...(l.grpTRES ? {GrpTRES: {...l.grpTRES}} : {}),
    ...(l.maxJobs === undefined ? {} : {MaxJobs: l.maxJobs}),
    ...(l.maxSubmitJobs === undefined ? {} : {MaxSubmitJobs: l.maxSubmitJobs}),
    ...(l.maxWall === undefined ? {} : {MaxWall: formatMinutes(l.maxWall)}),
    ...(l.fairshare === undefined ? {} : {Fairshare: l.fairshare}),
    ...(l.qos ? {QOS: [...l.qos]} : {}),
  }
}

/** TRES with a limit or some use, sorted by name. */
function shownUse(uses: Record<string, LimitUse> | undefined): Record<string, LimitUse> {
  const entries = Object.entries(uses ?? {}).filter(([, u]) => u.limit !== null || u.used > 0)
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** Parents before children, siblings by name (the state's accounts are sorted by name already). */
function treeOrder(state: AccountingState): AccountingState['accounts'] {
  const children = new Map<string, AccountingState['accounts'][number][]>()
  for (const a of state.accounts) if (a.name !== ROOT_ACCOUNT) children.set(a.parent, [...(children.get(a.parent) ?? []), a])
  const out: AccountingState['accounts'][number][] = []
  const visit = (a: AccountingState['accounts'][number]) => {
    out.push(a)
    for (const c of children.get(a.name) ?? []) visit(c)
  }
  const root = state.accounts.find((a) => a.name === ROOT_ACCOUNT)
  if (root) visit(root)
  // Anything not reached from root (a parent in another cluster): still shown, at the end.
  for (const a of state.accounts) if (!out.includes(a)) out.push(a)
  return out
}

export function accountsDocument(state: AccountingState, usage: readonly AssocUsage[], jobs: readonly JobNow[], meta: {cluster: string; now: Date}): AccountsDocument {
  const own = new Map(usage.filter((u) => u.user === '').map((u) => [u.account, u]))
  const accounts = treeOrder(state).map((a): AccountReport => {
    const u = own.get(a.name)
    const mine = jobs.filter((j) => j.account === a.name)
    const used = {GrpTRESMins: shownUse(u?.grpTRESMins), GrpTRES: shownUse(u?.grpTRES)}
    const exhausted = Object.entries(used.GrpTRESMins)
      .filter(([, x]) => x.limit !== null && x.used >= x.limit)
      .map(([tres]) => `GrpTRESMins ${tres}`)
    return {
      name: a.name,
      parent: a.name === ROOT_ACCOUNT ? null : a.parent,
      description: a.description,
      organisation: a.organisation,
      users: a.users.map((name) => ({name, default: state.defaultAccounts[name] === a.name})),
      limits: limitsDoc(a.limits),
      used,
      jobs: {running: mine.filter((j) => j.state !== 'PENDING').length, pending: mine.filter((j) => j.state === 'PENDING').length},
      waiting: mine.filter((j) => j.state === 'PENDING' && isLimitReason(j.reason)).map((j) => ({jobId: j.id, user: j.user, reason: j.reason})),
      exhausted,
    }
  })
  return {version: ACCOUNTS_SCHEMA_VERSION, cluster: meta.cluster, generatedAt: meta.now.toISOString().replace(/\.\d{3}Z$/, 'Z'), accounts}
}

/** "1,200 min", "725 MB-min" (TRES-minutes); "64", "4,096 MB" (held now). */
function amount(tres: string, v: number, minutes: boolean): string {
  const unit = tres === 'mem' ? (minutes ? ' MB-min' : ' MB') : minutes ? ' min' : ''
  return `${v.toLocaleString('en-US')}${unit}`
}

/** TRES whose use is shown without a limit (the rest is in the JSON). */
const ALWAYS_SHOWN = new Set(['cpu', 'gres/gpu'])

function percent(u: LimitUse): string {
  if (u.limit === null) return ''
  if (u.limit === 0) return ' (100 %)'
  return ` (${Math.min(999, Math.floor((u.used / u.limit) * 100))} %)`
}

/** Lines of the tree: each account indented under its parent, its details below it. */
export function accountsTree(doc: AccountsDocument): string {
  const depth = new Map<string, number>()
  const lines: string[] = []
  for (const a of doc.accounts) {
    const d = a.parent === null ? 0 : (depth.get(a.parent) ?? 0) + 1
    depth.set(a.name, d)
    const pad = '  '.repeat(d)
    const text = a.description && a.description !== a.name ? ` — ${a.description}` : ''
    lines.push(`${pad}${a.name}${text}${a.exhausted.length > 0 ? `  [LIMIT REACHED: ${a.exhausted.join(', ')}]` : ''}`)
    const more = `${pad}    `
    const limitParts: string[] = []
    for (const [tres, u] of Object.entries(a.used.GrpTRESMins)) {
      if (u.limit !== null) limitParts.push(`GrpTRESMins ${tres} ${amount(tres, u.used, true)} used of ${amount(tres, u.limit, true)}${percent(u)}`)
      else if (ALWAYS_SHOWN.has(tres)) limitParts.push(`${tres} ${amount(tres, u.used, true)} used`)
    }
    for (const [tres, u] of Object.entries(a.used.GrpTRES)) {
      if (u.limit !== null) limitParts.push(`GrpTRES ${tres} ${amount(tres, u.used, false)} held of ${amount(tres, u.limit, false)}`)
    }
    const l = a.limits
    if (l.MaxJobs !== undefined) limitParts.push(`MaxJobs ${l.MaxJobs}`)
    if (l.MaxSubmitJobs !== undefined) limitParts.push(`MaxSubmitJobs ${l.MaxSubmitJobs}`)
    if (l.MaxWall !== undefined) limitParts.push(`MaxWall ${l.MaxWall}`)
    if (l.Fairshare !== undefined && l.Fairshare !== 1) limitParts.push(`Fairshare ${l.Fairshare}`)
    if (l.QOS !== undefined) limitParts.push(`QOS ${l.QOS.join(',')}`)
    if (limitParts.length > 0) lines.push(`${more}${limitParts.join('; ')}`)
    if (a.users.length > 0) lines.push(`${more}users: ${a.users.map((u) => (u.default ? `${u.name}*` : u.name)).join(', ')}`)
    if (a.jobs.running + a.jobs.pending > 0) lines.push(`${more}jobs: ${a.jobs.running} running, ${a.jobs.pending} pending`)
    for (const w of a.waiting) lines.push(`${more}job ${w.jobId} (${w.user}) waits: ${w.reason}`)
  }
  lines.push('', '* the user’s default account')
  return lines.join('\n')
}
