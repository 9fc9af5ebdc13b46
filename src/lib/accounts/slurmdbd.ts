// What `citc accounts` needs from a cluster, read through a Transport as root on the management node:
// slurmdbd's accounts (sacctmgr-state.ts parses them), its TRES and QOS (what accounts.yaml may name),
// the jobs that are active now (prune never removes an account or user that has some), and the
// cluster's name in slurmdbd (ClusterName in slurm.conf). Applying a plan runs its operations in
// order. Accounts and users added go in one `sacctmgr load` per run of them: slurmdbd takes about
// half a second per write call whatever it holds (measured on 22.05: 30 accounts in one call as fast
// as one), and load adds a whole tree in one call, all or nothing (100 accounts with 1,000 users: 3.5 s
// against about 150 s one call each). Users removed from one account go in one call per 200 names.
import {CitcError, remoteError} from '../errors.js'
import {parseConfLines} from '../slurm/conf-parse.js'
import {Controller} from '../slurm/controller.js'
import {ASSOC_MGR_ARGS, type AssocUsage, parseAssocMgr} from './assoc-usage.js'
import type {JobNow} from './report.js'
import type {Transport} from '../transport/types.js'
import {Accounting} from './sacctmgr.js'
import {type AccountOp, type Change, wallToMinutes} from './ops.js'
import {opArgv} from './render.js'
import {parseAccountingState, stateQueries} from './sacctmgr-state.js'
import type {AccountingState} from './types.js'
import {formatTresList} from './values.js'

/** Names per `add user a,b,c` call: sacctmgr takes lists; this keeps argv far below any limit. */
export const NAMES_PER_CALL = 200

export class AccountsStore {
  readonly accounting: Accounting
  private readonly controller: Controller
  constructor(
    readonly transport: Transport,
    /** slurm.conf on the node. */
    readonly confPath: string,
    /** ClusterName: every query and change is limited to it (a slurmdbd may serve several clusters). */
    readonly cluster: string,
    /** slurm.conf's settings (lower-case keys), when read. */
    readonly settings?: ReadonlyMap<string, string>,
  ) {
    this.accounting = new Accounting(transport, confPath)
    this.controller = new Controller(transport, {confPath})
  }

  /** ClusterName from slurm.conf on the node (no daemon needed). */
  static async open(transport: Transport, confPath: string): Promise<AccountsStore> {
    const text = (await transport.readFile(confPath))?.toString('utf8')
    if (text === undefined) throw new CitcError('remote', `${confPath} does not exist on ${transport.description}`, {hint: 'is this a citc cluster? `citc status` checks it'})
    const settings = new Map(parseConfLines(text).map((l) => [l.key.toLowerCase(), l.value]))
    const cluster = settings.get('clustername')
    if (!cluster) throw new CitcError('remote', `${confPath} on ${transport.description} has no ClusterName`, {hint: 'Slurm accounting needs a ClusterName in slurm.conf'})
    return new AccountsStore(transport, confPath, cluster.toLowerCase(), settings)
  }

  /** What slurm.conf lacks for accounts' limits to hold (empty: nothing). */
  enforcementGaps(): string[] {
    const setting = (key: string) => this.settings?.get(key.toLowerCase())?.toLowerCase() ?? ''
    const gaps: string[] = []
    if (!setting('AccountingStorageEnforce').split(',').includes('limits')) gaps.push('AccountingStorageEnforce=associations,limits,qos')
    if (setting('PriorityType') !== 'priority/multifactor') gaps.push('PriorityType=priority/multifactor (GrpTRESMins is counted by it alone)')
    return gaps
  }

  private async text(args: string[], signal?: AbortSignal): Promise<string> {
    return (await this.accounting.sacctmgr(args, signal)).stdout
  }

  async state(signal?: AbortSignal): Promise<AccountingState> {
    const q = stateQueries(this.cluster)
    const [assoc, account, user] = await Promise.all([this.text(q.assoc, signal), this.text(q.account, signal), this.text(q.user, signal)])
    return parseAccountingState({assoc, account, user})
  }

  /** The TRES slurmdbd counts, as accounts.yaml names them: "cpu", "mem", "gres/gpu". */
  async tres(signal?: AbortSignal): Promise<string[]> {
    const rows = await this.accounting.show(['tres', 'format=Type,Name'], signal)
    return rows.map(([type, name]) => (name ? `${type}/${name}` : type).toLowerCase())
  }

  async qos(signal?: AbortSignal): Promise<string[]> {
    const rows = await this.accounting.show(['qos', 'format=Name'], signal)
    return rows.map((r) => r[0]).filter(Boolean)
  }

  /** Jobs pending, running or suspended now, with Slurm's reason (squeue as root sees them all). */
  async jobs(signal?: AbortSignal): Promise<JobNow[]> {
    const argv = this.controller.slurmArgv('squeue', ['--noheader', '--states=PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING', '--format=%i|%a|%u|%T|%r'])
    const r = await this.transport.check(argv, {timeoutMs: 60_000, signal})
    return r.stdout
      .split('\n')
      .filter((l) => l.includes('|'))
      .map((l) => {
        const [id, account, user, state, ...reason] = l.trim().split('|')
        return {id, account, user, state, reason: reason.join('|')}
      })
  }

  /** How much of each limit every association has used, as slurmctld counts it. */
  async usage(signal?: AbortSignal): Promise<AssocUsage[]> {
    const argv = this.controller.slurmArgv('scontrol', [...ASSOC_MGR_ARGS])
    const r = await this.transport.check(argv, {timeoutMs: 60_000, signal})
    return parseAssocMgr(r.stdout)
  }

  /** `sacctmgr load` of a file written to a temporary file on the node (not stdin: sacctmgr opens the
   * path, and a socket there cannot be opened), removed afterwards. All or nothing (loadText, loadFailure). */
  private async load(text: string, signal?: AbortSignal): Promise<void> {
    const t = this.transport
    const path = (await t.check(['mktemp', '-t', 'citc-accounts-load.XXXXXX'], {timeoutMs: 30_000, signal})).stdout.trim()
    try {
      await t.writeFile(path, text, {mode: 0o600})
      const r = await t.run(this.accounting.argv(['-i', 'load', `file=${path}`]), {timeoutMs: 30 * 60_000, signal})
      if (r.exitCode !== 0) throw loadFailure(text, r, t.description)
    } finally {
      await t.run(['rm', '-f', '--', path], {timeoutMs: 30_000}).catch(() => undefined)
    }
  }

  /** Run the plan's operations in order; `done` is told after each call how many operations are done. */
  async apply(ops: readonly AccountOp[], done: (count: number, op: AccountOp) => void, signal?: AbortSignal): Promise<void> {
    let count = 0
    for (const batch of batches(ops)) {
      signal?.throwIfAborted()
      if (isLoadable(batch[0])) {
        await this.load(loadText(batch, this.cluster), signal)
      } else {
        await this.accounting.sacctmgr(batchArgv(batch, this.cluster), signal)
      }
      count += batch.length
      done(count, batch.at(-1) as AccountOp)
    }
  }
}

/** Accounts and users added: what `sacctmgr load` does. */
const isLoadable = (op: AccountOp): boolean => op.op === 'addAccount' || op.op === 'addUser'

/**
 * Consecutive operations that one sacctmgr call can do: every account and user added (one load), or
 * users removed from one account (up to NAMES_PER_CALL). Anything else is a call of its own.
 */
export function batches(ops: readonly AccountOp[]): AccountOp[][] {
  const out: AccountOp[][] = []
  for (const op of ops) {
    const last = out.at(-1)
    const head = last?.[0]
    const joins =
      head !== undefined &&
      ((isLoadable(head) && isLoadable(op)) || (head.op === 'removeUser' && op.op === 'removeUser' && head.account === op.account && last!.length < NAMES_PER_CALL))
    if (joins) last!.push(op)
    else out.push([op])
  }
  return out
}

/** An added account's limits in load's words (MaxWall is MaxWallDurationPerJob there, in minutes). */
function loadLimits(changes: readonly Change[]): string[] {
  const out: string[] = []
  for (const field of ['GrpTRESMins', 'GrpTRES']) {
    const tres = changes.filter((c) => c.field === field && c.to !== undefined)
    if (tres.length > 0) out.push(`${field}=${formatTresList(Object.fromEntries(tres.map((c) => [c.tres as string, Number(c.to)])))}`)
  }
  for (const c of changes) {
    if (c.to === undefined || c.field === 'GrpTRESMins' || c.field === 'GrpTRES') continue
    if (c.field === 'MaxWall') out.push(`MaxWallDurationPerJob=${wallToMinutes(c.to)}`)
    else if (c.field === 'QOS') out.push(`QOS='${c.to}'`)
    else out.push(`${c.field}=${c.to}`)
  }
  return out
}

/**
 * Free text as a load file must hold it. sacctmgr reads each line of the file as a config line first
 * (src/sacctmgr/file_functions.c, _get_next_line): everything from a "#" on is a comment, and a
 * backslash escapes the character after it and is dropped. Unescaped, a description "Room #2" leaves
 * an unterminated quote (sacctmgr stops: nothing of the file is loaded), and "C:\lab" is stored as
 * "C:lab" (`modify` stores it as written: every later apply would find it changed). Escaped, both
 * read back as written.
 */
export const loadQuoted = (text: string): string => `'${text.replace(/[\\#]/g, (c) => `\\${c}`)}'`

/**
 * The file `sacctmgr load` reads for a run of added accounts and users (the format of `sacctmgr
 * dump`): each `Parent - 'p'` line says where the Account and User lines after it go. Names were
 * checked by parse.ts; free text holds no quote (names.ts textProblem), so '…' cannot be broken out of,
 * and its "#" and backslashes are escaped (loadQuoted).
 *
 * sacctmgr reads every line before it adds anything, and a line it cannot read stops it with nothing
 * added — except a Parent line naming an account slurmdbd does not have: that stops the reading, and
 * what was read before it IS added (exit 1; seen on 22.05, file_functions.c breaks out without an
 * error there). Such an account was in slurmdbd when the plan was made, and someone removed it since.
 * So the file first names every parent it uses that it does not add itself, on Parent lines of their
 * own, before any Account or User line: a parent gone makes the load stop with nothing read yet.
 */
export function loadText(batch: readonly AccountOp[], cluster: string): string {
  const lines = [`Cluster - '${cluster}'`]
  const added = new Set(batch.flatMap((op) => (op.op === 'addAccount' ? [op.account] : [])))
  const existing = [...new Set(batch.flatMap((op) => (op.op === 'addAccount' ? [op.parent] : op.op === 'addUser' ? [op.account] : [])))].filter((p) => !added.has(p))
  for (const p of existing) lines.push(`Parent - '${p}'`)
  let parent: string | undefined
  const under = (p: string) => {
    if (p !== parent) lines.push(`Parent - '${p}'`)
    parent = p
  }
  for (const op of batch) {
    if (op.op === 'addAccount') {
      under(op.parent)
      const text = [
        ...(op.description === undefined ? [] : [`Description=${loadQuoted(op.description)}`]),
        ...(op.organisation === undefined ? [] : [`Organization=${loadQuoted(op.organisation)}`]),
      ]
      lines.push([`Account - '${op.account}'`, ...text, ...loadLimits(op.limits)].join(':'))
    } else if (op.op === 'addUser') {
      under(op.account)
      lines.push([`User - '${op.user}'`, ...(op.defaultAccount ? [`DefaultAccount='${op.defaultAccount}'`] : [])].join(':'))
    } else {
      throw new Error(`not an operation sacctmgr load does: ${op.op}`)
    }
  }
  return lines.join('\n') + '\n'
}

/**
 * What a failed `sacctmgr load` of `text` did, from its output. A line it could not read ("Problem
 * with line(N)", "Misformatted line(N)", an open quote) stops it before anything is added; so does a
 * missing parent named before the first Account or User line (loadText puts them there). Any other
 * failure (slurmdbd refusing the additions themselves) may come after part of them was added: said so.
 */
export function loadFailure(text: string, r: {exitCode: number; stdout: string; stderr: string}, where: string): CitcError {
  const out = `${r.stdout}\n${r.stderr}`
  const lines = text.split('\n')
  const firstChange = lines.findIndex((l) => /^(Account|User) - /.test(l)) + 1
  const parent = /line\((\d+)\) You need to add this parent \(([^)]*)\)/.exec(out)
  const unread = /Problem with line\(\d+\)|Misformatted line\(\d+\)|problem with option .* with quotes/i.test(out)
  const n = Number((parent ?? /line\((\d+)\)/.exec(out))?.[1] ?? 0)
  const line = n > 0 ? lines[n - 1] : undefined
  const nothing = unread || (parent !== null && n < firstChange)
  const at = line === undefined ? '' : ` at ${JSON.stringify(line)}`
  const why = parent ? `: account ${parent[2]} is not in slurmdbd (removed since the plan was made?)` : ''
  const last = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-5).join('\n')
  return remoteError(
    nothing
      ? `sacctmgr load failed on ${where} (exit ${r.exitCode}); nothing of it was added;${at}${why}\n${last}`
      : `sacctmgr load failed on ${where} (exit ${r.exitCode})${at}${why}; what it added before that stays\n${last}`,
    {hint: 'run `citc accounts apply` again: it plans from what slurmdbd holds now (is slurmdbd running on the management node?)'},
  )
}

/** sacctmgr's arguments for a batch of one operation, or of users removed from one account. */
export function batchArgv(batch: readonly AccountOp[], cluster: string): string[] {
  const first = batch[0]
  if (batch.length === 1 || first.op !== 'removeUser') return opArgv(first, {cluster})
  const names = batch.map((op) => (op as {user: string}).user).join(',')
  return opArgv({...first, user: names}, {cluster})
}
