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
import {imageBuilderFor} from '../rebuild-image/rebuild-image.js'
import {applyFinish, type ApplyResult, type ClusterState, readClusterState, settleReason, settleUnchanged} from './apply-config.js'
import {applyQuestion, gpuImageLines, gpuImageNotice, gpuImageRefusal, type GpuImageNotice} from './gpu-image.js'
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
  /** Apply with --yes although GPU shapes would boot an image without the driver (gpu-image.ts). */
  withoutGpuImage?: boolean
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
      const ctx: FinishContext = {...wf.context, record, transport, controller, request, force: input.force, finishLog: logFile}
      return wf.guard(async () => {
        await wf.steps([readState, generateAndCompare, checkGpuImage], ctx)
        const plan = ctx.plan!
        const gpuImage = ctx.gpuImage
        if (!io.json) {
          io.log([...describePlan(plan), ...(gpuImage ? gpuImageLines(gpuImage) : [])].join('\n'))
          if (plan.changed) io.log('\n' + plan.unifiedDiff.trimEnd())
        }
        const doc = {cluster: record.name, changed: plan.changed, plan: planDocument(plan), gpuImage: gpuImage ?? null, applied: false, logFile}
        // Nothing to change, but slurmctld may not run the files: down, or left by an interrupted finish.
        const reason = plan.changed ? undefined : settleReason(ctx.state!)
        if (reason) io.note(`${input.dryRun ? 'Without --dry-run: ' : ''}${reason}.`)
        if (input.dryRun) return doc
        if (!plan.changed) {
          await wf.steps([settle], ctx)
          // The cluster runs this configuration: the stored copy is now this file.
          writeStoredLimits(storedPath, limitsText)
          return reason ? {...doc, applied: true, action: ctx.result!.action, backup: null, poweredDown: [], repaired: reason} : doc
        }

        // Nothing has changed yet: a refusal here leaves the cluster as it was.
        const refusal = gpuImageRefusal(gpuImage, plan, {yes: io.yes, withoutGpuImage: input.withoutGpuImage ?? false, cluster: record.name})
        if (refusal) throw refusal
        await confirmOrRefuse(io, applyQuestion(record.name, gpuImage))
        wf.signal.throwIfAborted()
        await wf.steps([apply], ctx)
        const r = ctx.result!
        writeStoredLimits(storedPath, limitsText)
        io.note(`Applied (${r.action}).${r.backup ? ` Backup: ${r.backup}.` : ''} Full log: ${logFile}`)
        if (gpuImage) io.note(`Now run \`${gpuImage.command}\`: until then, nodes of ${gpuImage.shapes.join(', ')} fail to start (no GPU driver in the image).`)
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
  /** The run's log (the image builder logs its own calls there). */
  finishLog: string
  /** Set by checkGpuImage: GPU shapes whose image has no driver. */
  gpuImage?: GpuImageNotice
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

/**
 * The images the configuration's GPU shapes boot (the clouds': images.json on the management node, no
 * cloud call). A record citc cannot read is a note, not a failure: it is the image's problem, not
 * this configuration's, and the resume program reports it per node.
 */
const checkGpuImage: Step<FinishContext> = {
  title: 'Check that the GPU shapes have a GPU driver in their image',
  skip: (ctx) => (ctx.generated!.groups.some((g) => (g.gpu?.count ?? 0) > 0) ? false : 'no GPU shapes'),
  run: async (ctx, task) => {
    try {
      ctx.gpuImage = await gpuImageNotice(ctx.record.name, ctx.generated!.groups, () => imageBuilderFor(ctx.record, ctx.transport, ctx.signal, ctx.finishLog))
    } catch (error) {
      task.output = `could not read the cluster's image records: ${error instanceof Error ? error.message : String(error)}`
      return
    }
    task.title = ctx.gpuImage ? `GPU shapes ${ctx.gpuImage.shapes.join(', ')}: their image has no GPU driver` : 'GPU shapes: their image has the driver, or citc builds it'
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

const settle: Step<FinishContext> = {
  // Without a reason it only removes what an interrupted upload may have left (rm -f): nothing to say.
  title: (ctx) => (settleReason(ctx.state!) ? 'Restart slurmctld with the configuration on disk' : 'Nothing to apply: slurmctld runs this configuration'),
  rendererOptions: {persistentOutput: false},
  run: async (ctx, task) => {
    ctx.result = await settleUnchanged({
      transport: ctx.transport,
      controller: ctx.controller,
      plan: ctx.plan!,
      generated: ctx.generated!,
      state: ctx.state!,
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
