// `citc metrics collect`: the collector, run on the management node as the Slurm user every
// monitoring.every seconds (a systemd timer, or --every's loop where systemd does not run). One cycle:
// the three Slurm calls (at once, each with a time limit), the node programs' counters, the pure cycle
// (metrics/cycle.ts), then citc.prom and nodes.json written atomically into monitoring.dir.
// Slurm not answering is a measurement, not a failure of the collector: citc_slurm_up 0 with the last
// good figures, one line in the elastic log when it starts and when it ends, exit 0 (a timer's unit
// stays green; the figure is what alerts). The collector fails (non-zero) only when it cannot do its
// job: no cluster.json, no monitoring section, a directory it cannot write.
import {CLUSTER_JSON, type ManagementContract, readManagementContractFile} from '../../cluster/management-contract.js'
import {CitcError} from '../../errors.js'
import {type CommandResult, collectCycle, type CycleOutput} from '../../metrics/cycle.js'
import {writeNodesFile} from '../../metrics/file-sd.js'
import {readNodeEvents} from '../../metrics/node-events.js'
import {COMMANDS, collectArgv, type CommandName} from '../../metrics/slurm-outputs.js'
import {readPromFile, writePromFile} from '../../metrics/write.js'
import {sleep} from '../../proc.js'
import {readStandInFile, type StandIn} from '../../stand-in.js'
import {localTransport} from '../../transport/local.js'
import type {Transport} from '../../transport/types.js'
import {elasticLogger} from '../node/node-programs.js'

export type Monitoring = NonNullable<ManagementContract['monitoring']>

/** One Slurm call's limit: inside the shortest interval (5 s min in cluster.json is rare; 30 s is the default). */
export const CALL_TIMEOUT_MS = 20_000

export interface CollectDeps {
  /** Runs the calls (this machine's transport: tools/exec.ts). */
  transport?: Transport
  log: (message: string) => void
  /** Epoch seconds (default: this machine's clock, which is the controller's). */
  now?: () => number
  timeoutMs?: number
}

export interface CollectResult extends CycleOutput {
  /** Targets written to nodes.json, or undefined when scontrol failed and the last nodes.json was kept. */
  targets?: number
  /** Wall time of the whole cycle, seconds. */
  seconds: number
}

/** The monitoring section, or why this cluster has none (exit 3). */
export function monitoringOf(cfg: ManagementContract, file: string): Monitoring {
  if (cfg.monitoring) return cfg.monitoring
  throw new CitcError('invalidInput', `${file} has no "monitoring" section: the cluster ${cfg.name} was created without monitoring (--no-monitoring), so there is nothing to collect for`, {
    hint: `run \`citc create --name ${cfg.name}\` again without --no-monitoring to set monitoring up, or stop whatever runs \`citc metrics collect\``,
    details: {file},
  })
}

async function call(t: Transport, name: CommandName, argv: string[], timeoutMs: number): Promise<CommandResult> {
  const started = performance.now()
  const seconds = () => (performance.now() - started) / 1000
  try {
    const r = await t.run(argv, {timeoutMs})
    if (r.exitCode === 0) return {ok: true, stdout: r.stdout, seconds: seconds()}
    return {ok: false, error: `${name} exited ${r.exitCode}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`, seconds: seconds()}
  } catch (error) {
    // Could not start it, or its time ran out (tools/exec.ts stops the process group).
    return {ok: false, error: `${name}: ${error instanceof Error ? error.message : String(error)}`, seconds: seconds()}
  }
}

/** Was the last file written with slurmctld answering? (No file yet: treat as up, so a first failure is logged.) */
const previousUp = (text: string | undefined) => text === undefined || !/^citc_slurm_up 0$/m.test(text)

/** One cycle against this cluster. Throws only when citc.prom cannot be written. */
export async function collectOnce(cfg: ManagementContract, monitoring: Monitoring, deps: CollectDeps): Promise<CollectResult> {
  const started = performance.now()
  const t = deps.transport ?? localTransport()
  const argv = collectArgv(cfg.confPath)
  const timeoutMs = deps.timeoutMs ?? CALL_TIMEOUT_MS
  const outputs = await Promise.all(COMMANDS.map((c) => call(t, c, argv[c], timeoutMs)))
  const results = Object.fromEntries(COMMANDS.map((c, i) => [c, outputs[i]])) as Record<CommandName, CommandResult>

  let previous: string | undefined
  try {
    previous = readPromFile(monitoring.dir)
  } catch (error) {
    deps.log(`metrics: cannot read the last citc.prom (${(error as Error).message}): counters start afresh`)
  }
  let events: ReturnType<typeof readNodeEvents> | {error: string}
  try {
    events = readNodeEvents(monitoring.dir)
  } catch (error) {
    events = {error: (error as Error).message}
    deps.log(`metrics: ${events.error}`)
  }
  const now = deps.now?.() ?? Math.floor(Date.now() / 1000)
  const out = collectCycle({now, results, previous, events})
  if (!out.up && previousUp(previous)) deps.log(`metrics: slurmctld did not answer (citc_slurm_up 0, last figures kept): ${out.errors.map((e) => e.error).join('; ')}`)
  if (out.up && !previousUp(previous)) deps.log('metrics: slurmctld answers again (citc_slurm_up 1)')
  writePromFile(monitoring.dir, out.text)

  let targets: number | undefined
  if (out.nodes) {
    try {
      targets = writeNodesFile(monitoring.dir, out.nodes, monitoring.computeExporterPort)
    } catch (error) {
      deps.log(`metrics: ${(error as Error).message}`)
    }
  }
  return {...out, targets, seconds: (performance.now() - started) / 1000}
}

/** How often a waiting loop looks whether it was told to stop. */
const STOP_CHECK_MS = 500

/**
 * `collect` every `everyMs` (start to start) until `stop` aborts: a cycle is never cut short, the wait
 * is. A failing cycle is logged and the loop goes on (the next may work: a directory made meanwhile).
 */
export async function collectLoop(everyMs: number, collect: () => Promise<unknown>, stop: AbortSignal, log: (m: string) => void): Promise<void> {
  while (!stop.aborted) {
    const started = Date.now()
    await collect().catch((error: unknown) => log(`metrics: ERROR ${error instanceof Error ? error.message : String(error)}`))
    for (let left = everyMs - (Date.now() - started); left > 0 && !stop.aborted; left -= STOP_CHECK_MS) await sleep(Math.min(STOP_CHECK_MS, left), stop)
  }
}

/**
 * The command as a whole process: one cycle (or the loop with `every`, until SIGTERM or SIGINT), an
 * error printed as the CLI prints one; returns the exit code.
 */
export async function metricsCollectMain(opts: {every?: number; standInFile?: string; write?: (m: string) => void}): Promise<number> {
  const write = opts.write ?? ((m: string) => process.stderr.write(m))
  try {
    const standIn: StandIn | undefined = opts.standInFile === undefined ? undefined : readStandInFile(opts.standInFile)
    const file = standIn?.clusterJson ?? CLUSTER_JSON
    const cfg = readManagementContractFile(file)
    const monitoring = monitoringOf(cfg, file)
    const log = elasticLogger(cfg.elasticLog, 'citc-metrics')
    const once = () => collectOnce(cfg, monitoring, {log})
    if (opts.every === undefined) {
      let r: CollectResult
      try {
        r = await once()
      } catch (error) {
        log(`metrics: ERROR ${(error as Error).message}`)
        throw error
      }
      // A person running it by hand sees it too (the loop's service says it in the elastic log only).
      if (!r.up) write(`metrics: slurmctld did not answer; wrote ${monitoring.dir}/citc.prom with citc_slurm_up 0 and the last figures (${r.errors.map((e) => e.error).join('; ')})\n`)
      return 0
    }
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGTERM', onSignal)
    process.once('SIGINT', onSignal)
    try {
      await collectLoop(opts.every * 1000, once, stop.signal, log)
    } finally {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
    }
    return 0
  } catch (error) {
    if (error instanceof CitcError) {
      write(` ›   Error: ${error.message}${error.hint ? `\n ›   Try: ${error.hint}` : ''}\n`)
      return error.exitCode
    }
    write(`${error instanceof Error ? error.message : String(error)}\n`)
    return 1
  }
}
