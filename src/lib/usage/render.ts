// A usage report three ways: the versioned JSON document (schema.ts), a table for a terminal with a
// bar per row, and CSV for spreadsheets. Pure: strings out, deterministic for the same input.
import {printable} from '../users/validate.js'
import type {UsageBy, UsageReport, UsageRow} from './aggregate.js'
import {UNKNOWN_SHAPE} from './aggregate.js'
import {USAGE_SCHEMA_VERSION, type UsageDocument} from './schema.js'

/** "2026-11-01T00:00:00Z": whole seconds, as the schema's since/until. */
const isoSeconds = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** The --json document. `currency` is the prices file's, null without prices. */
export function usageDocument(report: UsageReport, meta: {cluster: string; currency: string | null}): UsageDocument {
  return {
    version: USAGE_SCHEMA_VERSION,
    cluster: meta.cluster,
    since: isoSeconds(report.since),
    until: isoSeconds(report.until),
    by: report.by,
    currency: meta.currency,
    rows: report.rows,
    totals: report.totals,
    unpricedShapes: report.unpricedShapes,
  }
}

const HEADINGS: Record<UsageBy, string> = {account: 'ACCOUNT', user: 'USER', shape: 'SHAPE', day: 'DAY (UTC)'}

/** 1234567.89 → "1,234,567.9" (fixed decimals, grouped; no locale so the output is the same everywhere). */
export function formatNumber(v: number, decimals: number): string {
  const [whole, frac] = v.toFixed(decimals).split('.')
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return frac === undefined ? grouped : `${grouped}.${frac}`
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A bar of `value / max` of `width` cells, in eighths of a cell; never empty for a value above 0. */
export function bar(value: number, max: number, width: number): string {
  if (!(value > 0) || !(max > 0) || width <= 0) return ''
  const eighths = Math.max(1, Math.round((Math.min(value, max) / max) * width * 8))
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8]
}

export interface TableOptions {
  /** Cells of the bar column; 0 leaves it out. */
  barWidth: number
}

/** "2026-11-01 00:00" (UTC, to the minute: the title line's window). */
const shortTime = (iso: string) => iso.slice(0, 16).replace('T', ' ')

/**
 * The table for a terminal: one line per row, TOTAL under a rule, then notes (running jobs, shapes
 * without a price, nodes of unknown shape). The bars show cost when prices are known, else CPU-hours.
 */
export function renderUsageTable(doc: UsageDocument, opts: TableOptions): string {
  const byCost = doc.currency !== null && doc.totals.cost !== null
  const title = `Usage of cluster ${printable(doc.cluster)}, ${shortTime(doc.since)} to ${shortTime(doc.until)} UTC, by ${doc.by}`
  if (doc.rows.length === 0) return `${title}\n\nNo jobs ran in this window.\n`

  const columns: {head: string; cell: (r: UsageRow) => string}[] = [
    {head: 'JOBS', cell: (r) => formatNumber(r.jobs, 0)},
    {head: 'CPU-H', cell: (r) => formatNumber(r.cpuHours, 1)},
    {head: 'GPU-H', cell: (r) => formatNumber(r.gpuHours, 1)},
    {head: 'MEM-GB-H', cell: (r) => formatNumber(r.memGBHours, 1)},
    {head: 'NODE-H', cell: (r) => formatNumber(r.nodeHours, 1)},
  ]
  if (doc.currency !== null) columns.push({head: `COST ${doc.currency}`, cell: (r) => (r.cost === null ? '-' : formatNumber(r.cost, 2))})

  const lines = [...doc.rows, doc.totals].map((r, i) => [i === doc.rows.length ? 'TOTAL' : printable(r.key), ...columns.map((c) => c.cell(r))])
  const head = [HEADINGS[doc.by], ...columns.map((c) => c.head)]
  const widths = head.map((h, c) => Math.max(h.length, ...lines.map((l) => l[c].length)))
  const layout = (cells: string[]) => cells.map((s, c) => (c === 0 ? s.padEnd(widths[c]) : s.padStart(widths[c]))).join('  ')

  const metric = (r: UsageRow) => (byCost ? (r.cost ?? 0) : r.cpuHours)
  const max = Math.max(0, ...doc.rows.map(metric))
  const withBar = (text: string, r: UsageRow) => {
    const b = bar(metric(r), max, opts.barWidth)
    return b === '' ? text.trimEnd() : `${text}  ${b}`
  }

  const out = [title + (opts.barWidth > 0 ? `; bars: ${byCost ? 'cost' : 'CPU-hours'}` : ''), '', layout(head).trimEnd()]
  for (const [i, r] of doc.rows.entries()) out.push(withBar(layout(lines[i]), r))
  out.push('─'.repeat(widths.reduce((a, w) => a + w, 0) + 2 * (widths.length - 1)))
  out.push(layout(lines[doc.rows.length]).trimEnd())
  out.push(...notes(doc))
  return out.join('\n') + '\n'
}

function notes(doc: UsageDocument): string[] {
  const t = doc.totals
  const out: string[] = []
  if (t.running > 0) out.push(`${t.running} ${t.running === 1 ? 'job is' : 'jobs are'} still running: counted up to now.`)
  const unknown = t.shapes[UNKNOWN_SHAPE]
  if (unknown !== undefined) out.push(`${formatNumber(unknown, 1)} node-hours on nodes whose shape citc does not know: shown as ${UNKNOWN_SHAPE}.`)
  if (doc.currency !== null && doc.unpricedShapes.length > 0) {
    const named = doc.unpricedShapes.filter((s) => s !== UNKNOWN_SHAPE)
    const which = named.length > 0 ? ` (no price for ${named.map(printable).join(', ')}: add ${named.length === 1 ? 'it' : 'them'} to the prices file)` : ''
    out.push(`Cost leaves out ${formatNumber(t.unpricedNodeHours, 1)} node-hours${which}.`)
  }
  if (doc.currency !== null) out.push('Costs are estimates: node-hours × price per node-hour; jobs sharing a node each count it.')
  return out.length > 0 ? ['', ...out] : []
}

/** One CSV field (RFC 4180): quoted when it holds a comma, a double quote, CR or LF. */
export function csvField(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v
}

/** A number as CSV writes it: plain digits and a point, no grouping; null is an empty field. */
const csvNumber = (v: number | null) => (v === null ? '' : String(v))

/**
 * CSV for spreadsheets (RFC 4180: CRLF line ends, a header line). One column per shape of node-hours
 * (node_hours:<shape>, every shape of the report), cost columns only with prices. No totals line:
 * with --by shape or day a job is in several rows, so a sum over rows is the spreadsheet's to make.
 */
export function renderUsageCsv(doc: UsageDocument): string {
  const shapes = Object.keys(doc.totals.shapes)
  const priced = doc.currency !== null
  const head = [
    doc.by,
    'jobs',
    'running',
    'cpu_seconds',
    'cpu_hours',
    'gpu_hours',
    'mem_gb_hours',
    'node_hours',
    ...shapes.map((s) => `node_hours:${s}`),
    ...(priced ? [`cost_${doc.currency}`, 'unpriced_node_hours'] : []),
  ]
  const line = (r: UsageRow) => [
    r.key,
    csvNumber(r.jobs),
    csvNumber(r.running),
    csvNumber(r.cpuSeconds),
    csvNumber(r.cpuHours),
    csvNumber(r.gpuHours),
    csvNumber(r.memGBHours),
    csvNumber(r.nodeHours),
    ...shapes.map((s) => csvNumber(r.shapes[s] ?? 0)),
    ...(priced ? [csvNumber(r.cost), csvNumber(r.unpricedNodeHours)] : []),
  ]
  return [head, ...doc.rows.map(line)].map((cells) => cells.map(csvField).join(',') + '\r\n').join('')
}
