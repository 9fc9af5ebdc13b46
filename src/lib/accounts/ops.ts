// The operations of an accounts plan, and the comparison of limits they carry. A limit is compared as
// the text citc would pass to sacctmgr (and shows in the plan): TRES amounts in MB for memory, MaxWall
// as D-HH:MM:SS, QOS sorted and joined, Fairshare with Slurm's default 1 written out (so that removing
// Fairshare from the file sets it back to 1).
import type {AccountLimits} from './types.js'
import {formatMinutes} from './values.js'

/** One changed field: a limit (per TRES for GrpTRESMins/GrpTRES), or Description/Organization. */
export interface Change {
  /** sacctmgr's keyword: GrpTRESMins, GrpTRES, MaxJobs, MaxSubmitJobs, MaxWall, Fairshare, QOS, Description, Organization. */
  field: string
  /** For GrpTRESMins and GrpTRES: the TRES. */
  tres?: string
  /** Absent: not set before. */
  from?: string
  /** Absent: cleared (sacctmgr `=-1`, or `QOS=`). */
  to?: string
}

export type AccountOp =
  | {op: 'addAccount'; account: string; parent: string; description?: string; organisation?: string; limits: readonly Change[]}
  | {op: 'moveAccount'; account: string; from: string; to: string}
  | {op: 'modifyAccount'; account: string; changes: readonly Change[]}
  /** `defaultAccount` only for a user Slurm does not know yet (sacctmgr needs one for a new user). */
  | {op: 'addUser'; user: string; account: string; defaultAccount?: string}
  | {op: 'setDefaultAccount'; user: string; from: string; to: string}
  | {op: 'removeUser'; user: string; account: string}
  | {op: 'removeAccount'; account: string}

/** Something prune would remove but must not: said in the plan, never done. */
export interface Refusal {
  kind: 'account' | 'user'
  account: string
  user?: string
  reason: string
}

export interface AccountsPlan {
  ops: readonly AccountOp[]
  refused: readonly Refusal[]
}

export const LIMIT_FIELDS = ['GrpTRESMins', 'GrpTRES', 'MaxJobs', 'MaxSubmitJobs', 'MaxWall', 'Fairshare', 'QOS'] as const
export const SLURM_DEFAULT_FAIRSHARE = 1

/** Limits as comparable entries keyed "Field" or "Field:tres", in LIMIT_FIELDS order then TRES name. */
export function limitEntries(l: AccountLimits): Map<string, Change & {to: string}> {
  const out = new Map<string, Change & {to: string}>()
  for (const [field, amounts] of [['GrpTRESMins', l.grpTRESMins], ['GrpTRES', l.grpTRES]] as const) {
    for (const tres of Object.keys(amounts ?? {}).sort()) out.set(`${field}:${tres}`, {field, tres, to: String(amounts?.[tres])})
  }
  if (l.maxJobs !== undefined) out.set('MaxJobs', {field: 'MaxJobs', to: String(l.maxJobs)})
  if (l.maxSubmitJobs !== undefined) out.set('MaxSubmitJobs', {field: 'MaxSubmitJobs', to: String(l.maxSubmitJobs)})
  if (l.maxWall !== undefined) out.set('MaxWall', {field: 'MaxWall', to: formatMinutes(l.maxWall)})
  out.set('Fairshare', {field: 'Fairshare', to: String(l.fairshare ?? SLURM_DEFAULT_FAIRSHARE)})
  if (l.qos && l.qos.length > 0) out.set('QOS', {field: 'QOS', to: [...l.qos].sort().join(',')})
  return out
}

/** What changes from `current` to `desired` limits, in a stable order. */
export function limitChanges(current: AccountLimits, desired: AccountLimits): Change[] {
  const from = limitEntries(current)
  const to = limitEntries(desired)
  const keys = [...new Set([...from.keys(), ...to.keys()])].sort((a, b) => fieldRank(a) - fieldRank(b) || (a < b ? -1 : a > b ? 1 : 0))
  const out: Change[] = []
  for (const key of keys) {
    const f = from.get(key)
    const t = to.get(key)
    if (f?.to === t?.to) continue
    const base = (t ?? f) as Change
    out.push({field: base.field, ...(base.tres ? {tres: base.tres} : {}), ...(f ? {from: f.to} : {}), ...(t ? {to: t.to} : {})})
  }
  return out
}

const fieldRank = (key: string): number => (LIMIT_FIELDS as readonly string[]).indexOf(key.split(':')[0])

/** formatMinutes backwards ("2-00:00:00" → 2880). */
export function wallToMinutes(text: string): number {
  const m = /^(?:(\d+)-)?(\d+):(\d+):(\d+)$/.exec(text)
  if (!m) throw new Error(`not a MaxWall: ${text}`)
  return Number(m[1] ?? 0) * 1440 + Number(m[2]) * 60 + Number(m[3])
}
