// Prometheus's HTTP API as `citc monitor --query` uses it: one instant query, bounded in time, and its
// result as a table people read. Prometheus's own error text is kept (a PromQL mistake is explained
// there, with the position); a Prometheus that does not answer says what to check.
import {CitcError} from '../errors.js'

/** Prometheus's `data` of a query: https://prometheus.io/docs/prometheus/latest/querying/api/#expression-query-result-formats */
export type QueryData =
  | {resultType: 'vector'; result: Array<{metric: Record<string, string>; value: [number, string]}>}
  | {resultType: 'matrix'; result: Array<{metric: Record<string, string>; values: Array<[number, string]>}>}
  | {resultType: 'scalar'; result: [number, string]}
  | {resultType: 'string'; result: [number, string]}

export const QUERY_TIMEOUT_MS = 20_000

/** An instant query (`/api/v1/query`) at `time` (default: now). */
export async function instantQuery(baseUrl: string, promql: string, o: {cluster: string; where?: string; timeoutMs?: number; signal?: AbortSignal; time?: number} = {cluster: '?'}): Promise<QueryData> {
  const params = new URLSearchParams({query: promql})
  if (o.time !== undefined) params.set('time', String(o.time))
  const timeoutMs = o.timeoutMs ?? QUERY_TIMEOUT_MS
  const signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs)
  const where = o.where ?? baseUrl
  const doctor = `check the cluster's monitoring with \`citc doctor -c ${o.cluster}\` (Prometheus's service citc-prometheus on the management node)`
  let response: Response
  let text: string
  try {
    response = await fetch(`${baseUrl}/api/v1/query`, {method: 'POST', body: params, signal})
    text = await response.text()
  } catch (error) {
    if (o.signal?.aborted) throw new CitcError('cancelled', 'cancelled: the query to Prometheus', {cause: error})
    const e = error as Error & {cause?: {code?: string; message?: string}}
    const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (e.cause?.code ?? e.cause?.message ?? e.message)
    throw new CitcError('remote', `Prometheus at ${where} does not answer (${why})`, {hint: doctor, cause: error})
  }
  let doc: {status?: string; data?: QueryData; error?: string; errorType?: string}
  try {
    doc = JSON.parse(text)
  } catch {
    throw new CitcError('remote', `${where} answered HTTP ${response.status} with something that is not Prometheus's API: ${text.slice(0, 200)}`, {hint: doctor})
  }
  if (doc.status !== 'success' || !doc.data) {
    const bad = doc.errorType === 'bad_data'
    throw new CitcError(bad ? 'invalidInput' : 'remote', `Prometheus refused the query: ${doc.error ?? `HTTP ${response.status}`}${doc.errorType ? ` (${doc.errorType})` : ''}`, {
      hint: bad ? 'fix the PromQL expression (https://prometheus.io/docs/prometheus/latest/querying/basics/); metric names: docs/monitoring.md' : doctor,
      details: {query: promql, ...(doc.errorType ? {errorType: doc.errorType} : {})},
    })
  }
  return doc.data
}

/** `{a="1", b="2"}` of a series; the metric name first, as PromQL writes it. */
export function seriesName(metric: Record<string, string>): string {
  const {__name__: name = '', ...labels} = metric
  const pairs = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
  return pairs.length ? `${name}{${pairs.join(', ')}}` : name || '{}'
}

/** A query's result as text: one line per series (its labels, then its value), or the scalar. */
export function resultTable(data: QueryData): string {
  if (data.resultType === 'scalar' || data.resultType === 'string') return data.result[1]
  if (data.result.length === 0) return '(no series: the expression matched nothing at this time)'
  let rows: Array<readonly [string, string]>
  if (data.resultType === 'vector') rows = data.result.map((s) => [seriesName(s.metric), s.value[1]] as const)
  else rows = data.result.map((s) => [seriesName(s.metric), s.values.map((v) => `${v[1]} @${v[0]}`).join(', ')] as const)
  const width = Math.min(100, Math.max(...rows.map(([n]) => n.length)))
  return rows.map(([n, v]) => `${n.padEnd(width)}  ${v}`).join('\n')
}
