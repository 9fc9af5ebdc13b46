// `citc status` and `citc nodes`: the cluster, its controller's health, and every node — powered-down
// cloud nodes included (plain sinfo hides them).
import {clusterRegistry} from '../../cluster/registry.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {Controller, type NodeState} from '../../slurm/controller.js'
import {featureValue} from '../../slurm/nodes.js'
import {describeWaitingJob, parseWaitingJobs, type WaitingJob} from '../../slurm/waiting-jobs.js'
import {connectCluster, connectManagement} from '../../cluster/management-node.js'
import type {Transport} from '../../transport/types.js'

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
  controller: {up: boolean; confPath: string; /** Why it could not be asked (cloud clusters: unreachable, not made yet). */ error?: string}
  nodes: NodeRow[]
  summary: Record<NodeRow['power'], number>
  /** Jobs that hold nodes still coming up (CONFIGURING): why and since when. Empty when the controller cannot be asked. */
  waitingJobs: WaitingJob[]
  /** Why the waiting jobs could not be asked for (squeue failed), when it failed. */
  waitingJobsError?: string
  /**
   * Nodes that stay out of service until an admin acts: a start the cloud refused for a quota, its
   * permissions or a wrong request (`citc: quota:|auth:|config:` reasons, set by citc node resume; the
   * watchdog leaves them alone). Capacity failures are not here: the watchdog returns those itself.
   */
  needsAdmin: Array<{node: string; reason: string}>
  /** Cloud clusters made by citc create: "creating" until create finished. */
  phase?: 'creating' | 'ready'
  /** Cloud clusters: region, zone and the Terraform outputs kept in cluster.yaml. */
  cloud?: {region: string; zone?: string; project?: string; mgmtShape: string}
  terraform?: {outputs: Record<string, unknown>}
}

/** A reason only an admin can clear (see StatusDocument.needsAdmin). */
const ADMIN_REASON = /^citc: (quota|auth|config): /

export function needsAdmin(nodes: readonly NodeRow[]): StatusDocument['needsAdmin'] {
  return nodes.filter((n) => n.reason && ADMIN_REASON.test(n.reason)).map((n) => ({node: n.name, reason: n.reason!}))
}

/** For people: what to do about needsAdmin, after a blank line; empty if nothing. */
export function needsAdminText(doc: Pick<StatusDocument, 'needsAdmin'>): string {
  if (doc.needsAdmin.length === 0) return ''
  const lines = doc.needsAdmin.map((n) => `  ${n.node}: ${n.reason}`)
  return `

Needs an admin (the cloud refused these starts; fix the quota, permission or setting, then \`scontrol update NodeName=<node> State=RESUME\`):
${lines.join('\n')}`
}

function powerOf(n: NodeState): NodeRow['power'] {
  if (n.state.includes('POWERING_UP')) return 'powering-up'
  if (n.state.includes('POWERING_DOWN')) return 'powering-down'
  if (n.state.includes('POWERED_DOWN')) return 'down'
  return 'up'
}

function toRow(n: NodeState): NodeRow {
  const shape = featureValue(n.features, 'shape')
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
  const summary = {up: 0, 'powering-up': 0, 'powering-down': 0, down: 0}
  const base = {
    cluster: record.name,
    provider: record.provider,
    origin: record.origin,
    ...(record.cloud
      ? {
          phase: record.phase ?? 'ready',
          cloud: {region: record.cloud.region, zone: record.cloud.zone, project: record.cloud.project, mgmtShape: record.cloud.mgmtShape},
          terraform: {outputs: record.terraform?.outputs ?? {}},
        }
      : {}),
  }
  // A cloud cluster citc created: its state says what exists even when the node cannot be reached.
  let transport: Transport
  if (record.cloud) {
    const where = `${record.mgmt.user}@${record.mgmt.host}:${record.mgmt.port}`
    const unreachable = (error: string): StatusDocument => ({
      ...base,
      managementNode: where,
      controller: {up: false, confPath: record.slurm.confPath, error},
      nodes: [],
      summary,
      waitingJobs: [],
      needsAdmin: [],
    })
    if (record.mgmt.host === PENDING_HOST) return {...unreachable('the management node was not made yet: run citc create --resume'), managementNode: '(not made yet)'}
    try {
      transport = await connectManagement(record)
    } catch (error) {
      return unreachable(`cannot reach the management node: ${(error instanceof Error ? error.message : String(error)).split('\n')[0]}`)
    }
  } else {
    transport = await connectCluster(record)
  }
  try {
    const controller = new Controller(transport, {confPath: record.slurm.confPath})
    let up: boolean
    let nodes: NodeRow[]
    let waiting: {waitingJobs: WaitingJob[]; waitingJobsError?: string}
    try {
      up = await controller.ping()
      const states = up ? await controller.nodes() : []
      nodes = states.map(toRow)
      waiting = up ? await waitingJobsOf(controller, states) : {waitingJobs: []}
    } catch (error) {
      if (!record.cloud) throw error
      // A cloud cluster's status still shows what citc knows when its controller cannot be asked.
      const why = (error instanceof Error ? error.message : String(error)).split('\n')[0]
      return {...base, managementNode: transport.description, controller: {up: false, confPath: record.slurm.confPath, error: why}, nodes: [], summary, waitingJobs: [], needsAdmin: []}
    }
    for (const n of nodes) summary[n.power]++
    return {
      ...base,
      managementNode: transport.description,
      controller: {up, confPath: record.slurm.confPath},
      nodes,
      summary,
      ...waiting,
      needsAdmin: needsAdmin(nodes),
    }
  } finally {
    await transport.close()
  }
}

/** Jobs waiting for their nodes; an squeue that fails costs this explanation only (said, not hidden), not the status. */
async function waitingJobsOf(controller: Controller, states: NodeState[]): Promise<{waitingJobs: WaitingJob[]; waitingJobsError?: string}> {
  try {
    const {now, lines} = await controller.configuringJobs()
    return {waitingJobs: parseWaitingJobs(lines, now, states)}
  } catch (error) {
    return {waitingJobs: [], waitingJobsError: (error instanceof Error ? error.message : String(error)).split('\n')[0]}
  }
}

/** The jobs waiting for their nodes, for people: one line each after a blank line (or why they are not shown); empty if none. */
export function waitingJobsText(doc: Pick<StatusDocument, 'waitingJobs' | 'waitingJobsError'>): string {
  const lines = doc.waitingJobs.map((j) => describeWaitingJob(j))
  if (doc.waitingJobsError) lines.push(`(jobs waiting for nodes not shown: ${doc.waitingJobsError})`)
  return lines.length > 0 ? `\n\n${lines.join('\n')}` : ''
}

/** Fixed-width table for people. */
export function nodeTable(nodes: NodeRow[]): string {
  if (nodes.length === 0) return '(no nodes)'
  const rows = [['NODE', 'STATE', 'SHAPE', 'CPUS', 'MEMORY', 'REASON'], ...nodes.map((n) => [n.name, n.state, n.shape ?? '', String(n.cpus ?? ''), n.realMemory ? `${n.realMemory}M` : '', n.reason ?? ''])]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd()).join('\n')
}
