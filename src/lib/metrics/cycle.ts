// One collector cycle, pure: the three Slurm outputs (or their failures), the previous citc.prom and
// the clock in; the new citc.prom out. A failed or unreadable output never crashes the cycle: it sets
// citc_slurm_up 0, keeps that source's last good figures from the previous file and counts the error.
import {type NodeState, parseNodeStates} from '../slurm/controller.js'
import {featureValue} from '../slurm/nodes.js'
import {type Family, type FamilyDef, renderExposition, sampleLine, samplesByName} from './exposition.js'
import {type NodeEvents, NODE_EVENT_FAMILIES, nodeEventLines} from './node-events.js'
import {baseState, hasWork, isDrained, isResponding, powerOf} from './power.js'
import {COMMANDS, type CommandName, type JobRecord, parseJobs, parseSdiag, pendingReason, type Sdiag} from './slurm-outputs.js'

export type CommandResult = {ok: true; stdout: string; seconds: number} | {ok: false; error: string; seconds: number}

export interface CycleInput {
  /** The management node's clock (the controller's), epoch seconds. */
  now: number
  results: Record<CommandName, CommandResult>
  /** The citc.prom the last cycle wrote, if any: its figures are kept for a source that failed now. */
  previous?: string
  /**
   * The node programs' counters (node-events.ts). Absent: none rendered; an error (the file could not
   * be read): the previous file's figures are kept, as for a failed Slurm call (up is Slurm's alone).
   */
  events?: NodeEvents | {error: string}
}

export interface CycleOutput {
  text: string
  /** Every command answered and was understood. */
  up: boolean
  /** What failed, per command, for the collector's log. */
  errors: Array<{command: CommandName; error: string}>
  /** scontrol's nodes, when it answered and was understood (nodes.json is made from them); undefined otherwise. */
  nodes?: NodeState[]
}

const MIB = 1024 * 1024
/** Reasons are free text: one line, cut short (a label value, not a log). */
const REASON_MAX = 120

const def = (name: string, type: FamilyDef['type'], help: string): FamilyDef => ({name, type, help})

/** The families each source gives, in the file's order. */
const NODE_FAMILIES = [
  def('citc_slurm_nodes', 'gauge', 'Nodes by partition, base state, power (on/starting/stopping/stop_pending/off), drain and responding; a node in two partitions counts in both.'),
  def('citc_slurm_node_info', 'gauge', 'One per node (value 1): its shape, partitions, base state, power and reason.'),
  def('citc_slurm_node_cpus', 'gauge', 'CPUs of a node: kind="total" (CPUTot) or "alloc" (CPUAlloc).'),
  def('citc_slurm_node_memory_bytes', 'gauge', 'Memory of a node, bytes: kind="total" (RealMemory) or "alloc" (AllocMem).'),
  def('citc_slurm_node_idle_seconds', 'gauge', 'Seconds since a powered-on node last had work (now - LastBusyTime); 0 while it has work.'),
]
const JOB_FAMILIES = [
  def('citc_slurm_jobs', 'gauge', 'Jobs by partition and state (array tasks counted one by one); pending ones by reason.'),
  def('citc_slurm_job_cpus', 'gauge', 'CPUs asked for by the jobs of citc_slurm_jobs.'),
  def('citc_slurm_pending_oldest_seconds', 'gauge', 'Seconds the oldest pending job of a partition has waited since submission; 0 when none waits.'),
]
const SDIAG_FAMILIES = [
  def('citc_slurm_scheduler_cycle_last_seconds', 'gauge', "Duration of slurmctld's last main scheduling cycle (sdiag)."),
  def('citc_slurm_backfill_cycle_last_seconds', 'gauge', "Duration of slurmctld's last backfill cycle (sdiag)."),
  def('citc_slurm_server_threads', 'gauge', "slurmctld's server threads (sdiag)."),
  def('citc_slurm_agent_queue', 'gauge', "slurmctld's agent queue size (sdiag)."),
  def('citc_slurm_dbd_agent_queue', 'gauge', "slurmctld's queue of messages for slurmdbd (sdiag)."),
  def('citc_slurm_jobs_submitted_total', 'counter', 'Jobs submitted (sdiag; reset at 00:00 UTC and when slurmctld restarts).'),
  def('citc_slurm_jobs_started_total', 'counter', 'Jobs started (sdiag; reset at 00:00 UTC and when slurmctld restarts).'),
  def('citc_slurm_jobs_completed_total', 'counter', 'Jobs completed (sdiag; reset at 00:00 UTC and when slurmctld restarts).'),
  def('citc_slurm_jobs_failed_total', 'counter', 'Jobs failed (sdiag; reset at 00:00 UTC and when slurmctld restarts).'),
]
const UP = def('citc_slurm_up', 'gauge', '1 when all three Slurm calls of the last collection answered, 0 otherwise (the other figures are then the last good ones).')
const COLLECTOR_FAMILIES = [
  def('citc_collect_duration_seconds', 'gauge', 'Duration of each Slurm call in the last collection.'),
  def('citc_collect_errors_total', 'counter', 'Slurm calls that failed or printed what citc cannot read, since the file was first written.'),
  def('citc_collect_last_success_timestamp_seconds', 'gauge', 'When each Slurm call last succeeded (epoch seconds; 0: never).'),
]

/** Every family citc.prom may hold, in its order (the metric names are a contract with the page and the tests). */
export const FAMILIES: readonly FamilyDef[] = [UP, ...NODE_FAMILIES, ...JOB_FAMILIES, ...SDIAG_FAMILIES, ...NODE_EVENT_FAMILIES, ...COLLECTOR_FAMILIES]

type Lines = Map<string, string[]>

export function collectCycle(input: CycleInput): CycleOutput {
  const previous = samplesByName(input.previous ?? '')
  const errors: CycleOutput['errors'] = []
  const lines: Lines = new Map()
  const source = <T>(command: CommandName, families: FamilyDef[], parse: (stdout: string) => T, render: (value: T) => Lines) => {
    const r = input.results[command]
    let rendered: Lines | undefined
    if (r.ok) {
      try {
        rendered = render(parse(r.stdout))
      } catch (e) {
        errors.push({command, error: `${command}: ${(e as Error).message}`})
      }
    } else errors.push({command, error: r.error})
    // The last good figures, as the previous file has them.
    for (const f of families) lines.set(f.name, rendered ? (rendered.get(f.name) ?? []) : (previous.get(f.name) ?? []))
  }

  let partitionsOfNodes: string[] = []
  let parsedNodes: NodeState[] | undefined
  source('scontrol', NODE_FAMILIES, parseNodeOutput, (nodes) => {
    parsedNodes = nodes
    partitionsOfNodes = [...new Set(nodes.flatMap(partitionsOf))]
    return nodeLines(nodes, input.now)
  })
  source('squeue', JOB_FAMILIES, parseJobs, (jobs) => jobLines(jobs, partitionsOfNodes, input.now))
  source('sdiag', SDIAG_FAMILIES, parseSdiag, sdiagLines)
  const events = input.events
  if (events !== undefined) {
    const rendered = 'error' in events ? undefined : nodeEventLines(events)
    for (const f of NODE_EVENT_FAMILIES) lines.set(f.name, rendered ? (rendered.get(f.name) ?? []) : (previous.get(f.name) ?? []))
  }

  const failed = new Set(errors.map((e) => e.command))
  const up = failed.size === 0
  lines.set(UP.name, [sampleLine(UP.name, {}, up ? 1 : 0)])
  const previousValue = (name: string, command: CommandName) => {
    const line = previous.get(name)?.find((l) => l.includes(`{command="${command}"}`))
    const v = line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0
    return Number.isFinite(v) ? v : 0
  }
  const [duration, errorsTotal, lastSuccess] = COLLECTOR_FAMILIES.map((f) => f.name)
  lines.set(duration, COMMANDS.map((command) => sampleLine(duration, {command}, round(input.results[command].seconds))))
  lines.set(errorsTotal, COMMANDS.map((command) => sampleLine(errorsTotal, {command}, previousValue(errorsTotal, command) + (failed.has(command) ? 1 : 0))))
  lines.set(lastSuccess, COMMANDS.map((command) => sampleLine(lastSuccess, {command}, failed.has(command) ? previousValue(lastSuccess, command) : input.now)))

  const families: Family[] = FAMILIES.map((f) => ({...f, lines: lines.get(f.name) ?? []}))
  return {text: renderExposition(families), up, errors, nodes: failed.has('scontrol') ? undefined : parsedNodes}
}

const round = (s: number) => Math.round(s * 1e6) / 1e6

/** scontrol's nodes; output with no node line in it is not a node list (an error printed on stdout). */
function parseNodeOutput(stdout: string): NodeState[] {
  const nodes = parseNodeStates(stdout)
  if (nodes.length === 0 && stdout.trim() !== '') throw new Error(`scontrol printed no node: ${stdout.trim().slice(0, 200)}`)
  return nodes
}

const partitionsOf = (n: NodeState) => (n.partitions ?? '').split(',').filter(Boolean)

function nodeLines(nodes: NodeState[], now: number): Lines {
  const counts = new Map<string, {labels: Record<string, string>; n: number}>()
  const info: string[] = []
  const cpus: string[] = []
  const memory: string[] = []
  const idle: string[] = []
  for (const n of nodes) {
    const state = baseState(n)
    const power = powerOf(n)
    for (const partition of partitionsOf(n).length > 0 ? partitionsOf(n) : ['']) {
      const labels = {partition, state, power, drain: String(isDrained(n)), responding: String(isResponding(n))}
      const key = Object.values(labels).join('\0')
      const c = counts.get(key) ?? {labels, n: 0}
      c.n++
      counts.set(key, c)
    }
    const reason = (n.reason ?? '').replace(/\s+/g, ' ').slice(0, REASON_MAX)
    info.push(sampleLine('citc_slurm_node_info', {node: n.name, shape: featureValue(n.features, 'shape') ?? '', partition: n.partitions ?? '', state, power, reason}, 1))
    if (n.cpus !== undefined) cpus.push(sampleLine('citc_slurm_node_cpus', {node: n.name, kind: 'total'}, n.cpus))
    if (n.cpuAlloc !== undefined) cpus.push(sampleLine('citc_slurm_node_cpus', {node: n.name, kind: 'alloc'}, n.cpuAlloc))
    if (n.realMemory !== undefined) memory.push(sampleLine('citc_slurm_node_memory_bytes', {node: n.name, kind: 'total'}, n.realMemory * MIB))
    if (n.allocMemory !== undefined) memory.push(sampleLine('citc_slurm_node_memory_bytes', {node: n.name, kind: 'alloc'}, n.allocMemory * MIB))
    if (power === 'on' && (hasWork(n) || n.lastBusyEpoch !== undefined)) {
      idle.push(sampleLine('citc_slurm_node_idle_seconds', {node: n.name}, hasWork(n) ? 0 : Math.max(0, now - n.lastBusyEpoch!)))
    }
  }
  return new Map([
    ['citc_slurm_nodes', [...counts.values()].map((c) => sampleLine('citc_slurm_nodes', c.labels, c.n))],
    ['citc_slurm_node_info', info],
    ['citc_slurm_node_cpus', cpus],
    ['citc_slurm_node_memory_bytes', memory],
    ['citc_slurm_node_idle_seconds', idle],
  ])
}

function jobLines(jobs: JobRecord[], knownPartitions: string[], now: number): Lines {
  const groups = new Map<string, {labels: Record<string, string>; jobs: number; cpus: number}>()
  const oldest = new Map<string, number>(knownPartitions.map((p) => [p, now]))
  for (const j of jobs) {
    const pending = j.state === 'pending'
    const labels: Record<string, string> = {partition: j.partition, state: j.state, ...(pending ? {reason: pendingReason(j.reason)} : {})}
    const key = Object.values(labels).join('\0')
    const g = groups.get(key) ?? {labels, jobs: 0, cpus: 0}
    g.jobs += j.count
    g.cpus += j.cpus * j.count
    groups.set(key, g)
    if (pending) oldest.set(j.partition, Math.min(oldest.get(j.partition) ?? now, j.submitted))
    else if (!oldest.has(j.partition)) oldest.set(j.partition, now)
  }
  return new Map([
    ['citc_slurm_jobs', [...groups.values()].map((g) => sampleLine('citc_slurm_jobs', g.labels, g.jobs))],
    ['citc_slurm_job_cpus', [...groups.values()].map((g) => sampleLine('citc_slurm_job_cpus', g.labels, g.cpus))],
    ['citc_slurm_pending_oldest_seconds', [...oldest].map(([partition, t]) => sampleLine('citc_slurm_pending_oldest_seconds', {partition}, Math.max(0, now - t)))],
  ])
}

function sdiagLines(s: Sdiag): Lines {
  const one = (name: string, v: number) => [name, [sampleLine(name, {}, v)]] as [string, string[]]
  return new Map([
    one('citc_slurm_scheduler_cycle_last_seconds', s.schedulerCycleLast),
    one('citc_slurm_backfill_cycle_last_seconds', s.backfillCycleLast),
    one('citc_slurm_server_threads', s.serverThreads),
    one('citc_slurm_agent_queue', s.agentQueue),
    one('citc_slurm_dbd_agent_queue', s.dbdAgentQueue),
    one('citc_slurm_jobs_submitted_total', s.jobsSubmitted),
    one('citc_slurm_jobs_started_total', s.jobsStarted),
    one('citc_slurm_jobs_completed_total', s.jobsCompleted),
    one('citc_slurm_jobs_failed_total', s.jobsFailed),
  ])
}
