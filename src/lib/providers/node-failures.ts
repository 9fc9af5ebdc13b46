// Why a cloud refused to start a node, in six classes every driver shares (issue #11). The class decides what happens next: throttled and transient
// are retried within a budget (retry-budget.ts); the other four fail the node at once, DOWN with the
// reason failureReason() builds, so Slurm moves the job on instead of waiting for ResumeTimeout.
// Pure: the per-cloud tables (aws/, google/, oracle/failures.ts) read the SDKs' error shapes.

export type FailureClass = 'capacity' | 'quota' | 'throttled' | 'transient' | 'config' | 'auth'

export interface NodeFailure {
  class: FailureClass
  /** The cloud's own code (InsufficientInstanceCapacity, ZONE_RESOURCE_POOL_EXHAUSTED, …). */
  code: string
  /** The cloud's message, for the elastic log — never put in the Slurm reason (it may carry ids). */
  message: string
}

/** Only these are worth asking again in the same resume: the cloud said "not now", not "no". */
export function retryable(f: NodeFailure): boolean {
  return f.class === 'throttled' || f.class === 'transient'
}

/** Slurm's Reason field is shown by sinfo/scontrol on one line; keep it short and quotable. */
export const MAX_REASON = 200

/**
 * The one-line reason for `scontrol update NodeName=… State=DOWN Reason=…`:
 * `citc: capacity: InsufficientInstanceCapacity for c5.xlarge in eu-west-1a`. Only the code, shape
 * and place go in (never the message: AWS's UnauthorizedOperation carries an encoded policy dump,
 * others request ids); each is cut at its first line break and stripped of control characters and
 * double quotes so the reason cannot break the scontrol argument.
 */
export function failureReason(f: NodeFailure, where: {shape: string; place?: string}): string {
  let reason = `citc: ${f.class}: ${oneLine(f.code) || 'unknown'} for ${oneLine(where.shape) || 'unknown shape'}`
  const place = oneLine(where.place ?? '')
  if (place) reason += ` in ${place}`
  return reason.length <= MAX_REASON ? reason : reason.slice(0, MAX_REASON - 1) + '…'
}

/** The first line of s, printable only, without `"`, trimmed. */
export function oneLine(s: string): string {
  const first = String(s).split(/[\r\n]/, 1)[0] ?? ''
  return first.replace(/[\u0000-\u001f\u007f"]/g, '').trim()
}

// ---- helpers the per-cloud classifiers share (defensive reads of unknown values) ----

/** e[key] when e is an object, else undefined. */
export function prop(e: unknown, key: string): unknown {
  return e !== null && (typeof e === 'object' || typeof e === 'function') ? (e as Record<string, unknown>)[key] : undefined
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}

/** A number, or a numeric string ("503"), else undefined. */
export function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v)
  return undefined
}

export function messageOf(e: unknown): string {
  const own = str(prop(e, 'message')) ?? (typeof e === 'string' ? e : undefined)
  if (own) return own
  const s = String(e)
  return s === '' || s.startsWith('[object ') ? 'unknown error' : s
}

/**
 * Node's socket/DNS errors and the SDKs' own timeouts: the request may never have reached the cloud,
 * so asking again is right (the idempotency token makes a repeat create harmless).
 * ENOTFOUND is left out: a name that does not resolve is a wrong endpoint far more often than a blip.
 */
const NETWORK_CODES = new Set([
  'ECONNRESET', 'ETIMEDOUT', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'EAI_AGAIN', 'ENETUNREACH',
  'EHOSTUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT',
  'TimeoutError', 'RequestTimeout', 'RequestTimeoutException',
])

/** The network-ish code of e or of its cause (fetch wraps socket errors: TypeError{cause: {code}}). */
export function networkCode(e: unknown): string | undefined {
  for (const v of [e, prop(e, 'cause')]) {
    for (const c of [prop(v, 'code'), prop(v, 'errno'), prop(v, 'name')]) {
      if (typeof c === 'string' && NETWORK_CODES.has(c)) return c
    }
  }
  return undefined
}

/**
 * What is left when no table matched: 5xx and network errors are transient (ask again), 429 is
 * throttled, anything else is config — a request the cloud will refuse every time, so the node fails
 * at once with the cloud's message rather than looping until ResumeTimeout.
 */
export function fallback(e: unknown, status: number | undefined, code: string | undefined, message = messageOf(e)): NodeFailure {
  const net = networkCode(e)
  if (status === 429) return {class: 'throttled', code: code ?? 'HTTP 429', message}
  if (net) return {class: 'transient', code: code ?? net, message}
  if (status !== undefined && status >= 500 && status <= 599) return {class: 'transient', code: code ?? `HTTP ${status}`, message}
  return {class: 'config', code: code ?? (status === undefined ? oneLine(message).slice(0, 80) || 'Error' : `HTTP ${status}`), message}
}
