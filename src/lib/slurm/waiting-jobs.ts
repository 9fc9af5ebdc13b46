// Jobs that hold their nodes but wait for them to come up (Slurm's CONFIGURING, "CF" in squeue):
// why and since when, so `citc status` explains what a user would otherwise stare at. Pure.
import type {NodeState} from './controller.js'
import {compressHostlist, expandHostlist} from './hostlist.js'

/** The squeue format citc asks for (times as epoch seconds): id, user, start (allocation) time, node list. */
export const CONFIGURING_JOBS_FORMAT = '%i|%u|%S|%N'

export interface WaitingJob {
  id: string
  user: string
  /** When Slurm gave the job its nodes (ISO 8601, UTC). */
  since: string
  /** Seconds since then, by the controller's clock. */
  waitingSeconds: number
  nodes: string
  total: number
  /** Nodes still powering up or powered down (failed ones not counted). */
  poweringUp: number
  /** Nodes that failed to start (DOWN or FAIL, or draining), with the reason Slurm holds. */
  failed: Array<{name: string; reason?: string}>
}

/**
 * squeue -h -t CONFIGURING -o CONFIGURING_JOBS_FORMAT with SLURM_TIME_FORMAT=%s, the controller's
 * clock (epoch seconds: the workstation's clock and zone are not the controller's), every node's state.
 */
export function parseWaitingJobs(squeue: string, controllerNow: number, nodes: NodeState[]): WaitingJob[] {
  const byName = new Map(nodes.map((n) => [n.name, n]))
  const jobs: WaitingJob[] = []
  for (const line of squeue.split('\n')) {
    const [id, user, start, hostlist] = line.trim().split('|')
    if (!id || !hostlist) continue
    let names: string[]
    try {
      names = expandHostlist(hostlist)
    } catch {
      names = []
    }
    const states = names.map((name) => ({name, node: byName.get(name)}))
    // The rule citc's PrologSlurmctld stops waiting by: base state DOWN or FAIL, or a DRAIN/FAIL flag.
    const failed = new Set(states.filter(({node}) => node && (['DOWN', 'FAIL'].includes(node.state[0]) || node.state.slice(1).some((f) => f === 'DRAIN' || f === 'FAIL'))))
    const coming = states.filter((s) => !failed.has(s) && s.node?.state.some((f) => f === 'POWERING_UP' || f === 'POWERED_DOWN'))
    const startS = /^\d+$/.test(start) ? Number(start) : controllerNow
    jobs.push({
      id,
      user,
      since: new Date(startS * 1000).toISOString(),
      waitingSeconds: Math.max(0, controllerNow - startS),
      nodes: hostlist,
      total: names.length,
      poweringUp: coming.length,
      failed: [...failed].map((s) => ({name: s.name, ...(s.node?.reason ? {reason: s.node.reason} : {})})),
    })
  }
  return jobs
}

/** One line for people: "job 12 (alice) waits for its nodes: 1 of 2 node(s) powering up, since 11:32:05 UTC (8 s)". */
export function describeWaitingJob(job: WaitingJob): string {
  const clock = job.since.slice(11, 19)
  const what =
    job.poweringUp > 0
      ? `${job.poweringUp} of ${job.total} node(s) powering up`
      : job.failed.length > 0
        ? 'no node powering up, Slurm requeues the job'
        : `all ${job.total} node(s) up, the job starts in a moment`
  // Failed nodes grouped by reason, their names compressed: a job may hold hundreds.
  const byReason = new Map<string, string[]>()
  for (const f of job.failed) byReason.set(f.reason ?? '', [...(byReason.get(f.reason ?? '') ?? []), f.name])
  const failures = [...byReason].map(([reason, names]) => `; ${names.length} failed (${compressHostlist(names)})${reason ? `: ${reason}` : ''}`).join('')
  return `job ${job.id} (${job.user}) waits for its nodes: ${what}, since ${clock} UTC (${job.waitingSeconds} s)${failures}`
}
