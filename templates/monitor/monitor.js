// The citc monitor page: every chart is a set of PromQL range queries through the page's own server
// (which proxies only /api/v1/query and /api/v1/query_range to the cluster's Prometheus). Each chart
// prints its current values (the last sample of each series) under it, with data-series and
// data-value attributes that tests read; a chart with no series says "no data yet".
/* global uPlot */
'use strict'

const REFRESH_MS = 15000
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf']
/** Fixed colours for the names that mean the same thing everywhere. */
const NAMED = {on: '#2ca02c', starting: '#ff7f0e', stopping: '#9467bd', stop_pending: '#8c564b', off: '#7f7f7f', running: '#2ca02c', pending: '#ff7f0e', alloc: '#1f77b4', total: '#7f7f7f'}

// Series names come from one label (`by`), or are fixed (`name`).
const CHARTS = [
  {id: 'nodes-power', title: 'Nodes by power', unit: 'count', queries: [{expr: 'count by (power) (citc_slurm_node_info)', by: 'power'}]},
  {id: 'nodes-state', title: 'Nodes by state', unit: 'count', queries: [{expr: 'count by (state) (citc_slurm_node_info)', by: 'state'}]},
  {id: 'jobs', title: 'Jobs running and pending', unit: 'count', queries: [{expr: 'sum by (state) (citc_slurm_jobs{state=~"running|pending"})', by: 'state'}]},
  {id: 'oldest-wait', title: 'Oldest pending job: time waited', unit: 'seconds', queries: [{expr: 'max by (partition) (citc_slurm_pending_oldest_seconds)', by: 'partition'}]},
  {id: 'start-failures', title: 'Node start failures by reason (in the hour before)', unit: 'count', queries: [{expr: 'sum by (reason) (increase(citc_node_start_failures_total[1h]))', by: 'reason'}]},
  {id: 'cpus', title: 'CPUs allocated of total', unit: 'count', queries: [{expr: 'sum by (kind) (citc_slurm_node_cpus)', by: 'kind'}]},
  {
    id: 'management',
    title: 'Management node: CPU, memory and disk used',
    unit: 'percent',
    queries: [
      {expr: '100 * (1 - avg(rate(node_cpu_seconds_total{job="management",mode="idle"}[5m])))', name: 'cpu'},
      {expr: '100 * (1 - sum(node_memory_MemAvailable_bytes{job="management"}) / sum(node_memory_MemTotal_bytes{job="management"}))', name: 'memory'},
      {expr: '100 * (1 - sum(node_filesystem_avail_bytes{job="management",mountpoint="/"}) / sum(node_filesystem_size_bytes{job="management",mountpoint="/"}))', name: 'disk /'},
    ],
  },
]

function formatValue(v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–'
  if (unit === 'percent') return `${v.toFixed(1)} %`
  if (unit === 'seconds') return duration(v)
  return Number.isInteger(v) ? String(v) : v.toFixed(1)
}

/** Axis ticks: short, so they fit the axis (12m, 1.5h). */
function tick(v, unit) {
  if (unit === 'percent') return `${Math.round(v)} %`
  if (unit !== 'seconds') return String(Math.round(v * 100) / 100)
  const a = Math.abs(v)
  if (a < 60) return `${Math.round(v)}s`
  if (a < 3600) return `${Math.round((v / 60) * 10) / 10}m`
  if (a < 86400) return `${Math.round((v / 3600) * 10) / 10}h`
  return `${Math.round((v / 86400) * 10) / 10}d`
}

function duration(s) {
  s = Math.round(s)
  if (s < 60) return `${s} s`
  const d = Math.floor(s / 86400)
  const h = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  if (d > 0) return `${d} d ${h} h`
  if (h > 0) return `${h} h ${m} min`
  return `${m} min ${s % 60} s`
}

async function api(path, params) {
  const response = await fetch(`api/v1/${path}?${new URLSearchParams(params)}`, {cache: 'no-store'})
  let doc
  try {
    doc = await response.json()
  } catch {
    throw new Error(`HTTP ${response.status} from the page's server`)
  }
  if (doc.status !== 'success') throw new Error(doc.error || `HTTP ${response.status}`)
  return doc.data
}

/** All series of a chart on one time axis: [xs, ys per series], names, and each series' last value. */
async function chartData(chart, start, end, step) {
  const xs = []
  for (let t = start; t <= end; t += step) xs.push(t)
  const index = new Map(xs.map((t, i) => [t, i]))
  const series = []
  for (const q of chart.queries) {
    const data = await api('query_range', {query: q.expr, start, end, step})
    for (const s of data.result) {
      const ys = xs.map(() => null)
      let last = null
      for (const [t, v] of s.values) {
        const i = index.get(Math.round(t))
        const n = Number(v)
        if (i !== undefined) ys[i] = Number.isFinite(n) ? n : null
        if (Number.isFinite(n)) last = n
      }
      series.push({name: q.name || s.metric[q.by] || '(none)', ys, last})
    }
  }
  series.sort((a, b) => a.name.localeCompare(b.name))
  return {xs, series}
}

const plots = new Map()

function colorOf(name, i) {
  return NAMED[name] || COLORS[i % COLORS.length]
}

function chartBox(chart) {
  let box = document.getElementById(`chart-${chart.id}`)
  if (box) return box
  box = document.createElement('div')
  box.className = 'chart'
  box.id = `chart-${chart.id}`
  box.dataset.chart = chart.id
  box.innerHTML = '<h2></h2><div class="plot"></div><p class="empty" hidden>no data yet</p><ul class="now"></ul>'
  box.querySelector('h2').textContent = chart.title
  document.getElementById('charts').append(box)
  return box
}

function draw(chart, {xs, series}) {
  const box = chartBox(chart)
  const plot = box.querySelector('.plot')
  const empty = box.querySelector('.empty')
  const now = box.querySelector('.now')
  plots.get(chart.id)?.destroy()
  plots.delete(chart.id)
  now.replaceChildren()
  box.dataset.empty = String(series.length === 0)
  if (series.length === 0) {
    empty.hidden = false
    return
  }
  empty.hidden = true
  series.forEach((s, i) => {
    const li = document.createElement('li')
    li.dataset.series = s.name
    li.dataset.value = s.last === null ? '' : String(s.last)
    const swatch = document.createElement('span')
    swatch.className = 'swatch'
    swatch.style.background = colorOf(s.name, i)
    const value = document.createElement('span')
    value.className = 'value'
    value.textContent = formatValue(s.last, chart.unit)
    li.append(swatch, `${s.name}: `, value)
    now.append(li)
  })
  const width = Math.max(300, plot.clientWidth || box.clientWidth - 16)
  const opts = {
    width,
    height: 200,
    legend: {show: false},
    scales: {y: {range: (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1]}},
    axes: [{}, {size: 56, values: (u, ticks) => ticks.map((v) => tick(v, chart.unit))}],
    series: [{}, ...series.map((s, i) => ({label: s.name, stroke: colorOf(s.name, i), width: 2, spanGaps: false}))],
  }
  plots.set(chart.id, new uPlot(opts, [xs, ...series.map((s) => s.ys)], plot))
}

/**
 * A node's name: its `node` label, unless the scrape job gives its targets a `node` label of their
 * own — then Prometheus keeps the collector's as `exported_node` (honor_labels off).
 */
const nodeOf = (m) => m.exported_node ?? m.node

async function nodeTable(time) {
  const [info, idle] = await Promise.all([api('query', {query: 'citc_slurm_node_info', time}), api('query', {query: 'citc_slurm_node_idle_seconds', time})])
  const idleOf = new Map(idle.result.map((s) => [nodeOf(s.metric), Number(s.value[1])]))
  const body = document.querySelector('#nodes-table tbody')
  const rows = info.result.map((s) => ({...s.metric, node: nodeOf(s.metric)})).sort((a, b) => a.node.localeCompare(b.node, undefined, {numeric: true}))
  body.replaceChildren(
    ...rows.map((m) => {
      const tr = document.createElement('tr')
      tr.dataset.node = m.node
      const idleS = idleOf.get(m.node)
      const cells = [m.node, m.state, m.power, m.shape, m.partition, m.reason, idleS === undefined ? '–' : duration(idleS)]
      const keys = ['node', 'state', 'power', 'shape', 'partition', 'reason', 'idle']
      cells.forEach((text, i) => {
        const td = document.createElement('td')
        td.dataset.field = keys[i]
        td.textContent = text || ''
        tr.append(td)
      })
      if (idleS !== undefined) tr.dataset.idleSeconds = String(idleS)
      return tr
    }),
  )
  document.getElementById('nodes-empty').hidden = rows.length > 0
}

let timer
async function refresh() {
  clearTimeout(timer)
  const status = document.getElementById('status')
  const windowS = Number(document.getElementById('window').value)
  const end = Math.floor(Date.now() / 1000)
  // About 240 points per chart; the last one is now, so each series' last value is its current one.
  const step = Math.max(15, Math.round(windowS / 240))
  const start = end - Math.floor(windowS / step) * step
  const errors = []
  for (const chart of CHARTS) {
    try {
      draw(chart, await chartData(chart, start, end, step))
    } catch (error) {
      errors.push(`${chart.title}: ${error.message}`)
      chartBox(chart)
    }
  }
  try {
    await nodeTable(end)
  } catch (error) {
    errors.push(`Nodes: ${error.message}`)
  }
  status.hidden = errors.length === 0
  status.textContent = errors.join(' · ')
  document.body.dataset.state = errors.length ? 'error' : 'ready'
  document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes) + 1)
  document.getElementById('refreshed').textContent = `updated ${new Date().toLocaleTimeString()}`
  timer = setTimeout(refresh, REFRESH_MS)
}

document.getElementById('window').addEventListener('change', refresh)
window.addEventListener('resize', () => {
  clearTimeout(timer)
  timer = setTimeout(refresh, 300)
})
refresh()
