// The node table of `citc status` and `citc nodes`, for people (pure): one table for every kind. The
// columns only joined machines fill (address, slurmd version, last seen) appear when there is one,
// and what to do about a joined machine follows the table, one line per machine.
import type {NodeRow} from './node-rows.js'

function cpusCell(n: NodeRow): string {
  if (n.cpus === undefined) return ''
  return n.hardware?.low.includes('cpus') ? `${n.cpus} (fewer registered)` : String(n.cpus)
}

function memoryCell(n: NodeRow): string {
  if (!n.realMemory) return ''
  if (!n.hardware?.low.includes('memory')) return `${n.realMemory}M`
  const got = n.hardware.memory.registered
  return `${n.realMemory}M (${got === undefined ? 'less' : `${got}M`} registered)`
}

function versionCell(n: NodeRow): string {
  if (!n.version) return ''
  return n.versionMismatch ? `${n.version} (not the controller's)` : n.version
}

function lastSeenCell(n: NodeRow): string {
  if (!n.lastSeen) return ''
  if (n.lastSeen.from === 'responding') return 'now'
  if (n.lastSeen.from === 'none') return 'never'
  return n.lastSeen.at
}

/** Fixed-width table for people; then, if any, what to do about joined machines. */
export function nodeTable(nodes: readonly NodeRow[]): string {
  if (nodes.length === 0) return '(no nodes)'
  const joined = nodes.some((n) => n.kind === 'joined')
  const columns: Array<[string, (n: NodeRow) => string]> = [
    ['NODE', (n) => n.name],
    ['KIND', (n) => n.kind],
    ['STATE', (n) => n.state],
    ...(joined ? ([['ADDRESS', (n) => n.address ?? '']] as Array<[string, (n: NodeRow) => string]>) : []),
    ['SHAPE', (n) => n.shape ?? ''],
    ['CPUS', cpusCell],
    ['MEMORY', memoryCell],
    ...(joined
      ? ([
          ['VERSION', versionCell],
          ['LAST SEEN', lastSeenCell],
        ] as Array<[string, (n: NodeRow) => string]>)
      : []),
    ['REASON', (n) => (n.reason ? `${n.reason}${n.reasonFrom ? ` [${n.reasonFrom}]` : ''}` : '')],
  ]
  const rows = [columns.map(([title]) => title), ...nodes.map((n) => columns.map(([, cell]) => cell(n)))]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  const table = rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n')
  const hints = nodes.filter((n) => n.hint).map((n) => `  ${n.name}: ${n.hint}`)
  return hints.length > 0 ? `${table}\n\nWhat to do:\n${hints.join('\n')}` : table
}
