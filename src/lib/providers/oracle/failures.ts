// OCI's errors → the six failure classes (node-failures.ts). oci-sdk throws an OciError with
// `statusCode`, `serviceCode` and `message` (OCI API reference, "API Errors"); capacity is a 500
// InternalError whose message is "Out of host capacity." — so the message is read before the status,
// or the SDK's own retry condition's view (500 = retry) would loop on it.
//
// Checked against what oci-common 2.139.1 really throws at the fake OCI (test/lib/providers/oracle/),
// which the Core calls' own client (oci-http.ts) throws the same: service errors are OciError
// {statusCode, serviceCode, message} as above; a call that never got an answer says "fetch failed"
// (the SDK's plain object {code, message} dropped the socket error; oci-http.ts keeps its code and adds
// its words in brackets), a request over the time limit {code: ETIMEDOUT};
// and the instance-principal chain throws plain Errors in words ("Failed to fetch the token from auth
// server. … status: 401", "… Failed with error: TypeError: fetch failed", "… Error: Breaker is open",
// "Failed to autoDetectCertificatesUsingMetadataUrl. Instance principals authentication can only be
// used on OCI compute instances…").
import {fallback, type FailureClass, messageOf, type NodeFailure, num, oneLine, prop, str} from '../node-failures.js'

/** OCI says capacity only in words (§3.3/§5.1): "Out of host capacity." (and "Out of capacity …"). */
const CAPACITY_MESSAGE = /out of (host )?capacity/i

/**
 * The hand-built table of OCI's service codes (OCI API reference, "API Errors"), read after the 429
 * and capacity checks. Exported for test/lib/providers/error-table.test.ts, which drives every row
 * through oci-sdk and the fake OCI: a code added here without a case there fails that test.
 */
export const OCI_ERROR_TABLE: Readonly<Record<string, {class: FailureClass; status?: number}>> = {
  // 429: throttling is never capacity (issue #11).
  TooManyRequests: {class: 'throttled'},
  // 400 LimitExceeded: service limit (§3.3, not retried by the SDK); QuotaExceeded: compartment quota.
  LimitExceeded: {class: 'quota'},
  QuotaExceeded: {class: 'quota'},
  // 409 IncorrectState: the resource is mid-transition (the SDK's DefaultRetryCondition retries it, §3.3).
  IncorrectState: {class: 'transient', status: 409},
  // 401 NotAuthenticated; 404 NotAuthorizedOrNotFound — OCI will not say which, and a policy missing
  // for the instance principal is the usual cause (§5.1).
  NotAuthenticated: {class: 'auth'},
  NotAuthorizedOrNotFound: {class: 'auth'},
  NotAllowed: {class: 'auth'},
}

export function classifyOciError(e: unknown): NodeFailure {
  const status = num(prop(e, 'statusCode'))
  const service = str(prop(e, 'serviceCode'))
  const message = messageOf(e)
  if (status === 429 || service === 'TooManyRequests') return {class: 'throttled', code: service ?? 'HTTP 429', message}
  if (CAPACITY_MESSAGE.test(message)) {
    // The service code (InternalError) tells a user nothing; OCI's own words do.
    return {class: 'capacity', code: oneLine(message).replace(/\.$/, ''), message}
  }
  const row = service !== undefined && Object.hasOwn(OCI_ERROR_TABLE, service) ? OCI_ERROR_TABLE[service] : undefined
  if (row && (row.status === undefined || row.status === status)) return {class: row.class, code: service!, message}
  if (status === 401 || status === 403) return {class: 'auth', code: service ?? `HTTP ${status}`, message}
  if (status === undefined) {
    // undici's words for every failure below HTTP (refused, reset, DNS): the request may not have
    // reached OCI, so asking again is right; the retry budget bounds a wrong endpoint.
    const federation = /Failed to fetch the token from auth server.*status: (\d+)/.exec(message)
    if (federation) {
      return Number(federation[1]) >= 500 ? {class: 'transient', code: 'AuthService', message} : {class: 'auth', code: 'InstancePrincipal', message}
    }
    // (also inside the federation client's "Failed with error: TypeError: fetch failed")
    if (/\bfetch failed\b/.test(message)) return {class: 'transient', code: 'fetch failed', message}
    // The federation client's own circuit breaker (oci-common's DefaultAuthConfiguration: opens after 3
    // failures, for 30–49 s) after the auth service could not be reached: not a refusal, so asked
    // again within the budget, by when it may have closed.
    if (/Breaker is open/.test(message)) return {class: 'transient', code: 'AuthServiceBreakerOpen', message}
    if (/Instance principals authentication|Failed to fetch the token from auth server/.test(message)) return {class: 'auth', code: 'InstancePrincipal', message}
  }
  return fallback(e, status, service)
}
