// accounts.yaml (desired) against slurmdbd (current) → the ordered sacctmgr operations that make the
// one into the other. Pure: running jobs and the cluster's own default account are inputs.
//
// Order, so that every operation finds what it needs:
//   1. accounts added or moved, parents first (a new parent exists before its children; a moved
//      account's new parent already sits where the file wants it, so no move makes a cycle);
//   2. descriptions and limits changed;
//   3. users added to accounts (a user Slurm does not know yet gets their default account with the
//      first association, as sacctmgr requires);
//   4. default accounts changed (before any removal: removing a user's default association leaves
//      Slurm with no default for them — checked on 22.05);
//   5. with prune only: users removed from accounts, then accounts removed, children first.
// Never touched: root, the cluster's default account (unless the file declares it: then its users are
// the file's), and anything whose name is not safe to pass back to sacctmgr. An account that has
// running jobs, or a user with running jobs in an account, is refused with the reason, not removed;
// an account that would lose a refused user or a sub-account that stays is kept whole.
// A file that matches the cluster gives an empty plan.
import {isSafeAccountName, isSafeUserName, storedText} from './names.js'
import {type AccountOp, type AccountsPlan, type Change, limitChanges, type Refusal} from './ops.js'
import {type AccountingState, type AccountsFile, type AccountSpec, ROOT_ACCOUNT} from './types.js'

export interface PlanOptions {
  /** Remove users from accounts, and accounts, that the file does not declare. */
  prune: boolean
  /** The account citc's add-user puts users in: never removed. */
  clusterDefaultAccount?: string
  /** Jobs running now (account and user of each), from squeue. */
  runningJobs?: readonly {account: string; user: string}[]
}

/** "accounts.yaml:3:5" → [3, 5], for the order accounts were written in. */
const position = (where: string): [number, number] => {
  const m = /:(\d+):(\d+)$/.exec(where)
  return m ? [Number(m[1]), Number(m[2])] : [0, 0]
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export function planAccounts(desired: AccountsFile, current: AccountingState, opts: PlanOptions): AccountsPlan {
  const cur = new Map(current.accounts.map((a) => [a.name, a]))
  const written = [...desired.accounts].sort((a, b) => {
    const [pa, pb] = [position(a.where), position(b.where)]
    return pa[0] - pb[0] || pa[1] - pb[1]
  })
  const ops: AccountOp[] = []

  // 1. Added and moved accounts, parents first (the file's order is parents-first already).
  for (const spec of desired.accounts) {
    const now = cur.get(spec.name)
    if (!now) {
      ops.push({
        op: 'addAccount',
        account: spec.name,
        parent: spec.parent,
        ...(spec.description === undefined ? {} : {description: spec.description}),
        ...(spec.organisation === undefined ? {} : {organisation: spec.organisation}),
        limits: limitChanges({}, spec.limits),
      })
    } else if (now.parent !== spec.parent) {
      ops.push({op: 'moveAccount', account: spec.name, from: now.parent, to: spec.parent})
    }
  }

  // 2. Descriptions and limits of accounts that exist. An added account whose record slurmdbd keeps
  // already (another cluster's, or one deleted before) keeps that record's text: changed here too.
  for (const spec of written) {
    const now = cur.get(spec.name)
    const text = now ?? current.accountTexts[spec.name]
    if (!text) continue
    const changes: Change[] = []
    if (spec.description !== undefined && storedText(spec.description) !== storedText(text.description)) {
      changes.push({field: 'Description', from: text.description, to: spec.description})
    }
    if (spec.organisation !== undefined && storedText(spec.organisation) !== storedText(text.organisation)) {
      changes.push({field: 'Organization', from: text.organisation, to: spec.organisation})
    }
    if (now) changes.push(...limitChanges(now.limits, spec.limits))
    if (changes.length > 0) ops.push({op: 'modifyAccount', account: spec.name, changes})
  }

  // Who is where now, and where the file wants them.
  const curMembers = new Map<string, Set<string>>()
  for (const a of current.accounts) for (const u of a.users) (curMembers.get(u) ?? curMembers.set(u, new Set()).get(u)!).add(a.name)
  const wanted = new Map<string, string[]>()
  for (const spec of written) for (const u of spec.users) (wanted.get(u) ?? wanted.set(u, []).get(u)!).push(spec.name)

  const {userRemovals, accountRemovals, refused} = opts.prune ? prunePlan(desired, current, opts) : {userRemovals: [], accountRemovals: [], refused: []}

  // Membership once the plan has run: used to choose default accounts.
  const after = new Map<string, Set<string>>()
  for (const [u, accounts] of curMembers) after.set(u, new Set(accounts))
  for (const r of userRemovals) after.get(r.user)?.delete(r.account)
  for (const [u, accounts] of wanted) for (const a of accounts) (after.get(u) ?? after.set(u, new Set()).get(u)!).add(a)

  const defaultFor = (user: string): string | undefined => {
    const now = current.defaultAccounts[user] ?? ''
    const mine = after.get(user) ?? new Set<string>()
    const explicit = desired.defaultAccounts[user]
    if (explicit) return explicit
    if (now !== '' && mine.has(now)) return now
    return wanted.get(user)?.[0] ?? [...mine].sort(byName)[0]
  }

  // 3. Users added to accounts, user by user in the order the file names them.
  const isNew = (user: string) => (curMembers.get(user)?.size ?? 0) === 0
  for (const [user, accounts] of wanted) {
    const missing = accounts.filter((a) => !curMembers.get(user)?.has(a))
    if (missing.length === 0) continue
    if (isNew(user)) {
      const def = defaultFor(user) as string
      ops.push({op: 'addUser', user, account: def, defaultAccount: def})
      for (const a of missing) if (a !== def) ops.push({op: 'addUser', user, account: a})
    } else {
      for (const a of missing) ops.push({op: 'addUser', user, account: a})
    }
  }

  // 4. Default accounts: the file's users, then anyone a removal touches.
  const touched = [...wanted.keys(), ...[...new Set(userRemovals.map((r) => r.user))].filter((u) => !wanted.has(u)).sort(byName)]
  for (const user of touched) {
    if (isNew(user)) continue
    const to = defaultFor(user)
    const from = current.defaultAccounts[user] ?? ''
    if (to !== undefined && to !== from) ops.push({op: 'setDefaultAccount', user, from, to})
  }

  // 5. Prune.
  for (const r of userRemovals) ops.push({op: 'removeUser', user: r.user, account: r.account})
  for (const account of accountRemovals) ops.push({op: 'removeAccount', account})
  return {ops, refused}
}

interface PruneResult {
  userRemovals: {user: string; account: string}[]
  /** Children first. */
  accountRemovals: string[]
  refused: Refusal[]
}

/** What prune removes, and what it must keep with the reason. */
function prunePlan(desired: AccountsFile, current: AccountingState, opts: PlanOptions): PruneResult {
  const declared = new Map<string, AccountSpec>(desired.accounts.map((a) => [a.name, a]))
  const keep = new Set([ROOT_ACCOUNT, ...(opts.clusterDefaultAccount ? [opts.clusterDefaultAccount] : [])])
  const busy = new Map<string, Set<string>>()
  for (const j of opts.runningJobs ?? []) (busy.get(j.account) ?? busy.set(j.account, new Set()).get(j.account)!).add(j.user)
  const busyUsers = (account: string) => [...(busy.get(account) ?? [])].sort(byName)
  const refused: Refusal[] = []

  // The tree once adds and moves are done: declared accounts under their new parents.
  const parentAfter = new Map<string, string>(current.accounts.map((a) => [a.name, a.parent]))
  for (const a of desired.accounts) parentAfter.set(a.name, a.parent)
  const depth = (name: string): number => {
    let d = 0
    for (let p = parentAfter.get(name); p && d <= parentAfter.size; p = parentAfter.get(p)) d++
    return d
  }

  // A user leaves an account when the file's account does not list them, or the account goes.
  const depths = new Map(current.accounts.map((a) => [a.name, depth(a.name)]))
  const candidates = current.accounts
    .filter((a) => !declared.has(a.name) && !keep.has(a.name))
    .sort((a, b) => (depths.get(b.name) ?? 0) - (depths.get(a.name) ?? 0) || byName(a.name, b.name))
  const userRefused = new Map<string, string>()
  const userCandidates: {user: string; account: string}[] = []
  const consider = (account: string, user: string) => {
    const key = `${account}\u0000${user}`
    let reason: string | undefined
    if (!isSafeAccountName(account) || !isSafeUserName(user)) reason = `the name is not safe to pass to sacctmgr; remove it by hand if it must go`
    else if (busy.get(account)?.has(user)) reason = `${user} has running jobs in ${account}`
    if (reason) userRefused.set(key, reason)
    userCandidates.push({user, account})
  }
  for (const a of current.accounts) {
    const spec = declared.get(a.name)
    const listed = new Set(spec?.users)
    if (spec) for (const u of a.users) if (!listed.has(u)) consider(a.name, u)
  }
  for (const a of candidates) for (const u of a.users) consider(a.name, u)

  // Accounts children first: a kept child (declared, protected or refused) keeps its parent.
  const childrenOf = new Map<string, string[]>()
  for (const [c, p] of parentAfter) (childrenOf.get(p) ?? childrenOf.set(p, []).get(p)!).push(c)
  const removed = new Set<string>()
  const kept = new Set<string>()
  for (const a of candidates) {
    const running = busyUsers(a.name)
    const children = childrenOf.get(a.name) ?? []
    const stayingChild = children.find((c) => !removed.has(c))
    const stuckUser = a.users.find((u) => userRefused.has(`${a.name}\u0000${u}`))
    let reason: string | undefined
    if (!isSafeAccountName(a.name)) reason = 'its name is not safe to pass to sacctmgr; remove it by hand if it must go'
    else if (running.length > 0) reason = `it has running jobs (${running.join(', ')})`
    else if (stayingChild !== undefined) reason = `its sub-account ${stayingChild} stays`
    else if (stuckUser !== undefined) reason = `user ${stuckUser} stays (${userRefused.get(`${a.name}\u0000${stuckUser}`)})`
    if (reason) {
      kept.add(a.name)
      refused.push({kind: 'account', account: a.name, reason})
    } else {
      removed.add(a.name)
    }
  }

  const userRemovals: {user: string; account: string}[] = []
  for (const c of userCandidates) {
    if (kept.has(c.account)) continue // kept whole, with its users
    const reason = userRefused.get(`${c.account}\u0000${c.user}`)
    if (reason) refused.push({kind: 'user', account: c.account, user: c.user, reason})
    else userRemovals.push(c)
  }
  return {userRemovals, accountRemovals: candidates.map((a) => a.name).filter((n) => removed.has(n)), refused}
}
