// What slurmdbd holds after a plan's operations, simulated (pure), for plan.test.ts: the check that
// a plan reaches the file (re-planning from the simulated state gives an empty plan). It copies the
// behaviour observed on slurmdbd 22.05: text stored in lower case, a new account's description
// defaulting to its name and its organisation to its parent's name (its own under root), Fairshare 1
// by default, a user's default account emptied when that association is deleted, a user with no
// association left gone from Slurm altogether, and account records (their text) kept by `delete
// account` and reused as they are by a later `add account`.
import {storedText} from '../../../src/lib/accounts/names.js'
import {type AccountOp, type Change, SLURM_DEFAULT_FAIRSHARE, wallToMinutes} from '../../../src/lib/accounts/ops.js'
import {type AccountingState, type AccountLimits, type AccountState, ROOT_ACCOUNT} from '../../../src/lib/accounts/types.js'

export function applyToState(state: AccountingState, ops: readonly AccountOp[]): AccountingState {
  const accounts = new Map<string, AccountState>(state.accounts.map((a) => [a.name, {...a}]))
  const defaults: Record<string, string> = {...state.defaultAccounts}
  const texts: Record<string, {description: string; organisation: string}> = {...state.accountTexts}
  const get = (name: string): AccountState => {
    const a = accounts.get(name)
    if (!a) throw new Error(`no account ${name} in the simulated state`)
    return a
  }
  const setText = (a: AccountState, changes: readonly Change[]) => {
    for (const c of changes) {
      if (c.field === 'Description') a.description = storedText(c.to ?? '')
      if (c.field === 'Organization') a.organisation = storedText(c.to ?? '')
    }
    texts[a.name] = {description: a.description, organisation: a.organisation}
  }
  for (const op of ops) {
    switch (op.op) {
      case 'addAccount': {
        if (accounts.has(op.account)) throw new Error(`account ${op.account} exists already`)
        get(op.parent)
        const text = texts[op.account] ?? {
          description: storedText(op.description ?? op.account),
          organisation: storedText(op.organisation ?? (op.parent === ROOT_ACCOUNT ? op.account : op.parent)),
        }
        texts[op.account] = text
        accounts.set(op.account, {name: op.account, parent: op.parent, ...text, limits: applyLimitChanges({fairshare: 1}, op.limits), users: []})
        break
      }
      case 'moveAccount':
        get(op.to)
        get(op.account).parent = op.to
        break
      case 'modifyAccount': {
        const a = get(op.account)
        setText(a, op.changes)
        a.limits = applyLimitChanges(a.limits, op.changes)
        break
      }
      case 'addUser': {
        const a = get(op.account)
        if (a.users.includes(op.user)) throw new Error(`${op.user} is in ${op.account} already`)
        a.users = [...a.users, op.user].sort()
        if (op.defaultAccount) defaults[op.user] = op.defaultAccount
        break
      }
      case 'setDefaultAccount':
        if (!get(op.to).users.includes(op.user)) throw new Error(`${op.user} is not in ${op.to}`)
        defaults[op.user] = op.to
        break
      case 'removeUser': {
        const a = get(op.account)
        a.users = a.users.filter((u) => u !== op.user)
        if (defaults[op.user] === op.account) defaults[op.user] = ''
        break
      }
      case 'removeAccount': {
        const a = get(op.account)
        if ([...accounts.values()].some((c) => c.parent === op.account)) throw new Error(`account ${op.account} still has sub-accounts`)
        for (const u of a.users) if (defaults[u] === op.account) defaults[u] = ''
        accounts.delete(op.account)
        break
      }
    }
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  const sorted = [...accounts.values()].sort((a, b) => byName(a.name, b.name))
  const members = new Set(sorted.flatMap((a) => a.users))
  const users = Object.keys(defaults).filter((u) => members.has(u)).sort(byName)
  return {
    accounts: sorted,
    defaultAccounts: Object.fromEntries(users.map((u) => [u, defaults[u]])),
    accountTexts: Object.fromEntries(Object.keys(texts).sort(byName).map((n) => [n, texts[n]])),
  }
}

/** The limits an account has once `changes` are applied (the inverse of limitChanges). */
function applyLimitChanges(limits: AccountLimits, changes: readonly Change[]): AccountLimits {
  const out: {-readonly [K in keyof AccountLimits]: AccountLimits[K]} = {...limits}
  for (const c of changes) {
    if (c.field === 'GrpTRESMins' || c.field === 'GrpTRES') {
      const key = c.field === 'GrpTRESMins' ? 'grpTRESMins' : 'grpTRES'
      const next: Record<string, number> = {...out[key]}
      if (c.to === undefined) delete next[c.tres as string]
      else next[c.tres as string] = Number(c.to)
      out[key] = next
      if (Object.keys(next).length === 0) delete out[key]
    } else if (c.field === 'MaxJobs' || c.field === 'MaxSubmitJobs') {
      const key = c.field === 'MaxJobs' ? 'maxJobs' : 'maxSubmitJobs'
      if (c.to === undefined) delete out[key]
      else out[key] = Number(c.to)
    } else if (c.field === 'MaxWall') {
      if (c.to === undefined) delete out.maxWall
      else out.maxWall = wallToMinutes(c.to)
    } else if (c.field === 'Fairshare') {
      out.fairshare = c.to === undefined ? SLURM_DEFAULT_FAIRSHARE : c.to === 'parent' ? 'parent' : Number(c.to)
    } else if (c.field === 'QOS') {
      if (c.to === undefined) delete out.qos
      else out.qos = c.to.split(',').sort()
    }
  }
  return out
}
