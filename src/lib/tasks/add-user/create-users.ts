// Creating users on a node, as `citc add-user` does (add-user-workflow.ts runs it on a cluster): a
// directory user with SSH keys, a home, a password and a Slurm association — made through a Transport
// (this machine, or the management node over SSH), all or nothing. Testable without a registry.
//
//   1. (before the lock) every value is checked and every key fetched and parsed  — request.ts
//   2. read the node's ldap.json / cluster.json; check each name is free in the directory, on the
//      node (getent passwd) and in the home root, and that an account given by name (--account,
//      account: in users.yaml) exists in slurmdbd (`citc accounts apply` declares accounts)
//                                                                         — nothing changed so far
//   3. per user: LDAP entry (uidNumber: next free ≥ 10001; an {SSHA} password hash; LDIF on stdin) →
//      home from /etc/skel (0700) → ~/.ssh/authorized_keys (0700/0600) → ~/.password (0400; the only
//      place the password is written) → ownership → the cluster's default account (if missing; never
//      another) and the association → `getent passwd USER` resolves on the node
//   4. any failure after the first change: everything this run made is undone, in reverse (the Slurm
//      association, an account it created, homes, entries), and the error says what failed and what
//      was undone (exit 4; 130 on Ctrl-C). A batch (--from) is all or nothing.
//   5. a run killed half-way (no undo possible): what it had made of each user is listed on the node
//      (made-so-far.ts), and the next add-user of that name undoes it before step 2.
import {randomBytes} from 'node:crypto'
import {posix} from 'node:path'

import type {ListrTask} from 'listr2'

import type {RendererName} from '../../base-command.js'
import {CLUSTER_JSON, type ManagementContract, readManagementContract} from '../../cluster/management-contract.js'
import {didYouMean} from '../../config/yaml.js'
import {CitcError, InvalidInputError, remoteError, type InputProblem} from '../../errors.js'
import type {Transport} from '../../transport/types.js'
import {Accounting} from '../../accounts/sacctmgr.js'
import {Directory, getentPasswd, LDAP_JSON, type LdapConfig, readLdapConfig} from '../../users/directory.js'
import {authorizedKeys} from '../../users/keys.js'
import {sshaHash} from '../../users/ldif.js'
import type {PreparedUser} from '../../users/request.js'
import {accountProblem, USERNAME} from '../../users/validate.js'
import {taskList} from '../listr.js'
import {sleep} from '../../proc.js'
import {clearMade, type Made, madeFile, readMade, writeMade} from './made-so-far.js'

export interface NodeLayout {
  /** The node's ldap.json (default /etc/citc/ldap.json). */
  ldapJsonPath?: string
  /** The node's cluster.json (default /etc/citc/cluster.json). */
  clusterJsonPath?: string
  /** Where homes are made (default: ldap.json's homeDir, else cluster.json's sharedDir + /home). */
  homeRoot?: string
  /** Copied into each new home; null: none (default /etc/skel; skipped if missing on the node). */
  skelDir?: string | null
  /** Default /bin/bash. */
  loginShell?: string
  /**
   * Slurm associations: false to skip (a node without accounting); otherwise sacctmgr runs with
   * SLURM_CONF = confPath (default: cluster.json's confPath, else sacctmgr's own default).
   */
  accounting?: false | {confPath?: string}
  /** The account for users without one (default: cluster.json's name, i.e. the cluster's). */
  defaultAccount?: string
  /** Check `getent passwd USER` on the node at the end (default true, polling up to 30 s). */
  verifyNss?: boolean | {timeoutMs: number}
}

export interface CreateUsersOptions extends NodeLayout {
  transport: Transport
  renderer: RendererName
  signal?: AbortSignal
  /** Notes for people (stderr), e.g. a skel directory that is missing. */
  note?: (message: string) => void
}

export interface CreatedUser {
  username: string
  uid: number
  gid: number
  name: string
  home: string
  shell: string
  /** The Slurm account; null when accounting was skipped. */
  account: string | null
  keys: {type: string; bits: number; fingerprint: string; comment: string; source: string}[]
  /** Where the password is (readable by the user only). The password itself is never output. */
  passwordFile: string
}

interface Undo {
  what: string
  /** A command a person can run if the undo itself fails. */
  manual: string
  run: () => Promise<unknown>
}

interface Plan {
  ldap: LdapConfig
  cluster?: ManagementContract
  homeRoot: string
  skelDir: string | null
  shell: string
  accounting?: Accounting
  defaultAccount: string
}

const SHELL_TIMEOUT_MS = 120_000

/** Run argv on the node; a non-zero exit is a remote error naming the command. */
const check = (t: Transport, argv: string[], signal?: AbortSignal) => t.check(argv, {timeoutMs: SHELL_TIMEOUT_MS, signal})

async function pathExists(t: Transport, path: string, signal?: AbortSignal): Promise<boolean> {
  const r = await t.run(['sh', '-c', 'test -e "$1" || test -L "$1"', 'sh', path], {timeoutMs: 30_000, signal})
  return r.exitCode === 0
}

async function isDirectory(t: Transport, path: string, signal?: AbortSignal): Promise<boolean> {
  const r = await t.run(['test', '-d', path], {timeoutMs: 30_000, signal})
  return r.exitCode === 0
}

/** A new random password: 24 characters of base64url (144 bits). */
function newPassword(): string {
  return randomBytes(18).toString('base64url')
}

/** The home of `username` under `homeRoot`, refusing anything but a plain child (it may be removed on undo, or by remove-user). */
export function homeOf(homeRoot: string, username: string): string {
  if (!USERNAME.test(username)) throw new Error(`refusing a home for "${username}"`)
  return posix.join(homeRoot, username)
}

async function readPlan(o: CreateUsersOptions): Promise<Plan> {
  const t = o.transport
  const ldap = await readLdapConfig(t, o.ldapJsonPath ?? LDAP_JSON)
  // cluster.json is needed only for defaults that were not given.
  const needCluster = o.homeRoot === undefined && ldap.homeDir === undefined
  const needAccountDefaults = o.accounting !== false && (o.defaultAccount === undefined || o.accounting?.confPath === undefined)
  const cluster = needCluster || needAccountDefaults ? await readManagementContract(t, o.clusterJsonPath ?? CLUSTER_JSON) : undefined
  const homeRoot = o.homeRoot ?? ldap.homeDir ?? posix.join(cluster!.sharedDir, 'home')
  const defaultAccount = o.defaultAccount ?? cluster?.name ?? 'citc'
  return {
    ldap,
    cluster,
    homeRoot,
    skelDir: o.skelDir === undefined ? '/etc/skel' : o.skelDir,
    shell: o.loginShell ?? '/bin/bash',
    accounting: o.accounting === false ? undefined : new Accounting(t, o.accounting?.confPath ?? cluster?.confPath),
    defaultAccount,
  }
}

/** Step 2: every name free, everywhere. Problems are input errors (exit 3); nothing was changed. */
async function checkFree(users: readonly PreparedUser[], dir: Directory, plan: Plan, signal?: AbortSignal): Promise<void> {
  const t = dir.transport
  if (!(await isDirectory(t, plan.homeRoot, signal))) {
    throw remoteError(`the home root ${plan.homeRoot} is not a directory on ${t.description}`, {
      hint: 'is the shared filesystem mounted? (citc\'s filesystem role makes it)',
    })
  }
  const problems: InputProblem[] = []
  /** Users with an account of their own (a valid name), checked against slurmdbd below. */
  const named: PreparedUser[] = []
  for (const u of users) {
    const at = (message: string): InputProblem => ({...u.at.username, message})
    const entries = await dir.find(u.username, signal)
    if (entries.length > 0) {
      problems.push(at(`"${u.username}" exists already in the directory (${entries.map((e) => e.dn).join(', ')})`))
      continue
    }
    const local = await getentPasswd(t, u.username, signal)
    if (local !== undefined) {
      problems.push(at(`"${u.username}" exists already on ${t.description} (getent passwd: ${local.split(':').slice(0, 3).join(':')}…)`))
      continue
    }
    const home = homeOf(plan.homeRoot, u.username)
    if (await pathExists(t, home, signal)) problems.push(at(`${home} exists already on ${t.description}; move it away or choose another name`))
    const account = u.account ?? plan.defaultAccount
    const bad = accountProblem(account)
    if (bad) problems.push(u.account === undefined ? {where: '--account', message: `the default account (the cluster's name) ${bad}; pass --account`} : {...u.at.account, message: bad})
    else if (u.account !== undefined) named.push(u)
  }
  // An account given by name must be declared already (`citc accounts apply`): add-user makes only
  // the cluster's default account. Without accounting there is nothing to check it against.
  let missingAccount = false
  if (plan.accounting && named.length > 0) {
    const existing = await plan.accounting.accounts(signal)
    const known = existing.filter((a) => a !== 'root')
    for (const u of named) {
      if (existing.includes(u.account!)) continue
      missingAccount = true
      const guess = didYouMean(u.account!, known)
      const listed = known.length > 8 ? `${known.slice(0, 8).join(', ')}, … ${known.length - 8} more` : known.join(', ')
      const also = guess.length > 0 ? `; did you mean ${guess.map((g) => `"${g}"`).join(' or ')}?` : known.length > 0 ? ` (it has: ${listed})` : ''
      problems.push({...u.at.account, message: `the Slurm account "${u.account}" does not exist in slurmdbd${also}`})
    }
  }
  if (problems.length > 0) {
    throw new InvalidInputError(
      problems,
      missingAccount ? "declare it in accounts.yaml and run `citc accounts apply`, or leave --account out for the cluster's default account; nothing was changed" : 'nothing was changed',
    )
  }
}

/** Poll `getent passwd USER` on the node until it shows the uid (nslcd may lag a moment). */
async function verifyResolves(t: Transport, username: string, uid: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last: string | undefined
  for (;;) {
    last = await getentPasswd(t, username, signal)
    if (last !== undefined && last.split(':')[2] === String(uid)) return
    if (Date.now() >= deadline) break
    await sleep(1000)
  }
  throw remoteError(
    last === undefined
      ? `${username} is in the directory, but getent passwd ${username} does not find it on ${t.description} after ${timeoutMs / 1000} s`
      : `getent passwd ${username} on ${t.description} shows another account: ${last}`,
    {hint: 'check that nslcd runs on the management node and reads the cluster\'s directory (/etc/nslcd.conf, /etc/nsswitch.conf)'},
  )
}

/**
 * How to undo one thing add-user made. `leftover`: listed by an earlier, killed run — it may never have
 * been made (or been undone already), so each is looked up first, and an entry only while it still has
 * the uidNumber that run gave it (never another's).
 */
function undoOf(m: Made, dir: Directory, plan: Plan, t: Transport, leftover = false): Undo {
  const acct = () => plan.accounting!
  switch (m.kind) {
    case 'entry':
      return {
        what: `the directory entry ${m.dn}`,
        manual: `ldapdelete -x -H ${plan.ldap.uri} -D ${plan.ldap.adminDn} -y ${plan.ldap.adminPasswordFile} '${m.dn}'`,
        run: async () => {
          if (leftover && !(await dir.search(`(uidNumber=${m.uidNumber})`, ['dn'])).some((e) => e.dn === m.dn)) return
          await dir.deleteDn(m.dn)
        },
      }
    case 'home':
      return {what: `the home ${m.path}`, manual: `rm -rf '${m.path}'`, run: () => check(t, ['rm', '-rf', '--', m.path])}
    case 'slurm-account':
      return {
        what: `the Slurm account ${m.name}`,
        manual: `sacctmgr -i delete account where name=${m.name}`,
        run: async () => {
          if (!leftover || (await acct().accountExists(m.name))) await acct().deleteAccount(m.name)
        },
      }
    case 'slurm-user':
      return {
        what: `the Slurm user ${m.name}`,
        manual: `sacctmgr -i delete user where name=${m.name}`,
        run: async () => {
          if (!leftover || (await acct().userAccounts(m.name)).length > 0) await acct().deleteUser(m.name)
        },
      }
  }
}

/** Step 3 for one user. Each change pushes its undo as soon as it is made, and lists it on the node. */
function userTasks(u: PreparedUser, dir: Directory, plan: Plan, opts: CreateUsersOptions, undo: Undo[], out: CreatedUser[]): ListrTask[] {
  const t = dir.transport
  const signal = opts.signal
  const home = homeOf(plan.homeRoot, u.username)
  const account = plan.accounting ? (u.account ?? plan.defaultAccount) : null
  const password = newPassword()
  const gid = plan.ldap.usersGid
  let uid = 0
  const dn = dir.dn(u.username)
  const made: Made[] = []
  const listed = (m: Made) => {
    made.push(m)
    return writeMade(t, u.username, made)
  }
  const madeNow = async (m: Made) => {
    undo.push(undoOf(m, dir, plan, t))
    if (!made.includes(m)) await listed(m)
  }
  return [
    {
      title: `Add ${u.username} to the directory`,
      task: async (_, task) => {
        uid = await dir.nextUidNumber(signal)
        // Listed before ldapadd: a kill right after it must not leave an entry nothing knows of.
        const entry: Made = {kind: 'entry', dn, uidNumber: uid}
        await listed(entry)
        await dir.add(
          {username: u.username, firstName: u.firstName, surname: u.surname, uidNumber: uid, gidNumber: gid, homeDirectory: home, loginShell: plan.shell, passwordHash: sshaHash(password)},
          signal,
        )
        await madeNow(entry)
        // Another citc (another workstation) may have taken the same number at the same moment.
        const same = await dir.search(`(uidNumber=${uid})`, ['dn'], {signal})
        if (same.length !== 1) throw remoteError(`uidNumber ${uid} was given to another entry at the same time (${same.map((e) => e.dn).join(', ')}); run add-user again`)
        task.title = `Add ${u.username} to the directory (uid ${uid})`
      },
    },
    {
      title: `Make the home ${home}`,
      task: async () => {
        await check(t, ['mkdir', '-m', '0700', home], signal) // not -p: it must be new (checked before)
        await madeNow({kind: 'home', path: home})
        if (plan.skelDir !== null) {
          if (await isDirectory(t, plan.skelDir, signal)) await check(t, ['cp', '-R', '-T', '--', plan.skelDir, home], signal)
          else opts.note?.(`note: ${plan.skelDir} does not exist on ${t.description}; ${home} starts empty`)
        }
        await check(t, ['mkdir', '-p', '-m', '0700', `${home}/.ssh`], signal)
      },
    },
    {
      title: `Install ${u.keys.length} SSH key${u.keys.length === 1 ? '' : 's'} and the password`,
      task: async () => {
        await t.writeFile(`${home}/.ssh/authorized_keys`, authorizedKeys(u.keys), {mode: 0o600})
        await t.writeFile(`${home}/.password`, password + '\n', {mode: 0o400})
        await check(t, ['chown', '-R', '--', `${uid}:${gid}`, home], signal)
        // The two files got their modes as they were written; the directories may have come from skel.
        await check(t, ['chmod', '0700', '--', home, `${home}/.ssh`], signal)
      },
    },
    {
      title: account ? `Add ${u.username} to the Slurm account ${account}` : `Add ${u.username} to Slurm accounting`,
      skip: () => (plan.accounting ? false : 'accounting not asked for'),
      task: async (_, task) => {
        const acct = plan.accounting!
        // Only the cluster's default account is made here; one given by name was checked to exist.
        if (u.account === undefined && !(await acct.accountExists(account!, signal))) {
          await acct.addAccount(account!, `citc cluster ${plan.cluster?.name ?? plan.defaultAccount}`, signal)
          await madeNow({kind: 'slurm-account', name: account!})
          task.title = `Add ${u.username} to the Slurm account ${account} (new)`
        }
        await acct.addUser(u.username, account!, signal)
        await madeNow({kind: 'slurm-user', name: u.username})
      },
    },
    {
      title: `Check that ${u.username} resolves on the management node`,
      skip: () => (opts.verifyNss === false ? 'not asked for' : false),
      task: async () => {
        const timeoutMs = typeof opts.verifyNss === 'object' ? opts.verifyNss.timeoutMs : 30_000
        await verifyResolves(t, u.username, uid, timeoutMs, signal)
      },
    },
    {
      title: `${u.username} is ready`,
      task: async (_, task) => {
        // Whole: nothing of it is to be undone by a later run any more.
        await clearMade(t, u.username)
        task.title = `${u.username} is ready (uid ${uid}, ${home})`
        out.push({
          username: u.username,
          uid,
          gid,
          name: `${u.firstName} ${u.surname}`,
          home,
          shell: plan.shell,
          account,
          keys: u.keys.map((k) => ({type: k.type, bits: k.bits, fingerprint: k.fingerprint, comment: k.comment, source: k.source})),
          passwordFile: `${home}/.password`,
        })
      },
    },
  ]
}

/**
 * For each requested user whose earlier add-user was killed half-way: undo what it listed, in reverse,
 * then remove the list. Returns what was undone; a failure names the list and what to do.
 */
async function undoInterrupted(users: readonly PreparedUser[], dir: Directory, plan: Plan, t: Transport): Promise<string[]> {
  const undone: string[] = []
  for (const u of users) {
    const made = await readMade(t, u.username)
    if (made === undefined) continue
    for (const m of [...made].reverse()) {
      const step = undoOf(m, dir, plan, t, true)
      try {
        await step.run()
      } catch (error) {
        throw remoteError(`an earlier add-user of ${u.username} was interrupted, and undoing what it made failed: ${step.what}: ${(error as Error).message.split('\n')[0]}`, {
          hint: `remove it by hand (${step.manual}), then delete ${madeFile(u.username)} and run add-user again`,
        })
      }
      undone.push(step.what)
    }
    await clearMade(t, u.username)
  }
  return undone
}

/** Undo in reverse order; returns what could not be undone. */
async function rollback(undo: Undo[], renderer: RendererName): Promise<{undone: string[]; failed: {what: string; manual: string; error: string}[]}> {
  const undone: string[] = []
  const failed: {what: string; manual: string; error: string}[] = []
  const steps = [...undo].reverse()
  if (steps.length === 0) return {undone, failed}
  await taskList(
    steps.map((s) => ({
      title: `Undo: remove ${s.what}`,
      task: async () => {
        try {
          await s.run()
          undone.push(s.what)
        } catch (error) {
          failed.push({what: s.what, manual: s.manual, error: (error as Error).message})
          throw error
        }
      },
    })),
    renderer,
  )
    .run()
    .catch(() => {})
  // Listr stops at the first failure: carry on with the rest so as little as possible remains.
  for (const s of steps) {
    if (undone.includes(s.what) || failed.some((f) => f.what === s.what)) continue
    try {
      await s.run()
      undone.push(s.what)
    } catch (error) {
      failed.push({what: s.what, manual: s.manual, error: (error as Error).message})
    }
  }
  return {undone, failed}
}

/**
 * Create prepared users on the node behind `opts.transport`: all or nothing. Returns what was made.
 * Throws InvalidInputError (exit 3, nothing changed) when a name is taken, a remote error (exit 4)
 * or a cancellation (130) after undoing everything this call made.
 */
export async function createUsers(users: readonly PreparedUser[], opts: CreateUsersOptions): Promise<CreatedUser[]> {
  const t = opts.transport
  const undo: Undo[] = []
  const created: CreatedUser[] = []
  let plan: Plan | undefined
  let dir: Directory | undefined
  let current = ''
  const names = users.map((u) => u.username).join(', ')

  // Read and check: nothing is changed here.
  await taskList(
    [
      {
        title: `Read the directory settings on ${t.description}`,
        task: async () => {
          plan = await readPlan(opts)
          dir = new Directory(t, plan.ldap)
        },
      },
      {
        title: 'Undo what an interrupted add-user left',
        task: async (_, task) => {
          const undone = await undoInterrupted(users, dir!, plan!, t)
          if (undone.length === 0) task.skip('nothing was left')
          else task.title = `Undid what an interrupted add-user left: ${undone.join('; ')}`
        },
      },
      {title: `Check that ${names} ${users.length === 1 ? 'is' : 'are'} free`, task: () => checkFree(users, dir!, plan!, opts.signal)},
    ],
    opts.renderer,
  ).run()

  try {
    await taskList(
      users.map((u) => ({
        title: `Create ${u.username}`,
        task: (_, task) => {
          current = u.username
          return task.newListr(userTasks(u, dir!, plan!, opts, undo, created), {exitOnError: true})
        },
      })),
      opts.renderer,
    ).run()
    return created
  } catch (error) {
    const {undone, failed} = await rollback(undo, opts.renderer)
    // All undone: nothing is left for a later run to undo. Otherwise the lists stay for it to retry.
    if (failed.length === 0) for (const u of users) await clearMade(t, u.username).catch(() => undefined)
    const cause = error as Error
    const was = undone.length > 0 ? `\nUndone: ${undone.join('; ')}.` : '\nNothing had been changed yet.'
    const left =
      failed.length > 0
        ? `\nCOULD NOT UNDO (remove by hand on the management node):\n${failed.map((f) => `  ${f.what}: ${f.error.split('\n')[0]}\n    ${f.manual}`).join('\n')}`
        : ''
    const message = `adding ${current || names} failed: ${cause.message}${was}${left}`
    const details = {undone, notUndone: failed.map((f) => ({what: f.what, manual: f.manual})), failedUser: current || null}
    if (cause instanceof CitcError) throw new CitcError(cause.kind, message, {hint: cause.hint, details: {...cause.details, ...details}, cause})
    throw new CitcError('unexpected', message, {details, cause})
  }
}
