// Compute Engine's errors → the six failure classes (node-failures.ts). Three shapes reach a driver
// (Compute Engine API reference, "Handling API responses" and "Errors"; gaxios and google-gax):
//   - a finished operation that failed (not thrown): `{error: {errors: [{code, message}]},
//     httpErrorStatusCode}` — codes like ZONE_RESOURCE_POOL_EXHAUSTED (503) or QUOTA_EXCEEDED (403);
//   - @google-cloud/compute 6 / gaxios: `code` (or `status`) = HTTP status, the JSON error body in
//     `response.data.error` with `errors[].reason` (rateLimitExceeded, quotaExceeded, …) and `status`;
//   - @google-cloud/compute 7 / gax: GoogleError with a gRPC `code` (429→8, 503→14, 403→7) and `reason`.
// Throttling is decided first: Toolkit PR #5776 files `rate_limit_exceeded` and `resource_exhausted`
// under capacity (§2.4) — the very mistake issue #11 forbids.
import {fallback, type FailureClass, messageOf, type NodeFailure, num, prop, str} from '../node-failures.js'

/** Rate limits: HTTP 403/429 reasons and the google.rpc.ErrorInfo reason (§3.2, §5.1). */
const THROTTLED = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RATE_LIMIT_EXCEEDED', 'RESOURCE_EXHAUSTED_RATE_LIMIT'])
/** A 403 "Quota exceeded for quota metric 'Queries' … per minute" is the API's rate quota (§5.1). */
const RATE_QUOTA_MESSAGE = /quota exceeded for quota metric/i

/** Stockouts: the operation codes of §2.4 (capacity_circuit.py's list) and §5.1. */
const CAPACITY = new Set([
  'ZONE_RESOURCE_POOL_EXHAUSTED', 'ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 'REGION_RESOURCE_POOL_EXHAUSTED',
  'REGION_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 'RESOURCE_POOL_EXHAUSTED', 'RESOURCE_POOL_EXHAUSTED_WITH_DETAILS',
  'VM_MIN_COUNT_NOT_REACHED', 'insufficientCapacity', 'resourcePoolExhausted', 'INSUFFICIENT_RESOURCE_CAPACITY',
])

/** Project/region quotas (CPUS, CPUS_PER_VM_FAMILY, … — §2.4 #3225): only the admin can raise them. */
const QUOTA = new Set(['QUOTA_EXCEEDED', 'quotaExceeded'])

const AUTH = new Set(['forbidden', 'insufficientPermissions', 'authError', 'PERMISSION_DENIED', 'UNAUTHENTICATED', 'ACCESS_TOKEN_EXPIRED'])

/** §5.1: 503 backendError; the rest are Google's usual "try again" reasons and statuses. */
const TRANSIENT = new Set(['backendError', 'internalError', 'INTERNAL_ERROR', 'UNAVAILABLE', 'INTERNAL', 'DEADLINE_EXCEEDED', 'ABORTED'])

/** gRPC codes (compute 7) without a more specific reason. */
const GRPC: Record<number, NodeFailure['class']> = {
  4: 'transient', // DEADLINE_EXCEEDED
  7: 'auth', // PERMISSION_DENIED (403)
  8: 'throttled', // RESOURCE_EXHAUSTED (429, §3.2)
  10: 'transient', // ABORTED
  13: 'transient', // INTERNAL
  14: 'transient', // UNAVAILABLE (503)
  16: 'auth', // UNAUTHENTICATED (401)
}

/**
 * The hand-built table, class by class (throttled first, then in this order when an error carries
 * several codes). Exported for test/lib/providers/error-table.test.ts, which drives every code through
 * the real client and the fake Compute Engine: a code added here without a case there fails that test.
 */
export const GOOGLE_ERROR_TABLE: Readonly<Record<Exclude<FailureClass, 'config'>, ReadonlySet<string>>> = {
  throttled: THROTTLED,
  capacity: CAPACITY,
  quota: QUOTA,
  auth: AUTH,
  transient: TRANSIENT,
}

export function classifyGoogleError(e: unknown): NodeFailure {
  const {codes, http, grpc} = read(e)
  const message = messageOf(firstError(e) ?? e)
  const find = (set: ReadonlySet<string>) => codes.find((c) => set.has(c))
  const throttled = find(GOOGLE_ERROR_TABLE.throttled)
  if (throttled || http === 429 || RATE_QUOTA_MESSAGE.test(message)) {
    return {class: 'throttled', code: throttled ?? (http === 429 ? 'HTTP 429' : codes[0] ?? 'rateLimitExceeded'), message}
  }
  for (const cls of ['capacity', 'quota', 'auth', 'transient'] as const) {
    const set = GOOGLE_ERROR_TABLE[cls]
    const code = find(set)
    if (code) return {class: cls, code, message}
  }
  if (grpc !== undefined && GRPC[grpc]) return {class: GRPC[grpc], code: codes[0] ?? `gRPC ${grpc}`, message}
  if (http === 401 || http === 403) return {class: 'auth', code: codes[0] ?? `HTTP ${http}`, message}
  // notFound, invalid, RESOURCE_NOT_FOUND, RESOURCE_ALREADY_EXISTS (the driver adopts before asking, §5.1), …
  return fallback(e, http, codes[0], message)
}

/** The first entry of an operation's error list (its message is the useful one). */
function firstError(e: unknown): unknown {
  for (const list of errorLists(e)) if (list.length > 0) return list[0]
  return undefined
}

function errorLists(e: unknown): unknown[][] {
  const data = prop(prop(prop(e, 'response'), 'data'), 'error')
  const candidates = [
    prop(prop(e, 'error'), 'errors'), // an Operation
    prop(prop(prop(e, 'latestResponse'), 'error'), 'errors'), // the insert wrapper (§3.2)
    prop(e, 'errors'), // an Operation's error, or GaxiosError
    prop(data, 'errors'), // the HTTP error body
  ]
  return candidates.filter((c): c is unknown[] => Array.isArray(c))
}

/** Every code/reason/status string the error carries (most specific first), and its HTTP/gRPC status. */
function read(e: unknown): {codes: string[]; http?: number; grpc?: number} {
  const codes: string[] = []
  const add = (v: unknown) => {
    const s = str(v)
    if (s && !/^\d+$/.test(s) && !codes.includes(s)) codes.push(s)
  }
  for (const list of errorLists(e)) for (const item of list) (add(prop(item, 'code')), add(prop(item, 'reason')))
  const body = prop(prop(prop(e, 'response'), 'data'), 'error')
  for (const d of [prop(e, 'statusDetails'), prop(body, 'details')]) {
    if (Array.isArray(d)) for (const item of d) add(prop(item, 'reason')) // google.rpc.ErrorInfo
  }
  add(prop(e, 'reason'))
  add(prop(body, 'status'))
  const status = prop(e, 'status')
  if (!['DONE', 'RUNNING', 'PENDING'].includes(String(status))) add(status) // an Operation's own status
  const op = prop(e, 'latestResponse') ?? e
  let http = num(prop(op, 'httpErrorStatusCode')) ?? num(prop(prop(e, 'response'), 'status')) ?? num(status) ?? num(prop(body, 'code'))
  let grpc: number | undefined
  const code = num(prop(e, 'code'))
  if (code !== undefined) {
    // gaxios puts the HTTP status in `code`; gax puts a gRPC code (0–16) there (§3.2).
    if (code >= 100) http ??= code
    else grpc = code
  } else add(prop(e, 'code'))
  return {codes, http, grpc}
}
