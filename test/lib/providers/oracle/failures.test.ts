// classifyOciError on what oci-common 2.139.1 threw at the fake OCI when no HTTP answer came back or the
// instance-principal chain failed (captured in this worktree with the real SDK; the service errors,
// OciError {statusCode, serviceCode}, are covered by test/lib/providers/node-failures.test.ts).
import {describe, expect, it} from 'vitest'

import {classifyOciError} from '../../../../src/lib/providers/oracle/failures.js'

const IP_HELP = 'Instance principals authentication can only be used on OCI compute instances. Please confirm this code is running on an OCI compute instance.'

describe("classifyOciError: the SDK's errors without an HTTP status", () => {
  it.each([
    // The retrier's plain object for a refused connection: the socket error's cause is dropped.
    [{code: undefined, message: 'fetch failed', requestEndpoint: 'POST http://127.0.0.1:9/20160918/instances'}, 'transient', 'fetch failed'],
    // oci-http.ts's, for the same: the socket's code and words kept, classified as the SDK's was.
    [Object.assign(new Error('fetch failed (connect ECONNREFUSED 127.0.0.1:9)'), {code: 'ECONNREFUSED'}), 'transient', 'fetch failed'],
    [Object.assign(new Error('fetch failed (socket hang up)'), {code: 'ECONNRESET'}), 'transient', 'fetch failed'],
    // The request time limit (the SDK's breaker's words, and oci-http.ts's).
    [{code: 'ETIMEDOUT', message: 'Timed out after 300ms'}, 'transient', 'ETIMEDOUT'],
    // The federation client: the auth service refused the certificate / failed / was unreachable.
    [new Error('Failed to fetch the token from auth server. Response received but failed with status: 401'), 'auth', 'InstancePrincipal'],
    [new Error('Failed to fetch the token from auth server. Response received but failed with status: 503'), 'transient', 'AuthService'],
    [{shouldBeRetried: false, code: -1, message: 'Failed to fetch the token from auth server. Failed with error: TypeError: fetch failed'}, 'transient', 'fetch failed'],
    [{shouldBeRetried: false, code: -1, message: 'Failed to fetch the token from auth server. Failed with error: Error: Breaker is open'}, 'transient', 'AuthServiceBreakerOpen'],
    // No metadata service (not an OCI instance, or its certificate unreadable).
    [new Error(`Failed to autoDetectCertificatesUsingMetadataUrl. ${IP_HELP}`), 'auth', 'InstancePrincipal'],
  ] as const)('%o → %s %s', (e, cls, code) => {
    expect(classifyOciError(e)).toMatchObject({class: cls, code})
  })
})
