// What `citc accounts` needs from a cluster, read through a Transport as root on the management node:
// slurmdbd's accounts (sacctmgr-state.ts parses them), its TRES and QOS (what accounts.yaml may name),
// the jobs that are active now (prune never removes an account or user that has some), and the
// cluster's name in slurmdbd (ClusterName in slurm.conf). Applying a plan runs its operations in
// order, users added to (or removed from) one account in one sacctmgr call per 200 names.
import {CitcError} from '../errors.js'
import {ASSOC_MGR_ARGS, type AssocUsage, parseAssocMgr} from './assoc-usage.js'
import type {Transport} from '../transport/types.js'
import {Accounting} from '../users/accounting.js'
import type {AccountOp} from './ops.js'
import {opArgv} from './render.js'
import {parseAccountingState, stateQueries} from './sacctmgr-state.js'
import type {AccountingState} from './types.js'

/** Names per `add user a,b,c` call: sacctmgr takes lists; this keeps argv far below any limit. */
export const NAMES_PER_CALL = 200

export interface ActiveJob {
  id: string
  account: string
  user: string
  /** PENDING, RUNNING, … */
  state: string
  /** Why a pending job waits ("AssocGrpCPUMinutesLimit"); "None" when running. */
  reason: string
}

export class AccountsStore {
  readonly accounting: Accounting
  constructor(
    readonly transport: Transport,
    /** slurm.conf on the node. */
    readonly confPath: string,
    /** ClusterName: every query and change is limited to it (a slurmdbd may serve several clusters). */
    readonly cluster: string,
    /** slurm.conf's text, when read. */
    readonly slurmConf?: string,
  ) {
    this.accounting = new Accounting(transport, confPath)
  }

  /** ClusterName from slurm.conf on the node (no daemon needed). */
  static async open(transport: Transport, confPath: string): Promise<AccountsStore> {
    const text = (await transport.readFile(confPath))?.toString('utf8')
    if (text === undefined) throw new CitcError('remote', `${confPath} does not exist on ${transport.description}`, {hint: 'is this a citc cluster? `citc status` checks it'})
    const m = /^\s*ClusterName\s*=\s*(\S+)/im.exec(text)
    if (!m) throw new CitcError('remote', `${confPath} on ${transport.description} has no ClusterName`, {hint: 'Slurm accounting needs a ClusterName in slurm.conf'})
    return new AccountsStore(transport, confPath, m[1].toLowerCase(), text)
  }

  /** What slurm.conf lacks for accounts' limits to hold (empty: nothing). */
  enforcementGaps(): string[] {
    const setting = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*(\\S+)`, 'im').exec(this.slurmConf ?? '')?.[1]?.toLowerCase() ?? ''
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
  async jobs(signal?: AbortSignal): Promise<ActiveJob[]> {
    const argv = ['env', `SLURM_CONF=${this.confPath}`, 'squeue', '--noheader', '--states=PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING', '--format=%i|%a|%u|%T|%r']
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
    const argv = ['env', `SLURM_CONF=${this.confPath}`, 'scontrol', ...ASSOC_MGR_ARGS]
    const r = await this.transport.check(argv, {timeoutMs: 60_000, signal})
    return parseAssocMgr(r.stdout)
  }

  /** Run the plan's operations in order; `done` is told after each call how many operations are done. */
  async apply(ops: readonly AccountOp[], done: (count: number, op: AccountOp) => void, signal?: AbortSignal): Promise<void> {
    let count = 0
    for (const batch of batches(ops)) {
      signal?.throwIfAborted()
      await this.accounting.sacctmgr(batchArgv(batch, this.cluster), signal)
      count += batch.length
      done(count, batch.at(-1) as AccountOp)
    }
  }
}

/** Consecutive operations that one sacctmgr call can do: users added to (removed from) one account. */
export function batches(ops: readonly AccountOp[]): AccountOp[][] {
  const out: AccountOp[][] = []
  for (const op of ops) {
    const last = out.at(-1)
    const head = last?.[0]
    const joins =
      head !== undefined &&
      last!.length < NAMES_PER_CALL &&
      ((head.op === 'addUser' && op.op === 'addUser' && head.account === op.account && head.defaultAccount === op.defaultAccount) ||
        (head.op === 'removeUser' && op.op === 'removeUser' && head.account === op.account))
    if (joins) last!.push(op)
    else out.push([op])
  }
  return out
}

/** sacctmgr's arguments for a batch: the first operation's, with every user of the batch in its name list. */
export function batchArgv(batch: readonly AccountOp[], cluster: string): string[] {
  const first = batch[0]
  if (batch.length === 1 || (first.op !== 'addUser' && first.op !== 'removeUser')) return opArgv(first, {cluster})
  const names = batch.map((op) => (op as {user: string}).user).join(',')
  return opArgv({...first, user: names}, {cluster})
}
