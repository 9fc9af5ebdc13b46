// `citc node resume|suspend|fail <hostlist>`: the programs slurmctld's power saving runs on the
// management node (ResumeProgram, SuspendProgram, ResumeFailProgram). They read each node's
// shape/AD/arch back from its Slurm features, hand the nodes to the provider's driver, log every
// step with a timestamp to the elastic log, and report a failed start to Slurm at once, with the
// reason — so no job waits ResumeTimeout for a node that will never come.
//
// Their start is on every power event's path: no zod (cluster.json and a stand-in are checked once per
// content, checked-once.ts), no execa (tools/exec.ts runs scontrol with node:child_process), no oclif
// (bin/run.js comes straight here); test/cli/node-program.test.ts checks what they load.
import {appendFileSync, existsSync, mkdirSync} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {CLUSTER_JSON} from '../../cluster/cluster-json.js'
import type {ManagementContract} from '../../cluster/management-contract.js'
import {CitcError} from '../../errors.js'
import {gresGpuCount, noGpuDriverReason} from '../../images/gpu-driver.js'
import {markSectionChecked} from '../../providers/driver-section.js'
import {providerModule} from '../../providers/registry.js'
import {NODE_PROGRAMS_STATE_DIR} from '../../providers/state-dir.js'
import {type NodeDriver, type NodeOutcome, type NodeSpec, realContext} from '../../providers/types.js'
import {Controller, type NodeState} from '../../slurm/controller.js'
import {expandHostlist} from '../../slurm/hostlist.js'
import {featureValue} from '../../slurm/nodes.js'
import type {StandIn} from '../../stand-in.js'
import {localTransport} from '../../transport/local.js'
import {checkedFileOnce} from './checked-once.js'

/** What the management playbook wrote to /etc/citc/cluster.json (cluster/management-contract.ts). */
export type NodeHostConfig = ManagementContract

/** Where the node programs' cluster.json is: /etc/citc/cluster.json, or a stand-in's (stand-in.ts). */
const nodeHostConfigFile = (standIn?: StandIn) => standIn?.clusterJson ?? CLUSTER_JSON

/**
 * The provider module's node driver (imported now: only a node program needs it). cluster.json names
 * a provider of this citc (its schema has one variant per module), and every module has a driver.
 * A stand-in's driver part wins over cluster.json's, field by field.
 */
export async function driverFor(cfg: NodeHostConfig, standIn?: StandIn): Promise<NodeDriver> {
  const make = await providerModule(cfg.provider).nodeDriver()
  const driverStandIn = cfg.standIn?.driver || standIn?.driver ? {...cfg.standIn?.driver, ...standIn?.driver} : undefined
  return make({cluster: cfg.name, sharedDir: cfg.sharedDir, confPath: cfg.confPath, section: cfg.driver, standIn: driverStandIn})
}

export function elasticLogger(file: string, program: string) {
  mkdirSync(dirname(file), {recursive: true})
  return (message: string) => appendFileSync(file, `${new Date().toISOString()} ${program}[${process.pid}] ${message}\n`)
}

/** Features "shape=X,ad=N,arch=Y,…" and Gres → the node's spec. */
export function specFromState(n: NodeState): NodeSpec {
  const ad = featureValue(n.features, 'ad')
  const gpus = gresGpuCount(n.gres)
  return {name: n.name, shape: featureValue(n.features, 'shape') ?? 'unknown', ad: ad ? Number(ad) : undefined, arch: featureValue(n.features, 'arch'), ...(gpus > 0 ? {gpus} : {})}
}

/**
 * The nodes of GPU shapes whose image has no GPU driver (the driver's bootImage, as the cluster
 * records it), failed before anything is launched: slurmd would start, find no /dev/nvidia0 and
 * never register, and Slurm would wait ResumeTimeout. Their outcome is a config failure with the
 * reason Slurm shows; the rest go to the driver. An image citc cannot read says nothing here: the
 * driver's own start reports what is wrong with it.
 */
export function refuseWithoutGpuDriver(specs: readonly NodeSpec[], driver: Pick<NodeDriver, 'bootImage'>, log: (m: string) => void): {refused: NodeOutcome[]; rest: NodeSpec[]} {
  const refused: NodeOutcome[] = []
  const rest: NodeSpec[] = []
  const images = new Map<string, ReturnType<NonNullable<NodeDriver['bootImage']>>>()
  const imageFor = (arch: string) => {
    if (!images.has(arch)) {
      try {
        images.set(arch, driver.bootImage?.(arch))
      } catch (error) {
        log(`could not read the ${arch} image's record (${error instanceof Error ? error.message : String(error)}); starting without the GPU check`)
        images.set(arch, undefined)
      }
    }
    return images.get(arch)
  }
  for (const spec of specs) {
    const reason = (spec.gpus ?? 0) > 0 && driver.bootImage ? noGpuDriverReason(spec.gpus!, imageFor(spec.arch ?? 'x86_64')) : undefined
    if (reason) refused.push({name: spec.name, ok: false, error: reason, failure: {class: 'config', code: 'NoGpuDriver', message: reason}, attempts: 0})
    else rest.push(spec)
  }
  return {refused, rest}
}

export type NodeProgram = 'resume' | 'suspend' | 'fail'

/**
 * How long a node program may take before every node has its outcome. Resume: half of the clouds'
 * ResumeTimeout (600 s, slurm/render.ts), so a failure reaches Slurm minutes before it would give up;
 * the cloud driver's own retry budget (120 s) is shorter still. Suspend and fail: inside SuspendTimeout (120 s).
 */
export const PROGRAM_BUDGET_MS: Record<NodeProgram, number> = {resume: 300_000, suspend: 100_000, fail: 100_000}

/** The elastic log the role sets up (citc_log_dir): where a node program says why it could not start. */
const DEFAULT_ELASTIC_LOG = '/var/log/citc/elastic.log'

/**
 * cluster.json as its reader checks it (cluster/management-contract.ts), checked once per content in the
 * node programs' state directory (a stand-in's stateDir; with a stand-in and none, every time).
 */
async function readConfig(file: string, standIn?: StandIn): Promise<NodeHostConfig> {
  const cfg = await checkedFileOnce({
    file,
    name: 'cluster-json',
    dir: () => (standIn ? standIn.driver?.stateDir : NODE_PROGRAMS_STATE_DIR),
    async check(text) {
      const contract = await import('../../cluster/management-contract.js')
      return text === undefined ? contract.readManagementContractFile(file) : contract.parseManagementContract(text, file)
    },
  })
  // Checked with the file: its driver's factory does not check the section again.
  if (cfg.driver !== null && typeof cfg.driver === 'object') markSectionChecked(cfg.driver)
  return cfg
}

/** A --stand-in file as stand-in.ts reads it, checked once per content in its own driver.stateDir (if it names one). */
function readStandIn(file: string): Promise<StandIn> {
  return checkedFileOnce({
    file: resolve(file),
    name: 'stand-in',
    dir(text) {
      // Only where a result may have been kept: the result itself comes from the check.
      try {
        const d = (JSON.parse(text) as {driver?: {stateDir?: unknown}} | null)?.driver?.stateDir
        return typeof d === 'string' && d.startsWith('/') ? d : undefined
      } catch {
        return undefined
      }
    },
    async check(text) {
      const s = await import('../../stand-in.js')
      return text === undefined ? s.readStandInFile(file) : s.parseStandIn(text, file)
    },
  })
}

/** cluster.json, or the reason it cannot be used, logged where an admin looks first, then thrown. */
async function configOrLog(program: NodeProgram, hostlist: string, standIn?: StandIn): Promise<NodeHostConfig> {
  const file = nodeHostConfigFile(standIn)
  try {
    return await readConfig(file, standIn)
  } catch (error) {
    const hint = error instanceof CitcError && error.hint ? ` (Try: ${error.hint})` : ''
    try {
      // The cluster's own file only (a stand-in's belongs to no cluster's log), and
      // only on a management node (the role made the directory): never create it anywhere else.
      if (file === CLUSTER_JSON && existsSync(dirname(DEFAULT_ELASTIC_LOG))) {
        elasticLogger(DEFAULT_ELASTIC_LOG, `citc-node-${program}`)(`${program} ${hostlist}: ERROR ${error instanceof Error ? error.message : String(error)}${hint}`)
      }
    } catch {
      // Not even the log can be written: slurmctld's log has the exit status, stderr has the error.
    }
    throw error
  }
}

export async function runNodeProgram(program: NodeProgram, hostlist: string, standIn?: StandIn) {
  const cfg = await configOrLog(program, hostlist, standIn)
  const driver = await driverFor(cfg, standIn)
  const log = elasticLogger(cfg.elasticLog, `citc-node-${program}`)
  const ctx = realContext(log, PROGRAM_BUDGET_MS[program])
  const controller = new Controller(localTransport(), {confPath: cfg.confPath})
  const names = expandHostlist(hostlist)
  log(`${program} ${hostlist} (${names.length} node(s))`)
  // With monitoring: a collection alongside the driver's work, while the nodes are in transition.
  const collecting = cfg.monitoring ? import('../metrics/node-program-metrics.js').then((m) => m.collectInTransition(cfg, log)).catch(() => {}) : undefined
  try {
    // The features say what to start; if slurmctld does not answer, still act (the local driver
    // needs only names) rather than leave Slurm waiting ResumeTimeout.
    const states = await controller.nodes(hostlist).catch((error: unknown) => {
      log(`could not read the nodes' features (${error instanceof Error ? error.message : String(error)}); going on with names only`)
      return []
    })
    const known = new Map(states.map((s) => [s.name, s]))
    const specs = names.map((name) => (known.has(name) ? specFromState(known.get(name)!) : {name, shape: 'unknown'}))
    let outcomes: NodeOutcome[]
    if (program === 'resume') {
      const {refused, rest} = refuseWithoutGpuDriver(specs, driver, log)
      outcomes = [...refused, ...(rest.length > 0 ? await driver.resume(rest, ctx) : [])]
      const failed = outcomes.filter((o) => !o.ok)
      for (const f of failed) log(`${f.name}: FAILED to start: ${f.error}`)
      if (failed.length > 0) await reportFailedStarts(controller, failed, log)
    } else {
      // suspend, and fail (ResumeTimeout passed): make sure the machines are gone.
      outcomes = await driver.suspend(specs, ctx)
      for (const f of outcomes.filter((o) => !o.ok)) log(`${f.name}: FAILED to stop: ${f.error}`)
    }
    log(`${program} done: ${outcomes.filter((o) => o.ok).length} ok, ${outcomes.filter((o) => !o.ok).length} failed`)
    if (cfg.monitoring) {
      // Imported only where there is monitoring to tell. Its failures are logged, never the program's.
      try {
        const {nodeProgramMetrics, resumeEvents} = await import('../metrics/node-program-metrics.js')
        await nodeProgramMetrics(cfg, {batch: program === 'resume' ? resumeEvents(specs, outcomes) : undefined, nodes: () => controller.nodes()}, log)
      } catch (error) {
        log(`metrics: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    return outcomes
  } catch (error) {
    log(`${program} ${hostlist}: ERROR ${error instanceof Error ? error.message : String(error)}`)
    throw error
  } finally {
    await collecting
  }
}

/**
 * Tell Slurm at once: the node goes DOWN with the reason (its jobs are requeued to other nodes or
 * wait with a visible reason), then it is powered down, so it returns to the pool as idle~.
 */
async function reportFailedStarts(controller: Controller, failed: NodeOutcome[], log: (m: string) => void) {
  for (const f of failed) {
    // A cloud's classified refusal is its reason already (`citc: capacity: … for <shape> in <place>`):
    // the watchdog reads the class back from it (nodes/sync-plan.ts).
    const reason = f.failure && f.error ? f.error : `citc: start failed: ${(f.error ?? 'unknown').replace(/\s+/g, ' ').slice(0, 200)}`
    try {
      await controller.update([`NodeName=${f.name}`, 'State=DOWN', `Reason=${reason}`])
      await controller.update([`NodeName=${f.name}`, 'State=POWER_DOWN_FORCE'])
      log(`${f.name}: reported to Slurm as DOWN ("${reason}") and powered down`)
    } catch (error) {
      log(`${f.name}: could not report the failure to Slurm: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}

/**
 * A node program as a whole process: run it, print an error as the CLI would (its message and hint on
 * stderr, its exit code), and exit 1 when no node could be handled. Used by bin/run.js's fast path and
 * by the oclif command, so both behave the same.
 */
export async function nodeProgramMain(program: NodeProgram, hostlist: string, standInFile?: string, write = (m: string) => process.stderr.write(m)): Promise<number> {
  try {
    const standIn = standInFile === undefined ? undefined : await readStandIn(standInFile)
    const outcomes = await runNodeProgram(program, hostlist, standIn)
    // Slurm learns of failures through scontrol (done above); a non-zero exit only adds a log line.
    return outcomes.length > 0 && outcomes.every((o) => !o.ok) ? 1 : 0
  } catch (error) {
    if (error instanceof CitcError) {
      write(` ›   Error: ${error.message}${error.hint ? `\n ›   Try: ${error.hint}` : ''}\n`)
      return error.exitCode
    }
    write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    return 1
  }
}
