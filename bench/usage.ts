// Usage report timings: 100,000 synthetic sacct lines (the format sacctArgv asks for) parsed,
// aggregated by account, user, shape and day, and rendered. The goal for the whole `citc usage`
// command is < 5 s over 100,000 jobs; this pure part should take a small share of it (sacct itself
// and the transport take the rest). Run with `npx tsx bench/usage.ts`.
import {performance} from 'node:perf_hooks'

import {aggregateUsage, USAGE_BY, type UsageReport} from '../src/lib/usage/aggregate.js'
import {renderUsageCsv, renderUsageTable, usageDocument} from '../src/lib/usage/render.js'
import {parseSacct, sacctTime} from '../src/lib/usage/sacct.js'

const JOBS = 100_000
const ACCOUNTS = 1_000
const USERS = 10_000
const DAY = 86_400
const since = Date.UTC(2026, 9, 1) / 1000
const until = since + 30 * DAY
const now = until - 3600

// Four shapes, 250 nodes each: most jobs on one node, some on several, a few across shapes.
const SHAPES = [
  {shape: 'c5.xlarge', prefix: 'bench-c5-xlarge', cpus: 4, memG: 7, gpus: 0},
  {shape: 'c5.4xlarge', prefix: 'bench-c5-4xlarge', cpus: 16, memG: 30, gpus: 0},
  {shape: 'r5.2xlarge', prefix: 'bench-r5-2xlarge', cpus: 8, memG: 62, gpus: 0},
  {shape: 'g4dn.xlarge', prefix: 'bench-g4dn-xlarge', cpus: 4, memG: 15, gpus: 1},
]
const NODES_PER_SHAPE = 250
const node = (s: number, n: number) => `${SHAPES[s].prefix}-${String(n).padStart(4, '0')}`
const nodeShapes = new Map<string, string>()
for (const [s, spec] of SHAPES.entries()) for (let n = 1; n <= NODES_PER_SHAPE; n++) nodeShapes.set(node(s, n), spec.shape)

// mulberry32: a seeded generator whose arithmetic stays in 32 bits (an LCG in doubles loses bits).
let seed = 42
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
}
const pick = (n: number) => Math.floor(rand() * n)

const lines: string[] = []
for (let i = 0; i < JOBS; i++) {
  const s = pick(SHAPES.length)
  const spec = SHAPES[s]
  const width = rand() < 0.8 ? 1 : 2 + pick(7)
  const first = 1 + pick(NODES_PER_SHAPE - width)
  let nodeList = width === 1 ? node(s, first) : `${spec.prefix}-[${String(first).padStart(4, '0')}-${String(first + width - 1).padStart(4, '0')}]`
  let nodes = width
  if (rand() < 0.02) {
    nodeList += `,${node((s + 1) % SHAPES.length, 1 + pick(NODES_PER_SHAPE))}`
    nodes++
  }
  // Jobs from a little before the window to `now`, lasting up to two days; 1 % still running.
  const start = since - DAY + pick(until - since)
  const running = rand() < 0.01
  const end = Math.min(start + 1 + pick(2 * DAY), now)
  const tres = `billing=${spec.cpus * nodes},cpu=${spec.cpus * nodes},${spec.gpus ? `gres/gpu=${spec.gpus * nodes},` : ''}mem=${spec.memG * nodes}G,node=${nodes}`
  const user = pick(USERS)
  lines.push(
    [
      `${1000 + i}`,
      `user${user}`,
      `acct${user % ACCOUNTS}`,
      'compute',
      nodeList,
      tres,
      String(running ? now - start : end - start),
      sacctTime(start),
      running ? 'Unknown' : sacctTime(end),
      running ? 'RUNNING' : 'COMPLETED',
    ].join('|'),
  )
}
const text = lines.join('\n') + '\n'

function time<T>(label: string, fn: () => T, runs = 7): T {
  let result = fn() // warm-up
  const ms: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    result = fn()
    ms.push(performance.now() - t)
  }
  ms.sort((a, b) => a - b)
  const median = ms[Math.floor(ms.length / 2)]
  console.log(`${label.padEnd(40)} median ${median.toFixed(1).padStart(7)} ms   min ${ms[0].toFixed(1).padStart(7)} ms   max ${ms.at(-1)!.toFixed(1).padStart(7)} ms`)
  return result
}

console.log(`${JOBS} jobs, ${(text.length / 1e6).toFixed(1)} MB of sacct output, ${ACCOUNTS} accounts, ${USERS} users, ${nodeShapes.size} nodes (node ${process.version})\n`)
const jobs = time('parseSacct', () => parseSacct(text))
if (jobs.length !== JOBS) throw new Error(`parsed ${jobs.length} jobs, expected ${JOBS}`)
const prices = new Map(SHAPES.map((s, i) => [s.shape, 0.1 * (i + 1)]))
const reports: UsageReport[] = []
for (const by of USAGE_BY) reports.push(time(`aggregateUsage --by ${by}`, () => aggregateUsage(jobs, {by, since, until, now, nodeShapes, prices})))
const byUser = reports[1]
const doc = usageDocument(byUser, {cluster: 'bench', currency: 'USD'})
time(`renderUsageTable --by user (${byUser.rows.length} rows)`, () => renderUsageTable(doc, {barWidth: 20}))
time('renderUsageCsv --by user', () => renderUsageCsv(doc))
time('JSON.stringify --by user', () => JSON.stringify(doc))
const all = time('parse + aggregate --by user + table', () =>
  renderUsageTable(usageDocument(aggregateUsage(parseSacct(text), {by: 'user', since, until, now, nodeShapes, prices}), {cluster: 'bench', currency: 'USD'}), {barWidth: 20}),
)

// The same totals whatever the grouping: a check that the figures above measured real work.
const totals = reports.map((r) => r.totals.cpuSeconds)
if (new Set(totals).size !== 1) throw new Error(`totals differ between groupings: ${totals.join(', ')}`)
console.log(`\ntotals: ${byUser.totals.jobs} jobs, ${Math.round(byUser.totals.cpuHours)} CPU-hours, ${Math.round(byUser.totals.nodeHours)} node-hours, cost ${byUser.totals.cost} USD; table ${all.length} characters`)
