// Prometheus's text exposition format (version 0.0.4), as node_exporter's textfile collector reads it:
// one HELP and one TYPE line per family, then its samples. Pure.

export type MetricType = 'gauge' | 'counter'

export interface FamilyDef {
  name: string
  type: MetricType
  help: string
}

export interface Family extends FamilyDef {
  /** Sample lines as sampleLine writes them (order does not matter: they are sorted). */
  lines: string[]
}

/** A label value with backslash, double quote and newline escaped, as the format asks. */
export const escapeLabelValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')

/** HELP text escapes backslash and newline only. */
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')

const formatValue = (v: number) => (Number.isNaN(v) ? 'NaN' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : String(v))

/** One sample: `name{label="value",…} value`, labels in the order given. */
export function sampleLine(name: string, labels: Record<string, string>, value: number): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
  return `${name}${pairs.length > 0 ? `{${pairs.join(',')}}` : ''} ${formatValue(value)}`
}

/** The metric name of a sample line (up to its labels or its value). */
export const sampleName = (line: string) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0]

/**
 * The whole text: families in the order given, samples sorted (a stable file: the same cluster gives
 * the same bytes), families without samples left out (a HELP without samples is noise to promtool).
 */
export function renderExposition(families: readonly Family[]): string {
  const out: string[] = []
  for (const f of families) {
    // promtool check metrics refuses a counter without the suffix: a typo here is citc's bug.
    if (f.type === 'counter' && !f.name.endsWith('_total')) throw new Error(`internal: counter ${f.name} must end in _total`)
    if (f.lines.length === 0) continue
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`, ...[...f.lines].sort())
  }
  return out.length > 0 ? out.join('\n') + '\n' : ''
}

/** Sample lines of a previous file by metric name (HELP, TYPE and other comments skipped). */
export function samplesByName(text: string): Map<string, string[]> {
  const byName = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const name = sampleName(line)
    if (!name) continue
    // push, not a copy per line: a 1,000-node file has thousands of lines of one name.
    const lines = byName.get(name)
    if (lines) lines.push(line)
    else byName.set(name, [line])
  }
  return byName
}
