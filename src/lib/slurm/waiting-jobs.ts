// Jobs that hold their nodes but wait for them to come up (Slurm's CONFIGURING, "CF" in squeue):
// why and since when, so `citc status` explains what a user would otherwise stare at. Pure.
import type {NodeState} from './controller.js'
import {expandHostlist} from './hostlist.js'

/** The squeue format citc asks for: id, user, start (allocation) time, node list. */
export const CONFIGURING_JOBS_FORMAT = '%i|%u|%S|%N'

export interface WaitingJob {
  id: string
  user: string
  /** When Slurm gave the job its nodes (squeue's start time, the controller's local time). */
  since: string
  nodes: string
  total: number
  /** Nodes still powering up or powered down (failed ones not counted). */
  poweringUp: number
  /** Nodes that failed to start (DOWN, or with a citc reason), with the reason Slurm holds. */
  failed: Array<{name: string; reason?: string}>
}

/** squeue -h -t CONFIGURING -o CONFIGURING_JOBS_FORMAT, with every node's state. */
export function parseWaitingJobs(squeue: string, nodes: NodeState[]): WaitingJob[] {
  const byName = new Map(nodes.map((n) => [n.name, n]))
  const jobs: WaitingJob[] = []
  for (const line of squeue.split('\n')) {
    const [id, user, since, hostlist] = line.trim().split('|')
    if (!id || !hostlist) continue
    let names: string[]
    try {
      names = expandHostlist(hostlist)
    } catch {
      names = []
    }
    const states = names.map((name) => ({name, node: byName.get(name)}))
    const failed = states.filter((s) => s.node?.state.includes('DOWN') || s.node?.reason?.startsWith('citc:'))
    const coming = states.filter((s) => !failed.includes(s) && s.node?.state.some((f) => f === 'POWERING_UP' || f === 'POWERED_DOWN'))
    jobs.push({
      id,
      user,
      since,
      nodes: hostlist,
      total: names.length,
      poweringUp: coming.length,
      failed: failed.map((s) => ({name: s.name, ...(s.node?.reason ? {reason: s.node.reason} : {})})),
    })
  }
  return jobs
}

/** One line for people: "job 12 (alice) waits for its nodes: 1 of 2 powering up, since 11:32:05 (8 s)". */
export function describeWaitingJob(job: WaitingJob, now: Date): string {
  const started = Date.parse(job.since) // squeue prints the controller's local time without a zone
  const ago = Number.isFinite(started) ? ` (${Math.max(0, Math.round((now.getTime() - started) / 1000))} s)` : ''
  const clock = /T(\d\d:\d\d:\d\d)/.exec(job.since)?.[1] ?? job.since
  const what =
    job.poweringUp > 0
      ? `${job.poweringUp} of ${job.total} node(s) powering up`
      : `all ${job.total} node(s) up, the job starts in a moment`
  const failures = job.failed.map((f) => `; ${f.name} failed${f.reason ? `: ${f.reason}` : ''}`).join('')
  return `job ${job.id} (${job.user}) waits for its nodes: ${what}, since ${clock}${ago}${failures}`
}
