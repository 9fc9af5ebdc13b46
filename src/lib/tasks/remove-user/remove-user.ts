// `citc remove-user`: one person off a cluster, on its management node through a Transport (this
// machine, or over SSH), the reverse of add-user. Testable without a registry (removeUser); the command
// runs it under the cluster's lock with a log (runRemoveUser).
//
//   1. check, changing nothing: the node's ldap.json / cluster.json; the user is in the directory
//      (else exit 3 with a did-you-mean among its people); their Slurm associations (sacctmgr); their
//      active jobs (squeue as root, every job of their uid). Jobs and no --force: refused (exit 2,
//      nothing changed). --delete-home and a home that is not a plain child of the home root: refused.
//   2. confirm (--yes), showing what goes
//   3. --force: scancel the jobs, then wait (≤ 60 s) until squeue shows none of the uid
//   4. sacctmgr delete user (every association) → ldapdelete the entry → with --delete-home, rm -rf
//      the home; without it the home stays (and the result says so)
//   A failure in 3–4 stops there: the error says what was removed and what is left, with the commands
//   to finish by hand (exit 4). Jobs are matched by uid, not by name: squeue prints "Invalid user" and
//   exits 0 for a name the node cannot resolve, which would hide them.
import {posix} from 'node:path'

import type {RendererName} from '../../base-command.js'
import {CLUSTER_JSON, type ManagementContract, readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {didYouMean} from '../../config/yaml.js'
import {CitcError, InvalidInputError, remoteError} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import {sleep} from '../../proc.js'
import {connectCluster} from '../../cluster/management-node.js'
import {withLog} from '../../transport/logged.js'
import {shellQuote} from '../../shell-quote.js'
import type {Transport} from '../../transport/types.js'
import {Accounting} from '../../accounts/sacctmgr.js'
import {Directory, type DirectoryUser, LDAP_JSON, type LdapConfig, readLdapConfig} from '../../users/directory.js'
import {printable, usernameProblem} from '../../users/validate.js'
import {homeOf, type NodeLayout} from '../add-user/create-users.js'
import {taskList} from '../listr.js'
import {clusterWorkflow} from '../workflow.js'

/** How long --force waits for cancelled jobs to leave squeue. */
export const CANCEL_WAIT_MS = 60_000

export interface RemoveUserLayout extends Pick<NodeLayout, 'ldapJsonPath' | 'clusterJsonPath' | 'homeRoot' | 'accounting'> {
  /**
   * Jobs (squeue, scancel): false to skip (a node without slurmctld); otherwise run with SLURM_CONF =
   * confPath (default: accounting's confPath, else cluster.json's). `waitMs` bounds the wait after
   * scancel (default 60 s), `pollMs` is how often squeue is asked meanwhile (default 1 s).
   */
  jobs?: false | {confPath?: string; waitMs?: number; pollMs?: number}
}

export interface RemoveUserOptions extends RemoveUserLayout {
  transport: Transport
  renderer: RendererName
  /** Delete the home (default: keep it). */
  deleteHome: boolean
  /** Cancel the user's active jobs first (default: refuse while there are some). */
  force: boolean
  signal?: AbortSignal
  /** Asked once everything is checked, before the first change; throws to stop (nothing changed). */
  confirm?: (plan: RemovalPlan) => Promise<void>
  note?: (message: string) => void
}

/** A job of the user in squeue. */
export interface UserJob {
  id: string
  /** PENDING, RUNNING, COMPLETING, … */
  state: string
}

/** What will be removed, as checked before any change. */
export interface RemovalPlan {
  user: DirectoryUser
  /** The Slurm accounts the user has associations in; null when accounting is skipped. */
  slurmAccounts: string[] | null
  /** Active jobs (to cancel with --force). */
  jobs: UserJob[]
  home: string
  /** Whether the home exists on the node. */
  homeExists: boolean
  deleteHome: boolean
}

export interface RemovedUser {
  user: string
  uid: number
  home: string
  removed: {
    /** The directory entry's DN. */
    directory: string
    /** The accounts whose associations were removed (empty: none, or accounting skipped). */
    slurmAccounts: string[]
    /** Whether the home was deleted (false: kept, or there was none). */
    home: boolean
  }
  /** Job IDs cancelled (--force). */
  cancelledJobs: string[]
}

interface Node {
  ldap: LdapConfig
  dir: Directory
  homeRoot: string
  accounting?: Accounting
  /** SLURM_CONF for squeue/scancel; undefined with jobs: false. */
  jobs?: {confPath?: string; waitMs: number; pollMs: number}
}

const SHELL_TIMEOUT_MS = 120_000
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

async function readNode(o: RemoveUserOptions): Promise<Node> {
  const t = o.transport
  const ldap = await readLdapConfig(t, o.ldapJsonPath ?? LDAP_JSON)
  const accountingConf = o.accounting === false ? undefined : o.accounting?.confPath
  const jobsConf = o.jobs === false ? undefined : (o.jobs?.confPath ?? accountingConf)
  const needCluster =
    (o.homeRoot === undefined && ldap.homeDir === undefined) || (o.accounting !== false && accountingConf === undefined) || (o.jobs !== false && jobsConf === undefined)
  const cluster: ManagementContract | undefined = needCluster ? await readManagementContract(t, o.clusterJsonPath ?? CLUSTER_JSON) : undefined
  return {
    ldap,
    dir: new Directory(t, ldap),
    homeRoot: o.homeRoot ?? ldap.homeDir ?? posix.join(cluster!.sharedDir, 'home'),
    accounting: o.accounting === false ? undefined : new Accounting(t, accountingConf ?? cluster?.confPath),
    jobs: o.jobs === false ? undefined : {confPath: jobsConf ?? cluster?.confPath, waitMs: o.jobs?.waitMs ?? CANCEL_WAIT_MS, pollMs: o.jobs?.pollMs ?? 1000},
  }
}

const slurmArgv = (confPath: string | undefined, tool: string, args: string[]) => (confPath ? ['env', `SLURM_CONF=${confPath}`, tool, ...args] : [tool, ...args])

/**
 * The active jobs of `uid` (squeue as root lists everyone's; --all: hidden partitions too). By uid,
 * not `--user NAME`: squeue exits 0 with only "Invalid user" on stderr for a name it cannot resolve.
 */
export async function jobsOfUid(t: Transport, confPath: string | undefined, uid: number, signal?: AbortSignal): Promise<UserJob[]> {
  const argv = slurmArgv(confPath, 'squeue', ['--noheader', '--all', '--format=%i|%T|%U'])
  const r = await t.run(argv, {timeoutMs: 60_000, signal})
  if (r.exitCode !== 0) {
    throw remoteError(`squeue failed on ${t.description} (exit ${r.exitCode}): ${shellQuote(argv)}\n${(r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n')}`, {
      hint: 'is slurmctld running on the management node? (`citc status` checks it)',
    })
  }
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split('|'))
    .filter((f) => f.length >= 3 && f[2] === String(uid))
    .map(([id, state]) => ({id, state}))
}

/** Step 1: everything checked, nothing changed. */
async function checkRemoval(username: string, node: Node, o: RemoveUserOptions): Promise<RemovalPlan> {
  const t = o.transport
  const signal = o.signal
  const bad = usernameProblem(username)
  if (bad) throw new InvalidInputError([{where: 'USERNAME', message: bad}], 'nothing was changed')
  const user = await node.dir.getUser(username, signal)
  if (user === undefined) {
    const people = (await node.dir.listUsers(signal)).map((p) => p.username)
    const guess = didYouMean(username, people)
    const also = guess.length > 0 ? `; did you mean ${guess.map((g) => `"${g}"`).join(' or ')}?` : ''
    throw new InvalidInputError(
      [{where: 'USERNAME', message: `no user "${printable(username)}" in the directory on ${t.description}${also}`}],
      'run `citc users` to list the cluster\'s users; nothing was changed',
    )
  }
  const home = user.home || homeOf(node.homeRoot, username)
  const ownHome = homeOf(node.homeRoot, username)
  if (o.deleteHome && home !== ownHome) {
    throw new InvalidInputError(
      [{where: '--delete-home', message: `the home of ${username} in the directory is ${printable(home)}, not ${ownHome}: citc deletes only a home directly under the home root ${node.homeRoot}`}],
      'leave --delete-home out and remove that directory by hand if it should go; nothing was changed',
    )
  }
  const homeExists = (await t.run(['sh', '-c', 'test -e "$1" || test -L "$1"', 'sh', home], {timeoutMs: 30_000, signal})).exitCode === 0
  const slurmAccounts = node.accounting ? await node.accounting.userAccounts(username, signal) : null
  const jobs = node.jobs ? await jobsOfUid(t, node.jobs.confPath, user.uidNumber, signal) : []
  if (jobs.length > 0 && !o.force) {
    throw new CitcError('usage', `${username} has ${plural(jobs.length, 'active job')} (${jobList(jobs)}): refusing to remove a user whose jobs run or wait`, {
      hint: `wait for them to end, cancel them (scancel ${jobs.map((j) => j.id).join(' ')}), or pass --force to cancel them first; nothing was changed`,
      details: {jobs},
    })
  }
  return {user, slurmAccounts, jobs, home, homeExists, deleteHome: o.deleteHome}
}

const jobList = (jobs: readonly UserJob[]) => jobs.map((j) => `${j.id} ${j.state}`).join(', ')

/** What the plan removes, for the confirmation. */
export function removalSummary(p: RemovalPlan): string {
  const parts: string[] = []
  if (p.jobs.length > 0) parts.push(`cancel ${plural(p.jobs.length, 'job')} (${p.jobs.map((j) => j.id).join(', ')})`)
  if (p.slurmAccounts && p.slurmAccounts.length > 0) parts.push(`remove the Slurm associations (${p.slurmAccounts.join(', ')})`)
  parts.push(`delete the directory entry ${p.user.dn}`)
  if (p.deleteHome && p.homeExists) parts.push(`DELETE the home ${p.home} and everything in it`)
  const kept = !p.deleteHome && p.homeExists ? `; the home ${p.home} is kept` : ''
  return `${parts.join(', ')}${kept}`
}

/**
 * --force: scancel the jobs, then wait until squeue lists none of the uid (cancelling any that
 * appear). The IDs cancelled go into `cancelled` as they are; `onCancelled` is told after the first scancel.
 */
async function cancelJobs(
  t: Transport,
  node: Node,
  uid: number,
  first: readonly UserJob[],
  o: {cancelled: string[]; onCancelled: () => void; onProgress: (text: string) => void; signal?: AbortSignal},
): Promise<void> {
  const jobs = node.jobs!
  const {cancelled, signal} = o
  const cancel = async (list: readonly UserJob[]) => {
    const ids = list.map((j) => j.id).filter((id) => !cancelled.includes(id))
    if (ids.length === 0) return
    await t.check(slurmArgv(jobs.confPath, 'scancel', ids), {timeoutMs: 60_000, signal})
    cancelled.push(...ids)
  }
  await cancel(first)
  o.onCancelled()
  const deadline = Date.now() + jobs.waitMs
  for (;;) {
    const left = await jobsOfUid(t, jobs.confPath, uid, signal)
    if (left.length === 0) return
    if (Date.now() >= deadline) {
      throw remoteError(`${plural(left.length, 'job')} of uid ${uid} still in squeue ${jobs.waitMs / 1000} s after scancel: ${jobList(left)}`, {
        hint: 'see `squeue --all` on the management node (a node may be slow to end a job); run the same command again once they are gone',
        details: {jobs: left},
      })
    }
    o.onProgress(`waiting for ${plural(left.length, 'job')} to end: ${jobList(left)}`)
    await cancel(left) // jobs that came after the first scancel
    await sleep(jobs.pollMs, signal)
    signal?.throwIfAborted()
  }
}

interface Change {
  what: string
  /** What a person runs on the management node if it was not done. */
  manual: string
}

/**
 * Remove `username` from the node behind `opts.transport`. Throws InvalidInputError (exit 3) for an
 * unknown user or a home citc did not make, a usage error (exit 2) while they have jobs and no
 * --force — in both cases before any change — and a remote error (exit 4) naming what was done and
 * what is left when a change fails.
 */
export async function removeUser(username: string, opts: RemoveUserOptions): Promise<RemovedUser> {
  const t = opts.transport
  const signal = opts.signal
  let node: Node | undefined
  let plan: RemovalPlan | undefined
  await taskList(
    [
      {
        title: `Read the directory settings on ${t.description}`,
        task: async () => {
          node = await readNode(opts)
        },
      },
      {
        title: `Find ${username}: directory entry, Slurm associations, jobs`,
        task: async (_, task) => {
          plan = await checkRemoval(username, node!, opts)
          const accounts = plan.slurmAccounts === null ? '' : `, ${plural(plan.slurmAccounts.length, 'Slurm account')}`
          task.title = `Found ${username} (uid ${plan.user.uidNumber}${accounts}, ${plural(plan.jobs.length, 'active job')})`
        },
      },
    ],
    opts.renderer,
  ).run()
  const p = plan!
  const n = node!
  await opts.confirm?.(p)
  signal?.throwIfAborted()

  const result: RemovedUser = {
    user: username,
    uid: p.user.uidNumber,
    home: p.home,
    removed: {directory: p.user.dn, slurmAccounts: [], home: false},
    cancelledJobs: [],
  }
  const bind = `-x -H ${n.ldap.uri} -D ${n.ldap.adminDn} -y ${n.ldap.adminPasswordFile}`
  const todo: Change[] = [
    ...(p.jobs.length > 0 ? [{what: `the jobs ${p.jobs.map((j) => j.id).join(', ')}`, manual: `scancel ${p.jobs.map((j) => j.id).join(' ')}`}] : []),
    ...(p.slurmAccounts && p.slurmAccounts.length > 0 ? [{what: `the Slurm associations of ${username}`, manual: `sacctmgr -i delete user where name=${username}`}] : []),
    {what: `the directory entry ${p.user.dn}`, manual: `ldapdelete ${bind} ${shellQuote([p.user.dn])}`},
    ...(p.deleteHome && p.homeExists ? [{what: `the home ${p.home}`, manual: `rm -rf -- ${shellQuote([p.home])}`}] : []),
  ]
  const done: Change[] = []
  /** The next change of `todo` is done (the steps run in its order, and only those in it run). */
  const markDone = () => done.push(todo[done.length])
  try {
    await taskList(
      [
        {
          title: `Cancel ${plural(p.jobs.length, 'job')} of ${username}`,
          skip: () => (p.jobs.length === 0 ? 'no active jobs' : false),
          task: async (_, task) => {
            await cancelJobs(t, n, p.user.uidNumber, p.jobs, {cancelled: result.cancelledJobs, onCancelled: markDone, onProgress: (text) => (task.output = text), signal})
            task.title = `Cancelled ${plural(result.cancelledJobs.length, 'job')} of ${username} (${result.cancelledJobs.join(', ')})`
          },
        },
        {
          title: `Remove ${username} from Slurm accounting${p.slurmAccounts?.length ? ` (${p.slurmAccounts.join(', ')})` : ''}`,
          skip: () => (p.slurmAccounts === null ? 'accounting not asked for' : p.slurmAccounts.length === 0 ? 'no Slurm associations' : false),
          task: async () => {
            await n.accounting!.deleteUser(username)
            result.removed.slurmAccounts = p.slurmAccounts!
            markDone()
          },
        },
        {
          title: `Delete the directory entry ${p.user.dn}`,
          task: async () => {
            signal?.throwIfAborted()
            await n.dir.deleteDn(p.user.dn)
            markDone()
          },
        },
        {
          title: p.deleteHome ? `Delete the home ${p.home}` : `Keep the home ${p.home}`,
          skip: () => (!p.homeExists ? `there is no ${p.home}` : p.deleteHome ? false : `kept: ${p.home} (--delete-home deletes it)`),
          task: async () => {
            signal?.throwIfAborted()
            await t.check(['rm', '-rf', '--', p.home], {timeoutMs: SHELL_TIMEOUT_MS, signal})
            result.removed.home = true
            markDone()
          },
        },
      ],
      opts.renderer,
    ).run()
  } catch (error) {
    const cause = error as Error
    const left = todo.slice(done.length)
    const again = ['citc remove-user', username, ...(opts.force ? ['--force'] : []), ...(opts.deleteHome ? ['--delete-home'] : [])].join(' ')
    const message =
      `removing ${username} failed: ${cause.message}` +
      (done.length > 0 ? `\nDone: ${done.map((c) => c.what).join('; ')}.` : '\nNothing had been changed yet.') +
      `\nLeft (run \`${again}\` again, or by hand on the management node):\n${left.map((c) => `  ${c.what}\n    ${c.manual}`).join('\n')}`
    const details = {done: done.map((c) => c.what), left: left.map((c) => ({what: c.what, manual: c.manual}))}
    // Ctrl-C is a cancellation (130) whatever the step threw when it saw the signal.
    if (signal?.aborted) throw new CitcError('cancelled', message, {details, cause})
    if (cause instanceof CitcError) throw new CitcError(cause.kind, message, {hint: cause.hint, details: {...cause.details, ...details}, cause})
    throw new CitcError('unexpected', message, {details, cause})
  }
  if (!p.homeExists) opts.note?.(`note: ${username} had no home at ${p.home}`)
  return result
}

export interface RemoveUserInput {
  cluster?: string
  username: string
  deleteHome: boolean
  force: boolean
  /** Wait for another citc command holding the cluster instead of refusing. */
  wait: boolean
}

export interface RemoveUserResult extends RemovedUser {
  cluster: string
  logFile: string
}

/** The sentence for people once it is done. */
export function removedText(r: RemovedUser): string {
  const parts = [
    ...(r.cancelledJobs.length > 0 ? [`cancelled ${plural(r.cancelledJobs.length, 'job')} (${r.cancelledJobs.join(', ')})`] : []),
    ...(r.removed.slurmAccounts.length > 0 ? [`removed the Slurm associations (${r.removed.slurmAccounts.join(', ')})`] : []),
    `deleted the directory entry ${r.removed.directory}`,
    r.removed.home ? `deleted the home ${r.home}` : `kept the home ${r.home} (pass --delete-home to delete it)`,
  ]
  return `Removed ${r.user} (uid ${r.uid}): ${parts.join('; ')}.`
}

export async function runRemoveUser(io: Io, input: RemoveUserInput, dataDir: string, o: {layout?: RemoveUserLayout} = {}): Promise<RemoveUserResult> {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const bad = usernameProblem(input.username)
  if (bad) throw new InvalidInputError([{where: 'USERNAME', message: bad}], 'nothing was changed')

  return clusterWorkflow(
    {
      paths: registry.paths(name),
      command: 'citc remove-user',
      renderer: io.renderer,
      lock: {wait: input.wait, timeoutMs: 30 * 60_000},
      // A refusal (unknown user, jobs, no confirmation) changed nothing: its own message is the whole story.
      rewrap: (error, {logFile}) =>
        ['invalidInput', 'usage', 'cancelled'].includes(error.kind) && !error.details?.done
          ? error
          : new CitcError(error.kind, error.message, {hint: error.hint ?? `full log: ${logFile('remove-user')}`, details: {...error.details, logFile: logFile('remove-user')}, cause: error}),
    },
    async (wf) => {
      const logFile = wf.logFile('remove-user')
      const transport = withLog(await connectCluster(record, {signal: wf.signal}), logFile)
      wf.cleanup(() => transport.close())
      const removed = await wf.guard(() =>
        removeUser(input.username, {
          transport,
          renderer: io.renderer,
          signal: wf.signal,
          note: io.note,
          deleteHome: input.deleteHome,
          force: input.force,
          confirm: (plan) => confirmOrRefuse(io, `Remove ${input.username} (uid ${plan.user.uidNumber}, ${plan.user.name}) from ${name}: ${removalSummary(plan)}?`),
          ...o.layout,
        }),
      )
      io.log(removedText(removed))
      return {cluster: record.name, ...removed, logFile}
    },
  )
}
