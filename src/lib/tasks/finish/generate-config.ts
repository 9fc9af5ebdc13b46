// What finish generates: limits.yaml (parsed and validated against the shape catalogue) → the node and
// partition section of slurm.conf and gres.conf, and what that changes in what a cluster runs. No I/O
// on the cluster, so bad input fails before anything is touched (a local cluster's catalogue reads this
// machine: its hardware, and requestFor its cluster.json's stand-in GPUs).
import {parseLimits} from '../../config/limits.js'
import type {Limits} from '../../slurm/limits-types.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {catalogueFor} from '../../providers/catalogues.js'
import {providerModule, type Provider} from '../../providers/registry.js'
import {suggestShapes} from '../../shapes/suggest.js'
import {type Generated, generateConfig} from '../../slurm/generate.js'
import {type FinishPlan, planFinish} from '../../slurm/plan.js'
import {type BaseInput, defaultElasticSettings, type ElasticSettings} from '../../slurm/render.js'
import type {ClusterState} from './apply-config.js'
import {thisMachineGpuRoot} from './stand-in-gpus.js'

export interface GenerateRequest {
  provider: Provider
  clusterId: string
  limitsText: string
  limitsFile: string
  mgmt?: {shape: string; ad?: number}
  elastic?: Partial<ElasticSettings>
  base?: Partial<BaseInput>
  current?: string
  /** local: where this machine's GPUs are listed for the catalogue ('/' unless cluster.json's stand-in says otherwise: requestFor). */
  gpuRoot?: string
}

/** Parse and validate limits, then render. Throws InvalidInputError (exit 3) before anything else happens. */
export function generateFromLimits(req: GenerateRequest): {limits: Limits; generated: Generated} {
  const catalogue = catalogueFor(req.provider, req.gpuRoot ? {gpuRoot: req.gpuRoot} : {})
  const limits = parseLimits(req.limitsText, {
    file: req.limitsFile,
    provider: req.provider,
    catalogue,
    suggest: (name) => suggestShapes(catalogue, name),
    mgmt: req.mgmt,
    clusterId: req.clusterId,
  })
  const {slurm} = providerModule(req.provider)
  const elastic = {...defaultElasticSettings(slurm.power), ...req.elastic}
  const base: BaseInput = {
    clusterId: req.clusterId,
    provider: req.provider,
    controllerHost: `${req.clusterId}-mgmt`,
    slurmUser: slurm.user,
    accounting: true,
    ...req.base,
  }
  const generated = generateConfig({
    provider: req.provider,
    slurm,
    clusterId: req.clusterId,
    limits,
    catalogue,
    elastic,
    current: req.current,
    base,
  })
  return {limits, generated}
}

/** The configuration for these limits, merged into what the cluster runs now, and what would change. */
export function generateAndPlan(state: ClusterState, request: Omit<GenerateRequest, 'current'>, confPath: string): {generated: Generated; plan: FinishPlan} {
  // A PrologSlurmctld that does not exist would requeue every job: name citc's only where it is.
  const elastic = {...request.elastic, launchProlog: state.launchPrologInstalled}
  const {generated} = generateFromLimits({...request, elastic, current: state.currentConf})
  const plan = planFinish({currentConf: state.currentConf, newConf: generated.slurmConf, currentGres: state.currentGres, newGres: generated.gresConf, confPath})
  return {generated, plan}
}

/**
 * What finish generates for a registered or created cluster. A local cluster's catalogue lists the GPUs
 * of its cluster.json's stand-in, if it names some (tests; read from this machine, `clusterJson`).
 */
export function requestFor(record: ClusterRecord, limitsFile: string, limitsText: string, clusterJson?: string) {
  const {slurm} = providerModule(record.provider)
  const gpuRoot = thisMachineGpuRoot(record.provider as Provider, clusterJson)
  return {
    provider: record.provider as Provider,
    clusterId: record.name,
    limitsText,
    limitsFile,
    mgmt: record.mgmt.shape ? {shape: record.mgmt.shape, ad: record.mgmt.ad} : undefined,
    elastic: {programsDir: record.slurm.programsDir, ...elasticOverrides(record)},
    base: {
      controllerHost: record.mgmt.hostname ?? record.name + '-mgmt',
      ...(slurm.controllerAddr === undefined ? {} : {controllerAddr: slurm.controllerAddr}),
      slurmUser: slurm.user,
    },
    ...(gpuRoot ? {gpuRoot} : {}),
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
