// Prometheus disk per node-day at citc's scrape intervals (issue #21): how much a compute node's
// node-exporter (scraped every 30 s) and the management node (node-exporter with citc.prom, every
// 15 s) cost on the management node's disk, and so how long the 2-GB cap lasts for a cluster.
//
// Method, with Debian's real tools: a real prometheus-node-exporter on a loopback port is scraped
// SCRAPES times one second apart, which gives its real series and how each value moves; a day of
// samples is then made from those movements (each series repeats its observed steps, scaled to the
// interval) and written as OpenMetrics; `promtool tsdb create-blocks-from openmetrics` compresses it
// into Prometheus's own blocks, whose size on disk is the figure. The Slurm part (citc.prom) is made
// the same way from the collector's real renderer, for NODES defined nodes, its values mostly flat as
// a quiet cluster's are. Real compression, synthetic day: a busy machine's values move more (more
// bytes per sample), an idle one's less.
//   npx tsx bench/prometheus-disk.ts [--nodes 100]
import {spawn} from 'node:child_process'
import {mkdtempSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {collectCycle} from '../src/lib/metrics/cycle.js'
import {sleep} from '../src/lib/proc.js'
import {check} from './child.js'
import {freePort} from '../test/helpers/net.js'
import {sdiagReport} from '../test/lib/metrics/fixtures.js'

const SCRAPES = 31
const DAY_S = 86_400
const argv = process.argv.slice(2)
const NODES = Number(argv[argv.indexOf('--nodes') + 1]) || 100

type Series = Map<string, number[]>

/** Exposition text → sample key (name{labels}) → value. Comments and non-numbers skipped. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    const v = Number(line.slice(at + 1))
    if (Number.isFinite(v)) out.set(line.slice(0, at), v)
  }
  return out
}

/** Observations of each series, aligned (a series missing from one scrape is dropped). */
function align(scrapes: Array<Map<string, number>>): Series {
  const series: Series = new Map()
  for (const key of scrapes[0].keys()) {
    const values = scrapes.map((s) => s.get(key))
    if (values.every((v) => v !== undefined)) series.set(key, values as number[])
  }
  return series
}

/** A day at `stepS`: each series replays its observed one-second steps, scaled to the interval. */
function openMetricsDay(series: Series, stepS: number, start: number, name: (key: string) => string): string {
  const parts: string[] = []
  const points = Math.floor(DAY_S / stepS)
  for (const [key, values] of series) {
    const steps = values.slice(1).map((v, i) => (v - values[i]) * stepS)
    let v = values[0]
    const lines: string[] = []
    for (let i = 0; i < points; i++) {
      lines.push(`${name(key)} ${Number(v.toPrecision(12))} ${start + i * stepS}`)
      v += steps[i % steps.length]
    }
    parts.push(lines.join('\n'))
  }
  // OpenMetrics wants each metric's samples together: sorting by series key keeps them so.
  return parts.join('\n') + '\n# EOF\n'
}

/** OpenMetrics needs metric names untyped here: every series as an unknown-type gauge (what it compresses like is unchanged). */
const asGauge = (key: string) => key

function du(dir: string): number {
  let total = 0
  for (const e of readdirSync(dir, {withFileTypes: true})) total += e.isDirectory() ? du(join(dir, e.name)) : statSync(join(dir, e.name)).size
  return total
}

async function blockBytes(work: string, label: string, text: string): Promise<number> {
  const file = join(work, `${label}.om`)
  const out = join(work, `${label}-tsdb`)
  writeFileSync(file, text)
  await check('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, out], {timeoutMs: 600_000})
  return du(out)
}

async function nodeExporterScrapes(): Promise<Array<Map<string, number>>> {
  const port = await freePort()
  const child = spawn('/usr/bin/prometheus-node-exporter', [`--web.listen-address=127.0.0.1:${port}`, '--no-collector.textfile'], {stdio: 'ignore'})
  try {
    const scrapes: Array<Map<string, number>> = []
    for (let i = 0; i < 50 && scrapes.length < SCRAPES; i++) {
      const text = await fetch(`http://127.0.0.1:${port}/metrics`, {signal: AbortSignal.timeout(5000)}).then(
        (r) => r.text(),
        () => undefined,
      )
      if (text) scrapes.push(samples(text))
      await sleep(scrapes.length === 0 ? 200 : 1000)
    }
    if (scrapes.length < SCRAPES) throw new Error('node-exporter did not answer')
    return scrapes
  } finally {
    child.kill('SIGTERM')
  }
}

/** citc.prom for NODES idle, powered-down cloud nodes in one partition, from the collector's own renderer. */
function citcPromText(now: number): string {
  const lines = Array.from({length: NODES}, (_, i) => {
    const n = `b-small-${String(i + 1).padStart(4, '0')}`
    return `NodeName=${n} CPUAlloc=0 CPUTot=2 AvailableFeatures=shape=local.small ActiveFeatures=shape=local.small NodeAddr=${n} RealMemory=2000 AllocMem=0 State=IDLE+CLOUD+POWERED_DOWN Partitions=compute LastBusyTime=${now - 600} Reason=`
  })
  const ok = (stdout: string) => ({ok: true as const, stdout, seconds: 0.01})
  return collectCycle({now, results: {scontrol: ok(lines.join('\n') + '\n'), squeue: ok(''), sdiag: ok(sdiagReport)}}).text
}

const work = mkdtempSync(join(tmpdir(), 'citc-bench-prom-'))
try {
  // Blocks must end before now (promtool refuses the head's range): a day ending an hour ago.
  const start = Math.floor(Date.now() / 1000) - DAY_S - 3600
  const node = align(await nodeExporterScrapes())
  const computeBytes = await blockBytes(work, 'compute', openMetricsDay(node, 30, start, asGauge))
  const mgmtBytes = await blockBytes(work, 'mgmt', openMetricsDay(node, 15, start, asGauge))
  const citc = align([samples(citcPromText(start))].concat(Array.from({length: 3}, () => samples(citcPromText(start)))))
  const citcBytes = await blockBytes(work, 'citc', openMetricsDay(citc, 15, start, asGauge))

  const mb = (b: number) => `${(b / 1e6).toFixed(2)} MB`
  const perSample = (b: number, n: number, step: number) => (b / (n * (DAY_S / step))).toFixed(2)
  console.log(`node-exporter series (this machine, textfile off): ${node.size}`)
  console.log(`compute node, every 30 s:      ${mb(computeBytes)} per node-day (${perSample(computeBytes, node.size, 30)} bytes/sample)`)
  console.log(`management node, every 15 s:   ${mb(mgmtBytes)} per day (${perSample(mgmtBytes, node.size, 15)} bytes/sample)`)
  console.log(`citc.prom for ${NODES} defined nodes, every 15 s: ${citc.size} series, ${mb(citcBytes)} per day`)
  const day = (n: number) => mgmtBytes + citcBytes + n * computeBytes
  for (const n of [10, 100]) {
    console.log(`a cluster with ${n} compute nodes powered on all day: ${mb(day(n))} per day; 15 days: ${mb(15 * day(n))}; the 2-GB cap holds ${(2e9 / day(n)).toFixed(1)} days`)
  }
  console.log('(local clusters: no compute-node exporters; the management node and citc.prom only)')
} finally {
  rmSync(work, {recursive: true, force: true})
}
