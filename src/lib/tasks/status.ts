// `citc status` and `citc nodes`: the cluster, its controller's health, and every node — powered-down
// cloud nodes included (plain sinfo hides them).
import {clusterRegistry} from '../cluster/registry.js'
import type {ClusterRecord} from '../cluster/schema.js'
import {Controller, type NodeState} from '../slurm/controller.js'
import {connectCluster} from '../transport/connect.js'

export interface NodeRow {
  name: string
  /** Slurm's state flags joined with "+", e.g. "IDLE+CLOUD+POWERED_DOWN". */
  state: string
  power: 'up' | 'powering-up' | 'powering-down' | 'down'
  shape?: string
  cpus?: number
  realMemory?: number
  partitions?: string
  reason?: string
}

export interface StatusDocument {
  cluster: string
  provider: string
  origin: string
  managementNode: string
  controller: {up: boolean; confPath: string}
  nodes: NodeRow[]
  summary: Record<NodeRow['power'], number>
}

function powerOf(n: NodeState): NodeRow['power'] {
  if (n.state.includes('POWERING_UP')) return 'powering-up'
  if (n.state.includes('POWERING_DOWN')) return 'powering-down'
  if (n.state.includes('POWERED_DOWN')) return 'down'
  return 'up'
}

export function toRow(n: NodeState): NodeRow {
  const shape = (n.features ?? '').split(',').find((f) => f.startsWith('shape='))?.slice(6)
  return {
    name: n.name,
    state: n.state.join('+'),
    power: powerOf(n),
    ...(shape ? {shape} : {}),
    cpus: n.cpus,
    realMemory: n.realMemory,
    partitions: n.partitions,
    ...(n.reason ? {reason: n.reason} : {}),
  }
}

export async function clusterStatus(dataDir: string, name?: string): Promise<StatusDocument> {
  const registry = clusterRegistry(dataDir)
  const record: ClusterRecord = registry.get(registry.resolveName(name))
  const transport = await connectCluster(record)
  try {
    const controller = new Controller(transport, {confPath: record.slurm.confPath})
    const up = await controller.ping()
    const nodes = up ? (await controller.nodes()).map(toRow) : []
    const summary = {up: 0, 'powering-up': 0, 'powering-down': 0, down: 0}
    for (const n of nodes) summary[n.power]++
    return {
      cluster: record.name,
      provider: record.provider,
      origin: record.origin,
      managementNode: transport.description,
      controller: {up, confPath: record.slurm.confPath},
      nodes,
      summary,
    }
  } finally {
    await transport.close()
  }
}

/** Fixed-width table for people. */
export function nodeTable(nodes: NodeRow[]): string {
  if (nodes.length === 0) return '(no nodes)'
  const rows = [['NODE', 'STATE', 'SHAPE', 'CPUS', 'MEMORY', 'REASON'], ...nodes.map((n) => [n.name, n.state, n.shape ?? '', String(n.cpus ?? ''), n.realMemory ? `${n.realMemory}M` : '', n.reason ?? ''])]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n')
}
