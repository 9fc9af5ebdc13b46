// Issue #23's fault 9 (load), shared by test/faults/load.test.ts (asserts) and bench/load-1000.ts
// (prints): many batch jobs submitted at once (one sbatch each, several at a time) to cold cloud nodes
// of a real slurmctld 22.05 whose PrologSlurmctld is citc's (test/helpers/cold-nodes.ts). While they
// run, squeue is timed every second and sdiag read every 5 s; the prolog's processes are counted.
// Every job writes a file when it runs: a job without one never ran, whatever Slurm says.
import {spawn} from 'node:child_process'
import {mkdirSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {sleep} from '../../src/lib/proc.js'
import {type ColdNodes, coldNodes} from './cold-nodes.js'
import {type SlurmSandbox} from './slurm.js'

export interface LoadOptions {
  jobs: number
  nodes: number
  /** CPUs per node (one job each): nodes × cpus jobs run at once. */
  cpus: number
  resumeDelayS: number
  /** sbatch processes at once while submitting. */
  submitters?: number
  /** How long the jobs may take, all together. */
  budgetMs: number
}

/** sdiag's RPC counts by message type: count and total microseconds. */
export type RpcCounts = Record<string, {count: number; totalUs: number}>

export interface LoadFigures {
  submitted: number
  /** What sbatch said when it did not submit (its stderr, first line). */
  submitErrors: string[]
  submitMs: number
  /** Job ids that never wrote their file. */
  neverRan: string[]
  /** Jobs still in the queue at the end (PENDING, CONFIGURING, …), as "id state". */
  leftInQueue: string[]
  /** Nodes left powering up or CONFIGURING (#) at the end, as "name state". */
  nodesStuck: string[]
  /** From the first sbatch to the last job's end. */
  allRanMs: number
  squeue: {samples: number; failed: number; maxMs: number; medianMs: number}
  /** Most jobs in their prolog at once (sampled each second). */
  maxPrologs: number
  /** sdiag RPC counts over the run (after minus before), the test's own calls included. */
  rpcs: RpcCounts
  /** The busiest 5-s window's rate of node-information and single-job RPCs (the prolog's questions). */
  peakPrologRpcPerS: number
  sdiagBefore: string
  sdiagAfter: string
  /** sdiag's main scheduler figures at the end (µs): max and mean cycle; server threads' most. */
  schedMaxCycleUs: number
  schedMeanCycleUs: number
  maxServerThreads: number
  maxAgentQueue: number
}

/** What the prolog asks slurmctld: node information (any form) and a single job. */
export const PROLOG_RPC_TYPES = ['REQUEST_NODE_INFO', 'REQUEST_NODE_INFO_SINGLE', 'REQUEST_JOB_INFO_SINGLE']

export function parseSdiagRpcs(text: string): RpcCounts {
  const out: RpcCounts = {}
  const at = text.indexOf('Remote Procedure Call statistics by message type')
  const end = text.indexOf('Remote Procedure Call statistics by user')
  for (const line of text.slice(at, end < 0 ? undefined : end).split('\n')) {
    const m = /^\s+(\w+)\s+\(\s*\d+\)\s+count:(\d+)\s+ave_time:\d+\s+total_time:(\d+)/.exec(line)
    if (m) out[m[1]!] = {count: Number(m[2]), totalUs: Number(m[3])}
  }
  return out
}

function sdiagNumber(text: string, label: string): number {
  const m = new RegExp(`^\\s*${label}:\\s*(\\d+)`, 'm').exec(text)
  return m ? Number(m[1]) : Number.NaN
}

function diff(after: RpcCounts, before: RpcCounts): RpcCounts {
  const out: RpcCounts = {}
  for (const [k, v] of Object.entries(after)) {
    const b = before[k] ?? {count: 0, totalUs: 0}
    if (v.count - b.count > 0) out[k] = {count: v.count - b.count, totalUs: v.totalUs - b.totalUs}
  }
  return out
}

const prologRpcs = (r: RpcCounts) => PROLOG_RPC_TYPES.reduce((n, k) => n + (r[k]?.count ?? 0), 0)

/** A command as a child, not blocking this process's sampling; bounded. */
function runAsync(c: ColdNodes, cmd: string, args: string[], timeoutMs = 30_000): Promise<{status: number; stdout: string; stderr: string; ms: number}> {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const child = spawn(cmd, args, {env: c.sb.env, cwd: '/tmp', stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => {
      stderr += `(killed after ${timeoutMs} ms)`
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('error', (error) => resolve({status: -1, stdout, stderr: error.message, ms: performance.now() - t0}))
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({status: code ?? -1, stdout, stderr, ms: performance.now() - t0})
    })
  })
}

/** Start the cluster in `sb`: cold nodes, citc's prolog, completed jobs kept an hour (they are counted). */
export function loadCluster(sb: SlurmSandbox, o: LoadOptions): Promise<ColdNodes> {
  return coldNodes(sb, {nodes: o.nodes, cpus: o.cpus, resumeDelayS: o.resumeDelayS, resumeTimeoutS: 300, extra: ['MinJobAge=3600', 'MaxJobCount=20000']})
}

export async function runLoad(c: ColdNodes, o: LoadOptions): Promise<LoadFigures> {
  const ran = join(c.sb.dir, 'ran')
  mkdirSync(ran, {recursive: true})
  const sdiag = async () => (await runAsync(c, 'sdiag', [])).stdout
  const sdiagBefore = await sdiag()
  const before = parseSdiagRpcs(sdiagBefore)

  let done = false
  const squeueMs: number[] = []
  let squeueFailed = 0
  let maxPrologs = 0
  let maxServerThreads = 0
  let maxAgentQueue = 0
  let peakPrologRpcPerS = 0
  const sampler = (async () => {
    let last = {at: performance.now(), prolog: prologRpcs(before)}
    let tick = 0
    while (!done) {
      const t = performance.now()
      const q = await runAsync(c, 'squeue', ['-h', '-o', '%i %T'], 20_000)
      if (q.status === 0) squeueMs.push(q.ms)
      else squeueFailed++
      maxPrologs = Math.max(maxPrologs, c.prologs().length)
      if (tick++ % 5 === 0) {
        const s = await sdiag()
        maxServerThreads = Math.max(maxServerThreads, sdiagNumber(s, 'Server thread count') || 0)
        maxAgentQueue = Math.max(maxAgentQueue, sdiagNumber(s, 'Agent queue size') || 0)
        const now = {at: performance.now(), prolog: prologRpcs(parseSdiagRpcs(s))}
        if (now.at - last.at > 1000) peakPrologRpcPerS = Math.max(peakPrologRpcPerS, ((now.prolog - last.prolog) * 1000) / (now.at - last.at))
        last = now
      }
      await sleep(Math.max(0, 1000 - (performance.now() - t)))
    }
  })()

  const t0 = performance.now()
  const ids: string[] = []
  const submitErrors: string[] = []
  let next = 0
  const submitter = async () => {
    while (next < o.jobs) {
      next++
      const r = await runAsync(c, 'sbatch', ['-o', '/dev/null', '-J', 'load', '--wrap', `touch ${ran}/$SLURM_JOB_ID`])
      const id = /Submitted batch job (\d+)/.exec(r.stdout)?.[1]
      if (id) ids.push(id)
      else submitErrors.push(`${r.status}: ${r.stderr.trim().split('\n')[0] ?? ''}`)
    }
  }
  await Promise.all(Array.from({length: o.submitters ?? 8}, submitter))
  const submitMs = performance.now() - t0

  const deadline = t0 + o.budgetMs
  let queue: string[] = []
  while (performance.now() < deadline) {
    const q = await runAsync(c, 'squeue', ['-h', '-o', '%i %T'])
    queue = q.status === 0 ? q.stdout.split('\n').filter(Boolean) : ['(squeue failed)']
    if (queue.length === 0) break
    await sleep(2000)
  }
  const allRanMs = performance.now() - t0
  done = true
  await sampler

  const wrote = new Set(readdirSync(ran))
  const nodes = (await runAsync(c, 'sinfo', ['-h', '-N', '-o', '%N %T'])).stdout.split('\n').filter(Boolean)
  const sdiagAfter = await sdiag()
  const sorted = [...squeueMs].sort((a, b) => a - b)
  return {
    submitted: ids.length,
    submitErrors,
    submitMs,
    neverRan: ids.filter((id) => !wrote.has(id)),
    leftInQueue: queue,
    nodesStuck: nodes.filter((l) => /#|POWERING_UP|configuring/i.test(l)),
    allRanMs,
    squeue: {samples: squeueMs.length, failed: squeueFailed, maxMs: sorted.at(-1) ?? Number.NaN, medianMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN},
    maxPrologs,
    rpcs: diff(parseSdiagRpcs(sdiagAfter), before),
    peakPrologRpcPerS,
    sdiagBefore,
    sdiagAfter,
    schedMaxCycleUs: sdiagNumber(sdiagAfter, 'Max cycle'),
    schedMeanCycleUs: sdiagNumber(sdiagAfter, 'Mean cycle'),
    maxServerThreads,
    maxAgentQueue,
  }
}

/** The figures as lines for a person. */
export function describeLoad(o: LoadOptions, f: LoadFigures): string[] {
  const rpcs = Object.entries(f.rpcs)
    .sort((a, b) => b[1].count - a[1].count)
    .map(([k, v]) => `    ${k.padEnd(32)} ${String(v.count).padStart(7)}  (${(v.totalUs / 1000).toFixed(0)} ms in slurmctld)`)
  const prolog = prologRpcs(f.rpcs)
  return [
    `${f.submitted} of ${o.jobs} jobs submitted in ${(f.submitMs / 1000).toFixed(1)} s to ${o.nodes} cold nodes × ${o.cpus} CPUs (slurmd ${o.resumeDelayS} s after resume)${f.submitErrors.length > 0 ? `; sbatch failed: ${[...new Set(f.submitErrors)].join('; ')}` : ''}`,
    `all ended after ${(f.allRanMs / 1000).toFixed(1)} s; never ran: ${f.neverRan.length}; left in queue: ${f.leftInQueue.length}; nodes stuck: ${f.nodesStuck.length}`,
    `squeue (every 1 s, ${f.squeue.samples} answers, ${f.squeue.failed} failed): median ${f.squeue.medianMs.toFixed(0)} ms, max ${f.squeue.maxMs.toFixed(0)} ms, of which slurmctld's own time per job list (sdiag REQUEST_JOB_INFO) ${f.rpcs.REQUEST_JOB_INFO ? (f.rpcs.REQUEST_JOB_INFO.totalUs / f.rpcs.REQUEST_JOB_INFO.count / 1000).toFixed(0) : '?'} ms on average`,
    `sdiag: main scheduler max cycle ${f.schedMaxCycleUs} µs, mean ${f.schedMeanCycleUs} µs; most server threads ${f.maxServerThreads}; most agent queue ${f.maxAgentQueue}`,
    `prolog: most jobs in it at once ${f.maxPrologs}; its RPCs (node info + single job) ${prolog} = ${(prolog / f.submitted).toFixed(2)} per job; busiest 5 s: ${f.peakPrologRpcPerS.toFixed(1)}/s`,
    'RPCs during the run (sdiag, the sampler\'s squeue/sdiag included):',
    ...rpcs,
  ]
}
