// Jobs from sacct → usage rows grouped by account, user, shape or day, with totals. Pure and
// deterministic: the clock is `now`, node shapes and prices are inputs, rows are sorted by key.
//
// What is counted, and why:
// - A job's time is the part of [Start, End] inside the window [since, until); a running job's End
//   is `now`. So consecutive windows never count the same second twice, and a job that started
//   before `since` counts only from `since`. Suspended time counts: the job keeps its nodes.
// - CPU-hours = allocated CPUs × hours, GPU-hours the same with GPUs, memory-GB-hours = allocated
//   memory in GiB (1,024 MiB, as Slurm counts "G") × hours, node-hours = allocated nodes × hours.
//   These are allocations, as Slurm's own TRES usage counts them, not what the job used. Jobs that
//   share a node each count that node: node-hours (and cost) are an upper bound on a shared node.
// - A node's shape comes from `nodeShapes` (its shape= feature); a node it does not know (a shape
//   finish has since removed, a node list sacct left empty) is UNKNOWN_SHAPE. A job on nodes of
//   several shapes is split by node: with 3 nodes of one shape and 1 of another, --by shape gives
//   3/4 of its CPU-, GPU- and memory-hours to the first (Slurm does not record the split itself).
// - Cost = node-hours × price per node-hour of the shape, summed over the shapes that have a price;
//   node-hours of shapes without one are reported as unpricedNodeHours, and cost is null when no
//   shape of the row has a price.
// - --by day splits a job's time at each midnight UTC: a job from 23:00 to 01:00 puts one hour in
//   each day (days then add up to the totals, and a long job shows on every day it ran).
// - jobs counts the jobs with time in the row. A job appears once in totals, but in every row it
//   touches: with --by shape or --by day, rows' jobs may add up to more than totals.jobs.
// - A job of no length (it started and ended within the same second) counts as a job with no usage
//   when it started inside the window.
import {expandHostlist} from '../slurm/hostlist.js'
import type {SacctJob} from './sacct.js'

export const USAGE_BY = ['account', 'user', 'shape', 'day'] as const
export type UsageBy = (typeof USAGE_BY)[number]

/** Shape of a node citc cannot place. Parentheses: no shape name can contain them (SLURM_NAME). */
export const UNKNOWN_SHAPE = '(unknown)'
/** Account or user that sacct left empty. */
export const NO_NAME = '(none)'

export interface AggregateOptions {
  by: UsageBy
  /** Unix seconds: the window is [since, until). */
  since: number
  until: number
  /** Unix seconds: where running jobs stop counting. */
  now: number
  /** Node name → shape name, from each node's shape= feature. */
  nodeShapes: ReadonlyMap<string, string>
  /** Shape → price of one node-hour (currency is the prices file's). */
  prices?: ReadonlyMap<string, number>
}

export interface UsageRow {
  /** Account, user, shape or YYYY-MM-DD (UTC); "total" for the totals. */
  key: string
  jobs: number
  /** Of `jobs`, those still running at `now` (counted up to `now`). */
  running: number
  /** CPU-seconds, rounded to the second (what Slurm's cpu TRES minutes are made of). */
  cpuSeconds: number
  cpuHours: number
  gpuHours: number
  memGBHours: number
  nodeHours: number
  /** Node-hours per shape, keys sorted. */
  shapes: Record<string, number>
  cost: number | null
  unpricedNodeHours: number
}

export interface UsageReport {
  by: UsageBy
  since: number
  until: number
  rows: UsageRow[]
  totals: UsageRow
  /** Shapes with node-hours in the window and no price (every such shape without prices), sorted. */
  unpricedShapes: string[]
}

const DAY = 86_400

/** Running sums of one row, in seconds (rounded only once, at the end). */
interface Acc {
  jobs: number
  running: number
  cpu: number
  gpu: number
  memMB: number
  /** Node-seconds by shape number (see Shapes): an array, not a map, on the hot path. */
  nodeSeconds: number[]
  /** Index of the last job counted in `jobs`, so a job touching a row twice counts once. */
  lastJob: number
}

const newAcc = (): Acc => ({jobs: 0, running: 0, cpu: 0, gpu: 0, memMB: 0, nodeSeconds: [], lastJob: -1})

/** Shape names numbered in the order first met (the report sorts them by name at the end). */
class Shapes {
  readonly names: string[] = []
  private readonly ids = new Map<string, number>()
  id(name: string): number {
    let id = this.ids.get(name)
    if (id === undefined) {
      id = this.names.push(name) - 1
      this.ids.set(name, id)
    }
    return id
  }
}

/** The nodes of a job by shape: shape numbers and how many nodes of each, and their sum. */
interface Split {
  shapes: number[]
  counts: number[]
  nodes: number
}

/** A job's Split from its node list, cached (many jobs share one list). */
function splitter(nodeShapes: ReadonlyMap<string, string>, shapes: Shapes): (job: SacctJob) => Split {
  const cache = new Map<string, Split>()
  const unknown = (nodes: number): Split => ({shapes: [shapes.id(UNKNOWN_SHAPE)], counts: [nodes], nodes})
  return (job) => {
    if (job.nodeList === '') return unknown(job.nodes)
    const hit = cache.get(job.nodeList)
    if (hit) return hit
    let names: string[]
    // Most jobs run on one node, whose list is its name: no need to parse it.
    if (!job.nodeList.includes('[') && !job.nodeList.includes(',')) {
      names = [job.nodeList]
    } else {
      try {
        names = expandHostlist(job.nodeList)
      } catch {
        names = []
      }
    }
    const counts = new Map<number, number>()
    for (const name of names) {
      const id = shapes.id(nodeShapes.get(name) ?? UNKNOWN_SHAPE)
      counts.set(id, (counts.get(id) ?? 0) + 1)
    }
    // Not a list Slurm would print: the job's node count, on a shape nobody knows.
    const split = names.length === 0 ? unknown(job.nodes) : {shapes: [...counts.keys()], counts: [...counts.values()], nodes: names.length}
    cache.set(job.nodeList, split)
    return split
  }
}

/** Code-point order: the same on every machine and locale. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const dayKeys = new Map<number, string>()
function dayKey(day: number): string {
  let k = dayKeys.get(day)
  if (k === undefined) {
    k = new Date(day * DAY * 1000).toISOString().slice(0, 10)
    dayKeys.set(day, k)
  }
  return k
}

export function aggregateUsage(jobs: readonly SacctJob[], opts: AggregateOptions): UsageReport {
  const {by, since, until, now} = opts
  if (!(since < until)) throw new RangeError(`usage window must have since < until (got ${since} .. ${until})`)
  const rows = new Map<string, Acc>()
  const totals = newAcc()
  const shapes = new Shapes()
  const splitOf = splitter(opts.nodeShapes, shapes)
  const row = (key: string) => {
    let acc = rows.get(key)
    if (!acc) rows.set(key, (acc = newAcc()))
    return acc
  }

  /**
   * Add `seconds` of job i to a row: `share` of its CPUs, GPUs and memory, and the nodes of its
   * split (only those of split.shapes[only] when `only` is given).
   */
  const add = (acc: Acc, i: number, job: SacctJob, seconds: number, share: number, split: Split, only = -1) => {
    if (acc.lastJob !== i) {
      acc.lastJob = i
      acc.jobs++
      if (job.end === undefined) acc.running++
    }
    const s = seconds * share
    acc.cpu += job.cpus * s
    acc.gpu += job.gpus * s
    acc.memMB += job.memMB * s
    for (let k = only < 0 ? 0 : only; k < (only < 0 ? split.shapes.length : only + 1); k++) {
      const id = split.shapes[k]
      acc.nodeSeconds[id] = (acc.nodeSeconds[id] ?? 0) + split.counts[k] * seconds
    }
  }

  for (let i = 0; i < jobs.length; i++) {
    const job = jobs[i]
    const end = Math.max(job.start, job.end ?? now)
    if (job.start >= until || end < since) continue
    // Ended exactly as the window begins: that job belongs to the window before.
    if (end === since && job.start < since) continue
    const from = Math.max(job.start, since)
    const to = Math.min(end, until)
    const split = splitOf(job)
    add(totals, i, job, to - from, 1, split)

    if (by === 'account' || by === 'user') {
      const name = by === 'account' ? job.account : job.user
      add(row(name === '' ? NO_NAME : name), i, job, to - from, 1, split)
    } else if (by === 'shape') {
      for (let k = 0; k < split.shapes.length; k++) {
        const share = split.nodes === 0 ? 1 / split.shapes.length : split.counts[k] / split.nodes
        add(row(shapes.names[split.shapes[k]]), i, job, to - from, share, split, k)
      }
    } else {
      // One piece per UTC day; a job of no length still lands on its start day.
      let t = from
      do {
        const day = Math.floor(t / DAY)
        const next = Math.min(to, (day + 1) * DAY)
        add(row(dayKey(day)), i, job, next - t, 1, split)
        t = next
      } while (t < to)
    }
  }

  const finish = (key: string, acc: Acc) => toRow(key, acc, shapes.names, opts.prices)
  const total = finish('total', totals)
  return {
    by,
    since,
    until,
    rows: [...rows.keys()].sort(cmp).map((k) => finish(k, rows.get(k) as Acc)),
    totals: total,
    unpricedShapes: Object.keys(total.shapes).filter((s) => opts.prices?.get(s) === undefined),
  }
}

/** Hours with 6 decimals (3.6 ms): short in JSON, and stable under summing order. */
const hours = (seconds: number) => Math.round((seconds / 3600) * 1e6) / 1e6
const round6 = (v: number) => Math.round(v * 1e6) / 1e6

function toRow(key: string, acc: Acc, shapeNames: readonly string[], prices: ReadonlyMap<string, number> | undefined): UsageRow {
  const shapes: Record<string, number> = {}
  let nodeSeconds = 0
  let cost = 0
  let priced = false
  let unpriced = 0
  const ids = [...acc.nodeSeconds.keys()].filter((id) => acc.nodeSeconds[id] !== undefined)
  for (const id of ids.sort((a, b) => cmp(shapeNames[a], shapeNames[b]))) {
    const shape = shapeNames[id]
    const s = acc.nodeSeconds[id]
    shapes[shape] = hours(s)
    nodeSeconds += s
    const price = prices?.get(shape)
    if (price === undefined) {
      unpriced += s
    } else {
      priced = true
      cost += (s / 3600) * price
    }
  }
  return {
    key,
    jobs: acc.jobs,
    running: acc.running,
    cpuSeconds: Math.round(acc.cpu),
    cpuHours: hours(acc.cpu),
    gpuHours: hours(acc.gpu),
    memGBHours: hours(acc.memMB / 1024),
    nodeHours: hours(nodeSeconds),
    shapes,
    cost: priced ? round6(cost) : null,
    unpricedNodeHours: hours(unpriced),
  }
}
