// How doctor asks a cluster's Prometheus, which listens on the management node's loopback only: from
// this machine for a local cluster, and with curl run on the management node over the session for
// the others (no tunnel needed for two GETs). Both bounded.
import type {RunResult, Transport} from '../../transport/types.js'
import type {HttpAnswer} from './monitoring-checks.js'

export type HttpGet = (url: string) => Promise<HttpAnswer>

export const HTTP_TIMEOUT_S = 5

const why = (error: unknown): string => {
  const e = error as Error & {cause?: {code?: string; message?: string}}
  if (e?.name === 'TimeoutError') return `no answer in ${HTTP_TIMEOUT_S} s`
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error)
}

/** GET from this machine. */
export const fetchGet: HttpGet = async (url) => {
  try {
    const r = await fetch(url, {signal: AbortSignal.timeout(HTTP_TIMEOUT_S * 1000)})
    return {ok: true, status: r.status, body: await r.text()}
  } catch (error) {
    return {ok: false, error: why(error)}
  }
}

/** argv of the GET on the management node: the body, then the status code on a line of its own. */
export const curlArgv = (url: string) => ['curl', '-sS', '--max-time', String(HTTP_TIMEOUT_S), '-w', '\\n%{http_code}', url]

/** curl's result → the answer (pure). */
export function curlAnswer(r: RunResult, where: string): HttpAnswer {
  if (r.exitCode === 127) return {ok: false, error: `curl is not installed on ${where} (apt-get install curl there)`}
  if (r.exitCode !== 0) return {ok: false, error: `${r.stderr.trim().split('\n')[0] || `curl exited ${r.exitCode}`}`.replace(/^curl: \(\d+\) /, '')}
  const cut = r.stdout.lastIndexOf('\n')
  const status = Number(r.stdout.slice(cut + 1).trim())
  if (cut < 0 || !Number.isInteger(status)) return {ok: false, error: `curl printed no status code: ${r.stdout.slice(0, 120)}`}
  return {ok: true, status, body: r.stdout.slice(0, cut)}
}

/** GET on the management node, with curl over `t`. */
export function curlGet(t: Transport): HttpGet {
  return async (url) => {
    try {
      return curlAnswer(await t.run(curlArgv(url), {timeoutMs: (HTTP_TIMEOUT_S + 10) * 1000}), t.description)
    } catch (error) {
      return {ok: false, error: `curl on ${t.description}: ${(error as Error).message.split('\n')[0]}`}
    }
  }
}
