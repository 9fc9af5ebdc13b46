// compute-calls.ts against the SDK it replaces: each of the four calls made once through oci-core's
// ComputeClient (2.139.1, configured as oci-api.ts configured it before compute-calls.ts) and once
// through ComputeCalls (node:crypto and node:https), at the fake OCI (a TEST DOUBLE,
// test/doubles/cloud-api/oci.ts, which checks every signature), with one instance principal. The
// requests must be the same (method, path and query, body, the headers sent but those the HTTP client
// adds of itself, and the headers signed), and so must the errors failures.ts reads and how it
// classifies them. (The signature itself, byte for byte: oci-signer.test.ts.)
import * as common from 'oci-common'
import * as core from 'oci-core'
import {afterAll, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {ComputeCalls, type LaunchDetails} from '../../../../src/lib/providers/oracle/compute-calls.js'
import {classifyOciError} from '../../../../src/lib/providers/oracle/failures.js'
import {coreEndpoint} from '../../../../src/lib/providers/oracle/instance-principal.js'
import {FAKE_OCI, startFakeOci, type FakeOci} from '../../../doubles/cloud-api/oci.js'
import type {RecordedRequest} from '../../../doubles/cloud-api/types.js'

const TIMEOUT_MS = 5000
// The SDK's console lines on failures (oci-api.ts quietSdkConsole does this in the driver).
const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
let cloud: FakeOci
/** A short time limit, for the slow answer (the other calls keep TIMEOUT_MS: the machine may be loaded). */
const SHORT_MS = 1000
let auth: common.AuthenticationDetailsProvider
let sdk: core.ComputeClient
let ours: ComputeCalls

/** The SDK's client as oci-api.ts configured it before compute-calls.ts, and ours, with this time limit. */
function clients(timeout: number) {
  const s = new core.ComputeClient(
    {authenticationDetailsProvider: auth},
    {
      retryConfiguration: common.NoRetryConfigurationDetails,
      circuitBreaker: new common.CircuitBreaker({timeout, errorThresholdPercentage: 100, volumeThreshold: Number.MAX_SAFE_INTEGER, resetTimeout: 1000}),
    },
  )
  s.endpoint = cloud.url
  return {sdk: s, ours: new ComputeCalls({key: auth, endpoint: cloud.url, requestTimeoutMs: timeout})}
}

beforeAll(async () => {
  cloud = await startFakeOci()
  const builder = new common.InstancePrincipalsAuthenticationDetailsProviderBuilder()
  builder.metadataBaseUrl = cloud.metadataUrl!
  builder.federationEndpoint = new URL(cloud.url).origin
  auth = await builder.build()
  ;({sdk, ours} = clients(TIMEOUT_MS))
})
afterAll(async () => {
  await cloud.close()
  warn.mockRestore()
})
beforeEach(() => cloud.reset())

/**
 * What must match between the two: all but the dates, the signature itself, the request id (random per
 * request, present in both), the user agent, and what the HTTP client adds of itself (undici's fetch:
 * accept, accept-language, sec-fetch-mode, accept-encoding; both: connection).
 */
function shape(r: RecordedRequest) {
  const auth = String(r.headers.authorization ?? '')
  const signed = /headers="([^"]*)"/.exec(auth)?.[1]
  const {
    date: _date, 'x-date': _xdate, authorization: _auth, connection: _conn, 'keep-alive': _ka, 'opc-request-id': id, 'user-agent': ua,
    accept: _a, 'accept-language': _al, 'sec-fetch-mode': _sfm, 'accept-encoding': _ae, ...headers
  } = r.headers
  return {op: r.op, method: r.method, path: r.path, body: r.body, headers, requestId: typeof id, userAgent: typeof ua, signed, keyId: /keyId="([^"]*)"/.exec(auth)?.[1]}
}

/** The Core API's requests (not the auth service's: the first call fetches the session token). */
const coreApi = (r: RecordedRequest) => r.op !== 'Federate' && r.op !== 'Metadata'

/** The request each made, in turn, and what each returned or threw. */
async function both(sdkCall: () => Promise<unknown>, ourCall: () => Promise<unknown>) {
  const settle = (p: Promise<unknown>) => p.then((value) => ({value}), (error: unknown) => ({error}))
  const a = await settle(sdkCall())
  const sdkRequests = cloud.requests.splice(0).filter(coreApi).map(shape)
  const b = await settle(ourCall())
  const ourRequests = cloud.requests.splice(0).filter(coreApi).map(shape)
  return {sdk: a, ours: b, sdkRequests, ourRequests}
}

const DETAILS = (shapeConfig?: LaunchDetails['shapeConfig']): LaunchDetails => ({
  availabilityDomain: FAKE_OCI.ad,
  compartmentId: FAKE_OCI.compartment,
  displayName: 'c1-vm-1',
  shape: shapeConfig ? 'VM.Standard.E4.Flex' : 'VM.Standard2.1',
  ...(shapeConfig ? {shapeConfig} : {}),
  sourceDetails: {sourceType: 'image', imageId: 'ocid1.image.oc1..x'},
  createVnicDetails: {subnetId: FAKE_OCI.subnet, hostnameLabel: 'c1-vm-1', assignPublicIp: false},
  metadata: {user_data: Buffer.from('#!/bin/sh\n').toString('base64')},
  freeformTags: {cluster: 'c1', type: 'compute'},
})

/** The fields failures.ts (and the driver) read of an error, how it classifies it, and which kind of object it is (OciError or not). */
const errorShape = (e: unknown) => {
  const o = e as Record<string, unknown>
  const {class: cls, code} = classifyOciError(e)
  return {ociError: o?.constructor?.name === 'OciError', statusCode: o.statusCode, serviceCode: o.serviceCode, code: o.code, message: String(o.message).replace(/fake\/\d+/g, 'fake/N'), opcRequestId: typeof o.opcRequestId, classified: `${cls} ${code}`}
}

describe('ComputeCalls makes the requests oci-core makes', () => {
  it('LaunchInstance: the same signed POST, with and without a shape config', async () => {
    for (const [i, cfg] of [undefined, {ocpus: 2, memoryInGBs: 16}].entries()) {
      const r = await both(
        () => sdk.launchInstance({opcRetryToken: `a${i}`, launchInstanceDetails: DETAILS(cfg)}).then((x) => x.instance.displayName),
        () => ours.launchInstance({opcRetryToken: `a${i}`, launchInstanceDetails: DETAILS(cfg)}).then((x) => x.instance.displayName),
      )
      expect(r.ourRequests).toEqual(r.sdkRequests)
      expect(r.ourRequests[0]?.signed).toContain('x-content-sha256')
      expect(r.ours).toEqual(r.sdk)
      expect(r.ours).toEqual({value: 'c1-vm-1'})
    }
  })

  it('ListInstances: the same query, and opc-next-page read as the SDK reads it', async () => {
    for (let n = 0; n < 3; n++) cloud.add({name: `c1-vm-${n}`, tags: {cluster: 'c1', type: 'compute'}, compartmentId: FAKE_OCI.compartment})
    for (const page of [undefined, '2']) {
      const r = await both(
        () => sdk.listInstances({compartmentId: FAKE_OCI.compartment, limit: 2, page}).then((x) => ({ids: x.items.map((i) => i.id), next: x.opcNextPage})),
        () => ours.listInstances({compartmentId: FAKE_OCI.compartment, limit: 2, page}).then((x) => ({ids: x.items.map((i) => i.id), next: x.opcNextPage})),
      )
      expect(r.ourRequests).toEqual(r.sdkRequests)
      expect(r.ours).toEqual(r.sdk)
    }
  })

  it('GetInstance and TerminateInstance: the same path and preserveBootVolume=false', async () => {
    const i = cloud.add({name: 'c1-vm-9', tags: {cluster: 'c1', type: 'compute'}, compartmentId: FAKE_OCI.compartment})
    const g = await both(
      () => sdk.getInstance({instanceId: i.id}).then((x) => x.instance.lifecycleState),
      () => ours.getInstance({instanceId: i.id}).then((x) => x.instance.lifecycleState),
    )
    expect(g.ourRequests).toEqual(g.sdkRequests)
    expect(g.ours).toEqual(g.sdk)
    const t = await both(
      () => sdk.terminateInstance({instanceId: i.id, preserveBootVolume: false}).then(() => 'done'),
      () => ours.terminateInstance({instanceId: i.id, preserveBootVolume: false}).then(() => 'done'),
    )
    expect(t.ourRequests).toEqual(t.sdkRequests)
    expect(t.ourRequests[0]?.path).toContain('preserveBootVolume=false')
    expect(t.ours).toEqual({value: 'done'})
  })

  it('errors: the same OciError (status, service code, message, request id) for a refusal, and the same time-limit error', async () => {
    cloud.fail({op: 'LaunchInstance', times: 2, status: 500, code: 'InternalError', message: 'Out of host capacity.'})
    const l = await both(
      () => sdk.launchInstance({opcRetryToken: 'e1', launchInstanceDetails: DETAILS()}),
      () => ours.launchInstance({opcRetryToken: 'e1', launchInstanceDetails: DETAILS()}),
    )
    expect('error' in l.ours && errorShape(l.ours.error)).toEqual('error' in l.sdk && errorShape(l.sdk.error))
    expect('error' in l.ours && errorShape(l.ours.error)).toMatchObject({statusCode: 500, serviceCode: 'InternalError', opcRequestId: 'string'})

    cloud.fail({op: 'TerminateInstance', times: 2, status: 404, code: 'NotAuthorizedOrNotFound', message: 'gone'})
    const t = await both(
      () => sdk.terminateInstance({instanceId: 'ocid1.instance.x', preserveBootVolume: false}),
      () => ours.terminateInstance({instanceId: 'ocid1.instance.x', preserveBootVolume: false}),
    )
    expect('error' in t.ours && errorShape(t.ours.error)).toEqual('error' in t.sdk && errorShape(t.sdk.error))

    cloud.fail({op: 'ListInstances', times: 2, status: 200, code: 'slow', delayMs: SHORT_MS + 500})
    const short = clients(SHORT_MS)
    const s = await both(
      () => short.sdk.listInstances({compartmentId: FAKE_OCI.compartment, limit: 100}),
      () => short.ours.listInstances({compartmentId: FAKE_OCI.compartment, limit: 100}),
    )
    expect('error' in s.ours && errorShape(s.ours.error)).toEqual('error' in s.sdk && errorShape(s.sdk.error))
    expect('error' in s.ours && errorShape(s.ours.error)).toMatchObject({code: 'ETIMEDOUT', classified: 'transient ETIMEDOUT'})
  }, 30_000)

  it('no answer (nothing listens): classified as the SDK\'s error was, and saying what the socket said', async () => {
    // A port of the loopback that was just free: nothing listens there.
    const gone = await startFakeOci()
    const url = gone.url
    await gone.close()
    const s = new core.ComputeClient({authenticationDetailsProvider: auth}, {retryConfiguration: common.NoRetryConfigurationDetails})
    s.endpoint = url
    const o = new ComputeCalls({key: auth, endpoint: url, requestTimeoutMs: TIMEOUT_MS})
    const settle = (p: Promise<unknown>) => p.then(() => undefined, (error: unknown) => error)
    const sdkError = errorShape(await settle(s.getInstance({instanceId: 'ocid1.instance.x'})))
    const ourError = errorShape(await settle(o.getInstance({instanceId: 'ocid1.instance.x'})))
    expect(ourError.classified).toBe(sdkError.classified)
    expect(ourError).toMatchObject({ociError: false, statusCode: undefined, classified: 'transient fetch failed', code: 'ECONNREFUSED'})
    expect(ourError.message).toMatch(/^fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/)
  })

  it("the region's Core endpoint (kept with the session) is the one oci-core's ComputeClient sets for the region, realms included", () => {
    for (const region of ['uk-london-1', 'us-ashburn-1', 'us-langley-1', 'eu-frankfurt-1']) {
      const c = new core.ComputeClient({authenticationDetailsProvider: auth})
      c.regionId = region
      const sdkBase = common.EndpointBuilder.updateEndpointTemplateForOptions((c as unknown as {_endpoint: string})._endpoint, undefined, false)
      expect(`${coreEndpoint(region)}/20160918`).toBe(sdkBase)
    }
    expect(coreEndpoint('us-langley-1')).toBe('https://iaas.us-langley-1.oraclegovcloud.com')
  })
})
