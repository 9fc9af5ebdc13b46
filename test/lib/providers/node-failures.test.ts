// Node-start failures: each cloud's documented error codes (the EC2, Compute Engine and OCI API
// references' error pages, as each provider's failures.ts cites them) land in the right class,
// throttling is never taken for capacity, the Slurm reason is one bounded line without the cloud's message, and withRetries retries only throttled and
// transient failures and never past its budget (injected clock, sleep and randomness: no real waiting).
// The error objects below are built in the shapes the notes recorded from the real SDKs against local
// servers; the drivers' own tests will feed the real SDKs' errors through the same functions.
import {describe, expect, it} from 'vitest'

import {classifyAwsError} from '../../../src/lib/providers/aws/failures.js'
import {classifyGoogleError} from '../../../src/lib/providers/google/failures.js'
import {failureReason, MAX_REASON, type FailureClass, type NodeFailure, retryable} from '../../../src/lib/providers/node-failures.js'
import {classifyOciError} from '../../../src/lib/providers/oracle/failures.js'
import {backoffDelays, withRetries} from '../../../src/lib/providers/retry-budget.js'

/** @aws-sdk/client-ec2's ServiceException: name = EC2's <Code>, $fault, $metadata (§3.1). */
function awsError(code: string, status: number, message = `${code} message`): Error {
  return Object.assign(new Error(message), {name: code, $fault: status >= 500 ? 'server' : 'client', $metadata: {httpStatusCode: status, attempts: 1}})
}

/** A finished Compute operation that failed (§3.2: it does not throw). */
function googleOp(code: string, httpErrorStatusCode: number, message = `${code} message`) {
  return {name: 'operation-1', status: 'DONE', httpErrorStatusCode, error: {errors: [{code, message}]}}
}

/** @google-cloud/compute 6: GaxiosError, `code` = HTTP status, JSON body in response.data (§3.2). */
function gaxiosError(status: number, reason: string, message = `${reason} message`) {
  return Object.assign(new Error(message), {
    code: status,
    status,
    response: {status, data: {error: {code: status, message, errors: [{reason, message, domain: 'global'}]}}},
  })
}

/** oci-sdk's OciError (§3.3). */
function ociError(statusCode: number, serviceCode: string, message = `${serviceCode} message`) {
  return Object.assign(new Error(message), {statusCode, serviceCode, opcRequestId: 'req-1'})
}

describe('classifyAwsError (§1.3, §3.1, §5.1)', () => {
  it.each<[string, number, FailureClass]>([
    ['RequestLimitExceeded', 503, 'throttled'],
    ['Throttling', 429, 'throttled'],
    ['ThrottlingException', 400, 'throttled'],
    ['TooManyRequestsException', 429, 'throttled'],
    // ParallelCluster's EC2_ICE_ERROR_CODES (+ PR #673): ICE is a 500 yet not transient.
    ['InsufficientInstanceCapacity', 500, 'capacity'],
    ['InsufficientHostCapacity', 500, 'capacity'],
    ['InsufficientReservedInstanceCapacity', 500, 'capacity'],
    ['MaxSpotInstanceCountExceeded', 400, 'capacity'],
    ['Unsupported', 400, 'capacity'],
    ['SpotMaxPriceTooLow', 400, 'capacity'],
    ['UnfulfillableCapacity', 500, 'capacity'],
    ['InsufficientCapacity', 500, 'capacity'],
    ['InstanceLimitExceeded', 400, 'quota'],
    ['VcpuLimitExceeded', 400, 'quota'],
    ['InternalError', 500, 'transient'],
    ['Unavailable', 503, 'transient'],
    ['ServiceUnavailable', 503, 'transient'],
    ['AuthFailure', 401, 'auth'],
    ['UnauthorizedOperation', 403, 'auth'],
    ['InvalidParameterValue', 400, 'config'],
    ['InvalidAMIID.NotFound', 400, 'config'],
    ['InvalidSubnetID.NotFound', 400, 'config'],
    ['SomethingNew', 502, 'transient'],
    ['SomethingNew', 400, 'config'],
  ])('%s (HTTP %i) is %s', (code, status, cls) => {
    const f = classifyAwsError(awsError(code, status))
    expect(f).toEqual({class: cls, code, message: `${code} message`})
  })

  it('reads `Code` when the SDK sets it, and HTTP 429 or $retryable.throttling as throttling', () => {
    expect(classifyAwsError({Code: 'VcpuLimitExceeded', message: 'x'}).class).toBe('quota')
    expect(classifyAwsError(Object.assign(new Error('slow'), {name: 'Weird', $metadata: {httpStatusCode: 429}})).class).toBe('throttled')
    expect(classifyAwsError(Object.assign(new Error('slow'), {name: 'Weird', $retryable: {throttling: true}, $metadata: {httpStatusCode: 400}})).class).toBe('throttled')
  })
})

describe('classifyGoogleError (§2.4, §3.2, §5.1)', () => {
  it.each<[string, number, FailureClass]>([
    ['ZONE_RESOURCE_POOL_EXHAUSTED', 503, 'capacity'],
    ['ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 503, 'capacity'],
    ['REGION_RESOURCE_POOL_EXHAUSTED', 503, 'capacity'],
    ['RESOURCE_POOL_EXHAUSTED', 503, 'capacity'],
    ['VM_MIN_COUNT_NOT_REACHED', 503, 'capacity'],
    ['QUOTA_EXCEEDED', 403, 'quota'],
    ['RESOURCE_NOT_FOUND', 404, 'config'],
    ['RESOURCE_ALREADY_EXISTS', 409, 'config'],
    ['SOMETHING_NEW', 503, 'transient'],
  ])('a done operation with %s (%i) is %s', (code, status, cls) => {
    expect(classifyGoogleError(googleOp(code, status))).toEqual({class: cls, code, message: `${code} message`})
  })

  it('reads the insert wrapper\'s latestResponse (§3.2) as well as the operation', () => {
    const f = classifyGoogleError({latestResponse: googleOp('ZONE_RESOURCE_POOL_EXHAUSTED', 503), done: false})
    expect(f.class).toBe('capacity')
    expect(f.code).toBe('ZONE_RESOURCE_POOL_EXHAUSTED')
  })

  it.each<[number, string, FailureClass, string]>([
    [403, 'rateLimitExceeded', 'throttled', 'rateLimitExceeded'],
    [403, 'userRateLimitExceeded', 'throttled', 'userRateLimitExceeded'],
    [429, 'rateLimitExceeded', 'throttled', 'rateLimitExceeded'],
    [403, 'quotaExceeded', 'quota', 'quotaExceeded'],
    [403, 'QUOTA_EXCEEDED', 'quota', 'QUOTA_EXCEEDED'],
    [403, 'forbidden', 'auth', 'forbidden'],
    [403, 'insufficientPermissions', 'auth', 'insufficientPermissions'],
    [401, 'authError', 'auth', 'authError'],
    [503, 'backendError', 'transient', 'backendError'],
    [500, 'somethingNew', 'transient', 'somethingNew'],
    [400, 'invalid', 'config', 'invalid'],
    [404, 'notFound', 'config', 'notFound'],
  ])('compute 6 HTTP %i %s is %s', (status, reason, cls, code) => {
    expect(classifyGoogleError(gaxiosError(status, reason))).toMatchObject({class: cls, code})
  })

  it('a 403 "Quota exceeded for quota metric" is the API rate quota: throttled, not quota (§5.1)', () => {
    const e = gaxiosError(403, 'quotaExceeded', "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'")
    expect(classifyGoogleError(e).class).toBe('throttled')
  })

  it('compute 7 GoogleError: gRPC codes (429→8, 503→14, 403→7), a reason when present wins', () => {
    expect(classifyGoogleError(Object.assign(new Error('x'), {code: 8})).class).toBe('throttled')
    expect(classifyGoogleError(Object.assign(new Error('x'), {code: 14})).class).toBe('transient')
    expect(classifyGoogleError(Object.assign(new Error('x'), {code: 7})).class).toBe('auth')
    expect(classifyGoogleError(Object.assign(new Error('x'), {code: 7, reason: 'RATE_LIMIT_EXCEEDED'})).class).toBe('throttled')
    expect(classifyGoogleError(Object.assign(new Error('x'), {code: 8, reason: 'QUOTA_EXCEEDED'})).class).toBe('quota')
    expect(classifyGoogleError(Object.assign(new Error('x'), {code: 3})).class).toBe('config')
  })
})

describe('classifyOciError (§3.3, §5.1)', () => {
  it.each<[number, string, string, FailureClass, string]>([
    [429, 'TooManyRequests', 'Too many requests', 'throttled', 'TooManyRequests'],
    [500, 'InternalError', 'Out of host capacity.', 'capacity', 'Out of host capacity'],
    [400, 'LimitExceeded', 'The following service limits were exceeded: standard-e4-core-count', 'quota', 'LimitExceeded'],
    [409, 'IncorrectState', 'Resource is in an incorrect state', 'transient', 'IncorrectState'],
    [500, 'InternalError', 'Internal error', 'transient', 'InternalError'],
    [503, 'ServiceUnavailable', 'Try again', 'transient', 'ServiceUnavailable'],
    [401, 'NotAuthenticated', 'The required information to complete authentication was not provided', 'auth', 'NotAuthenticated'],
    [404, 'NotAuthorizedOrNotFound', 'Authorization failed or requested resource not found', 'auth', 'NotAuthorizedOrNotFound'],
    [400, 'InvalidParameter', 'Shape VM.Nope is not valid', 'config', 'InvalidParameter'],
    [404, 'NotFound', 'Not found', 'config', 'NotFound'],
  ])('%i %s "%s" is %s', (status, service, message, cls, code) => {
    expect(classifyOciError(ociError(status, service, message))).toEqual({class: cls, code, message})
  })
})

describe('throttling wins over capacity wherever both could match (issue #11)', () => {
  it('AWS: an ICE code answered with HTTP 429 is throttled', () => {
    expect(classifyAwsError(awsError('InsufficientInstanceCapacity', 429)).class).toBe('throttled')
  })
  it('Google: a rate-limit reason next to a stockout code, or HTTP 429, is throttled', () => {
    const both = {httpErrorStatusCode: 503, error: {errors: [{code: 'ZONE_RESOURCE_POOL_EXHAUSTED', message: 'm'}, {code: 'rateLimitExceeded', message: 'm'}]}}
    expect(classifyGoogleError(both).class).toBe('throttled')
    expect(classifyGoogleError(googleOp('ZONE_RESOURCE_POOL_EXHAUSTED', 429)).class).toBe('throttled')
  })
  it('OCI: a 429 whose message mentions capacity is throttled', () => {
    expect(classifyOciError(ociError(429, 'TooManyRequests', 'Out of host capacity.')).class).toBe('throttled')
  })
})

describe('unknown shapes', () => {
  it.each([classifyAwsError, classifyGoogleError, classifyOciError])('network errors are transient, anything else config with its message (%#)', (classify) => {
    expect(classify(Object.assign(new Error('socket hang up'), {code: 'ECONNRESET'}))).toMatchObject({class: 'transient', message: 'socket hang up'})
    expect(classify(new TypeError('fetch failed', {cause: Object.assign(new Error('t'), {code: 'ETIMEDOUT'})})).class).toBe('transient')
    expect(classify(new Error('no region configured'))).toEqual({class: 'config', code: 'no region configured', message: 'no region configured'})
    for (const odd of [undefined, null, 42, 'a string', {}]) expect(['config', 'transient']).toContain(classify(odd).class)
  })
})

describe('retryable and failureReason', () => {
  it('only throttled and transient are retryable', () => {
    const classes: FailureClass[] = ['capacity', 'quota', 'throttled', 'transient', 'config', 'auth']
    expect(classes.filter((c) => retryable({class: c, code: 'X', message: ''}))).toEqual(['throttled', 'transient'])
  })

  it('is the one-line `citc: <class>: <code> for <shape> in <place>` without the message', () => {
    const f = classifyAwsError(awsError('InsufficientInstanceCapacity', 500, 'We currently do not have sufficient c5.xlarge capacity'))
    expect(failureReason(f, {shape: 'c5.xlarge', place: 'eu-west-1a'})).toBe('citc: capacity: InsufficientInstanceCapacity for c5.xlarge in eu-west-1a')
    expect(failureReason(f, {shape: 'c5.xlarge'})).toBe('citc: capacity: InsufficientInstanceCapacity for c5.xlarge')
    const oci = classifyOciError(ociError(500, 'InternalError', 'Out of host capacity.'))
    expect(failureReason(oci, {shape: 'VM.Standard.E4.Flex', place: 'AD-1'})).toBe('citc: capacity: Out of host capacity for VM.Standard.E4.Flex in AD-1')
  })

  it('cuts at a line break, drops quotes and control characters, and stays within 200 characters', () => {
    const f: NodeFailure = {class: 'config', code: 'Bad "thing"\nAKIASECRET token=abc', message: 'secret'}
    const r = failureReason(f, {shape: 'n2\tstandard', place: 'x'.repeat(500)})
    expect(r.startsWith('citc: config: Bad thing for n2standard in xxx')).toBe(true)
    expect(r).not.toMatch(/AKIASECRET|secret|["\n\r\t]/)
    expect(r.length).toBeLessThanOrEqual(MAX_REASON)
    const fromMessage = classifyAwsError(new Error('first line\nsecond line with a key'))
    expect(failureReason(fromMessage, {shape: 's'})).toBe('citc: config: first line for s')
  })
})

/** A deterministic random sequence and a fake clock whose sleep advances it. */
function harness(randoms: number[] = [1]) {
  let t = 0
  let i = 0
  const slept: number[] = []
  return {
    slept,
    now: () => t,
    sleep: async (ms: number) => void (slept.push(ms), (t += ms)),
    random: () => randoms[i++ % randoms.length],
    advance: (ms: number) => void (t += ms),
  }
}

describe('backoffDelays', () => {
  it('grows as base·2^n capped, scaled by the random factor', () => {
    expect([...backoffDelays({budgetMs: 1e9, baseMs: 100, capMs: 1000, random: () => 1, maxRetries: 6})]).toEqual([100, 200, 400, 800, 1000, 1000])
    expect([...backoffDelays({budgetMs: 1e9, baseMs: 100, capMs: 1000, random: () => 0.5, maxRetries: 3})]).toEqual([50, 100, 200])
  })

  it('never sums past the budget, whatever the random values', () => {
    for (let seed = 1; seed <= 200; seed++) {
      let x = seed
      const random = () => ((x = (x * 16807) % 2147483647) / 2147483647)
      const budgetMs = 1000 + seed * 97
      const delays = [...backoffDelays({budgetMs, baseMs: 50, capMs: 2000, random})]
      expect(delays.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budgetMs)
      for (const d of delays) expect(d).toBeGreaterThanOrEqual(0)
    }
  })

  it('ends even when random() is always 0', () => {
    expect([...backoffDelays({budgetMs: 10, baseMs: 1, capMs: 1, random: () => 0})]).toHaveLength(50)
  })
})

describe('withRetries', () => {
  const opts = {budgetMs: 10_000, baseMs: 100, capMs: 2000}

  it.each(['capacity', 'quota', 'config', 'auth'] as const)('a %s failure is not retried', async (cls) => {
    const h = harness()
    let calls = 0
    const r = await withRetries(async () => { calls++; throw new Error('no') }, (e) => ({class: cls, code: 'C', message: String(e)}), {...opts, ...h})
    expect(r).toMatchObject({ok: false, attempts: 1, failure: {class: cls}})
    expect(calls).toBe(1)
    expect(h.slept).toEqual([])
  })

  it('retries throttled and transient failures until success, waiting the backoff between', async () => {
    const h = harness()
    const errors = [awsError('RequestLimitExceeded', 503), awsError('InternalError', 500)]
    const r = await withRetries(async (attempt) => {
      if (attempt <= errors.length) throw errors[attempt - 1]
      return 'i-123'
    }, classifyAwsError, {...opts, ...h})
    expect(r).toEqual({ok: true, value: 'i-123', attempts: 3})
    expect(h.slept).toEqual([100, 200])
  })

  it('stops at a non-retryable failure after retryable ones (ICE after throttling: capacity at once)', async () => {
    const h = harness()
    const r = await withRetries(async (attempt) => {
      throw attempt === 1 ? awsError('RequestLimitExceeded', 503) : awsError('InsufficientInstanceCapacity', 500)
    }, classifyAwsError, {...opts, ...h})
    expect(r).toMatchObject({ok: false, attempts: 2, failure: {class: 'capacity', code: 'InsufficientInstanceCapacity'}})
    expect(h.slept).toEqual([100])
  })

  it('gives up with the last failure when the budget is spent, never sleeping past it', async () => {
    const h = harness()
    const retried: number[] = []
    const r = await withRetries(async () => { throw ociError(429, 'TooManyRequests') }, classifyOciError, {...opts, ...h, onRetry: (_f, a) => retried.push(a)})
    expect(r).toMatchObject({ok: false, failure: {class: 'throttled', code: 'TooManyRequests'}})
    // 100+200+400+800+1600+2000+2000+2000 = 9100; the next 2000 would pass 10 000.
    expect(h.slept).toEqual([100, 200, 400, 800, 1600, 2000, 2000, 2000])
    expect(r.attempts).toBe(9)
    expect(retried).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(h.now()).toBeLessThanOrEqual(opts.budgetMs)
  })

  it('counts time spent inside the call against the budget (slow answers)', async () => {
    const h = harness()
    const r = await withRetries(async () => { h.advance(4000); throw gaxiosError(503, 'backendError') }, classifyGoogleError, {...opts, ...h})
    expect(r).toMatchObject({ok: false, failure: {class: 'transient'}})
    // 4000 + 100 + 4000 + 200 + 4000 = 12 300 would be past; it stops once now()+delay > deadline.
    expect(h.now()).toBeLessThanOrEqual(opts.budgetMs + 4000)
    expect(r.attempts).toBe(3)
  })
})
