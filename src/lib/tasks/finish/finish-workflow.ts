// `citc finish`: a preview without a cluster (preview.ts), or on a cluster: read what it runs,
// generate and compare, show the plan, confirm, apply (apply-config.ts) — under the cluster's lock.
import {clusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {usageError} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import {Controller} from '../../slurm/controller.js'
import type {Generated} from '../../slurm/generate.js'
import {describePlan, type FinishPlan} from '../../slurm/plan.js'
import type {Transport} from '../../transport/types.js'
import {clusterWorkflow, type Step, type WorkflowContext} from '../workflow.js'
import {applyFinish, type ApplyResult, type ClusterState, readClusterState} from './apply-config.js'
import {generateAndPlan, generateFromLimits, requestFor} from './generate-config.js'
import {readLimitsFile} from './limits-file.js'
import {readStoredLimits, storedLimitsPath, withStoredMachines, writeStoredLimits} from './stored-limits.js'
import {preview, type PreviewInput} from './preview.js'

export interface FinishInput {
  /** The cluster (default: the only one, or CITC_CLUSTER). */
  cluster?: string
  limitsFile: string
  /** Show the configuration (a preview) or the changes (a cluster), change nothing. */
  dryRun: boolean
  /** With dryRun: preview for this provider, without a cluster. */
  preview?: Omit<PreviewInput, 'limitsFile' | 'outputDir'>
  /** A preview writes slurm.conf and gres.conf here (on a cluster: refused). */
  outputDir?: string
  /** Cancel the jobs of nodes that leave or change; go on when slurmctld is down although nodes leave. */
  force: boolean
  /** Wait for another citc command holding the cluster instead of refusing. */
  wait: boolean
}

export async function runFinish(io: Io, input: FinishInput, dataDir: string) {
  if (input.preview) {
    if (!input.dryRun) throw usageError('--provider previews a configuration without a cluster: add --dry-run', 'to change a cluster, use -c NAME instead of --provider')
    return preview(io, {...input.preview, limitsFile: input.limitsFile, outputDir: input.outputDir})
  }
  if (input.outputDir) throw usageError('--output-dir goes with --provider (a preview without a cluster)')

  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const given = readLimitsFile(input.limitsFile)
  const storedPath = storedLimitsPath(registry.paths(name).dir)
  // Joined machines are kept: the stored copy's static: goes with the given file. Validated before
  // connecting to anything: bad input changes nothing and costs no round trip. The given file alone
  // first, so its problems are at its own lines.
  const withMachines = () => {
    const text = withStoredMachines(given, input.limitsFile, readStoredLimits(storedPath))
    if (text !== given) generateFromLimits(requestFor(record, input.limitsFile, given))
    const request = requestFor(record, text === given ? input.limitsFile : `${input.limitsFile} (with the joined machines of ${storedPath})`, text)
    generateFromLimits(request)
    return {limitsText: text, request}
  }
  withMachines()

  return clusterWorkflow(
    {
      paths: registry.paths(name),
      command: 'citc finish',
      renderer: io.renderer,
      lock: {wait: input.wait, timeoutMs: 30 * 60_000},
      log: {kind: 'finish'},
    },
    async (wf) => {
      // Again under the cluster's lock: a citc node add/remove that ran meanwhile changed the stored copy.
      const {limitsText, request} = withMachines()
      const logFile = wf.logFile('finish')
      const transport = await wf.connect(record)
      const controller = new Controller(transport, {confPath: record.slurm.confPath, restartCommand: record.slurm.restartCommand})
      const ctx: FinishContext = {...wf.context, record, transport, controller, request, force: input.force}
      return wf.guard(async () => {
        await wf.steps([readState, generateAndCompare], ctx)
        const plan = ctx.plan!
        if (!io.json) {
          io.log(describePlan(plan).join('\n'))
          if (plan.changed) io.log('\n' + plan.unifiedDiff.trimEnd())
        }
        const doc = {cluster: record.name, changed: plan.changed, plan: planDocument(plan), applied: false, logFile}
        if (input.dryRun) return doc
        if (!plan.changed) {
          // The cluster runs this configuration: the stored copy is now this file.
          writeStoredLimits(storedPath, limitsText)
          return doc
        }

        await confirmOrRefuse(io, `Apply this configuration to ${record.name}?`)
        wf.signal.throwIfAborted()
        await wf.steps([apply], ctx)
        const r = ctx.result!
        writeStoredLimits(storedPath, limitsText)
        io.note(`Applied (${r.action}).${r.backup ? ` Backup: ${r.backup}.` : ''} Full log: ${logFile}`)
        return {...doc, applied: true, action: r.action, backup: r.backup ?? null, poweredDown: r.poweredDown}
      })
    },
  )
}

interface FinishContext extends WorkflowContext {
  record: ClusterRecord
  transport: Transport
  controller: Controller
  request: ReturnType<typeof requestFor>
  force: boolean
  state?: ClusterState
  generated?: Generated
  plan?: FinishPlan
  result?: ApplyResult
}

const readState: Step<FinishContext> = {
  title: (ctx) => `Read what ${ctx.record.name} runs now (${ctx.transport.description})`,
  run: async (ctx) => {
    ctx.state = await readClusterState(ctx.transport, ctx.controller, ctx.record.slurm.programsDir)
  },
}

const generateAndCompare: Step<FinishContext> = {
  title: 'Generate and compare the configuration',
  run: (ctx) => {
    Object.assign(ctx, generateAndPlan(ctx.state!, ctx.request, ctx.record.slurm.confPath))
  },
}

const apply: Step<FinishContext> = {
  title: 'Apply the configuration',
  rendererOptions: {persistentOutput: false},
  run: async (ctx, task) => {
    ctx.result = await applyFinish({
      transport: ctx.transport,
      controller: ctx.controller,
      plan: ctx.plan!,
      generated: ctx.generated!,
      state: ctx.state!,
      force: ctx.force,
      signal: ctx.signal,
      report: (m) => {
        task.output = m
      },
    })
  },
}

function planDocument(plan: FinishPlan) {
  const {unifiedDiff, ...rest} = plan
  return {...rest, diff: unifiedDiff}
}
