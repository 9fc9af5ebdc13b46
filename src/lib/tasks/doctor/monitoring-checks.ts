// `citc doctor -c NAME`'s verdicts on a cluster's monitoring, pure: from what was read (citc.prom's
// text, the management node's clock, Prometheus's answers) to what is wrong and what to do. The
// reading is check-monitoring.ts's.
import {samplesByName} from '../../metrics/exposition.js'

export interface MonitoringCheck {
  /** "collector", "prometheus", "targets", "cluster.json", "monitoring". */
  name: string
  ok: boolean
  /** One line: the verdict. */
  summary: string
  /** More lines: each target that is down, each Slurm call that is stale… */
  details: string[]
  /** What to do, when not ok. */
  hint?: string
}

/** An HTTP answer, or why there was none (refused, timed out, no curl on the node). */
export type HttpAnswer = {ok: true; status: number; body: string} | {ok: false; error: string}

/** How many collection intervals without a success make the collector stale. */
export const STALE_AFTER_INTERVALS = 3
const LAST_SUCCESS = 'citc_collect_last_success_timestamp_seconds'
const UP = 'citc_slurm_up'

/** The value of a sample line, and its `command` label when it has one. */
function sample(line: string): {command?: string; value: number} {
  const command = /\{[^}]*\bcommand="([^"]*)"/.exec(line)?.[1]
  return {command, value: Number(line.slice(line.lastIndexOf(' ') + 1))}
}

export interface CollectorInput {
  /** citc.prom's text; undefined when the file does not exist. */
  text: string | undefined
  file: string
  /** The management node's clock, epoch seconds. */
  now: number
  /** monitoring.every of cluster.json: seconds between two collections. */
  every: number
  elasticLog: string
  cluster: string
}

/** Whether the collector is fresh: every Slurm call succeeded within 3 intervals, and the controller answered its last cycle. */
export function collectorCheck(o: CollectorInput): MonitoringCheck {
  const service = `the service citc-metrics on the management node (\`systemctl status citc-metrics.timer citc-metrics\`; without systemd \`service citc-metrics status\`) and the elastic log ${o.elasticLog}`
  if (o.text === undefined) {
    return {name: 'collector', ok: false, summary: `${o.file} does not exist: the collector never wrote it`, details: [], hint: `check ${service}`}
  }
  const samples = samplesByName(o.text)
  const last = (samples.get(LAST_SUCCESS) ?? []).map(sample)
  if (last.length === 0) {
    return {name: 'collector', ok: false, summary: `${o.file} has no ${LAST_SUCCESS}: it is not the collector's file, or a damaged one`, details: [], hint: `check ${service}`}
  }
  const limit = STALE_AFTER_INTERVALS * o.every
  const ages = last.map((s) => ({command: s.command ?? '?', age: Number.isFinite(s.value) && s.value > 0 ? o.now - s.value : undefined}))
  const stale = ages.filter((a) => a.age === undefined || a.age > limit)
  const upLine = samples.get(UP)?.[0]
  const up = upLine === undefined ? undefined : sample(upLine).value
  const details = stale.map((a) => `${a.command}: ${a.age === undefined ? 'never succeeded' : `last succeeded ${Math.round(a.age)} s ago`}`)
  if (up !== 1) details.push(up === undefined ? `no ${UP} in the file` : `${UP} ${up}: slurmctld did not answer all of the collector's last Slurm calls`)
  if (stale.length === 0 && up === 1) {
    const oldest = Math.max(...ages.map((a) => a.age ?? 0))
    return {name: 'collector', ok: true, summary: `fresh: last success ${Math.max(0, Math.round(oldest))} s ago (every ${o.every} s), slurmctld up`, details: []}
  }
  const summary =
    stale.length > 0
      ? `stale: ${stale.length === ages.length ? 'no' : 'not every'} Slurm call succeeded in the last ${limit} s (${STALE_AFTER_INTERVALS} × every ${o.every} s)`
      : `the controller did not answer its last cycle (${UP} ${up ?? 'missing'})`
  const hint =
    stale.length === ages.length && up === 1
      ? `the collector has stopped: check ${service}`
      : `if slurmctld is down, \`citc status -c ${o.cluster}\` says so; the collector's errors are in the elastic log ${o.elasticLog}; if it has stopped, check ${service}`
  return {name: 'collector', ok: false, summary, details, hint}
}

/** Whether Prometheus answers at `url` (its /-/ready). */
export function readyCheck(url: string, ready: HttpAnswer): MonitoringCheck {
  const hint = 'check the service citc-prometheus on the management node (`systemctl status citc-prometheus`, `journalctl -u citc-prometheus`; without systemd its log is /var/log/citc/monitoring/prometheus.log)'
  if (!ready.ok) return {name: 'prometheus', ok: false, summary: `does not answer at ${url}: ${ready.error}`, details: [], hint}
  if (ready.status !== 200) {
    return {name: 'prometheus', ok: false, summary: `not ready at ${url} (HTTP ${ready.status}${ready.body.trim() ? `: ${ready.body.trim().split('\n')[0]}` : ''})`, details: [], hint: `it may still be starting (replaying its data); else ${hint}`}
  }
  return {name: 'prometheus', ok: true, summary: `ready at ${url}`, details: []}
}

interface ActiveTarget {
  labels?: Record<string, string>
  scrapeUrl?: string
  health?: string
  lastError?: string
}

/** Prometheus's targets (/api/v1/targets): each one that is down, with its last error. */
export function targetsCheck(answer: HttpAnswer): MonitoringCheck {
  const hint = 'a down "management" target is the service citc-node-exporter on the management node; a down "nodes" target is node-exporter on that compute node (its image, or the firewall between them)'
  if (!answer.ok) return {name: 'targets', ok: false, summary: `could not be listed: ${answer.error}`, details: []}
  let targets: ActiveTarget[]
  try {
    const doc = JSON.parse(answer.body) as {status?: string; data?: {activeTargets?: ActiveTarget[]}}
    if (answer.status !== 200 || doc.status !== 'success' || !Array.isArray(doc.data?.activeTargets)) throw new Error(`HTTP ${answer.status}`)
    targets = doc.data.activeTargets
  } catch (error) {
    return {name: 'targets', ok: false, summary: `could not be listed: not Prometheus's answer (${(error as Error).message}): ${answer.body.slice(0, 120)}`, details: []}
  }
  if (targets.length === 0) {
    return {name: 'targets', ok: false, summary: 'none: Prometheus scrapes nothing', details: [], hint: 'its configuration (/etc/citc/monitoring/prometheus.yml) should have the jobs "management" and "nodes": re-run the management playbook (citc create --name <cluster>)'}
  }
  const name = (t: ActiveTarget) => `${t.labels?.job ?? '?'} ${t.labels?.instance ?? t.scrapeUrl ?? '?'}${t.labels?.node ? ` (node ${t.labels.node})` : ''}`
  const down = targets.filter((t) => t.health === 'down')
  const unknown = targets.filter((t) => t.health !== 'down' && t.health !== 'up')
  const details = [...down.map((t) => `down: ${name(t)}: ${t.lastError || 'no error given'}`), ...unknown.map((t) => `not scraped yet: ${name(t)}`)]
  const up = targets.length - down.length - unknown.length
  if (down.length === 0) return {name: 'targets', ok: true, summary: `${up} of ${targets.length} up${unknown.length ? `, ${unknown.length} not scraped yet` : ''}`, details}
  return {name: 'targets', ok: false, summary: `${down.length} of ${targets.length} down`, details, hint}
}
