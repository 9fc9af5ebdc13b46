// `citc doctor -c NAME`: the cluster's monitoring, checked where it runs. cluster.json's monitoring
// section says where (issue #21's contract): citc.prom in `dir` must be fresh, and Prometheus at
// `prometheusUrl` must be ready with its targets up. A local cluster is read on this machine; any other
// through a session with its management node (as the login user: the files are world-readable), its
// Prometheus asked with curl there. A cluster made with --no-monitoring has nothing to check.
import {posix} from 'node:path'

import {managedHere} from '../../cluster/management-node.js'
import {CLUSTER_JSON, type ManagementContract, readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import {PROM_FILE} from '../../metrics/write.js'
import type {Transport} from '../../transport/types.js'
import {withManagementNode} from '../management-session.js'
import {collectorCheck, type MonitoringCheck, readyCheck, targetsCheck} from './monitoring-checks.js'
import {curlGet, fetchGet, type HttpGet} from './prometheus-http.js'

export type {MonitoringCheck} from './monitoring-checks.js'

export interface MonitoringReport {
  cluster: string
  /** Where it was checked: "this machine", "admin@203.0.113.5:22". */
  where: string
  /** False when the cluster has no monitoring section (created with --no-monitoring). */
  enabled: boolean
  ok: boolean
  checks: MonitoringCheck[]
}

const report = (cluster: string, where: string, checks: MonitoringCheck[], enabled = true): MonitoringReport => ({cluster, where, enabled, ok: checks.every((c) => c.ok), checks})
const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]

export interface MonitoringViaOptions {
  /** cluster.json's path on the node (tests: a stand-in's). */
  clusterJson?: string
  /** The node's clock, epoch seconds (the collector's timestamps are by it). */
  now: () => Promise<number>
  http: HttpGet
}

/** The checks on a node already reached. */
export async function checkMonitoringVia(cluster: string, t: Transport, o: MonitoringViaOptions): Promise<MonitoringReport> {
  const file = o.clusterJson ?? CLUSTER_JSON
  let contract: ManagementContract
  try {
    contract = await readManagementContract(t, file)
  } catch (error) {
    return report(cluster, t.description, [{name: 'cluster.json', ok: false, summary: firstLine(error), details: [], ...(error instanceof CitcError && error.hint ? {hint: error.hint} : {})}])
  }
  const m = contract.monitoring
  if (!m) return report(cluster, t.description, [{name: 'monitoring', ok: true, summary: 'off (created with --no-monitoring)', details: []}], false)
  const checks: MonitoringCheck[] = []
  if (contract.name !== cluster) {
    checks.push({name: 'cluster.json', ok: false, summary: `${file} on ${t.description} describes cluster ${contract.name}, not ${cluster}`, details: [], hint: `is ${cluster}'s management node this one? \`citc cluster list\` shows each cluster's address`})
  }
  const prom = posix.join(m.dir, PROM_FILE)
  let text: string | undefined
  try {
    text = (await t.readFile(prom))?.toString('utf8')
    checks.push(collectorCheck({text, file: `${prom} on ${t.description}`, now: await o.now(), every: m.every, elasticLog: contract.elasticLog, cluster}))
  } catch (error) {
    checks.push({name: 'collector', ok: false, summary: `cannot read ${prom}: ${firstLine(error)}`, details: []})
  }
  const base = m.prometheusUrl.replace(/\/+$/, '')
  const ready = readyCheck(m.prometheusUrl, await o.http(`${base}/-/ready`))
  checks.push(ready)
  if (ready.ok) checks.push(targetsCheck(await o.http(`${base}/api/v1/targets?state=active`)))
  return report(cluster, t.description, checks)
}

/** The node's clock over `t` (date +%s), falling back to this machine's when it cannot be read. */
async function nodeClock(t: Transport): Promise<number> {
  const r = await t.run(['date', '+%s'], {timeoutMs: 20_000}).catch(() => undefined)
  const s = Number(r?.stdout.trim())
  return r?.exitCode === 0 && Number.isFinite(s) && s > 0 ? s : Date.now() / 1000
}

/** `citc doctor -c NAME`'s monitoring part: never throws for what it finds; an unreachable node is a failed check. */
export async function checkMonitoring(dataDir: string, name: string, o: {clusterJson?: string} = {}): Promise<MonitoringReport> {
  const registry = clusterRegistry(dataDir)
  const record: ClusterRecord = registry.get(registry.resolveName(name))
  const where = `${record.mgmt.user}@${record.mgmt.host}:${record.mgmt.port}`
  const unreachable = (summary: string, hint?: string) => report(record.name, where, [{name: 'management node', ok: false, summary, details: [], ...(hint ? {hint} : {})}])
  if (record.mgmt.host === PENDING_HOST) return unreachable('not made yet', `continue its create: citc create --name ${record.name} --resume`)
  const here = managedHere(record)
  return withManagementNode(
    record,
    {command: 'citc doctor', asRoot: false, unreachable: (error) => unreachable(`cannot be reached: ${firstLine(error)}`, error instanceof CitcError ? error.hint : undefined)},
    (t) => checkMonitoringVia(record.name, t, {...o, now: here ? async () => Date.now() / 1000 : () => nodeClock(t), http: here ? fetchGet : curlGet(t)}),
  )
}

/** The report for people, in doctor's layout. */
export function monitoringLines(r: MonitoringReport): string[] {
  const pad = ''.padEnd(19)
  const lines = [`Monitoring of cluster ${r.cluster} (${r.where}):`]
  for (const c of r.checks) {
    lines.push(`${c.ok ? '✓' : '✗'} ${c.name.padEnd(19)} ${c.summary}`)
    for (const d of c.details) lines.push(`  ${pad} ${d}`)
    if (!c.ok && c.hint) lines.push(`  ${pad} ${c.hint}`)
  }
  return lines
}
