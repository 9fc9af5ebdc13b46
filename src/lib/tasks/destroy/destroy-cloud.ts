// `citc destroy` for a cloud cluster, in this order:
//   1 every powered-up compute node powered down through the management node's own node program
//     (`<programsDir>/suspend <hostlist>`, as slurmctld would) — compute nodes are not in the
//     Terraform state; any failure there (dead management node or controller, a node program that
//     fails or hangs) is a warning, not a stop: step 2 finds their machines by tag;
//   2 compute instances still tagged with the cluster and unknown to the state, terminated — before
//     Terraform deletes the network, which the cloud refuses while machines still use it;
//   3 terraform destroy of everything the state knows;
//   4 a sweep by the cluster tag for what is left (images, snapshots, stray instances), deleted;
//   5 citc's state for the cluster deleted — only when all of that succeeded.
// A failed destroy keeps the state and says exactly what remains and how to retry (destroyFailure).
// A cluster whose `terraform apply` never started is forgotten without any of that (never-applied.ts).
import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {clusterRegistry, type ClusterPaths} from '../../cluster/registry.js'
import {readClusterKeys} from '../../cluster/keys.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {CitcError, withRetry} from '../../errors.js'
import {confirmByTyping, type Io} from '../../io.js'
import {cloudInputsFor, cloudOf, sweeperFor, terraformEnvFor} from '../../providers/cloud-cluster.js'
import {renderTerraformDir, type CloudProvider} from '../../providers/cloud.js'
import {cloudModule} from '../../providers/registry.js'
import {describeResource, sweep, type SweepFilter, type SweepReport} from '../../providers/sweep.js'
import {Controller, isPoweredUp} from '../../slurm/controller.js'
import {compressHostlist} from '../../slurm/hostlist.js'
import {detectTerraform, Terraform, type ResourceEvent, type TerraformTool} from '../../tools/terraform.js'
import {withManagementNode} from '../management-session.js'
import {clusterWorkflow, type Step, type StepTask, type WorkflowContext} from '../workflow.js'
import {applyNeverStarted, forgetNeverApplied} from './never-applied.js'
import {stateIds, stateResources} from './terraform-state.js'

export interface DestroyCloudOptions {
  skipSweep: boolean
}

/** How far a destroy got: its result, or — when it fails — what remains. */
interface DestroyProgress {
  stage: 'nodes' | 'instances' | 'terraform' | 'sweep' | 'forget'
  poweredDown: string[]
  warnings: string[]
  /** Resources terraform destroy destroyed. */
  destroyed: number
  /** What the sweeps found and deleted. */
  swept?: SweepReport
  /** The sweep that stopped the destroy (its failures are what remains). */
  stoppedBy?: SweepReport
}

interface DestroyCloudContext extends WorkflowContext {
  record: ClusterRecord
  name: string
  provider: CloudProvider
  paths: ClusterPaths
  skipSweep: boolean
  tool: TerraformTool
  tf: Terraform
  progress: DestroyProgress
  /** A warning: shown now, and in the result. */
  warn(message: string): void
  /** Delete citc's state of the cluster. */
  forget(): void
}

export async function destroyCloud(io: Io, name: string, dataDir: string, opts: DestroyCloudOptions) {
  const registry = clusterRegistry(dataDir)
  const record = registry.get(name)
  const {provider} = cloudOf(record)
  const paths = registry.paths(name)
  if (applyNeverStarted(record, paths)) {
    await confirmByTyping(io, name, `destroying cluster ${name} (terraform apply never started for it: only citc's state for it is deleted)`)
    await forgetNeverApplied(io, name, dataDir, 'citc destroy')
    return {destroyed: name, provider, applyStarted: false, poweredDown: [], terraform: {destroyed: 0, ran: false}, sweep: {skipped: true}, warnings: []}
  }
  await confirmByTyping(io, name, `destroying cluster ${name} (its compute nodes, everything Terraform made in ${provider}, and anything else tagged cluster=${name})`)
  const progress: DestroyProgress = {stage: 'nodes', poweredDown: [], warnings: [], destroyed: 0}
  await clusterWorkflow(
    {
      paths,
      command: 'citc destroy',
      renderer: io.renderer,
      rewrap: (error, {logFile}) => destroyFailure(error, {record, paths, progress, logs: {terraform: logFile('terraform-destroy'), sweep: logFile('sweep')}}),
    },
    async (wf) => {
      const tool = await wf.guard(() => detectTerraform({signal: wf.signal}))
      const tf = new Terraform(tool, {dir: paths.terraformDir, logFile: wf.logFile('terraform-destroy'), env: terraformEnvFor(record), signal: wf.signal, hints: cloudModule(provider).cloud.errorHints})
      const warn = (m: string) => {
        progress.warnings.push(m)
        io.note(`warning: ${m}`)
      }
      const ctx: DestroyCloudContext = {...wf.context, record, name, provider, paths, skipSweep: opts.skipSweep, tool, tf, progress, warn, forget: () => registry.remove(name)}
      await wf.steps(DESTROY_CLOUD_STEPS, ctx)
    },
  )
  const {poweredDown, destroyed, swept, warnings} = progress
  io.log(`Destroyed ${name}: ${poweredDown.length} compute node(s) powered down, ${destroyed} Terraform resource(s) destroyed${swept ? `, ${swept.deleted.length} leftover(s) swept` : ''}.`)
  for (const w of warnings) io.log(`  note: ${w}`)
  return {
    destroyed: name,
    provider,
    applyStarted: true,
    poweredDown,
    terraform: {destroyed, ran: true},
    sweep: swept ? {found: swept.found, deleted: swept.deleted} : {skipped: true},
    warnings,
  }
}

/** Step 1: a failure is a warning (step 2 finds the nodes' machines by tag), unless interrupted. */
const powerDownComputeNodes: Step<DestroyCloudContext> = {
  title: 'Power down every compute node (through the management node)',
  run: async (ctx, task) => {
    ctx.progress.stage = 'nodes'
    if (ctx.record.mgmt.host === PENDING_HOST) {
      task.title = 'Power down compute nodes: no management node was made (create stopped before apply)'
      return
    }
    try {
      await powerDown(ctx, task)
    } catch (error) {
      if (ctx.signal.aborted) throw error
      const lookedFor = ctx.skipSweep
        ? `--skip-sweep does not look for them: check the ${ctx.provider} console for instances tagged cluster=${ctx.name}, they may still run (and cost)`
        : 'the sweep looks for them by tag'
      ctx.warn(`${firstLine(error)}: its compute nodes were not powered down; ${lookedFor}`)
      task.title = `Power down compute nodes: FAILED (${firstLine(error)})`
    }
  },
}

/** Step 2, before Terraform deletes the network they use: instances the state does not know. */
const terminateTaggedInstances: Step<DestroyCloudContext> = {
  title: (ctx) => `Terminate compute instances still tagged cluster=${ctx.name}`,
  skip: (ctx) => (ctx.skipSweep ? 'skipped (--skip-sweep)' : false),
  run: async (ctx, task) => {
    ctx.progress.stage = 'instances'
    const early = await sweepOrThrow(ctx, {kinds: ['instance'], keep: stateIds(ctx.paths.terraformDir)}, (m) => (task.output = m))
    task.title = early.found.length === 0 ? 'Compute instances: none left running' : `Terminated ${early.deleted.map(describeResource).join(', ')}`
    ctx.progress.swept = early
  },
}

/** Step 3: rendered again (the working dir may be gone or stale), init if needed, destroy. */
const terraformDestroy: Step<DestroyCloudContext> = {
  title: (ctx) => `${ctx.tool.binary} destroy`,
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    ctx.progress.stage = 'terraform'
    renderTerraformDir(ctx.paths.terraformDir, cloudInputsFor(ctx.record, readClusterKeys(ctx.paths)))
    if (!existsSync(join(ctx.paths.terraformDir, '.terraform'))) {
      task.output = `${ctx.tool.binary} init`
      await ctx.tf.init({signal: ctx.signal})
    }
    const onResource = (e: ResourceEvent) => {
      if (e.phase === 'start') task.output = `${e.address}: destroying…`
      else if (e.phase === 'progress') task.output = `${e.address}: still destroying… (${e.elapsedS ?? '?'} s)`
    }
    const summary = await ctx.tf.destroy(onResource, {signal: ctx.signal})
    ctx.progress.destroyed = summary.destroyed
    task.title = `${ctx.tool.binary} destroy: ${summary.destroyed} destroyed`
  },
}

/** Step 4: whatever else carries the cluster's tag (images, snapshots, stray instances). */
const sweepLeftovers: Step<DestroyCloudContext> = {
  title: (ctx) => `Sweep what is still tagged cluster=${ctx.name} (instances, images, snapshots)`,
  skip: (ctx) => (ctx.skipSweep ? 'skipped (--skip-sweep)' : false),
  run: async (ctx, task) => {
    ctx.progress.stage = 'sweep'
    const late = await sweepOrThrow(ctx, {}, (m) => (task.output = m))
    const swept = ctx.progress.swept
    ctx.progress.swept = {found: [...(swept?.found ?? []), ...late.found], deleted: [...(swept?.deleted ?? []), ...late.deleted], failed: []}
    task.title = late.found.length === 0 ? `Sweep: nothing else tagged cluster=${ctx.name}` : `Sweep: deleted ${late.deleted.map(describeResource).join(', ')}`
  },
}

/** Step 5: only reached when everything before succeeded. */
const forgetCluster: Step<DestroyCloudContext> = {
  title: (ctx) => `Forget cluster ${ctx.name}`,
  run: (ctx) => {
    ctx.progress.stage = 'forget'
    ctx.forget()
  },
}

const DESTROY_CLOUD_STEPS = [powerDownComputeNodes, terminateTaggedInstances, terraformDestroy, sweepLeftovers, forgetCluster]

/** Suspend every powered-up node with the management node's node program; throws one line saying why it could not. */
async function powerDown(ctx: DestroyCloudContext, task: StepTask): Promise<void> {
  const {record, signal} = ctx
  const unreachable = (error: unknown): never => {
    throw new Error(`the management node ${record.mgmt.host} cannot be reached (${firstLine(error)})`)
  }
  await withManagementNode(record, {command: 'citc destroy', signal, readyTimeoutMs: 15_000, logFile: ctx.logFile('destroy'), unreachable, closeQuietly: true}, async (root) => {
    const controller = new Controller(root, {confPath: record.slurm.confPath})
    if (!(await controller.ping())) throw new Error('slurmctld on the management node does not answer')
    const up = (await controller.nodes()).filter(isPoweredUp).map((n) => n.name)
    if (up.length === 0) {
      task.title = 'Power down compute nodes: none running'
      return
    }
    const hostlist = compressHostlist(up)
    task.output = `${record.slurm.programsDir}/suspend ${hostlist}`
    const r = await root.run([`${record.slurm.programsDir}/suspend`, hostlist], {timeoutMs: 5 * 60_000, signal})
    if (r.exitCode !== 0) throw new Error(`powering down ${hostlist} failed (exit ${r.exitCode}: ${(r.stderr || r.stdout).trim().split('\n').slice(-1)[0] ?? ''})`)
    ctx.progress.poweredDown.push(...up)
    task.title = `Powered down ${up.length} compute node(s): ${hostlist}`
  })
}

/** Steps 2 and 4: a sweep that could not list or delete everything stops the destroy. */
async function sweepOrThrow(ctx: DestroyCloudContext, filter: SweepFilter, report: (m: string) => void): Promise<SweepReport> {
  const {name, provider} = ctx
  const sweepLog = ctx.logFile('sweep')
  const r = await sweep(sweeperFor(ctx.record, {logFile: sweepLog, signal: ctx.signal}), report, filter)
  if (r.listError) {
    ctx.progress.stoppedBy = r
    const tool = cloudModule(provider).cloud.sweepTool
    throw new CitcError('remote', `the sweep for leftovers tagged cluster=${name} could not run: ${r.listError}`, {
      hint:
        `${/not installed/.test(r.listError) ? tool.install : `check the credentials and the log ${sweepLog}`}; ` +
        `or, having checked the ${provider} console for resources tagged cluster=${name} yourself, add --skip-sweep`,
    })
  }
  if (r.failed.length > 0) {
    ctx.progress.stoppedBy = r
    throw new CitcError('remote', `the sweep could not delete: ${r.failed.map((f) => `${describeResource(f.resource)} (${f.error})`).join('; ')}`, {
      hint: `delete them in the ${provider} console or fix the cause (log: ${sweepLog}), then run \`citc destroy ${name}\` again`,
    })
  }
  return r
}

/** A failed or interrupted destroy: what remains (by how far it got), that the state is kept, how to go on. */
function destroyFailure(
  error: CitcError,
  o: {record: ClusterRecord; paths: ClusterPaths; progress: DestroyProgress; logs: {terraform: string; sweep: string}},
): CitcError {
  const {record, paths, progress} = o
  const name = record.name
  const remains: string[] = []
  if (progress.stage === 'nodes' || progress.stage === 'instances' || progress.stage === 'terraform') {
    const left = stateResources(paths.terraformDir)
    if (left.length > 0) remains.push(`Terraform still manages ${left.length} resource(s): ${left.join(', ')}`)
    if (progress.stage !== 'terraform' && progress.poweredDown.length === 0 && record.mgmt.host !== PENDING_HOST) remains.push(`compute nodes tagged cluster=${name} may still run`)
  }
  if (progress.stoppedBy) {
    if (progress.stoppedBy.listError) remains.push(`unknown: nothing tagged cluster=${name} could be listed`)
    for (const f of progress.stoppedBy.failed) remains.push(describeResource(f.resource))
  }
  const what = remains.length > 0 ? `\nWhat remains: ${remains.join('; ')}.` : ''
  const kept = `citc's state for ${name} is kept (${paths.dir}).`
  if (error.kind === 'cancelled') {
    return new CitcError('cancelled', `destroy interrupted${what}\n${kept}`, {hint: `run \`citc destroy ${name}\` again to finish it`})
  }
  return new CitcError(error.kind, `destroy did not finish: ${error.message}${what}\n${kept}`, {
    hint: withRetry(error, `run \`citc destroy ${name}\` again (it picks up where this one stopped)`),
    details: {...error.details, remains, warnings: progress.warnings, logs: o.logs},
  })
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]
}
