// The user-facing flow of `citc finish`: preview without a cluster, or plan → confirm → apply on one.
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import type {ClusterRecord} from '../../cluster/schema.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {withLock} from '../../cluster/lock.js'
import {CitcError, InvalidInputError, usageError} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import type {Provider} from '../../shapes/types.js'
import type {ElasticSettings} from '../../slurm/render.js'
import {Controller} from '../../slurm/controller.js'
import {nodeDocuments, type Generated} from '../../slurm/generate.js'
import {describePlan, type FinishPlan} from '../../slurm/plan.js'
import {connectCluster} from '../../transport/connect.js'
import {withLog} from '../../transport/logged.js'
import {applyFinish, type ApplyResult, type ClusterState, generateAndPlan, generateFromLimits, readClusterState} from './apply-config.js'
import {taskList, withInterrupts} from '../listr.js'

export interface FinishFlags {
  cluster?: string
  limits: string
  'dry-run': boolean
  provider?: string
  'cluster-id': string
  'mgmt-shape'?: string
  'mgmt-ad'?: number
  'output-dir'?: string
  force: boolean
  wait: boolean
}

function readLimitsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError(
      [{where: path, message: code === 'ENOENT' ? 'no such file' : `cannot read it (${code})`}],
      'pass the limits file with --limits FILE (see examples/ for the format)',
    )
  }
}

/** Document shape of `finish --json` for a preview; scripts rely on these names. */
export function previewDocument(provider: Provider, clusterId: string, g: Generated) {
  return {
    provider,
    clusterId,
    nodes: [...nodeDocuments(g.groups)],
    groups: g.groups.map((x) => ({hostlist: x.hostlist, shape: x.shape, ad: x.ad ?? null, count: x.count, weight: x.weight})),
    partitions: g.partitions,
    slurmConf: g.slurmConf,
    gresConf: g.gresConf,
  }
}

export async function runFinish(io: Io, flags: FinishFlags, dataDir: string) {
  if (flags.provider) {
    if (!flags['dry-run']) throw usageError('--provider previews a configuration without a cluster: add --dry-run', 'to change a cluster, use -c NAME instead of --provider')
    return preview(io, flags)
  }
  if (flags['output-dir']) throw usageError('--output-dir goes with --provider (a preview without a cluster)')

  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(flags.cluster)
  const record = registry.get(name)
  const paths = registry.paths(name)
  const limitsText = readLimitsFile(flags.limits)
  // Validate before connecting to anything: bad input changes nothing and costs no round trip.
  generateFromLimits(requestFor(record, flags.limits, limitsText))

  return withLock(paths.dir, 'citc finish', () => withInterrupts((signal) => onCluster(io, flags, record, paths.logsDir, limitsText, signal)), {
    wait: flags.wait,
    timeoutMs: 30 * 60_000,
  })
}

function preview(io: Io, flags: FinishFlags) {
  const provider = flags.provider as Provider
  const given = [flags['mgmt-shape'], flags['mgmt-ad']].filter((v) => v !== undefined).length
  if (given > 0 && provider !== 'oracle') throw usageError('--mgmt-shape and --mgmt-ad are for --provider oracle only')
  if (given === 1) throw usageError('give both --mgmt-shape and --mgmt-ad (the management node uses one unit of that shape in that AD), or neither')
  const mgmt = given === 2 ? {shape: flags['mgmt-shape']!, ad: flags['mgmt-ad']} : undefined
  const {generated} = generateFromLimits({
    provider,
    clusterId: flags['cluster-id'],
    limitsText: readLimitsFile(flags.limits),
    limitsFile: flags.limits,
    mgmt,
  })
  const out = flags['output-dir']
  if (out) {
    mkdirSync(out, {recursive: true})
    writeFileSync(join(out, 'slurm.conf'), generated.slurmConf)
    writeFileSync(join(out, 'gres.conf'), generated.gresConf)
    io.note(`wrote ${join(out, 'slurm.conf')} and ${join(out, 'gres.conf')}`)
  } else {
    io.log(generated.slurmConf.trimEnd())
    if (generated.groups.some((g) => g.gpu)) io.note('(GPU shapes: gres.conf is in --json output, or written with --output-dir)')
  }
  return previewDocument(provider, flags['cluster-id'], generated)
}

/** What finish generates for a registered or created cluster. */
export function requestFor(record: ClusterRecord, limitsFile: string, limitsText: string) {
  return {
    provider: record.provider as Provider,
    clusterId: record.name,
    limitsText,
    limitsFile,
    mgmt: record.mgmt.shape ? {shape: record.mgmt.shape, ad: record.mgmt.ad} : undefined,
    elastic: {programsDir: record.slurm.programsDir, ...elasticOverrides(record)},
    base: {
      controllerHost: record.mgmt.hostname ?? record.name + '-mgmt',
      // Local nodes reach the controller on loopback, whatever the machine's name resolves to.
      ...(record.provider === 'local' ? {controllerAddr: '127.0.0.1'} : {}),
      slurmUser: record.provider === 'local' ? 'root' : 'slurm',
    },
  }
}

/** Power-saving timings a cluster chose at create time (cluster.yaml settings), in seconds. */
function elasticOverrides(record: ClusterRecord): Partial<ElasticSettings> {
  const out: Partial<ElasticSettings> = {}
  for (const key of ['suspendTime', 'resumeTimeout', 'suspendTimeout'] as const) {
    const v = record.settings?.[key]
    if (v !== undefined) out[key] = Number(v)
  }
  return out
}

interface Ctx {
  state?: ClusterState
  generated?: Generated
  plan?: FinishPlan
  result?: ApplyResult
}

async function onCluster(io: Io, flags: FinishFlags, record: ClusterRecord, logsDir: string, limitsText: string, signal: AbortSignal) {
  const logFile = join(logsDir, `finish-${new Date().toISOString().replace(/[:.]/g, '-')}.log`)
  const transport = withLog(await connectCluster(record, {signal}), logFile)
  const controller = new Controller(transport, {confPath: record.slurm.confPath, restartCommand: record.slurm.restartCommand})
  try {
    const ctx: Ctx = {}
    await taskList<Ctx>(
      [
        {
          title: `Read what ${record.name} runs now (${transport.description})`,
          task: async (c) => {
            c.state = await readClusterState(transport, controller)
          },
        },
        {
          title: 'Generate and compare the configuration',
          task: async (c) => {
            Object.assign(c, generateAndPlan(c.state!, requestFor(record, flags.limits, limitsText), record.slurm.confPath))
          },
        },
      ],
      io.renderer,
      ctx,
    ).run()

    const plan = ctx.plan!
    const summary = describePlan(plan)
    if (!io.json) {
      io.log(summary.join('\n'))
      if (plan.changed) io.log('\n' + plan.unifiedDiff.trimEnd())
    }
    const doc = {cluster: record.name, changed: plan.changed, plan: planDocument(plan), applied: false, logFile}
    if (!plan.changed || flags['dry-run']) return doc

    await confirmOrRefuse(io, `Apply this configuration to ${record.name}?`)
    signal.throwIfAborted()
    await taskList<Ctx>(
      [
        {
          title: 'Apply the configuration',
          task: async (c, task) => {
            c.result = await applyFinish({
              transport,
              controller,
              plan,
              generated: c.generated!,
              state: c.state!,
              force: flags.force,
              signal,
              report: (m) => {
                task.output = m
              },
            })
          },
          rendererOptions: {persistentOutput: false},
        },
      ],
      io.renderer,
      ctx,
    ).run()
    const r = ctx.result!
    io.note(`Applied (${r.action}).${r.backup ? ` Backup: ${r.backup}.` : ''} Full log: ${logFile}`)
    return {...doc, applied: true, action: r.action, backup: r.backup ?? null, poweredDown: r.poweredDown}
  } catch (error) {
    if (error instanceof CitcError) throw new CitcError(error.kind, error.message, {hint: error.hint ?? `full log: ${logFile}`, details: error.details})
    throw error
  } finally {
    await transport.close()
  }
}

function planDocument(plan: FinishPlan) {
  const {unifiedDiff, ...rest} = plan
  return {...rest, diff: unifiedDiff}
}
