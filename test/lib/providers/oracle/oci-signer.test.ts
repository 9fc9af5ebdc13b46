// oci-signer.ts and compute-calls.ts's requests against oci-common 2.139.1, which they replace in a node
// program with a kept session: for each of the four Core calls, the same request (oci-common's
// composeRequest: URL and headers) and, signed with the same key, session token and date, the same
// headers — Authorization byte for byte (DefaultRequestSigner: http-signature over sshpk). And the
// signature-checking fake OCI's check (a TEST DOUBLE, test/doubles/cloud-api/oci-identity.ts) accepts it.
import {generateKeyPairSync} from 'node:crypto'

import * as common from 'oci-common'
import {describe, expect, it} from 'vitest'

import {composeCoreRequest, type CoreCall} from '../../../../src/lib/providers/oracle/compute-calls.js'
import {signOciRequest} from '../../../../src/lib/providers/oracle/oci-signer.js'
import {signatureProblem} from '../../../doubles/cloud-api/oci-identity.js'

const pair = generateKeyPairSync('rsa', {modulusLength: 2048})
const PEM = pair.privateKey.export({type: 'pkcs8', format: 'pem'}).toString()
// A session token's shape (header.payload.signature); its content does not matter to the signature.
const TOKEN = `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({exp: 2_000_000_000, sub: 'ocid1.instance.oc1..x'})).toString('base64url')}.c2ln`
const KEY_ID = `ST$${TOKEN}`
const BASE = 'https://iaas.uk-london-1.oraclecloud.com/20160918'
const DATE = new Date(Date.UTC(2026, 10, 26, 9, 5, 7))

const LAUNCH_BODY = JSON.stringify({
  availabilityDomain: 'Uocm:UK-LONDON-1-AD-1',
  compartmentId: 'ocid1.compartment.oc1..aaaa',
  displayName: 'c1-vm-1',
  shape: 'VM.Standard.E4.Flex',
  shapeConfig: {ocpus: 2, memoryInGBs: 16},
  sourceDetails: {sourceType: 'image', imageId: 'ocid1.image.oc1..x'},
  createVnicDetails: {subnetId: 'ocid1.subnet.oc1..s', hostnameLabel: 'c1-vm-1', assignPublicIp: false},
  // Not ASCII: content-length counts bytes, and the digest is of the UTF-8 body.
  metadata: {user_data: Buffer.from('#!/bin/sh\n').toString('base64'), note: 'grüße'},
  freeformTags: {cluster: 'c1', type: 'compute'},
})

type SdkParams = Parameters<typeof common.composeRequest>[0]

// The four calls as compute-calls.ts makes them, and as oci-core 2.139.1's ComputeClient asks composeRequest for them.
const CALLS: Array<[string, CoreCall, Partial<SdkParams>]> = [
  [
    'ListInstances',
    {op: 'listInstances', method: 'GET', path: '/instances', queryParams: {compartmentId: 'ocid1.compartment.oc1..aaaa', limit: 100, page: 'AAAA+b/c=='}},
    {path: '/instances', method: 'GET', queryParams: {compartmentId: 'ocid1.compartment.oc1..aaaa', limit: 100, page: 'AAAA+b/c=='}},
  ],
  [
    'LaunchInstance',
    {op: 'launchInstance', method: 'POST', path: '/instances', headerParams: {'opc-retry-token': 'f3c1c0de-0000-4000-a000-000000000001'}, body: LAUNCH_BODY},
    {path: '/instances', method: 'POST', headerParams: {'Content-Type': 'application/json', 'opc-retry-token': 'f3c1c0de-0000-4000-a000-000000000001'}, bodyContent: LAUNCH_BODY},
  ],
  [
    'TerminateInstance',
    {op: 'terminateInstance', method: 'DELETE', path: '/instances/{instanceId}', pathParams: {'{instanceId}': 'ocid1.instance.oc1.uk-london-1.abc'}, queryParams: {preserveBootVolume: false}},
    {path: '/instances/{instanceId}', method: 'DELETE', pathParams: {'{instanceId}': 'ocid1.instance.oc1.uk-london-1.abc'}, queryParams: {preserveBootVolume: false}},
  ],
  [
    'GetInstance',
    {op: 'getInstance', method: 'GET', path: '/instances/{instanceId}', pathParams: {'{instanceId}': 'ocid1.instance.oc1.uk-london-1.abc'}},
    {path: '/instances/{instanceId}', method: 'GET', pathParams: {'{instanceId}': 'ocid1.instance.oc1.uk-london-1.abc'}},
  ],
]

const sorted = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).sort(([a], [b]) => a.localeCompare(b)))

describe('a Core call signed with node:crypto is what oci-common sends', () => {
  it.each(CALLS)('%s: the same URL and headers, the same Authorization byte for byte, and the fake accepts it', async (_name, call, sdkParams) => {
    const ours = composeCoreRequest(BASE, call)
    // oci-common's request: composeRequest as oci-core calls it (Content-Type on every call).
    const sdk = await common.composeRequest({
      baseEndpoint: BASE,
      defaultHeaders: {},
      pathParams: {},
      queryParams: {},
      ...sdkParams,
      headerParams: {'Content-Type': 'application/json', ...sdkParams.headerParams},
    } as SdkParams)
    expect(ours.url).toBe(sdk.uri)
    expect(ours.body).toBe(sdk.body)
    // The same request id and user agent on both (random per request; ours names citc), so that what
    // follows compares the signing alone.
    sdk.headers.set('opc-request-id', ours.headers['opc-request-id']!)
    sdk.headers.set('user-agent', ours.headers['user-agent']!)
    expect(sorted(ours.headers)).toEqual(sorted(Object.fromEntries(sdk.headers.entries())))

    // The same date on both: the SDK's signer takes x-date, and http-signature Date, when the request has them.
    sdk.headers.set('x-date', DATE.toUTCString())
    sdk.headers.set('date', DATE.toUTCString())
    const signer = new common.DefaultRequestSigner({getKeyId: async () => KEY_ID, getPrivateKey: () => PEM, getPassphrase: () => null})
    await signer.signHttpRequest({method: sdk.method, uri: sdk.uri, headers: sdk.headers, body: sdk.body})
    const signed = signOciRequest(ours, {keyId: KEY_ID, privateKey: PEM}, DATE)
    expect(signed.authorization).toBe(sdk.headers.get('authorization'))
    expect(sorted(signed)).toEqual(sorted(Object.fromEntries(sdk.headers.entries())))
    expect(signed.authorization).toMatch(call.method === 'POST' ? /headers="x-date \(request-target\) host Content-Type Content-Length x-content-sha256"/ : /headers="x-date \(request-target\) host"/)

    // What the fake OCI checks of every request: the signature, with the session key's public half.
    const url = new URL(ours.url)
    expect(signatureProblem(call.method, url.pathname + url.search, signed, ours.body ?? '', (k) => (k === KEY_ID ? pair.publicKey : undefined))).toBeUndefined()
    // And it can refuse: another body under the same signature.
    if (ours.body) expect(signatureProblem(call.method, url.pathname + url.search, signed, `${ours.body} `, () => pair.publicKey)).toBe('x-content-sha256 does not match the body')
  })

  it('an empty POST body is signed as the SDK signs it (the empty digest, content-length 0)', async () => {
    const request = {method: 'POST', url: `${BASE}/instances`, headers: {'content-type': 'application/json'}, body: ''}
    const headers = new Headers({'content-type': 'application/json', 'x-date': DATE.toUTCString(), date: DATE.toUTCString()})
    await new common.DefaultRequestSigner({getKeyId: async () => KEY_ID, getPrivateKey: () => PEM, getPassphrase: () => null}).signHttpRequest({method: 'POST', uri: request.url, headers, body: ''})
    const signed = signOciRequest(request, {keyId: KEY_ID, privateKey: PEM}, DATE)
    expect(sorted(signed)).toEqual(sorted(Object.fromEntries(headers.entries())))
    expect(signed['x-content-sha256']).toBe('47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=')
  })
})
