// EC2's errors → the six failure classes (node-failures.ts). @aws-sdk/client-ec2 threw an error whose
// `name` is EC2's <Code> (also `Code` on some), with `$metadata.httpStatusCode` and `$fault` (the
// SDK's ServiceException), and ec2-query.ts's Ec2Error keeps that shape (its test compares the two; codes and statuses: Amazon EC2 API Reference, "Error codes"). ICE comes back as HTTP 500 and throttling as 503, so the code decides, not the status —
// and throttling is checked first, so it is never reported as capacity (ParallelCluster's 2026 bug,
// issue #11).
import {fallback, type FailureClass, messageOf, type NodeFailure, num, prop, str} from '../node-failures.js'

/**
 * Throttling: RequestLimitExceeded is EC2's (§3.1); the others are in the SDK's own throttling list
 * (@smithy/core retry THROTTLING_ERROR_CODES, §3.1), which other AWS calls the driver makes may use.
 * Any HTTP 429 is throttling too.
 */
const THROTTLED = new Set([
  'RequestLimitExceeded', 'Throttling', 'ThrottlingException', 'ThrottledException', 'RequestThrottled',
  'RequestThrottledException', 'TooManyRequestsException', 'EC2ThrottledException', 'SlowDown',
  'PriorRequestNotComplete', 'BandwidthLimitExceeded',
])

/**
 * Capacity: ParallelCluster's EC2_ICE_ERROR_CODES (§1.3, with PR #673's UnfulfillableCapacity and
 * InsufficientCapacity) — the cloud has no room for this shape here now; another shape or zone may.
 */
const CAPACITY = new Set([
  'InsufficientInstanceCapacity', 'InsufficientHostCapacity', 'InsufficientReservedInstanceCapacity',
  'MaxSpotInstanceCountExceeded', 'Unsupported', 'SpotMaxPriceTooLow', 'UnfulfillableCapacity',
  'InsufficientCapacity',
])

/** Account limits (§3.1: 400, not retried by the SDK; §5.1): only the admin can raise them. */
const QUOTA = new Set(['InstanceLimitExceeded', 'VcpuLimitExceeded'])

/** §5.1; the STS/signature codes are what a wrong or expired instance-profile credential gives. */
const AUTH = new Set([
  'AuthFailure', 'UnauthorizedOperation', 'Blocked', 'OptInRequired', 'InvalidClientTokenId',
  'ExpiredToken', 'RequestExpired', 'SignatureDoesNotMatch', 'AccessDenied', 'AccessDeniedException',
])

/** §3.1/§5.1: EC2's server-side codes (500 InternalError, 503 Unavailable) and its timeout. */
const TRANSIENT = new Set(['InternalError', 'InternalFailure', 'ServiceUnavailable', 'Unavailable', 'RequestTimeout'])

/**
 * The hand-built table, class by class, as classifyAwsError reads it (throttled first). Exported for
 * test/lib/providers/error-table.test.ts, which drives every code through the real SDK and the fake
 * EC2: a code added here without a case there fails that test.
 */
export const AWS_ERROR_TABLE: Readonly<Record<Exclude<FailureClass, 'config'>, ReadonlySet<string>>> = {
  throttled: THROTTLED,
  capacity: CAPACITY,
  quota: QUOTA,
  auth: AUTH,
  transient: TRANSIENT,
}

export function classifyAwsError(e: unknown): NodeFailure {
  const code = str(prop(e, 'Code')) ?? awsName(e)
  const status = num(prop(prop(e, '$metadata'), 'httpStatusCode')) ?? num(prop(e, 'statusCode'))
  const message = messageOf(e)
  const throttling = prop(prop(e, '$retryable'), 'throttling') === true
  if ((code && THROTTLED.has(code)) || status === 429 || throttling) {
    return {class: 'throttled', code: code ?? 'HTTP 429', message}
  }
  if (code && CAPACITY.has(code)) return {class: 'capacity', code, message}
  if (code && QUOTA.has(code)) return {class: 'quota', code, message}
  if (code && AUTH.has(code)) return {class: 'auth', code, message}
  if (code && TRANSIENT.has(code)) return {class: 'transient', code, message}
  // InvalidParameterValue, InvalidAMIID.NotFound, InvalidSubnetID.NotFound, MissingParameter, …:
  // the request is wrong and will be wrong next time (§5.1).
  if (code && /^(Invalid|Missing|Malformed|Unknown)/.test(code)) return {class: 'config', code, message}
  if (status === 401 || status === 403) return {class: 'auth', code: code ?? `HTTP ${status}`, message}
  return fallback(e, status, code)
}

/**
 * The SDK's `name` is EC2's code, but a plain JS error's name ("Error", "TypeError") says nothing;
 * keep it only when it is not one of those, so the fallback can use the message. Nor does "Unknown",
 * the name of an answer without EC2's error body (a proxy's 502 page, say: the status decides, not
 * the Unknown* rule for EC2's own codes).
 */
function awsName(e: unknown): string | undefined {
  const name = str(prop(e, 'name'))
  return name && !/^(Error|TypeError|RangeError|SyntaxError|Unknown)$/.test(name) ? name : undefined
}
