// The AWS node driver end to end inside this process: its own EC2 client (ec2-query.ts: serialisation,
// SigV4 signing, XML parsing; runtime-credentials.ts: the instance profile through IMDSv2; compared with
// @aws-sdk/client-ec2 in ec2-query.test.ts) against the fake EC2 and fake IMDS on 127.0.0.1 (test/doubles/cloud-api, TEST DOUBLES: there is no EC2 here). The driver's clock
// and sleep are injected, so backoff and token-bucket waits are recorded, not waited for. The last
// block checks the management role in templates/terraform/aws/iam.tf against every EC2 action these
// tests saw the driver make.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {awsDriver} from '../../../../src/lib/providers/aws/driver.js'
import {ec2Api} from '../../../../src/lib/providers/aws/ec2-api.js'
import {Ec2Query} from '../../../../src/lib/providers/aws/ec2-query.js'
import {awsModule} from '../../../../src/lib/providers/aws/index.js'
import {nodeFromUserData} from '../../../../src/lib/providers/node-user-data.js'
import type {NodeDriver} from '../../../../src/lib/providers/types.js'
import {ec2Fault, FAKE_EC2_SECTION, type FakeEc2, startFakeEc2} from '../../../doubles/cloud-api/ec2.js'
import {FAKE_IMDS_CREDENTIALS} from '../../../doubles/cloud-api/imds.js'
import {awsPolicyStatements} from './iam-policy.js'
import {fakeDriverContext} from '../../../doubles/clock.js'
import {driverInput} from '../../../helpers/driver-input.js'

const CLUSTER = 'demo'
const ZONE = FAKE_EC2_SECTION.zone
const AMI = {x86_64: 'ami-0x86000000000000001', arm64: 'ami-0arm000000000000001'}

const work = mkdtempSync(join(tmpdir(), 'citc-aws-driver-'))
const imagesJson = join(work, 'images.json')
writeFileSync(
  imagesJson,
  JSON.stringify({
    version: 1,
    current: {x86_64: {name: 'citc-demo-x86_64-v3', version: '3', id: AMI.x86_64}, arm64: {name: 'citc-demo-arm64-v2', version: '2', id: AMI.arm64}},
    inputs: {},
  }),
)

// The default chain must find nothing but the fake IMDS: no keys in the environment or in files.
const ENV_KEYS = [
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_DEFAULT_PROFILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_ROLE_ARN', 'AWS_EC2_METADATA_DISABLED', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'AWS_REGION',
  'AWS_DEFAULT_REGION', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_EC2', 'AWS_EC2_METADATA_SERVICE_ENDPOINT',
  'AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE', 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
]
const savedEnv = new Map(ENV_KEYS.map((k) => [k, process.env[k]]))
beforeAll(() => {
  for (const k of ENV_KEYS) delete process.env[k]
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(work, 'no-credentials')
  process.env.AWS_CONFIG_FILE = join(work, 'no-config')
})
afterAll(() => {
  for (const [k, v] of savedEnv) if (v === undefined) delete process.env[k]
  else process.env[k] = v
  rmSync(work, {recursive: true, force: true})
})

/** Every EC2 request the fakes answered in this file (for the IAM check at the end). */
const seen: Array<{op: string; body: URLSearchParams; status: number}> = []

let fake: FakeEc2
beforeEach(async () => {
  fake = await startFakeEc2()
  // The metadata service is found only here (as the SDK found it); the stand-in's endpoint must agree (src/lib/stand-in.ts).
  process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = fake.metadataUrl
})
afterEach(async () => {
  for (const r of fake.requests) if (!r.op.startsWith('imds:')) seen.push({op: r.op, body: new URLSearchParams(r.body), status: r.status})
  expect(fake.hookErrors).toEqual([])
  await fake.close()
  vi.restoreAllMocks()
})

function section(extra: Record<string, unknown> = {}) {
  return {
    cluster: CLUSTER,
    sharedDir: '/mnt/shared',
    confPath: '/etc/slurm/slurm.conf',
    ...FAKE_EC2_SECTION,
    endpoints: {api: fake.url, metadata: fake.metadataUrl},
    imagesJson,
    ...extra,
  }
}

const testClock = fakeDriverContext

const driver = (extra?: Record<string, unknown>): NodeDriver => awsDriver(driverInput(section(extra)))
const runs = () => fake.requests.filter((r) => r.op === 'RunInstances')
const params = (r: {body: string}) => new URLSearchParams(r.body)

describe('the aws module', () => {
  it('gives its driver lazily (the node programs load the EC2 client only when they drive AWS)', async () => {
    expect(await awsModule.nodeDriver()).toBe(awsDriver)
  })

  it('refuses a section it cannot drive with, naming the fields', () => {
    expect(() => awsDriver(driverInput({...section(), subnetId: '', zone: undefined}))).toThrow(/aws section of cluster\.json cannot drive nodes: .*zone.*subnetId|subnetId.*zone/)
  })
})

describe('resume', () => {
  it('launches one instance per node: shape, image per arch, network, tags, token, IMDSv2, user-data naming the node', async () => {
    const {ctx, sleeps} = testClock()
    const out = await driver().resume(
      [
        {name: 'demo-c5-0001', shape: 'c5.xlarge', arch: 'x86_64'},
        {name: 'demo-c7g-0001', shape: 'c7g.large', arch: 'arm64'},
      ],
      ctx,
    )
    expect(out.map((o) => [o.name, o.ok, o.attempts])).toEqual([
      ['demo-c5-0001', true, 1],
      ['demo-c7g-0001', true, 1],
    ])
    expect(sleeps).toEqual([])
    for (const o of out) {
      const i = fake.instances.find((x) => x.id === o.instanceId)!
      expect(o.privateIp).toBe(i.privateIp)
      expect(i.tags).toEqual({Name: o.name, cluster: CLUSTER, type: 'compute'})
      expect(i.volumeTags).toEqual({Name: o.name, cluster: CLUSTER, type: 'compute'})
      expect(i).toMatchObject({subnetId: 'subnet-0abc', securityGroupIds: ['sg-0abc'], httpTokens: 'required', state: 'pending'})
      expect(nodeFromUserData(i.userData)).toBe(o.name)
      expect(i.userData).toContain('SHARED=/mnt/shared')
      expect(i.clientToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/)
    }
    expect(fake.instances.map((i) => [i.name, i.shape, i.imageId])).toEqual([
      ['demo-c5-0001', 'c5.xlarge', AMI.x86_64],
      ['demo-c7g-0001', 'c7g.large', AMI.arm64],
    ])
    for (const r of runs()) {
      const p = params(r)
      expect([p.get('MinCount'), p.get('MaxCount')]).toEqual(['1', '1'])
      expect(p.has('IamInstanceProfile.Arn') || p.has('IamInstanceProfile.Name')).toBe(false)
      // No retries of the client's own (the header the SDK sent with maxAttempts 1): the driver decides.
      expect(r.headers['amz-sdk-request']).toBe('attempt=1; max=1')
    }
    expect(fake.instances[0]!.clientToken).not.toBe(fake.instances[1]!.clientToken)
  })

  it('adopts a pending or running instance of the node (no RunInstances); another cluster\'s is no adoption', async () => {
    const pending = fake.add({name: 'demo-c5-0001', tags: {cluster: CLUSTER, type: 'compute'}, state: 'pending', launchedAt: Date.now() + 3_600_000})
    const running = fake.add({name: 'demo-c5-0002', tags: {cluster: CLUSTER, type: 'compute'}, state: 'running'})
    fake.add({name: 'demo-c5-0003', tags: {cluster: 'other', type: 'compute'}, state: 'running'})
    fake.add({name: 'demo-c5-0004', tags: {cluster: CLUSTER, type: 'compute'}, state: 'terminated'})
    const {ctx} = testClock()
    const out = await driver().resume(['0001', '0002', '0003', '0004'].map((n) => ({name: `demo-c5-${n}`, shape: 'c5.xlarge'})), ctx)
    expect(out.map((o) => [o.name, o.ok, o.adopted ?? false, o.instanceId === undefined ? undefined : o.instanceId.startsWith('i-')])).toEqual([
      ['demo-c5-0001', true, true, true],
      ['demo-c5-0002', true, true, true],
      ['demo-c5-0003', true, false, true],
      ['demo-c5-0004', true, false, true],
    ])
    expect(out[0]!.instanceId).toBe(pending.id)
    expect(out[1]).toMatchObject({instanceId: running.id, privateIp: running.privateIp, attempts: 0})
    expect(runs().map((r) => params(r).get('TagSpecification.1.Tag.1.Value'))).toEqual(['demo-c5-0003', 'demo-c5-0004'])
  })

  it('partial failure: ICE on one shape fails those nodes at once (never retried, never "throttled"); the others launch', async () => {
    fake.fail(ec2Fault('RunInstances', 'InsufficientInstanceCapacity', 10, {shape: 'p4d.24xlarge'}))
    const {ctx, sleeps} = testClock()
    const out = await driver().resume(
      [
        {name: 'demo-p4d-0001', shape: 'p4d.24xlarge'},
        {name: 'demo-c5-0001', shape: 'c5.xlarge'},
        {name: 'demo-p4d-0002', shape: 'p4d.24xlarge'},
      ],
      ctx,
    )
    expect(out.map((o) => [o.name, o.ok, o.error, o.failure?.class, o.attempts])).toEqual([
      ['demo-p4d-0001', false, 'citc: capacity: InsufficientInstanceCapacity for p4d.24xlarge in eu-west-2a', 'capacity', 1],
      ['demo-c5-0001', true, undefined, undefined, 1],
      ['demo-p4d-0002', false, 'citc: capacity: InsufficientInstanceCapacity for p4d.24xlarge in eu-west-2a', 'capacity', 1],
    ])
    // One request per node: the client (no retries) and the driver both left ICE alone.
    expect(runs().map((r) => [params(r).get('InstanceType'), r.status])).toEqual([
      ['p4d.24xlarge', 500],
      ['c5.xlarge', 200],
      ['p4d.24xlarge', 500],
    ])
    expect(sleeps).toEqual([])
  })

  it('throttled: retried with backoff through the same ClientToken, then ok', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    fake.fail(ec2Fault('RunInstances', 'RequestLimitExceeded', 2))
    const {ctx, sleeps, logs} = testClock()
    const [o] = await driver().resume([{name: 'demo-c5-0001', shape: 'c5.xlarge'}], ctx)
    expect(o).toMatchObject({ok: true, attempts: 3})
    expect(runs().map((r) => r.status)).toEqual([503, 503, 200])
    expect(new Set(runs().map((r) => params(r).get('ClientToken'))).size).toBe(1)
    expect(fake.instances).toHaveLength(1)
    // Full jitter at random() = 0.5 of base 1 s · 2^n; each wait leaves the drained bucket a token again.
    expect(sleeps).toEqual([500, 1000])
    expect(logs.filter((l) => /throttled \(RequestLimitExceeded\), attempt \d/.test(l))).toHaveLength(2)
  })

  it('throttled until the retry budget ends: failed "citc: throttled: …", after as many attempts as the budget holds', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    fake.fail(ec2Fault('RunInstances', 'RequestLimitExceeded', 1000))
    const {ctx, sleeps} = testClock()
    const [o] = await driver({retryBudgetMs: 120_000}).resume([{name: 'demo-c5-0001', shape: 'c5.xlarge'}], ctx)
    // Delays 0.5, 1, 2, 4, 8 s, then the 20 s cap · 0.5 = 10 s while they fit in 120 s: 5 + 10 waits.
    const expected = [500, 1000, 2000, 4000, 8000, ...Array(10).fill(10_000)]
    expect(sleeps).toEqual(expected)
    expect(o).toMatchObject({ok: false, error: 'citc: throttled: RequestLimitExceeded for c5.xlarge in eu-west-2a', attempts: expected.length + 1})
    expect(o!.failure?.class).toBe('throttled')
    expect(runs()).toHaveLength(expected.length + 1)
    expect(new Set(runs().map((r) => params(r).get('ClientToken'))).size).toBe(1)
  })

  it('transient (500 InternalError) is retried; quota, auth and config fail at once', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    fake.fail(
      ec2Fault('RunInstances', 'InternalError', 1, {shape: 'c5.xlarge'}),
      ec2Fault('RunInstances', 'InstanceLimitExceeded', 1, {shape: 'c5.2xlarge'}),
      ec2Fault('RunInstances', 'UnauthorizedOperation', 1, {shape: 'c5.4xlarge'}),
      ec2Fault('RunInstances', 'InvalidAMIID.NotFound', 1, {shape: 'c5.9xlarge'}),
    )
    const {ctx, sleeps} = testClock()
    const shapes = ['c5.xlarge', 'c5.2xlarge', 'c5.4xlarge', 'c5.9xlarge']
    const out = await driver({concurrency: 1}).resume(shapes.map((shape, n) => ({name: `demo-n-000${n}`, shape})), ctx)
    expect(out.map((o) => [o.ok, o.failure?.class, o.failure?.code, o.attempts])).toEqual([
      [true, undefined, undefined, 2],
      [false, 'quota', 'InstanceLimitExceeded', 1],
      [false, 'auth', 'UnauthorizedOperation', 1],
      [false, 'config', 'InvalidAMIID.NotFound', 1],
    ])
    expect(out[2]!.error).toBe('citc: auth: UnauthorizedOperation for c5.4xlarge in eu-west-2a')
    expect(runs().map((r) => r.status)).toEqual([500, 200, 400, 403, 400])
    expect(sleeps).toEqual([500])
  })

  it('a node whose architecture has no image fails with what to run, launching nothing', async () => {
    writeFileSync(join(work, 'x86-only.json'), JSON.stringify({version: 1, current: {x86_64: {name: 'a', version: '1', id: AMI.x86_64}}, inputs: {}}))
    const {ctx} = testClock()
    const [o] = await driver({imagesJson: join(work, 'x86-only.json')}).resume([{name: 'demo-c7g-0001', shape: 'c7g.large', arch: 'arm64'}], ctx)
    expect(o).toMatchObject({ok: false, error: 'citc: config: NoImage(arm64) for c7g.large in eu-west-2a'})
    expect(runs()).toHaveLength(0)
  })
})

describe('suspend', () => {
  it('terminates by id the node\'s instance of this cluster only; no instance and already-gone are ok', async () => {
    const mine = fake.add({name: 'demo-c5-0001', tags: {cluster: CLUSTER, type: 'compute'}})
    const theirs = fake.add({name: 'demo-c5-0001', tags: {cluster: 'other', type: 'compute'}})
    const mgmt = fake.add({name: 'demo-c5-0002', tags: {cluster: CLUSTER, type: 'management'}})
    const gone = fake.add({name: 'demo-c5-0003', tags: {cluster: CLUSTER, type: 'compute'}})
    fake.fail(ec2Fault('TerminateInstances', 'InvalidInstanceID.NotFound', 1))
    const {ctx} = testClock()
    // 0003 first, so the scripted NotFound is its answer.
    const out = await driver({concurrency: 1}).suspend(['0003', '0001', '0002', '0009'].map((n) => ({name: `demo-c5-${n}`, shape: 'c5.xlarge'})), ctx)
    expect(out.map((o) => [o.name, o.ok, o.instanceId])).toEqual([
      ['demo-c5-0003', true, gone.id],
      ['demo-c5-0001', true, mine.id],
      ['demo-c5-0002', true, undefined],
      ['demo-c5-0009', true, undefined],
    ])
    const terminated = fake.requests.filter((r) => r.op === 'TerminateInstances').map((r) => params(r).get('InstanceId.1'))
    expect(terminated).toEqual([gone.id, mine.id])
    expect(theirs.state).toBe('running')
    expect(mgmt.state).toBe('running')
    expect(mine.state).toBe('stopping')
  })

  it('a throttled terminate is retried; list() no longer shows the instance once terminated', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const i = fake.add({name: 'demo-c5-0001', tags: {cluster: CLUSTER, type: 'compute'}})
    fake.fail(ec2Fault('TerminateInstances', 'RequestLimitExceeded', 1))
    const {ctx} = testClock()
    const d = driver()
    expect(await d.suspend([{name: 'demo-c5-0001', shape: 'c5.xlarge'}], ctx)).toEqual([{name: 'demo-c5-0001', ok: true, instanceId: i.id, attempts: 2}])
    expect(await d.list()).toEqual([]) // shutting-down → terminated at the next read
  })
})

describe('list', () => {
  it('pages through DescribeInstances (NextToken) and maps EC2 states', async () => {
    for (let n = 0; n < 1203; n++) fake.add({name: `demo-c5-${String(n).padStart(4, '0')}`, tags: {cluster: CLUSTER, type: 'compute'}, state: n % 2 ? 'running' : 'pending', launchedAt: Date.now() + 3_600_000})
    fake.add({name: 'x', tags: {cluster: 'other', type: 'compute'}})
    const listed = await ec2Api({cluster: CLUSTER, region: 'eu-west-2', zone: ZONE, subnetId: 's', securityGroupId: 'g', endpoints: {api: fake.url, metadata: fake.metadataUrl}}).list()
    expect(listed).toHaveLength(1203)
    expect(listed[1]).toMatchObject({name: 'demo-c5-0001', state: 'running', shape: 'c5.xlarge'})
    expect(listed[0]!.state).toBe('pending')
    const describes = fake.requests.filter((r) => r.op === 'DescribeInstances')
    expect(describes).toHaveLength(2)
    expect(params(describes[0]!).get('Filter.1.Name')).toBe('tag:cluster')
    expect(params(describes[1]!).get('NextToken')).toBeTruthy()
  })
})

describe('a call that hangs', () => {
  it('times out as a transient TimeoutError (which the driver retries) instead of holding the node program', async () => {
    // The fake holds its answer (an InternalError) for 5 s: only the client's own timeout can end
    // the call in time, so a TimeoutError proves the limit works and an InternalError that it does not.
    // No elapsed time is asserted (the fake runs on this event loop; a loaded machine delays both). The
    // 300-ms limit is safe here: the only call it covers is the one that hangs (credentials come from
    // the fake IMDS under their own 1-s limit), and the client's timer, armed when the call is sent,
    // expires before the fake's, armed later for longer: Node fires timers in that order however late.
    fake.fail(ec2Fault('DescribeInstances', 'InternalError', 1, {delayMs: 5_000}))
    const api = ec2Api({cluster: CLUSTER, region: 'eu-west-2', zone: ZONE, subnetId: 's', securityGroupId: 'g', endpoints: {api: fake.url, metadata: fake.metadataUrl}, requestTimeoutMs: 300})
    const error = await api.list().then(() => undefined, (e: unknown) => e)
    expect(api.classify(error)).toMatchObject({class: 'transient', code: 'TimeoutError'})
  })
})

describe('credentials', () => {
  it('come from the instance profile through IMDSv2 (the fake IMDS): requests signed with its temporary key', async () => {
    const {ctx} = testClock()
    await driver().resume([{name: 'demo-c5-0001', shape: 'c5.xlarge'}], ctx)
    expect(fake.requests.filter((r) => r.op.startsWith('imds:')).map((r) => [r.op, r.status])).toEqual([
      ['imds:token', 200],
      ['imds:role', 200],
      ['imds:credentials', 200],
    ])
    const signed = fake.requests.filter((r) => !r.op.startsWith('imds:'))
    expect(signed.map((r) => r.op)).toEqual(['DescribeInstances', 'RunInstances'])
    for (const r of signed) {
      expect(String(r.headers.authorization)).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${FAKE_IMDS_CREDENTIALS.accessKeyId}/\\d{8}/eu-west-2/ec2/aws4_request, `))
      expect(r.headers['x-amz-security-token']).toBe(FAKE_IMDS_CREDENTIALS.sessionToken)
    }
  })

  it('the fake EC2 refuses another key (AuthFailure, classified auth)', async () => {
    const client = new Ec2Query({region: 'eu-west-2', endpoint: fake.url, credentials: async () => ({accessKeyId: 'AKIDSOMEONEELSE', secretAccessKey: 'x'}), connectTimeoutMs: 5000, requestTimeoutMs: 5000})
    const api = ec2Api({cluster: CLUSTER, region: 'eu-west-2', zone: ZONE, subnetId: 's', securityGroupId: 'g'}, client)
    const error = await api.list().then(() => undefined, (e: unknown) => e)
    expect(api.classify(error)).toMatchObject({class: 'auth', code: 'AuthFailure'})
  })
})

describe('the fake EC2 behaves as the driver relies on EC2 to', () => {
  const api = (f: FakeEc2) => {
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = f.metadataUrl // this fake's own metadata service (saved and restored above)
    return ec2Api({cluster: CLUSTER, region: 'eu-west-2', zone: ZONE, subnetId: 'subnet-0abc', securityGroupId: 'sg-0abc', endpoints: {api: f.url, metadata: f.metadataUrl}})
  }
  const launch = {token: '6f1c2a3b-0000-4000-a000-000000000001', imageId: AMI.x86_64, userData: '#!/bin/sh\n# citc-node: demo-c5-0001\n'}

  it('the same ClientToken twice is the same instance (a lost answer retried launches nothing more)', async () => {
    const a = await api(fake).create({name: 'demo-c5-0001', shape: 'c5.xlarge'}, launch)
    const b = await api(fake).create({name: 'demo-c5-0001', shape: 'c5.xlarge'}, launch)
    expect(b).toEqual(a)
    expect(fake.instances).toHaveLength(1)
    const other = await api(fake).create({name: 'demo-c5-0001', shape: 'c5.large'}, launch).then(() => undefined, (e: unknown) => e)
    expect(api(fake).classify(other)).toMatchObject({class: 'config', code: 'IdempotentParameterMismatch'})
  })

  it('meters RunInstances with its bucket (RequestLimitExceeded, classified throttled) and calls the hooks', async () => {
    const launched: string[] = []
    const terminated: string[] = []
    const metered = await startFakeEc2({rateLimit: {perSecond: 0.001, burst: 2}, hooks: {onLaunch: (i) => void launched.push(nodeFromUserData(i.userData)!), onTerminate: (i) => void terminated.push(i.name)}})
    try {
      const results = []
      for (let n = 1; n <= 3; n++) results.push(await api(metered).create({name: `demo-c5-000${n}`, shape: 'c5.xlarge'}, {...launch, token: `${launch.token.slice(0, -1)}${n}`, userData: `# citc-node: demo-c5-000${n}\n`}).then(() => 'ok', (e: unknown) => api(metered).classify(e)))
      expect(results).toEqual(['ok', 'ok', {class: 'throttled', code: 'RequestLimitExceeded', message: 'Request limit exceeded.'}])
      expect(metered.requests.filter((r) => r.op === 'RunInstances').map((r) => r.status)).toEqual([200, 200, 503])
      await api(metered).terminate({id: metered.instances[0]!.id, name: 'demo-c5-0001', state: 'running', launchedAt: 0})
      await new Promise((r) => setTimeout(r, 20)) // the hooks run just after the answer
      expect(launched).toEqual(['demo-c5-0001', 'demo-c5-0002'])
      expect(terminated).toEqual(['demo-c5-0001'])
      expect(metered.hookErrors).toEqual([])
    } finally {
      await metered.close()
    }
  })
})

describe("the management role (templates/terraform/aws/iam.tf) against what the driver did", () => {
  it('allows every EC2 action the driver made, with the cluster and type tag conditions it met', async () => {
    const statements = await awsPolicyStatements()
    const driverActions = new Set(seen.map((r) => `ec2:${r.op}`))
    expect([...driverActions].sort()).toEqual(['ec2:DescribeInstances', 'ec2:RunInstances', 'ec2:TerminateInstances'])
    const allowing = (action: string, resource: string) => statements.filter((s) => s.actions.includes(action) && s.resources.some((r) => r === '*' || r.endsWith(resource)))
    for (const a of driverActions) expect(allowing(a, a === 'ec2:DescribeInstances' ? '*' : 'instance/*').length, a).toBeGreaterThan(0)

    // RunInstances of a compute node: request tags cluster=<id>, type=compute on instance and volume,
    // which every launch the driver made carried (tags in the same call: CreateTags while launching).
    const launch = allowing('ec2:RunInstances', 'instance/*').find((s) => s.conditions['aws:RequestTag/type']?.includes('compute'))!
    expect(launch.conditions).toMatchObject({'aws:RequestTag/cluster': ['${var.cluster_id}'], 'aws:RequestTag/type': ['compute']})
    const volume = allowing('ec2:RunInstances', 'volume/*')
    expect(volume.length).toBeGreaterThan(0)
    for (const s of volume) expect(s.conditions['aws:RequestTag/cluster']).toEqual(['${var.cluster_id}'])
    const tagging = allowing('ec2:CreateTags', 'instance/*')
    expect(tagging.map((s) => s.conditions)).toEqual([{'ec2:CreateAction': ['RunInstances']}])
    const launches = seen.filter((r) => r.op === 'RunInstances')
    expect(launches.length).toBeGreaterThan(10)
    for (const r of launches) {
      const specs = new Map<string, Record<string, string>>()
      for (let n = 1; r.body.has(`TagSpecification.${n}.ResourceType`); n++) {
        const tags: Record<string, string> = {}
        for (let t = 1; r.body.has(`TagSpecification.${n}.Tag.${t}.Key`); t++) tags[r.body.get(`TagSpecification.${n}.Tag.${t}.Key`)!] = r.body.get(`TagSpecification.${n}.Tag.${t}.Value`)!
        specs.set(r.body.get(`TagSpecification.${n}.ResourceType`)!, tags)
      }
      for (const type of ['instance', 'volume']) expect(specs.get(type), type).toMatchObject({cluster: CLUSTER, type: 'compute'})
      // No instance profile asked for: the role has no iam:PassRole.
      expect([...r.body.keys()].some((k) => k.startsWith('IamInstanceProfile'))).toBe(false)
    }
    // The images a node may boot: only the cluster's (tagged by the image build).
    expect(allowing('ec2:RunInstances', 'image/*').some((s) => JSON.stringify(s.conditions) === JSON.stringify({'aws:ResourceTag/cluster': ['${var.cluster_id}']}))).toBe(true)

    // Terminate: only instances tagged with the cluster, and type compute or the image build's machine.
    const terminate = allowing('ec2:TerminateInstances', 'instance/*')
    expect(terminate.length).toBeGreaterThan(0)
    for (const s of terminate) {
      expect(s.conditions['aws:ResourceTag/cluster']).toEqual(['${var.cluster_id}'])
      expect(s.conditions['aws:ResourceTag/type']).toSatisfy((v: string[]) => v.length === 1 && ['compute', 'image-build'].includes(v[0]!))
    }
  })

  it('allows nothing beyond the driver\'s actions and the image build\'s (Packer amazon-ebs and citc\'s image list/delete)', async () => {
    const statements = await awsPolicyStatements()
    const driverActions = new Set(seen.map((r) => `ec2:${r.op}`))
    // Packer amazon-ebs with the cluster's subnet and security group and a temporary key pair
    // (templates/packer/cloud.pkr.hcl): region check, source AMI lookup, subnet and security group
    // checks, temporary key pair, launch (tags while launching), wait, stop, image, tag the image and
    // its snapshots, volume cleanup check, terminate, and deregister + delete snapshots when a build
    // fails after the image was made. (citc's own image list/delete use the admin's AWS CLI,
    // cloud-image-builder.ts, not this role.)
    const imageBuild = new Set([
      'ec2:DescribeRegions', 'ec2:DescribeImages', 'ec2:DescribeSubnets', 'ec2:DescribeSecurityGroups', 'ec2:DescribeVolumes',
      'ec2:CreateKeyPair', 'ec2:DeleteKeyPair', 'ec2:RunInstances', 'ec2:CreateTags', 'ec2:StopInstances',
      'ec2:CreateImage', 'ec2:TerminateInstances', 'ec2:DeregisterImage', 'ec2:DeleteSnapshot', 'ec2:DescribeInstances',
    ])
    const all = new Set(statements.flatMap((s) => s.actions))
    for (const a of all) expect(driverActions.has(a) || imageBuild.has(a), a).toBe(true)
    for (const a of imageBuild) expect(all.has(a), a).toBe(true)
    // Nothing outside EC2, no wildcard, no PassRole (no instance profile is handed to any machine).
    for (const a of all) expect(a).toMatch(/^ec2:[A-Z][A-Za-z]+$/)
    // Only the Describe calls (which take no resource) are on "*".
    for (const s of statements) if (s.resources.includes('*')) for (const a of s.actions) expect(a).toMatch(/^ec2:Describe/)
    // The build machine and its image carry what the statements for them ask (cloud.pkr.hcl's tags).
    const packer = readFileSync(join(import.meta.dirname, '../../../../templates/packer/cloud.pkr.hcl'), 'utf8')
    expect(packer).toMatch(/\n\s+cluster\s+= var\.cluster\n/)
    expect(packer).toMatch(/\n\s+run_tags\s+= merge\(local\.image_tags, \{ type = "image-build"/)
    expect(packer).toMatch(/\n\s+run_volume_tags\s+= local\.image_tags\n/)
    expect(packer).not.toMatch(/iam_instance_profile|temporary_key_pair_name|ssh_keypair_name/)
  })
})
