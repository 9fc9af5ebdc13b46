// How much of each limit an association has used, as slurmctld itself counts it when it decides
// whether a job may start: `scontrol show assoc_mgr flags=assoc`. Pure: its text in, usage out.
//
// What it prints (Slurm 22.05, seen on a citc cluster): one record per association, its first line
// `ClusterName=c Account=a UserName=alice(10001) Partition= Priority=0 ID=6`, then indented lines of
// `Key=value` words. A limit is shown as LIMIT(USED), "N" for no limit:
//   GrpTRESMins=cpu=1(0),mem=N(0),…   TRES-minutes used by ended and running jobs (what GrpTRESMins caps)
//   GrpTRES=cpu=N(2),mem=N(1024),…    TRES held by the running jobs now (memory in MB)
//   GrpJobs=N(0) GrpSubmitJobs=N(0)   jobs running / submitted now
//   MaxJobs= MaxSubmitJobs=           empty when no limit; LIMIT(USED) on user associations
// GrpTRESMins counts only with PriorityType=priority/multifactor (citc's slurm.conf sets it).
import {remoteError} from '../errors.js'

export interface LimitUse {
  /** null: no limit. */
  limit: number | null
  used: number
}

export interface AssocUsage {
  account: string
  /** "" for the account's own association. */
  user: string
  grpTRESMins: Record<string, LimitUse>
  grpTRES: Record<string, LimitUse>
  grpJobs?: LimitUse
  grpSubmitJobs?: LimitUse
  maxJobs?: LimitUse
  maxSubmitJobs?: LimitUse
}

/** `scontrol` arguments (after `scontrol`): every association, with its limits and usage. */
export const ASSOC_MGR_ARGS = ['show', 'assoc_mgr', 'flags=assoc'] as const

const LIMIT_USE = /^(N|\d+(?:\.\d+)?)\((\d+(?:\.\d+)?)\)$/

function limitUse(text: string): LimitUse | undefined {
  const m = LIMIT_USE.exec(text)
  if (!m) return undefined
  return {limit: m[1] === 'N' ? null : Number(m[1]), used: Number(m[2])}
}

function tresUse(text: string, line: string): Record<string, LimitUse> {
  const out: Record<string, LimitUse> = {}
  if (text === '') return out
  for (const item of text.split(',')) {
    const eq = item.lastIndexOf('=')
    const use = eq > 0 ? limitUse(item.slice(eq + 1)) : undefined
    if (!use) throw remoteError(`cannot read scontrol's assoc_mgr output (TRES ${JSON.stringify(item)}): ${JSON.stringify(line)}`)
    out[item.slice(0, eq)] = use
  }
  return out
}

/** Every association of the output, in its order. */
export function parseAssocMgr(text: string): AssocUsage[] {
  const out: AssocUsage[] = []
  let current: AssocUsage | undefined
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/).filter((w) => w.includes('='))
    if (words.length === 0) continue
    const fields = new Map(words.map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]))
    if (line.startsWith('ClusterName=')) {
      current = {account: fields.get('Account') ?? '', user: (fields.get('UserName') ?? '').replace(/\(\d+\)$/, ''), grpTRESMins: {}, grpTRES: {}}
      out.push(current)
      continue
    }
    if (!current) continue
    for (const [key, value] of fields) {
      if (key === 'GrpTRESMins') current.grpTRESMins = tresUse(value, line)
      else if (key === 'GrpTRES') current.grpTRES = tresUse(value, line)
      else if (key === 'GrpJobs' || key === 'GrpSubmitJobs' || key === 'MaxJobs' || key === 'MaxSubmitJobs') {
        const use = limitUse(value)
        if (use) current[(key[0].toLowerCase() + key.slice(1)) as 'grpJobs' | 'grpSubmitJobs' | 'maxJobs' | 'maxSubmitJobs'] = use
      }
    }
  }
  return out
}
