// The collector's three Slurm calls per cycle and the parsers of what squeue and sdiag print
// (scontrol's nodes: slurm/controller.ts's parseNodeStates). Never one call per node or job. Pure.

export type CommandName = 'scontrol' | 'squeue' | 'sdiag'
export const COMMANDS: readonly CommandName[] = ['scontrol', 'squeue', 'sdiag']

/**
 * squeue's fields: state, partition, reason, submit time, CPUs, array task ids ("N/A" for a plain job,
 * "1-10%2" for an array's pending tasks still in one record: counted without -r, which would list each).
 * No user, no account, no job name: nothing personal leaves Slurm through the metrics.
 */
export const SQUEUE_FORMAT = '%T|%P|%r|%V|%C|%K'
/** The states the collector counts (pending, running, completing, configuring, suspended). */
export const SQUEUE_STATES = 'PD,R,CG,CF,S'

/**
 * argv of each call, against the cluster's slurm.conf, times as epoch seconds (SLURM_TIME_FORMAT=%s:
 * LastBusyTime and the submit time, whatever the controller's zone).
 */
export function collectArgv(confPath: string): Record<CommandName, string[]> {
  const env = ['env', `SLURM_CONF=${confPath}`, 'SLURM_TIME_FORMAT=%s']
  return {
    scontrol: [...env, 'scontrol', 'show', 'node', '--oneliner', '--all'],
    squeue: [...env, 'squeue', '--all', '--noheader', '--states', SQUEUE_STATES, '--format', SQUEUE_FORMAT],
    sdiag: [...env, 'sdiag'],
  }
}

export interface JobRecord {
  /** Lower case: pending, running, completing, configuring, suspended. */
  state: string
  /** As Slurm says: "a,b" for a pending job that may run in either. */
  partition: string
  /** Slurm's reason, cut to its first word (ReqNodeNotAvail, UnavailableNodes:… → ReqNodeNotAvail). */
  reason: string
  /** Submit time, epoch seconds. */
  submitted: number
  /** CPUs per job. */
  cpus: number
  /** Jobs in this record (an array's pending tasks share one). */
  count: number
}

/** Parse squeue's output in SQUEUE_FORMAT; throws on a line it does not understand (the cycle counts it as squeue's failure). */
export function parseJobs(text: string): JobRecord[] {
  const jobs: JobRecord[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '') continue
    const f = line.split('|')
    // A partition name cannot hold '|'; a reason might: the fields after it are fixed, so read from both ends.
    if (f.length < 6) throw new Error(`squeue printed a line citc cannot read (expected ${SQUEUE_FORMAT}): ${line}`)
    const [state, partition] = f
    const [submitted, cpus, tasks] = f.slice(-3)
    const reason = f.slice(2, -3).join('|')
    if (!/^\d+$/.test(submitted) || !/^\d+$/.test(cpus)) throw new Error(`squeue printed a line citc cannot read (submit time and CPUs must be numbers; SLURM_TIME_FORMAT=%s missing?): ${line}`)
    jobs.push({state: state.toLowerCase(), partition, reason: reason.trim(), submitted: Number(submitted), cpus: Number(cpus), count: arrayTaskCount(tasks)})
  }
  return jobs
}

/** How many tasks "1-10%2", "1,3,5-7" or "4" name; 1 for a plain job ("N/A"). */
export function arrayTaskCount(tasks: string): number {
  const spec = tasks.replace(/%\d+$/, '')
  if (!/^\d/.test(spec)) return 1
  let n = 0
  for (const part of spec.split(',')) {
    // A step ("1-99:2") counts every second one.
    const m = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(part)
    if (!m) return 1
    const [lo, hi, step] = [Number(m[1]), Number(m[2] ?? m[1]), Number(m[3] ?? 1)]
    n += hi >= lo ? Math.floor((hi - lo) / step) + 1 : 0
  }
  return Math.max(1, n)
}

/**
 * Pending reasons the metrics name as Slurm does (squeue's %r, 22.05); the limit families are folded
 * into AssocLimit and QOSLimit, everything else is "other": a bounded set of label values.
 */
const PENDING_REASONS = new Set([
  'None', 'Resources', 'Priority', 'Dependency', 'DependencyNeverSatisfied', 'BeginTime', 'JobHeldUser', 'JobHeldAdmin',
  'ReqNodeNotAvail', 'NodeDown', 'PartitionNodeLimit', 'PartitionTimeLimit', 'PartitionDown', 'PartitionInactive',
  'PartitionConfig', 'BadConstraints', 'Licenses', 'Reservation', 'ReservationDeleted', 'InvalidAccount', 'InvalidQOS',
  'JobArrayTaskLimit', 'Cleaning', 'Prolog', 'FrontEndDown', 'SystemFailure', 'BurstBufferResources', 'BurstBufferStageIn',
])

export function pendingReason(reason: string): string {
  if (/^launch failed requeued held/i.test(reason)) return 'LaunchFailedRequeuedHeld'
  const word = /^[A-Za-z]+/.exec(reason)?.[0] ?? ''
  if (PENDING_REASONS.has(word)) return word
  if (/^Assoc(Grp|Max)/.test(word)) return 'AssocLimit'
  if (/^QOS(Grp|Max|Min|Job|UsageThreshold)/.test(word)) return 'QOSLimit'
  return 'other'
}

export interface Sdiag {
  serverThreads: number
  agentQueue: number
  dbdAgentQueue: number
  jobsSubmitted: number
  jobsStarted: number
  jobsCompleted: number
  jobsFailed: number
  /** The main scheduler's and backfill's last cycle, seconds (sdiag prints microseconds). */
  schedulerCycleLast: number
  backfillCycleLast: number
}

/** Parse sdiag's report (22.05); throws when a figure is missing (the cycle counts it as sdiag's failure). */
export function parseSdiag(text: string): Sdiag {
  const main = text.indexOf('Main schedule statistics')
  const backfill = text.indexOf('Backfilling stats')
  if (main === -1 || backfill === -1 || backfill < main) throw new Error('sdiag printed no "Main schedule statistics" and "Backfilling stats" sections: is it Slurm\'s sdiag?')
  const figure = (section: string, label: string) => {
    const m = new RegExp(`^\\s*${label}:\\s*(\\d+)\\s*$`, 'm').exec(section)
    if (!m) throw new Error(`sdiag printed no "${label}" figure`)
    return Number(m[1])
  }
  const top = text.slice(0, main)
  const sched = text.slice(main, backfill)
  const bf = text.slice(backfill)
  return {
    serverThreads: figure(top, 'Server thread count'),
    agentQueue: figure(top, 'Agent queue size'),
    dbdAgentQueue: figure(top, 'DBD Agent queue size'),
    jobsSubmitted: figure(top, 'Jobs submitted'),
    jobsStarted: figure(top, 'Jobs started'),
    jobsCompleted: figure(top, 'Jobs completed'),
    jobsFailed: figure(top, 'Jobs failed'),
    schedulerCycleLast: figure(sched, 'Last cycle') / 1e6,
    backfillCycleLast: figure(bf, 'Last cycle') / 1e6,
  }
}
