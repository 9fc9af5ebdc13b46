// The monitor page in a real browser (Debian's chromium, headless, driven by playwright-core) against
// a real Prometheus whose history promtool made: the figures each chart prints, the node table, that
// the charts' canvases have their series drawn, "no data yet" against an empty Prometheus, and the
// token. A screenshot is kept (its path is printed) for people to look at.
import {mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {chromium, type Browser, type Page} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startMonitorServer, type MonitorServer} from '../../../src/lib/monitoring/server.js'
import {freePort} from '../../helpers/net.js'
import {openMetrics, startPrometheus, type PrometheusSandbox, type Series} from '../../helpers/prometheus.js'

const OUTPUT = join(tmpdir(), 'citc-test-output')
const NOW = Math.floor(Date.now() / 1000)
/** Two hours of samples every 30 s, the last one 30 s ago (Prometheus shows it as current for 5 min). */
const TIMES = Array.from({length: 240}, (_, i) => NOW - 30 - (239 - i) * 30)

const series = (name: string, labels: Record<string, string>, value: (t: number, i: number) => number): Series => ({name, labels, points: TIMES.map((t, i) => [t, value(t, i)])})
/** A value that changes once, at `at`. */
const step = (before: number, after: number, at: number) => (t: number) => (t < at ? before : after)

const NODE = {shape: 'small', partition: 'compute'}
function history(): string {
  const changed = NOW - 1800
  const s: Series[] = [
    // n4 was off, and is starting for the last half hour; n3 is off all along.
    series('citc_slurm_node_info', {...NODE, node: 'n1', state: 'idle', power: 'on', reason: ''}, () => 1),
    // n2 as Prometheus stores it when the scrape job labels its target node="mgmt" (honor_labels off).
    series('citc_slurm_node_info', {...NODE, node: 'mgmt', exported_node: 'n2', state: 'alloc', power: 'on', reason: ''}, () => 1),
    series('citc_slurm_node_info', {...NODE, node: 'n3', state: 'idle', power: 'off', reason: 'citc: capacity: no room in zone'}, () => 1),
    {...series('citc_slurm_node_info', {...NODE, node: 'n4', state: 'idle', power: 'off', reason: ''}, () => 1), points: TIMES.filter((t) => t < changed).map((t) => [t, 1])},
    {...series('citc_slurm_node_info', {...NODE, node: 'n4', state: 'idle', power: 'starting', reason: ''}, () => 1), points: TIMES.filter((t) => t >= changed).map((t) => [t, 1])},
    series('citc_slurm_node_idle_seconds', {node: 'n1'}, (t) => Math.max(0, t - (NOW - 30 - 600))),
    series('citc_slurm_node_idle_seconds', {node: 'mgmt', exported_node: 'n2'}, () => 0),
    series('citc_slurm_node_cpus', {node: 'n1', kind: 'total'}, () => 4),
    series('citc_slurm_node_cpus', {node: 'n1', kind: 'alloc'}, () => 0),
    series('citc_slurm_node_cpus', {node: 'n2', kind: 'total'}, () => 4),
    series('citc_slurm_node_cpus', {node: 'n2', kind: 'alloc'}, step(0, 4, changed)),
    series('citc_slurm_node_cpus', {node: 'n3', kind: 'total'}, () => 2),
    series('citc_slurm_node_cpus', {node: 'n4', kind: 'total'}, () => 2),
    series('citc_slurm_jobs', {partition: 'compute', state: 'running'}, step(1, 3, changed)),
    series('citc_slurm_jobs', {partition: 'compute', state: 'pending', reason: 'Resources'}, step(0, 4, changed)),
    series('citc_slurm_jobs', {partition: 'compute', state: 'pending', reason: 'Priority'}, () => 1),
    series('citc_slurm_pending_oldest_seconds', {partition: 'compute'}, (t) => Math.max(0, t - (NOW - 30 - 750))),
    // 3 capacity failures in the last hour (none before); 1 quota failure long before it.
    series('citc_node_start_failures_total', {shape: 'small', reason: 'capacity'}, (t) => (t < NOW - 3000 ? 0 : t < NOW - 1200 ? 2 : 3)),
    series('citc_node_start_failures_total', {shape: 'small', reason: 'quota'}, () => 1),
    // node-exporter on the management node: 25 % busy, 75 % memory used, 60 % of / used. Its CPU
    // counter goes on 15 min past NOW: rate() over the page's last 5 min then sees a full window,
    // however long the browser took to start (a window that ended at NOW - 30 held fewer samples each
    // second the test waited, and CI's loaded machine once read 31.75 % for 25).
    {
      ...series('node_cpu_seconds_total', {job: 'management', cpu: '0', mode: 'idle'}, () => 0),
      points: [...TIMES, ...Array.from({length: 30}, (_, i) => NOW + i * 30)].map((t) => [t, (t - TIMES[0]) * 0.75 + 1000]),
    },
    series('node_memory_MemAvailable_bytes', {job: 'management'}, () => 2 * 2 ** 30),
    series('node_memory_MemTotal_bytes', {job: 'management'}, () => 8 * 2 ** 30),
    series('node_filesystem_avail_bytes', {job: 'management', mountpoint: '/'}, () => 40e9),
    series('node_filesystem_size_bytes', {job: 'management', mountpoint: '/'}, () => 100e9),
  ]
  return openMetrics(s, new Set(['citc_node_start_failures_total', 'node_cpu_seconds_total']))
}

let prometheus: PrometheusSandbox
let empty: PrometheusSandbox
let server: MonitorServer
let emptyServer: MonitorServer
let browser: Browser

beforeAll(async () => {
  prometheus = await startPrometheus({history: history()})
  empty = await startPrometheus()
  server = await startMonitorServer({prometheusUrl: prometheus.url})
  emptyServer = await startMonitorServer({prometheusUrl: empty.url})
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
    timeout: 60_000,
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await emptyServer?.close()
  await prometheus?.stop()
  await empty?.stop()
})

/** Open the page, wait for its first refresh; fail on any script error. */
async function open(url: string): Promise<{page: Page; errors: string[]}> {
  const page = await browser.newPage({viewport: {width: 1400, height: 1300}})
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  await page.goto(url, {timeout: 30_000})
  await page.waitForSelector('body:not([data-refreshes="0"])', {timeout: 60_000})
  return {page, errors}
}

/** Each chart's printed values: {chart: {series: [value attribute, text]}}. */
const shown = (page: Page) =>
  page.evaluate(() => {
    const out: Record<string, Record<string, [number, string]>> = {}
    for (const box of document.querySelectorAll<HTMLElement>('.chart')) {
      const values: Record<string, [number, string]> = {}
      for (const li of box.querySelectorAll<HTMLElement>('.now li')) values[li.dataset.series!] = [Number(li.dataset.value), li.querySelector('.value')!.textContent!]
      out[box.dataset.chart!] = values
    }
    return out
  })

/** Per chart: how many pixels of its canvas are coloured (not white, grey or black: series lines). */
const colouredPixels = (page: Page) =>
  page.evaluate(() => {
    const out: Record<string, number> = {}
    for (const box of document.querySelectorAll<HTMLElement>('.chart')) {
      const canvas = box.querySelector('canvas')
      if (!canvas) {
        out[box.dataset.chart!] = -1
        continue
      }
      const {data} = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height)
      let n = 0
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 0 && Math.max(data[i], data[i + 1], data[i + 2]) - Math.min(data[i], data[i + 1], data[i + 2]) > 40) n++
      }
      out[box.dataset.chart!] = n
    }
    return out
  })

describe('the monitor page, against a Prometheus with two hours of history', () => {
  it('prints each chart’s current figures, draws its series, and lists the nodes', async () => {
    const {page, errors} = await open(server.url)
    expect(await page.getAttribute('body', 'data-state'), await page.textContent('#status') ?? '').toBe('ready')
    const v = await shown(page)
    const values = (chart: string) => Object.fromEntries(Object.entries(v[chart]).map(([k, [n]]) => [k, n]))
    expect(values('nodes-power')).toEqual({off: 1, on: 2, starting: 1})
    expect(values('nodes-state')).toEqual({alloc: 1, idle: 3})
    expect(values('jobs')).toEqual({pending: 5, running: 3})
    expect(values('cpus')).toEqual({alloc: 4, total: 12})
    expect(v['oldest-wait'].compute[1]).toBe('12 min 30 s')
    // increase() extrapolates to the hour's edges: about 3, and nothing for quota in that hour.
    expect(v['start-failures'].capacity[0]).toBeGreaterThan(2.8)
    expect(v['start-failures'].capacity[0]).toBeLessThan(3.3)
    expect(v['start-failures'].quota[0]).toBe(0)
    // A full 5-min window of a counter that grows 0.75 s a second: 25 % busy.
    expect(v.management.cpu[0]).toBeCloseTo(25, 1)
    expect(v.management.cpu[1]).toBe(`${v.management.cpu[0].toFixed(1)} %`)
    expect(v.management.memory[0]).toBeCloseTo(75, 6)
    expect(v.management['disk /'][0]).toBeCloseTo(60, 6)

    const rows = await page.$$eval('#nodes-table tbody tr', (trs) =>
      trs.map((tr) => Object.fromEntries([...tr.querySelectorAll<HTMLElement>('td')].map((td) => [td.dataset.field!, td.textContent!]))),
    )
    expect(rows).toEqual([
      {node: 'n1', state: 'idle', power: 'on', shape: 'small', partition: 'compute', reason: '', idle: '10 min 0 s'},
      {node: 'n2', state: 'alloc', power: 'on', shape: 'small', partition: 'compute', reason: '', idle: '0 s'},
      {node: 'n3', state: 'idle', power: 'off', shape: 'small', partition: 'compute', reason: 'citc: capacity: no room in zone', idle: '–'},
      {node: 'n4', state: 'idle', power: 'starting', shape: 'small', partition: 'compute', reason: '', idle: '–'},
    ])

    const pixels = await colouredPixels(page)
    expect(Object.keys(pixels).sort()).toEqual(['cpus', 'jobs', 'management', 'nodes-power', 'nodes-state', 'oldest-wait', 'start-failures'])
    for (const [chart, n] of Object.entries(pixels)) expect(n, `${chart}: coloured pixels of its canvas`).toBeGreaterThan(100)
    expect(await page.locator('.chart .empty:visible').count()).toBe(0)

    mkdirSync(OUTPUT, {recursive: true})
    const png = join(OUTPUT, 'monitor-page.png')
    await page.screenshot({path: png, fullPage: true})
    console.log(`monitor page screenshot: ${png}`)
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)

  it('says "no data yet" on every chart of a Prometheus without data, with no script error', async () => {
    const {page, errors} = await open(emptyServer.url)
    expect(await page.getAttribute('body', 'data-state')).toBe('ready')
    const charts = await page.$$eval('.chart', (boxes) => boxes.map((b) => [(b as HTMLElement).dataset.empty, (b.querySelector('.empty') as HTMLElement).hidden, b.querySelectorAll('canvas').length]))
    expect(charts).toHaveLength(7)
    for (const c of charts) expect(c).toEqual(['true', false, 0])
    expect(await page.isVisible('#nodes-empty')).toBe(true)
    expect(errors).toEqual([])
    await page.close()
  }, 120_000)

  it('shows what is wrong when Prometheus stops answering', async () => {
    const gone = await startMonitorServer({prometheusUrl: `http://127.0.0.1:${await freePort()}`, upstreamTimeoutMs: 3000})
    try {
      const {page} = await open(gone.url)
      expect(await page.getAttribute('body', 'data-state')).toBe('error')
      expect(await page.textContent('#status')).toMatch(/Prometheus does not answer \(ECONNREFUSED\)/)
      await page.close()
    } finally {
      await gone.close()
    }
  }, 120_000)
})

describe('the page server', () => {
  const base = () => `http://127.0.0.1:${server.port}`

  it('refuses a wrong or missing token with a bare 403', async () => {
    for (const path of ['/', '/index.html', `/${'x'.repeat(server.token.length)}/`, `/${server.token.slice(0, -1)}/api/v1/query?query=up`, '/api/v1/query?query=up']) {
      const r = await fetch(base() + path)
      expect(r.status, path).toBe(403)
      expect(await r.text()).toBe('Forbidden\n')
    }
  })

  it('serves the page, uPlot and the two query calls, and nothing else of Prometheus', async () => {
    const t = `${base()}/${server.token}`
    expect((await fetch(`${t}/`)).status).toBe(200)
    expect(await (await fetch(`${t}/uplot.js`)).text()).toMatch(/uPlot/)
    expect((await fetch(`${t}/uplot.css`)).headers.get('content-type')).toMatch(/text\/css/)
    const q = await (await fetch(`${t}/api/v1/query?query=${encodeURIComponent('count(citc_slurm_node_info)')}`)).json()
    expect(q).toMatchObject({status: 'success', data: {result: [{value: [expect.any(Number), '4']}]}})
    for (const path of ['api/v1/targets', 'api/v1/series?match[]=up', 'api/v1/admin/tsdb/snapshot', 'api/v1/status/config', '-/quit', '..%2F..%2Fetc%2Fpasswd']) {
      expect((await fetch(`${t}/${path}`)).status, path).toBe(404)
    }
    expect((await fetch(`${t}/api/v1/query`, {method: 'POST', body: 'query=up'})).status).toBe(405)
    expect((await fetch(t, {redirect: 'manual'})).headers.get('location')).toBe(`/${server.token}/`)
  })
})
