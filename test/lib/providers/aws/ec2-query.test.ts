// ec2-query.ts against the SDK it replaces: each of the three calls made once through
// @aws-sdk/client-ec2 (configured as ec2-api.ts configured it before: maxAttempts 1, the same time
// limits, the default credentials chain) and once through the driver's own client (ec2Calls), at the fake
// EC2 (a TEST DOUBLE, test/doubles/cloud-api/ec2.ts, which checks each request's signature form, key
// and session token; sigv4.test.ts checks the signature itself against @smithy/signature-v4) with the
// fake IMDS's instance-profile keys. The requests must be the same (method, path, form parameters, the
// headers sent and the headers signed, the credential scope), and so must the parsed results and
// the errors failures.ts reads — for every code of AWS_ERROR_TABLE, a time limit and a refused connection.
import {mkdtempSync, rmSync} from 'node:fs'
import {createServer} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {DescribeInstancesCommand, EC2Client, RunInstancesCommand, TerminateInstancesCommand} from '@aws-sdk/client-ec2'
import {afterAll, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {ec2Calls} from '../../../../src/lib/providers/aws/ec2-api.js'
import type {DescribeInstancesInput, RunInstancesInput} from '../../../../src/lib/providers/aws/ec2-query.js'
import {AWS_ERROR_TABLE, classifyAwsError} from '../../../../src/lib/providers/aws/failures.js'
import {EC2_ERROR_STATUS, type FakeEc2, startFakeEc2} from '../../../doubles/cloud-api/ec2.js'
import {listenOnLoopback} from '../../../doubles/cloud-api/listen.js'
import type {RecordedRequest} from '../../../doubles/cloud-api/types.js'
import {isolateAwsEnv} from '../../../helpers/cloud-node-program.js'

const REGION = 'eu-west-2'
const TIMEOUT_MS = 5000
/** A short time limit, for the answer that hangs. */
const SHORT_MS = 300

const work = mkdtempSync(join(tmpdir(), 'citc-ec2-query-'))
let restoreEnv: () => void
let fake: FakeEc2
// The SDK's NodeVersionSupportWarning under Node < 22 (once per process): not this test's subject.
const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined)

/** The SDK's client as ec2-api.ts configured it before ec2-query.ts, and ours, with this time limit. */
function clients(requestTimeout: number, endpoint = fake.url) {
  const sdk = new EC2Client({region: REGION, maxAttempts: 1, endpoint, requestHandler: {connectionTimeout: 5_000, requestTimeout, throwOnRequestTimeout: true}})
  const ours = ec2Calls({region: REGION, endpoints: {api: endpoint, metadata: fake.metadataUrl}, requestTimeoutMs: requestTimeout})
  return {sdk, ours}
}
let sdk: EC2Client
let ours: ReturnType<typeof ec2Calls>

beforeAll(async () => {
  restoreEnv = isolateAwsEnv(work)
  fake = await startFakeEc2()
  // Both find the fake IMDS only here (the stand-in's endpoint must agree: metadata-env.ts).
  process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = fake.metadataUrl
  ;({sdk, ours} = clients(TIMEOUT_MS))
})
afterAll(async () => {
  sdk?.destroy()
  await fake?.close()
  restoreEnv?.()
  warn.mockRestore()
  rmSync(work, {recursive: true, force: true})
})
beforeEach(() => void fake.requests.splice(0))

/**
 * What must match between the two: all but the values that are per request or per client (the date,
 * the signature, the invocation id, the user agents); the names of all headers sent do match.
 */
function shape(r: RecordedRequest) {
  const auth = String(r.headers.authorization ?? '')
  const params = [...new URLSearchParams(r.body)].map(([k, v]) => `${k}=${v}`).sort()
  // The body's hash too: the parameters come in another order (compared as a set; content-length is compared).
  const {'x-amz-date': date, authorization: _a, 'amz-sdk-invocation-id': id, 'user-agent': _ua, 'x-amz-user-agent': _xua, 'x-amz-content-sha256': hash, ...same} = r.headers
  return {
    op: r.op,
    method: r.method,
    path: r.path,
    params,
    headersSent: Object.keys(r.headers).sort(),
    headers: same,
    date: typeof date,
    hash: /^[0-9a-f]{64}$/.test(String(hash)),
    invocationId: /^[0-9a-f-]{36}$/.test(String(id)),
    signed: /SignedHeaders=([^,]*)/.exec(auth)?.[1],
    credential: /Credential=([^,]*)/.exec(auth)?.[1],
  }
}

/** The request each made (EC2's only, not the IMDS's), in turn, and what each returned or threw. */
async function both<T>(sdkCall: () => Promise<T>, ourCall: () => Promise<T>) {
  const settle = (p: Promise<T>) => p.then((value) => ({value}), (error: unknown) => ({error}))
  const ec2 = (r: RecordedRequest) => !r.op.startsWith('imds:')
  const a = await settle(sdkCall())
  const sdkRequests = fake.requests.splice(0).filter(ec2).map(shape)
  const b = await settle(ourCall())
  const ourRequests = fake.requests.splice(0).filter(ec2).map(shape)
  return {sdk: a, ours: b, sdkRequests, ourRequests}
}

/** The SDK's output without what the driver does not read and ec2-query.ts does not parse. */
function sdkOutput<T>(o: T): T {
  return JSON.parse(JSON.stringify(o, (k, v: unknown) => (k === '$metadata' || k === 'Groups' ? undefined : v)), (k, v: unknown) => (k === 'LaunchTime' ? new Date(v as string) : v)) as T
}

/** The fields failures.ts (and the driver) read of an error, its class, and how JSON shows it. */
function errorShape(e: unknown) {
  const o = e as Record<string, unknown>
  const metadata = o.$metadata as Record<string, unknown> | undefined
  return {name: o.name, Code: o.Code, code: o.code, message: o.message, $fault: o.$fault, httpStatusCode: metadata?.httpStatusCode, Error: o.Error, classified: classifyAwsError(e)}
}

const RUN: RunInstancesInput = {
  MinCount: 1,
  MaxCount: 1,
  ImageId: 'ami-0x86000000000000001',
  InstanceType: 'c5.xlarge',
  SubnetId: 'subnet-0abc',
  SecurityGroupIds: ['sg-0abc'],
  UserData: Buffer.from('#!/bin/sh\n# citc-node: demo-c5-0001 — é & <x>\n').toString('base64'),
  ClientToken: '6f1c2a3b-0000-4000-a000-000000000001',
  TagSpecifications: [
    {ResourceType: 'instance', Tags: [{Key: 'Name', Value: 'demo-c5-0001'}, {Key: 'cluster', Value: 'demo'}, {Key: 'type', Value: 'compute'}]},
    {ResourceType: 'volume', Tags: [{Key: 'Name', Value: 'demo-c5-0001'}, {Key: 'cluster', Value: 'demo'}, {Key: 'type', Value: 'compute'}]},
  ],
  MetadataOptions: {HttpTokens: 'required'},
}

const DESCRIBE = (NextToken?: string, MaxResults = 5): DescribeInstancesInput => ({
  Filters: [
    {Name: 'tag:cluster', Values: ['demo']},
    {Name: 'tag:type', Values: ['compute']},
    {Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down']},
  ],
  MaxResults,
  NextToken,
})

describe('ec2-query.ts makes the requests @aws-sdk/client-ec2 makes', () => {
  it('RunInstances: the same signed POST (tags, token, IMDSv2, user-data), and the same instance read back', async () => {
    // The same ClientToken both times: EC2 answers the second with the first launch's instance.
    const r = await both(
      () => sdk.send(new RunInstancesCommand({...RUN, InstanceType: 'c5.xlarge'})),
      () => ours.runInstances(RUN),
    )
    expect(r.ourRequests).toEqual(r.sdkRequests)
    expect(r.ourRequests).toHaveLength(1)
    expect(r.ourRequests[0]!.signed).toBe('amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-amz-user-agent')
    expect(r.ourRequests[0]!.params).toContain('TagSpecification.2.Tag.3.Value=compute')
    expect(r.ourRequests[0]!.params).toContain('MetadataOptions.HttpTokens=required')
    expect('value' in r.ours && r.ours.value).toEqual('value' in r.sdk && sdkOutput(r.sdk.value))
    expect('value' in r.ours && r.ours.value.Instances?.[0]).toMatchObject({InstanceType: 'c5.xlarge', State: {Code: 0, Name: 'pending'}, LaunchTime: expect.any(Date)})
    expect(fake.instances).toHaveLength(1)
  })

  it('DescribeInstances: the same filters and pages (NextToken), the same reservations, times parsed to Dates', async () => {
    fake.instances.splice(0)
    for (let n = 0; n < 7; n++) fake.add({name: `demo-c5-${n}`, tags: {cluster: 'demo', type: 'compute', note: n === 3 ? 'a&b <c> "d"' : ''}, state: n % 2 ? 'running' : 'pending'})
    fake.add({name: 'x', tags: {cluster: 'other', type: 'compute'}})
    let token: string | undefined
    for (let page = 0; page < 2; page++) {
      const r = await both(
        () => sdk.send(new DescribeInstancesCommand(DESCRIBE(token))),
        () => ours.describeInstances(DESCRIBE(token)),
      )
      expect(r.ourRequests).toEqual(r.sdkRequests)
      expect('value' in r.ours && r.ours.value).toEqual('value' in r.sdk && sdkOutput(r.sdk.value))
      token = 'value' in r.ours ? r.ours.value.NextToken : undefined
      expect(Boolean(token)).toBe(page === 0)
    }
    // An empty answer: no reservations (an empty list, as the SDK gives it), no token.
    const none = await both(
      () => sdk.send(new DescribeInstancesCommand({Filters: [{Name: 'tag:cluster', Values: ['nobody']}]})),
      () => ours.describeInstances({Filters: [{Name: 'tag:cluster', Values: ['nobody']}]}),
    )
    expect(none.ourRequests).toEqual(none.sdkRequests)
    expect('value' in none.ours && none.ours.value).toEqual({Reservations: []})
    expect('value' in none.ours && none.ours.value).toEqual('value' in none.sdk && sdkOutput(none.sdk.value))
  })

  it('TerminateInstances: the same POST, the same states read back, and the same InvalidInstanceID.NotFound', async () => {
    // One running instance each (EC2 answers a second terminate of the same one with other states).
    const [a, b] = [0, 1].map((n) => fake.add({name: `demo-c5-9${n}`, tags: {cluster: 'demo', type: 'compute'}}))
    const t = await both(
      () => sdk.send(new TerminateInstancesCommand({InstanceIds: [a!.id]})),
      () => ours.terminateInstances({InstanceIds: [b!.id]}),
    )
    const sameId = (q: ReturnType<typeof shape>) => ({...q, params: q.params.map((p) => p.replace(/=i-\w+$/, '=i-N')), headers: {...q.headers, 'content-length': 'N'}})
    expect(t.ourRequests.map(sameId)).toEqual(t.sdkRequests.map(sameId))
    expect(t.ourRequests[0]!.params).toContain(`InstanceId.1=${b!.id}`)
    expect('value' in t.ours && t.ours.value).toEqual('value' in t.sdk && sdkOutput({TerminatingInstances: t.sdk.value.TerminatingInstances?.map((i) => ({...i, InstanceId: b!.id}))}))
    expect('value' in t.ours && t.ours.value.TerminatingInstances).toEqual([{InstanceId: b!.id, CurrentState: {Code: 32, Name: 'shutting-down'}, PreviousState: {Code: 16, Name: 'running'}}])
    const gone = await both(
      () => sdk.send(new TerminateInstancesCommand({InstanceIds: ['i-0000000000000dead']})),
      () => ours.terminateInstances({InstanceIds: ['i-0000000000000dead']}),
    )
    expect(gone.ourRequests).toEqual(gone.sdkRequests)
    expect('error' in gone.ours && errorShape(gone.ours.error)).toEqual('error' in gone.sdk && errorShape(gone.sdk.error))
    expect('error' in gone.ours && errorShape(gone.ours.error)).toMatchObject({name: 'InvalidInstanceID.NotFound', httpStatusCode: 400, $fault: 'client'})
  })
})

describe('errors read as the SDK read them', () => {
  // Every code failures.ts classifies (and a few it reaches by rule), each with EC2's status where the fake knows it.
  const codes = [...Object.values(AWS_ERROR_TABLE).flatMap((s) => [...s]), 'InvalidParameterValue', 'MissingParameter', 'SomethingNewFromEc2']
  it.each(codes)('%s', async (code) => {
    const status = EC2_ERROR_STATUS[code] ?? (code === 'SomethingNewFromEc2' ? 502 : 400)
    fake.fail({op: 'RunInstances', code, status, times: 2, message: `${code}: the fake's message & <detail>`})
    const r = await both(
      () => sdk.send(new RunInstancesCommand({...RUN, InstanceType: 'c5.xlarge'})),
      () => ours.runInstances(RUN),
    )
    expect(r.ourRequests.map((q) => q.op)).toEqual(['RunInstances'])
    expect('error' in r.ours && errorShape(r.ours.error)).toEqual('error' in r.sdk && errorShape(r.sdk.error))
    expect('error' in r.ours && errorShape(r.ours.error)).toMatchObject({name: code, Code: code, httpStatusCode: status, message: `${code}: the fake's message & <detail>`})
  })

  it('a status without an EC2 error body (a proxy\'s page): the same codeless Unknown, classified by the status', async () => {
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(502, {'content-type': 'text/html'})
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>')
      })
    })
    const url = await listenOnLoopback(server)
    try {
      const c = clients(TIMEOUT_MS, url)
      const r = await both(
        () => c.sdk.send(new DescribeInstancesCommand({})),
        () => c.ours.describeInstances({}),
      )
      c.sdk.destroy()
      expect('error' in r.ours && errorShape(r.ours.error)).toEqual('error' in r.sdk && errorShape(r.sdk.error))
      expect('error' in r.ours && errorShape(r.ours.error)).toMatchObject({httpStatusCode: 502, classified: {class: 'transient'}})
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('an answer that does not come in time: a TimeoutError (ETIMEDOUT), transient, from both', async () => {
    fake.fail({op: 'DescribeInstances', code: 'InternalError', status: 500, times: 2, delayMs: SHORT_MS + 1500})
    const c = clients(SHORT_MS)
    // Credentials first (the IMDS's answer must not count against the short limit of the call itself).
    await c.sdk.config.credentials()
    await c.ours.describeInstances({}).catch(() => undefined)
    fake.fail({op: 'DescribeInstances', code: 'InternalError', status: 500, times: 2, delayMs: SHORT_MS + 1500})
    fake.requests.splice(0)
    const r = await both(
      () => c.sdk.send(new DescribeInstancesCommand({})),
      () => c.ours.describeInstances({}),
    )
    c.sdk.destroy()
    const pick = (e: unknown) => ({name: (e as Error).name, code: (e as {code?: string}).code, classified: {...classifyAwsError(e), message: 'the message says it, in its own words'}})
    expect('error' in r.ours && pick(r.ours.error)).toEqual('error' in r.sdk && pick(r.sdk.error))
    expect('error' in r.ours && pick(r.ours.error)).toEqual({name: 'TimeoutError', code: 'ETIMEDOUT', classified: expect.objectContaining({class: 'transient', code: 'TimeoutError'})})
    expect('error' in r.ours && r.ours.error).toMatchObject({message: expect.stringMatching(/no complete answer within 300 ms/)})
    fake.requests.splice(0)
    // The fake's held answers are still on their way; let them go before the next test.
    await new Promise((resolve) => setTimeout(resolve, SHORT_MS + 1600))
  }, 15_000)

  it('a refused connection: the network error itself, transient, from both', async () => {
    const server = createServer()
    const url = await listenOnLoopback(server)
    await new Promise((resolve) => server.close(resolve))
    const c = clients(TIMEOUT_MS, url)
    const r = await both(
      () => c.sdk.send(new DescribeInstancesCommand({})),
      () => c.ours.describeInstances({}),
    )
    c.sdk.destroy()
    const pick = (e: unknown) => ({code: (e as {code?: string}).code, classified: classifyAwsError(e)})
    expect('error' in r.ours && pick(r.ours.error)).toEqual('error' in r.sdk && pick(r.sdk.error))
    expect('error' in r.ours && pick(r.ours.error)).toMatchObject({code: 'ECONNREFUSED', classified: {class: 'transient'}})
  })
})
