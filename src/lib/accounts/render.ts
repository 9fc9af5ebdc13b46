// An accounts plan as sacctmgr argv (what apply runs, one call per operation, `-i` to commit without
// asking) and as lines for people (what apply shows before asking). Every name in an operation was
// checked by parse.ts or planAccounts, so no value here can be misread as sacctmgr syntax.
import type {AccountOp, AccountsPlan, Change, Refusal} from './ops.js'
import {formatTresList} from './values.js'

export interface RenderOptions {
  /** The cluster's name in slurmdbd: added to every command (Cluster=… / cluster=…) when given. */
  cluster?: string
}

/** `GrpTRESMins=cpu=6000,mem=-1 MaxJobs=10 QOS=`: clearing is -1 (QOS: empty), as sacctmgr wants. */
export function changeArgs(changes: readonly Change[]): string[] {
  const out: string[] = []
  for (const field of ['GrpTRESMins', 'GrpTRES']) {
    const tres = changes.filter((c) => c.field === field)
    if (tres.length === 0) continue
    const amounts = Object.fromEntries(tres.map((c) => [c.tres as string, c.to === undefined ? -1 : Number(c.to)]))
    out.push(`${field}=${formatTresList(amounts)}`)
  }
  for (const c of changes) {
    if (c.field === 'GrpTRESMins' || c.field === 'GrpTRES') continue
    const clear = c.field === 'QOS' ? '' : '-1'
    out.push(`${c.field}=${c.to ?? clear}`)
  }
  return out
}

/** sacctmgr's arguments (after `sacctmgr`) for one operation. */
export function opArgv(op: AccountOp, opts: RenderOptions = {}): string[] {
  const add = opts.cluster ? [`Cluster=${opts.cluster}`] : []
  const where = (name: string, ...more: string[]) => ['where', `name=${name}`, ...more, ...(opts.cluster ? [`cluster=${opts.cluster}`] : [])]
  switch (op.op) {
    case 'addAccount':
      return [
        '-i', 'add', 'account', op.account, ...add, `Parent=${op.parent}`,
        ...(op.description === undefined ? [] : [`Description=${op.description}`]),
        ...(op.organisation === undefined ? [] : [`Organization=${op.organisation}`]),
        ...changeArgs(op.limits),
      ]
    case 'moveAccount':
      return ['-i', 'modify', 'account', ...where(op.account), 'set', `Parent=${op.to}`]
    case 'modifyAccount':
      return ['-i', 'modify', 'account', ...where(op.account), 'set', ...changeArgs(op.changes)]
    case 'addUser':
      return ['-i', 'add', 'user', op.user, ...add, `Account=${op.account}`, ...(op.defaultAccount ? [`DefaultAccount=${op.defaultAccount}`] : [])]
    case 'setDefaultAccount':
      return ['-i', 'modify', 'user', ...where(op.user), 'set', `DefaultAccount=${op.to}`]
    case 'removeUser':
      return ['-i', 'delete', 'user', ...where(op.user, `account=${op.account}`)]
    case 'removeAccount':
      return ['-i', 'delete', 'account', ...where(op.account)]
  }
}

const shown = (v: string | undefined) => (v === undefined ? 'none' : v === '' ? '""' : v)

function changeText(c: Change): string {
  const name = c.tres ? `${c.field} ${c.tres}` : c.field
  const quote = c.field === 'Description' || c.field === 'Organization'
  const v = (x: string | undefined) => (quote && x !== undefined ? JSON.stringify(x) : shown(x))
  return `${name} ${v(c.from)} → ${v(c.to)}`
}

/** One line per operation: `+` adds, `~` changes, `-` removes. */
export function opLine(op: AccountOp): string {
  switch (op.op) {
    case 'addAccount': {
      const details = [
        ...(op.description === undefined ? [] : [`description ${JSON.stringify(op.description)}`]),
        ...(op.organisation === undefined ? [] : [`organisation ${JSON.stringify(op.organisation)}`]),
        ...op.limits.map((c) => `${c.tres ? `${c.field} ${c.tres}` : c.field} ${shown(c.to)}`),
      ]
      return `+ account ${op.account} (parent ${op.parent})${details.length > 0 ? `: ${details.join(', ')}` : ''}`
    }
    case 'moveAccount':
      return `~ account ${op.account} parent ${op.from} → ${op.to}`
    case 'modifyAccount':
      return `~ ${op.account} ${op.changes.map(changeText).join(', ')}`
    case 'addUser':
      return `+ user ${op.user} to ${op.account}${op.defaultAccount ? ' (default account)' : ''}`
    case 'setDefaultAccount':
      return `~ user ${op.user} default account ${shown(op.from)} → ${op.to}`
    case 'removeUser':
      return `- user ${op.user} from ${op.account}`
    case 'removeAccount':
      return `- account ${op.account}`
  }
}

export const refusalLine = (r: Refusal): string =>
  r.kind === 'account' ? `! account ${r.account} kept: ${r.reason}` : `! user ${r.user} kept in ${r.account}: ${r.reason}`

/** The whole plan as people read it; "no changes" when there is nothing to do. */
export function planText(plan: AccountsPlan): string {
  const lines = [...plan.ops.map(opLine), ...plan.refused.map(refusalLine)]
  return lines.length === 0 ? 'no changes\n' : `${lines.join('\n')}\n`
}
