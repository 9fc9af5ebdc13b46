// The Oracle node driver with the real OCI SDK (oci-common 2.139.1; the Core calls: compute-calls.ts) against the fake OCI (a
// TEST DOUBLE: test/doubles/cloud-api/oci.ts) — credentials through the production instance-principal chain
// (metadata certificates → auth service session token), every request's signature checked by the fake.
// The driver's clock and sleep are injected: retries take no real time, and their delays are asserted.
import {createHash} from 'node:crypto'

import {afterAll, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {CLOUD_DRIVER_DEFAULTS} from '../../../../src/lib/providers/cloud-driver.js'
import {nodeFromUserData} from '../../../../src/lib/providers/node-user-data.js'
import {oracleModule} from '../../../../src/lib/providers/oracle/index.js'
import type {FakeInstance} from '../../../doubles/cloud-api/types.js'
import {FAKE_OCI, startFakeOci, type FakeOci} from '../../../doubles/cloud-api/oci.js'
import {driverInput} from '../../../helpers/driver-input.js'
import {CLUSTER, IMAGE, driverOptions, fakeContext, imagesJson, makeDriver} from './helpers.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/
const node = (n: number, shape = 'VM.Standard2.1', extra: {ad?: number; arch?: string} = {}) => ({name: `${CLUSTER}-vm-${n}`, shape, ad: 1, arch: 'x86_64', ...extra})
const ours = {cluster: CLUSTER, type: 'compute'}

// The SDK's own console lines must not reach the console (oci-api.ts quietSdkConsole): watched from
// before the first SDK call of this file, so the driver's filter wraps this spy.
const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
const launched: FakeInstance[] = []
const terminated: FakeInstance[] = []
let cloud: FakeOci
let images: ReturnType<typeof imagesJson>

// One fake for the file, emptied before each test: the drivers share its instance principal (built
// once per process and endpoints, as in a node program), so the file does one key generation, not 26.
// Tests about credentials start a fake of their own.
beforeAll(async () => {
  images = imagesJson()
  cloud = await startFakeOci({hooks: {onLaunch: (i) => void launched.push(i), onTerminate: (i) => void terminated.push(i)}})
})
afterAll(async () => {
  await cloud.close()
  images.remove()
  warn.mockRestore()
})
beforeEach(() => {
  launched.length = 0
  terminated.length = 0
  cloud.reset()
})

/** A fake of the test's own (its own instance principal), closed after fn. */
async function withOwnCloud(fn: (own: FakeOci) => Promise<void>) {
  const own = await startFakeOci()
  try {
    await fn(own)
  } finally {
    await own.close()
  }
}

const ops = (op: string) => cloud.requests.filter((r) => r.op === op)
const launchBodies = () => ops('LaunchInstance').map((r) => JSON.parse(r.body) as Record<string, any>) // eslint-disable-line @typescript-eslint/no-explicit-any

describe('oracle driver: resume', () => {
  it('launches each node with its name, the cluster tags, the image of its arch, its subnet, and user-data naming it', async () => {
    const {ctx} = fakeContext()
    const out = await makeDriver(cloud, images.file).resume([node(1), node(2, 'VM.Standard.A1.Flex.2.12', {arch: 'arm64'})], ctx)
    expect(out.map((o) => [o.name, o.ok, o.attempts])).toEqual([[`${CLUSTER}-vm-1`, true, 1], [`${CLUSTER}-vm-2`, true, 1]])
    const [fixed, flex] = launchBodies()
    expect(fixed).toEqual({
      availabilityDomain: FAKE_OCI.ad,
      compartmentId: FAKE_OCI.compartment,
      displayName: `${CLUSTER}-vm-1`,
      shape: 'VM.Standard2.1',
      sourceDetails: {sourceType: 'image', imageId: IMAGE.x86_64},
      createVnicDetails: {subnetId: FAKE_OCI.subnet, hostnameLabel: `${CLUSTER}-vm-1`, assignPublicIp: false},
      metadata: {user_data: expect.any(String)},
      freeformTags: ours,
    })
    // A flexible shape is launched as its family with the size in shapeConfig.
    expect(flex).toMatchObject({shape: 'VM.Standard.A1.Flex', shapeConfig: {ocpus: 2, memoryInGBs: 12}, sourceDetails: {imageId: IMAGE.arm64}})
    // The fake decodes the user-data, and the hook sees the node it names (the e2e boots it from this).
    expect(launched.map((i) => nodeFromUserData(i.userData))).toEqual([`${CLUSTER}-vm-1`, `${CLUSTER}-vm-2`])
    expect(out.map((o) => o.instanceId)).toEqual(launched.map((i) => i.id))
    for (const r of ops('LaunchInstance')) expect(r.headers['opc-retry-token']).toMatch(UUID)
    // Credentials: one session token from the auth service, every Core call signed with it.
    expect(cloud.tokensIssued).toBe(1)
    for (const r of cloud.requests.filter((x) => x.path.startsWith('/20160918/'))) {
      expect(r.status).toBeLessThan(300)
      expect(String(r.headers.authorization)).toMatch(/^Signature version="1",keyId="ST\$/)
    }
  })

  it('adopts a pending or running instance of the node instead of launching a second; not another cluster\'s of the same name', async () => {
    const mine = cloud.add({name: node(1).name, tags: ours, state: 'pending'})
    cloud.add({name: node(2).name, tags: {cluster: 'other', type: 'compute'}, state: 'running'})
    cloud.add({name: node(3).name, tags: ours, state: 'terminated'})
    const {ctx} = fakeContext()
    const out = await makeDriver(cloud, images.file).resume([node(1), node(2), node(3)], ctx)
    expect(out[0]).toMatchObject({ok: true, adopted: true, instanceId: mine.id, attempts: 0})
    expect(out.slice(1).map((o) => [o.ok, o.adopted])).toEqual([[true, undefined], [true, undefined]])
    expect(launchBodies().map((b) => b.displayName)).toEqual([node(2).name, node(3).name])
  })

  it('retries throttling with the same retry token and growing jittered delays, then launches once', async () => {
    cloud.fail({op: 'LaunchInstance', times: 2, status: 429, code: 'TooManyRequests', message: 'Too many requests for the tenancy.'})
    const {ctx, retryDelays} = fakeContext()
    const [o] = await makeDriver(cloud, images.file).resume([node(1)], ctx)
    expect(o).toMatchObject({ok: true, attempts: 3})
    const tokens = ops('LaunchInstance').map((r) => r.headers['opc-retry-token'])
    expect(tokens).toHaveLength(3)
    expect(new Set(tokens).size).toBe(1)
    expect(cloud.instances).toHaveLength(1)
    const delays = retryDelays(node(1).name)
    expect(delays).toHaveLength(2)
    delays.forEach((d, n) => expect(d).toBeLessThanOrEqual(CLOUD_DRIVER_DEFAULTS.backoff.baseMs * 2 ** n))
  })

  it('a retried launch whose first answer was lost is one instance: the fake honours opc-retry-token', async () => {
    const {ctx} = fakeContext()
    const driver = makeDriver(cloud, images.file)
    await driver.resume([node(1)], ctx)
    // The same token again (what the SDK would send if the first answer never came back).
    const first = ops('LaunchInstance')[0]!
    const again = await fetch(`${cloud.url}${first.path}`, {method: 'POST', headers: first.headers as Record<string, string>, body: first.body})
    expect(again.status).toBe(200)
    expect(((await again.json()) as {id: string}).id).toBe(cloud.instances[0]!.id)
    expect(cloud.instances).toHaveLength(1)
  })

  it('the fake checks every signature: a signed launch replayed with another body, or another digest, is refused', async () => {
    await makeDriver(cloud, images.file).resume([node(1)], fakeContext().ctx)
    const signed = ops('LaunchInstance')[0]!
    const headers = {...(signed.headers as Record<string, string>)}
    delete headers['content-length']
    const other = signed.body.replace(node(1).name, node(9).name)
    const replay = (h: Record<string, string>, body: string) => fetch(`${cloud.url}${signed.path}`, {method: 'POST', headers: h, body}).then(async (r) => [r.status, ((await r.json()) as {message: string}).message])
    expect(await replay(headers, other)).toEqual([401, expect.stringContaining('x-content-sha256 does not match the body')])
    const digest = createHash('sha256').update(other).digest('base64')
    expect(await replay({...headers, 'x-content-sha256': digest}, other)).toEqual([401, expect.stringContaining('signature does not verify')])
    expect(cloud.instances.map((i) => i.name)).toEqual([node(1).name])
  })

  it.each([
    // status, code, message, class, reason code, fake requests
    [500, 'InternalError', 'Out of host capacity.', 'capacity', 'Out of host capacity', 1],
    [400, 'LimitExceeded', 'The following service limits were exceeded: standard2-core-count.', 'quota', 'LimitExceeded', 1],
    [404, 'NotAuthorizedOrNotFound', 'Authorization failed or requested resource not found.', 'auth', 'NotAuthorizedOrNotFound', 1],
    [400, 'InvalidParameter', 'Shape VM.Standard2.1 is not valid for image.', 'config', 'InvalidParameter', 1],
  ] as const)('%i %s "%s" fails the node at once as %s, never retried', async (status, code, message, cls, reasonCode, requests) => {
    cloud.fail({op: 'LaunchInstance', times: 5, status, code, message})
    const {ctx, sleeps} = fakeContext()
    const [o] = await makeDriver(cloud, images.file).resume([node(1)], ctx)
    expect(o).toMatchObject({ok: false, attempts: 1, failure: {class: cls, code: reasonCode}})
    expect(o!.error).toBe(`citc: ${cls}: ${reasonCode} for VM.Standard2.1 in ${FAKE_OCI.ad}`)
    expect(ops('LaunchInstance')).toHaveLength(requests)
    expect(sleeps).toEqual([])
  })

  it.each([
    [409, 'IncorrectState', 'transient'],
    [503, 'ServiceUnavailable', 'transient'],
    [500, 'InternalError', 'transient'],
    [429, 'TooManyRequests', 'throttled'],
  ] as const)('%i %s is %s: retried, and the node starts', async (status, code, cls) => {
    cloud.fail({op: 'LaunchInstance', times: 1, status, code, message: 'busy'})
    const {ctx, lines} = fakeContext()
    const [o] = await makeDriver(cloud, images.file).resume([node(1)], ctx)
    expect(o).toMatchObject({ok: true, attempts: 2})
    expect(lines.some((l) => l.includes(`${cls} (${code}), attempt 1; again in`))).toBe(true)
  })

  it('throttling that never ends fails the node as throttled (never capacity) when the retry budget is spent', async () => {
    cloud.fail({op: 'LaunchInstance', times: 1000, status: 429, code: 'TooManyRequests', message: 'Too many requests for the tenancy.'})
    const {ctx, retryDelays} = fakeContext()
    const [o] = await makeDriver(cloud, images.file, {retryBudgetMs: 20_000}).resume([node(1)], ctx)
    expect(o).toMatchObject({ok: false, failure: {class: 'throttled', code: 'TooManyRequests'}})
    expect(o!.error).toBe(`citc: throttled: TooManyRequests for VM.Standard2.1 in ${FAKE_OCI.ad}`)
    expect(ops('LaunchInstance')).toHaveLength(o!.attempts!)
    const delays = retryDelays(node(1).name)
    expect(delays).toHaveLength(o!.attempts! - 1)
    expect(delays.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(20_000)
  })

  it("OCI's own rate limit (the fake's bucket) is throttling: retried, and reported as throttled, never capacity", async () => {
    // The fake refills on the real clock, the driver waits on the fake one: the third launch is
    // refused until the driver's budget is spent.
    const own = await startFakeOci({rateLimit: {perSecond: 0.001, burst: 2}})
    try {
      const {ctx} = fakeContext()
      const out = await makeDriver(own, images.file, {retryBudgetMs: 10_000}).resume([node(1), node(2), node(3)], ctx)
      expect(out.filter((o) => o.ok)).toHaveLength(2)
      const [refused] = out.filter((o) => !o.ok)
      expect(refused).toMatchObject({failure: {class: 'throttled', code: 'TooManyRequests'}})
      expect(refused!.attempts).toBeGreaterThan(1)
      expect(own.requests.filter((r) => r.op === 'LaunchInstance' && r.status === 429)).toHaveLength(refused!.attempts!)
      expect(own.instances).toHaveLength(2)
    } finally {
      await own.close()
    }
  })

  it('a slow answer past the request time limit is transient and asked again', async () => {
    // The limit covers every call of the resume, and the fake answers on this event loop: the second
    // launch must answer within it on a loaded machine too (a 200-ms limit failed it there), so 2 s.
    // The slow answer comes after the limit: the client's timer, armed before the call is sent,
    // expires before the fake's, armed later for longer, and Node fires timers in that order however
    // late the loop runs. So the first attempt always times out, and no elapsed time is asserted.
    cloud.fail({op: 'LaunchInstance', times: 1, status: 500, code: 'InternalError', delayMs: 2100})
    const {ctx, lines} = fakeContext()
    const [o] = await makeDriver(cloud, images.file, {requestTimeoutMs: 2000}).resume([node(1)], ctx)
    expect(o).toMatchObject({ok: true, attempts: 2})
    expect(lines.some((l) => l.includes('transient (ETIMEDOUT), attempt 1'))).toBe(true)
    // The fake records the timed-out call when it answers it: wait for that here, not in the next
    // test's request list (a race the next test lost on a loaded machine).
    await vi.waitFor(() => expect(ops('LaunchInstance')).toHaveLength(2), {timeout: 30_000, interval: 50})
  })

  it('a partial failure fails only that node: capacity for one shape, the others start', async () => {
    cloud.fail({op: 'LaunchInstance', times: 10, status: 500, code: 'InternalError', message: 'Out of host capacity.', shape: 'VM.Standard.E4.Flex'})
    const {ctx} = fakeContext()
    const out = await makeDriver(cloud, images.file).resume([node(1), node(2, 'VM.Standard.E4.Flex.4.64'), node(3)], ctx)
    expect(out.map((o) => [o.name, o.ok, o.error])).toEqual([
      [node(1).name, true, undefined],
      [node(2).name, false, `citc: capacity: Out of host capacity for VM.Standard.E4.Flex.4.64 in ${FAKE_OCI.ad}`],
      [node(3).name, true, undefined],
    ])
    expect(cloud.instances.map((i) => i.name)).toEqual([node(1).name, node(3).name])
  })

  it('a node name OCI cannot take as a hostname label launches without one', async () => {
    // Slurm and the boot script take dots; a DNS label does not.
    const dotted = {...node(1), name: `${CLUSTER}-vm.standard2.1-0001`}
    const {ctx} = fakeContext()
    const [o] = await makeDriver(cloud, images.file).resume([dotted], ctx)
    expect(o).toMatchObject({ok: true})
    expect(launchBodies()[0]!.createVnicDetails).toEqual({subnetId: FAKE_OCI.subnet, assignPublicIp: false})
    expect(launchBodies()[0]!.displayName).toBe(dotted.name)
  })

  it('a node asking for another availability domain fails as config and is not launched elsewhere', async () => {
    const {ctx} = fakeContext()
    const [o] = await makeDriver(cloud, images.file).resume([node(1, 'VM.Standard2.1', {ad: 2})], ctx)
    expect(o).toMatchObject({ok: false, attempts: 1, error: `citc: config: OtherAvailabilityDomain(2) for VM.Standard2.1 in ${FAKE_OCI.ad}`})
    expect(ops('LaunchInstance')).toEqual([])
  })

  it('a node whose arch has no compute image fails as config before any launch', async () => {
    const x86Only = imagesJson({x86_64: IMAGE.x86_64})
    try {
      const {ctx} = fakeContext()
      const [o] = await makeDriver(cloud, x86Only.file).resume([node(1, 'VM.Standard.A1.Flex.1.6', {arch: 'arm64'})], ctx)
      expect(o).toMatchObject({ok: false, failure: {class: 'config', code: 'NoImage(arm64)'}})
      expect(ops('LaunchInstance')).toEqual([])
    } finally {
      x86Only.remove()
    }
  })

  it('a signature the API does not accept is an auth failure, not retried', async () => {
    await withOwnCloud(async (own) => {
      const driver = makeDriver(own, images.file)
      await driver.list() // a session token now, then OCI forgets it (revoked)
      own.revokeSessions()
      const {ctx} = fakeContext()
      const [o] = await driver.resume([node(1)], ctx)
      expect(o).toMatchObject({ok: false, attempts: 1, failure: {class: 'auth', code: 'NotAuthenticated'}})
      expect(own.requests.filter((r) => r.op === 'LaunchInstance').map((r) => r.status)).toEqual([401])
      expect(own.instances).toEqual([])
    })
  })

  it('an instance principal the auth service refuses fails every node as auth, without launching', async () => {
    await withOwnCloud(async (own) => {
      own.fail({op: 'Federate', times: 10, status: 401, code: 'NotAuthenticated', message: 'no such instance'})
      const {ctx} = fakeContext()
      const out = await makeDriver(own, images.file).resume([node(1), node(2)], ctx)
      expect(out.map((o) => [o.ok, o.failure?.class, o.failure?.code, o.attempts])).toEqual([[false, 'auth', 'InstancePrincipal', 1], [false, 'auth', 'InstancePrincipal', 1]])
      expect(own.requests.filter((r) => r.op === 'LaunchInstance')).toEqual([])
    })
  })

  it('a metadata service that fails once costs one call, not the process: the next call builds the principal again', async () => {
    await withOwnCloud(async (own) => {
      own.fail({op: 'Metadata', times: 1, status: 500, code: 'InternalError'})
      const {ctx, lines} = fakeContext()
      const [o] = await makeDriver(own, images.file).resume([node(1)], ctx)
      expect(lines[0]).toBe("could not list the cluster's instances (auth: InstancePrincipal); launching without adopting")
      expect(o).toMatchObject({ok: true, attempts: 1})
      expect(own.tokensIssued).toBe(1)
    })
  })

  it("the SDK's own failure lines never reach the console", async () => {
    cloud.fail({op: 'LaunchInstance', times: 1, status: 500, code: 'InternalError', message: 'Out of host capacity.'})
    const {ctx} = fakeContext()
    await makeDriver(cloud, images.file).resume([node(1)], ctx)
    expect(ops('LaunchInstance')).toHaveLength(1)
    expect(warn.mock.calls.map((c) => String(c[0]))).toEqual([])
  })
})

describe('oracle driver: suspend, terminate, list', () => {
  it("terminates by id only the cluster's own instance of a node — never a same-named one without our tag", async () => {
    const mine = cloud.add({name: node(1).name, tags: ours})
    const theirs = cloud.add({name: node(1).name, tags: {cluster: 'other', type: 'compute'}})
    const untagged = cloud.add({name: node(1).name, tags: {}})
    const elsewhere = cloud.add({name: node(1).name, tags: ours, compartmentId: 'ocid1.compartment.oc1..other'})
    const {ctx} = fakeContext()
    const out = await makeDriver(cloud, images.file).suspend([node(1), node(2)], ctx)
    expect(out).toEqual([
      {name: node(1).name, ok: true, instanceId: mine.id, attempts: 1},
      {name: node(2).name, ok: true},
    ])
    expect(ops('TerminateInstance').map((r) => r.path)).toEqual([`/20160918/instances/${encodeURIComponent(mine.id)}?preserveBootVolume=false`])
    expect(terminated.map((i) => i.id)).toEqual([mine.id])
    expect([theirs, untagged, elsewhere].map((i) => i.state)).toEqual(['running', 'running', 'running'])
  })

  it('an instance OCI says is busy (409) is stopped if it is terminating already; retried if not', async () => {
    const going = cloud.add({name: node(1).name, tags: ours, state: 'stopping'})
    const launching = cloud.add({name: node(2).name, tags: ours, state: 'pending'})
    cloud.fail({op: 'TerminateInstance', times: 2, status: 409, code: 'IncorrectState', message: 'busy'})
    const {ctx} = fakeContext()
    const out = await makeDriver(cloud, images.file).terminate(
      [going, launching].map((i) => ({id: i.id, name: i.name, state: 'running' as const, launchedAt: 0})),
      ctx,
    )
    expect(out.map((o) => [o.ok, o.attempts])).toEqual([[true, 1], [true, 2]])
    expect(ops('GetInstance')).toHaveLength(2)
    expect(launching.state).toBe('stopping')
  })

  it('an instance already gone (404) is stopped: success', async () => {
    const {ctx} = fakeContext()
    const out = await makeDriver(cloud, images.file).terminate([{id: 'ocid1.instance.oc1..gone', name: node(7).name, state: 'running', launchedAt: 0}], ctx)
    expect(out).toEqual([{name: node(7).name, ok: true, instanceId: 'ocid1.instance.oc1..gone', attempts: 1}])
    expect(ops('TerminateInstance').map((r) => r.status)).toEqual([404])
  })

  it('a throttled terminate is retried; a refused one fails that node with the reason', async () => {
    const a = cloud.add({name: node(1).name, tags: ours})
    const b = cloud.add({name: node(2).name, tags: ours})
    cloud.fail({op: 'TerminateInstance', times: 1, status: 429, code: 'TooManyRequests'})
    const {ctx} = fakeContext()
    const driver = makeDriver(cloud, images.file)
    const [first] = await driver.terminate([{id: a.id, name: a.name, state: 'running', launchedAt: 0}], ctx)
    expect(first).toMatchObject({ok: true, attempts: 2})
    cloud.fail({op: 'TerminateInstance', times: 1, status: 404, code: 'NotAuthorizedOrNotFound'})
    cloud.fail({op: 'TerminateInstance', times: 1, status: 401, code: 'NotAuthenticated'})
    const [gone] = await driver.terminate([{id: b.id, name: b.name, state: 'running', launchedAt: 0}], ctx)
    expect(gone).toMatchObject({ok: true}) // the scripted 404
    const [refused] = await driver.terminate([{id: b.id, name: b.name, state: 'running', launchedAt: 0}], ctx)
    expect(refused).toMatchObject({ok: false, error: `citc: auth: NotAuthenticated terminating ${b.id}`})
  })

  it("lists every compute instance of the cluster in the compartment, page after page, with OCI's states mapped", async () => {
    for (let n = 0; n < 150; n++) cloud.add({name: node(n).name, tags: ours, launchedAt: Date.UTC(2026, 0, 1) + n})
    cloud.add({name: `${CLUSTER}-mgmt`, tags: {cluster: CLUSTER, type: 'management'}})
    cloud.add({name: node(900).name, tags: ours, state: 'terminated'})
    cloud.add({name: node(901).name, tags: ours, state: 'stopping'})
    cloud.add({name: node(902).name, tags: {cluster: 'other', type: 'compute'}})
    cloud.add({name: node(903).name, tags: ours, zone: 'Uocm:UK-LONDON-1-AD-2'})
    cloud.add({name: node(904).name, tags: ours, compartmentId: 'ocid1.compartment.oc1..other'})
    const listed = await makeDriver(cloud, images.file).list()
    expect(listed).toHaveLength(152) // 150, the stopping one and the one in AD-2
    expect(listed[0]).toEqual({id: cloud.instances[0]!.id, name: node(0).name, state: 'running', launchedAt: Date.UTC(2026, 0, 1), shape: 'VM.Standard2.1'})
    expect(listed.find((i) => i.name === node(901).name)?.state).toBe('stopping')
    expect(ops('ListInstances')).toHaveLength(2)
    for (const r of ops('ListInstances')) expect(r.path).toContain(`compartmentId=${FAKE_OCI.compartment}`)
  })
})

describe('oracle driver: the factory', () => {
  it('is what the module gives the node programs', async () => {
    const make = await oracleModule.nodeDriver()
    expect(typeof make).toBe('function')
    expect(typeof make(driverInput(driverOptions(cloud, images.file))).resume).toBe('function')
  })

  it('refuses a section without what it needs, naming the fields', () => {
    // The cluster's name is not the section's: cluster.json's schema requires it (management-contract.ts).
    expect(() => makeDriver(cloud, images.file, {adNumber: 7, subnetId: undefined})).toThrow(
      /the oracle section of cluster.json cannot drive nodes: adNumber: .*; subnetId: /,
    )
  })
})
