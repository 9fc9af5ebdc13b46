// `citc status` and `citc nodes`: the cluster, its controller's health, and every node — powered-down
// cloud nodes included (plain sinfo hides them).
import {clusterRegistry} from '../../cluster/registry.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {findingsByNode, parseControllerLog, type LogFinding} from '../../slurm/controller-log.js'
import {Controller, type NodeState} from '../../slurm/controller.js'
import {describeWaitingJob, parseWaitingJobs, type WaitingJob} from '../../slurm/waiting-jobs.js'
import type {Transport} from '../../transport/types.js'
import {withManagementNode} from '../management-session.js'
import {isJoined, nodeRows, type NodeRow} from './node-rows.js'

export type {NodeRow} from './node-rows.js'
export {nodeTable} from './node-table.js'

export interface StatusDocument {
  cluster: string
  provider: string
  origin: string
  managementNode: string
  controller: {up: boolean; confPath: string; /** Why it could not be asked (cloud clusters: unreachable, not made yet). */ error?: string}
  nodes: NodeRow[]
  /**
   * Asked only when the cluster has joined machines: slurmctld's version (to flag a slurmd that differs)
   * and its log file, or why its log could not be read (the machines' log-derived reasons are missing then).
   */
  controllerInfo?: {version?: string; logFile?: string; logError?: string}
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

export async function clusterStatus(dataDir: string, name?: string, command = 'citc status'): Promise<StatusDocument> {
  const record = statusRecord(dataDir, name)
  const notMade = notMadeYet(record)
  if (notMade) return notMade
  return withManagementNode(record, {command, ...statusSession(record)}, (transport) => statusOn(record, transport))
}

/** The cluster a status is about (the only one when no name is given). */
export function statusRecord(dataDir: string, name?: string): ClusterRecord {
  const registry = clusterRegistry(dataDir)
  return registry.get(registry.resolveName(name))
}

/** What citc knows of a cluster whose node cannot be asked: its record, and why. */
export function statusWithoutNode(record: ClusterRecord, error: string, managementNode = `${record.mgmt.user}@${record.mgmt.host}:${record.mgmt.port}`): StatusDocument {
  return {...statusBase(record), managementNode, controller: {up: false, confPath: record.slurm.confPath, error}, nodes: [], summary: emptySummary(), waitingJobs: [], needsAdmin: []}
}

/** A cloud cluster whose create never made its management node: nothing to connect to. */
export function notMadeYet(record: ClusterRecord): StatusDocument | undefined {
  return record.cloud && record.mgmt.host === PENDING_HOST ? statusWithoutNode(record, 'the management node was not made yet: run citc create --resume', '(not made yet)') : undefined
}

/**
 * How status connects. A cloud cluster citc created: its state says what exists even when the node
 * cannot be reached (and the login user can ask Slurm: no root needed there).
 */
export function statusSession(record: ClusterRecord): {asRoot?: boolean; unreachable?: (error: unknown) => StatusDocument} {
  return record.cloud ? {asRoot: false, unreachable: (error: unknown) => statusWithoutNode(record, `cannot reach the management node: ${firstLine(error)}`)} : {}
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]
const emptySummary = (): StatusDocument['summary'] => ({up: 0, 'powering-up': 0, 'powering-down': 0, down: 0})

function statusBase(record: ClusterRecord) {
  return {
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
}

/**
 * The status, asked over a session already open (`citc status --watch` keeps one between refreshes).
 * A cloud cluster's controller that cannot be asked is a status that says so; a local one's is an error.
 */
export async function statusOn(record: ClusterRecord, transport: Transport): Promise<StatusDocument> {
  const controller = new Controller(transport, {confPath: record.slurm.confPath})
  let up: boolean
  let nodes: NodeRow[]
  let controllerInfo: StatusDocument['controllerInfo']
  let waiting: {waitingJobs: WaitingJob[]; waitingJobsError?: string}
  try {
    up = await controller.ping()
    // The waiting jobs are asked at the same time as the nodes: one round trip less (over SSH too).
    const configuring = up ? controller.configuringJobs() : undefined
    configuring?.catch(() => {}) // settled below; unobserved if the nodes' call fails first
    const states = up ? await controller.nodes() : []
    const rows = await rowsOf(controller, states, {provider: record.provider, cluster: record.name})
    nodes = rows.nodes
    controllerInfo = rows.controllerInfo
    waiting = configuring ? await waitingJobsOf(configuring, states) : {waitingJobs: []}
  } catch (error) {
    if (!record.cloud) throw error
    // A cloud cluster's status still shows what citc knows when its controller cannot be asked.
    return statusWithoutNode(record, firstLine(error), transport.description)
  }
  const summary = emptySummary()
  for (const n of nodes) summary[n.power]++
  return {
    ...statusBase(record),
    managementNode: transport.description,
    controller: {up, confPath: record.slurm.confPath},
    nodes,
    ...(controllerInfo ? {controllerInfo} : {}),
    summary,
    ...waiting,
    needsAdmin: needsAdmin(nodes),
  }
}

/**
 * The table's rows from the nodes' states. Only joined machines need the controller's version and its
 * log (one more call): an elastic-only cluster pays nothing more.
 */
export async function rowsOf(controller: Controller, states: NodeState[], ctx: {provider: string; cluster: string}): Promise<{nodes: NodeRow[]; controllerInfo?: StatusDocument['controllerInfo']}> {
  if (!states.some(isJoined)) return {nodes: nodeRows(states, ctx)}
  const info = await joinedInfo(controller, states)
  return {nodes: nodeRows(states, {...ctx, controllerVersion: info.controllerInfo.version, findings: info.findings}), controllerInfo: info.controllerInfo}
}

/** The controller's version and what its log says about the joined machines; a failure costs only these (said, not hidden). */
async function joinedInfo(controller: Controller, states: NodeState[]): Promise<{controllerInfo: NonNullable<StatusDocument['controllerInfo']>; findings: Map<string, LogFinding>}> {
  try {
    const r = await controller.versionAndLog()
    const findings = findingsByNode(parseControllerLog(r.log), states.filter(isJoined))
    return {controllerInfo: {...(r.version ? {version: r.version} : {}), ...(r.logFile ? {logFile: r.logFile} : {}), ...(r.logError ? {logError: r.logError} : {})}, findings}
  } catch (error) {
    return {controllerInfo: {logError: (error instanceof Error ? error.message : String(error)).split('\n')[0]}, findings: new Map()}
  }
}

/** What status could not learn about the joined machines, after a blank line; empty if nothing. */
export function controllerInfoText(doc: Pick<StatusDocument, 'controllerInfo'>): string {
  const e = doc.controllerInfo?.logError
  return e ? `\n\n(slurmctld's log not read, so joined machines show Slurm's reasons only: ${e})` : ''
}

/** Jobs waiting for their nodes; an squeue that fails costs this explanation only (said, not hidden), not the status. */
async function waitingJobsOf(configuring: ReturnType<Controller['configuringJobs']>, states: NodeState[]): Promise<{waitingJobs: WaitingJob[]; waitingJobsError?: string}> {
  try {
    const {now, lines} = await configuring
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
