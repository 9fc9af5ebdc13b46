// `citc accounts apply`: accounts.yaml → slurmdbd, like finish does limits.yaml → slurm.conf. Under the
// cluster's lock: read what the cluster has (accounts, TRES, QOS, directory users, active jobs), check
// the file against it (every problem at file:line:col, exit 3, nothing changed), plan (plan.ts), show
// the plan, confirm, apply with sacctmgr (slurmdbd.ts), then read everything again and plan once more:
// the plan must come out empty, or the apply failed. An interrupted apply leaves the operations done so
// far; running apply again finishes the rest (a plan is always from what slurmdbd has now).
import {readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {readInputFile} from '../../config/input-file.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {type CitcError, remoteError} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import type {Transport} from '../../transport/types.js'
import {Directory, readLdapConfig} from '../../users/directory.js'
import type {AccountOp, AccountsPlan} from '../../accounts/ops.js'
import {parseAccounts} from '../../accounts/parse.js'
import {planAccounts} from '../../accounts/plan.js'
import {opLine, planText, refusalLine} from '../../accounts/render.js'
import {AccountsStore} from '../../accounts/slurmdbd.js'
import type {AccountingState, AccountsFile} from '../../accounts/types.js'
import type {SessionTarget} from '../management-session.js'
import {clusterWorkflow, type Step, type WorkflowContext} from '../workflow.js'

export interface AccountsApplyInput {
  cluster?: string
  file: string
  /** Remove accounts and users (from accounts) that the file does not declare. */
  prune: boolean
  /** Show the plan, change nothing. */
  dryRun: boolean
  wait: boolean
}

export interface AccountsApplyResult {
  cluster: string
  file: string
  changed: boolean
  plan: {ops: (AccountOp & {line: string})[]; refused: {kind: string; account: string; user?: string; reason: string; line: string}[]}
  applied: boolean
  /** Why the file's limits would not hold on this cluster (slurm.conf settings missing). */
  warnings: string[]
  logFile: string
}

interface ApplyContext extends WorkflowContext {
  record: ClusterRecord
  transport: Transport
  input: AccountsApplyInput
  text: string
  store?: AccountsStore
  defaultAccount?: string
  desired?: AccountsFile
  state?: AccountingState
  plan?: AccountsPlan
}

/** Jobs matter to prune alone (it keeps what has some): without it, slurmctld need not even answer. */
const activeJobs = (ctx: ApplyContext) => (ctx.input.prune ? ctx.store!.jobs(ctx.signal) : Promise.resolve([]))

const planFor = (ctx: ApplyContext, state: AccountingState, active: readonly {account: string; user: string}[]): AccountsPlan =>
  planAccounts(ctx.desired!, state, {prune: ctx.input.prune, clusterDefaultAccount: ctx.defaultAccount, runningJobs: active})

/** What the plan needs from the cluster, read at once; the file checked against it. */
async function readAndPlan(ctx: ApplyContext): Promise<AccountsPlan> {
  const t = ctx.transport
  const store = ctx.store!
  const dir = new Directory(t, await readLdapConfig(t))
  const [state, tres, qos, people, active] = await Promise.all([store.state(ctx.signal), store.tres(ctx.signal), store.qos(ctx.signal), dir.listUsers(ctx.signal), activeJobs(ctx)])
  ctx.state = state
  ctx.desired = parseAccounts(ctx.text, {file: ctx.input.file, tres, qos, directoryUsers: people.map((p) => p.username)})
  return planFor(ctx, state, active)
}

const connect: Step<ApplyContext> = {
  title: (ctx) => `Read the accounts of ${ctx.record.name} (${ctx.transport.description})`,
  run: async (ctx, task) => {
    const contract = await readManagementContract(ctx.transport)
    ctx.store = await AccountsStore.open(ctx.transport, contract.confPath)
    ctx.defaultAccount = contract.name.toLowerCase()
    ctx.plan = await readAndPlan(ctx)
    const n = ctx.state!.accounts.length - 1
    task.title = `Read the accounts of ${ctx.record.name}: ${n} account${n === 1 ? '' : 's'}, ${Object.keys(ctx.state!.defaultAccounts).length} users`
  },
}

const apply: Step<ApplyContext> = {
  title: (ctx) => `Apply ${ctx.plan!.ops.length} change${ctx.plan!.ops.length === 1 ? '' : 's'} with sacctmgr`,
  run: async (ctx, task) => {
    const total = ctx.plan!.ops.length
    await ctx.store!.apply(
      ctx.plan!.ops,
      (n, op) => {
        task.output = `${n}/${total}: ${opLine(op)}`
      },
      ctx.signal,
    )
  },
}

const verify: Step<ApplyContext> = {
  title: 'Verify: plan again from what slurmdbd has now',
  run: async (ctx) => {
    // The file was checked against the TRES, QOS and directory already: only slurmdbd is read again.
    const [state, active] = await Promise.all([ctx.store!.state(ctx.signal), activeJobs(ctx)])
    const again = planFor(ctx, state, active)
    if (again.ops.length > 0) throw notTaken(ctx.input.file, ctx.plan!, again)
  },
}

/**
 * sacctmgr said yes, and slurmdbd holds something else: what did not take, and what did (nothing is
 * undone: the changes that took stay, and a re-run plans from them).
 */
export function notTaken(file: string, planned: AccountsPlan, again: AccountsPlan): CitcError {
  const left = again.ops.map(opLine)
  const took = planned.ops.length - planned.ops.map(opLine).filter((line) => left.includes(line)).length
  const s = (n: number) => (n === 1 ? '' : 's')
  return remoteError(
    `slurmdbd does not hold what ${file} declares after the apply: sacctmgr accepted every change, and ${left.length} did not take:\n` +
      `${left.map((line) => `  ${line}`).join('\n')}\n` +
      `${took} of the ${planned.ops.length} planned change${s(planned.ops.length)} took and stay${took === 1 ? 's' : ''} (nothing is undone)`,
    {hint: 'run the same command again: it plans from what slurmdbd holds now and does only what is left; if the same lines remain, run them by hand with sacctmgr to see its message'},
  )
}

function planDocument(plan: AccountsPlan): AccountsApplyResult['plan'] {
  return {ops: plan.ops.map((op) => ({...op, line: opLine(op)})), refused: plan.refused.map((r) => ({...r, line: refusalLine(r)}))}
}

export interface RunAccountsApplyOptions {
  /** Where the management node is reached (tests: a node in memory); default: the cluster's record. */
  node?: SessionTarget
}

export async function runAccountsApply(io: Io, input: AccountsApplyInput, dataDir: string, o: RunAccountsApplyOptions = {}): Promise<AccountsApplyResult> {
  const text = readInputFile(input.file, {hint: 'pass the accounts file with --file (see examples/accounts.yaml)'})
  // The file's own syntax and structure, before a connection (the cluster's TRES, QOS and users are
  // checked once they are read).
  parseAccounts(text, {file: input.file, tres: null})
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)

  return clusterWorkflow(
    {
      paths: registry.paths(name),
      command: 'citc accounts apply',
      renderer: io.renderer,
      lock: {wait: input.wait, timeoutMs: 30 * 60_000},
      // Bad input (the file against the cluster's TRES, QOS and users) changed nothing: its own message is the whole story.
      log: {kind: 'accounts', passThrough: (error) => error.kind === 'invalidInput'},
    },
    async (wf) => {
      const logFile = wf.logFile('accounts')
      const transport = await wf.connect(o.node ?? record)
      const ctx: ApplyContext = {...wf.context, record, transport, input, text}
      await wf.steps([connect], ctx)
      const plan = ctx.plan!
      const hasLimits = ctx.desired!.accounts.some((a) => Object.keys(a.limits).length > 0)
      const warnings = hasLimits ? ctx.store!.enforcementGaps().map((g) => `slurm.conf lacks ${g}: the limits are stored, but slurmctld does not enforce them`) : []
      for (const w of warnings) io.note(`warning: ${w}. Add it to ${ctx.store!.confPath} (outside the STARTNODES block) and restart slurmctld.`)
      const doc: AccountsApplyResult = {cluster: name, file: input.file, changed: plan.ops.length > 0, plan: planDocument(plan), applied: false, warnings, logFile}
      if (!io.json) io.log(planText(plan).trimEnd())
      if (plan.ops.length === 0 || input.dryRun) return doc
      return wf.guard(async () => {
        await confirmOrRefuse(io, `Apply ${plan.ops.length} change${plan.ops.length === 1 ? '' : 's'} to the accounts of ${name}?`)
        wf.signal.throwIfAborted()
        await wf.steps([apply, verify], ctx)
        io.note(`Applied ${plan.ops.length} change${plan.ops.length === 1 ? '' : 's'}; slurmdbd now matches ${input.file}. Full log: ${logFile}`)
        return {...doc, applied: true}
      })
    },
  )
}
