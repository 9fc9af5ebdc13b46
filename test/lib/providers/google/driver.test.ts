// The Google node driver end to end in-process: the real REST client (google-auth-library, its
// metadata-server credential chain included) against the TEST DOUBLES of Compute Engine and its
// metadata server (test/doubles/cloud-api/gce.ts, gce-metadata.ts) on 127.0.0.1. The clock and sleep are the
// context's, so retries are counted and their delays asserted without real waiting.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {googleComputeApi, stateOf} from '../../../../src/lib/providers/google/compute-api.js'
import {googleDriver} from '../../../../src/lib/providers/google/driver.js'
import {classifyGoogleError} from '../../../../src/lib/providers/google/failures.js'
import {nodeFromUserData} from '../../../../src/lib/providers/node-user-data.js'
import {startFakeGce, type FakeGce} from '../../../doubles/cloud-api/gce.js'
import {startFakeMetadata, type FakeMetadata} from '../../../doubles/cloud-api/gce-metadata.js'
import type {FakeInstance} from '../../../doubles/cloud-api/types.js'
import {fakeDriverContext} from '../../../doubles/clock.js'
import {driverInput} from '../../../helpers/driver-input.js'

const PROJECT = 'citc-test-project'
const ZONE = 'europe-west4-a'
const CLUSTER = 'demo'
const SUBNET = `https://www.googleapis.com/compute/v1/projects/${PROJECT}/regions/europe-west4/subnetworks/citc-demo`
const IMAGES = {x86_64: 'citc-slurm-compute-demo-x86-64-v20261123100000', arm64: 'citc-slurm-compute-demo-arm64-v20261123100000'}

let metadata: FakeMetadata
let gce: FakeGce
let dir: string
let imagesJson: string
const launched: FakeInstance[] = []
const terminated: FakeInstance[] = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'citc-google-driver-'))
  // The credential chain must end at the metadata server: no key file, no gcloud credentials.
  vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', '')
  vi.stubEnv('HOME', dir)
  vi.stubEnv('GCE_METADATA_HOST', undefined)
  imagesJson = join(dir, 'images.json')
  writeFileSync(
    imagesJson,
    JSON.stringify({
      version: 1,
      current: {
        x86_64: {name: IMAGES.x86_64, version: '20261123100000', id: IMAGES.x86_64},
        arm64: {name: IMAGES.arm64, version: '20261123100000', id: IMAGES.arm64},
      },
      inputs: {},
    }),
  )
  // One metadata server for the file: google-auth-library's metadata detection is cached per process.
  metadata = await startFakeMetadata({project: PROJECT})
  // google-auth-library finds its metadata server only here; the stand-in's endpoint must agree (src/lib/stand-in.ts).
  vi.stubEnv('GCE_METADATA_HOST', new URL(metadata.url).host)
})

afterAll(async () => {
  await metadata.close()
  vi.unstubAllEnvs()
  rmSync(dir, {recursive: true, force: true})
})

beforeEach(async () => {
  launched.length = 0
  terminated.length = 0
  gce = await startFakeGce({metadata, project: PROJECT, zone: ZONE, hooks: {onLaunch: (i) => void launched.push(i), onTerminate: (i) => void terminated.push(i)}})
  // Full jitter at 0.5: the backoff delays are half their ceilings (1 s base, doubling, 20 s cap).
  vi.spyOn(Math, 'random').mockReturnValue(0.5)
})

afterEach(async () => {
  vi.mocked(Math.random).mockRestore()
  await gce.close()
})

function section(extra: Record<string, unknown> = {}) {
  return {
    cluster: CLUSTER,
    sharedDir: '/mnt/shared',
    imagesJson,
    region: 'europe-west4',
    mgmtPrivateIp: '10.0.0.2',
    sharedFs: {host: '10.0.0.3', path: '/shared', type: 'nfs', mountOptions: 'nfsvers=3'},
    endpoints: {api: gce.url, metadata: metadata.url},
    project: PROJECT,
    zone: ZONE,
    network: `https://www.googleapis.com/compute/v1/projects/${PROJECT}/global/networks/citc-demo`,
    subnetwork: SUBNET,
    networkTag: 'citc-demo',
    serviceAccount: `citc-demo-mgmt@${PROJECT}.iam.gserviceaccount.com`,
    baseImage: {selfLink: 'https://www.googleapis.com/compute/v1/projects/ubuntu-os-cloud/global/images/ubuntu-2404-noble-amd64-v20261101', os: 'ubuntu-24.04'},
    ...extra,
  }
}

const fakeContext = fakeDriverContext

const node = (name: string, shape = 'n2-standard-2', arch = 'x86_64') => ({name, shape, arch})
const inserts = () => gce.requests.filter((r) => r.op === 'insert')
const bodyOf = (r: {body: string}) => JSON.parse(r.body) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const ours = (name: string, extra: Partial<FakeInstance> = {}) => gce.add({name, tags: {cluster: CLUSTER, type: 'compute'}, ...extra})

describe('google driver: resume', () => {
  it('launches one instance per node: name, labels, tag, image per architecture, user-data, no identity, no public address', async () => {
    const {ctx} = fakeContext()
    const outcomes = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0001'), node('demo-t2a-standard-2-0001', 't2a-standard-2', 'arm64')], ctx)
    expect(outcomes).toEqual([
      {name: 'demo-n2-standard-2-0001', ok: true, instanceId: gce.instances[0].id, privateIp: gce.instances[0].privateIp, attempts: 1},
      {name: 'demo-t2a-standard-2-0001', ok: true, instanceId: gce.instances[1].id, privateIp: gce.instances[1].privateIp, attempts: 1},
    ])
    const [x86, arm] = inserts().map(bodyOf)
    expect(x86).toEqual({
      name: 'demo-n2-standard-2-0001',
      machineType: `zones/${ZONE}/machineTypes/n2-standard-2`,
      labels: {cluster: CLUSTER, type: 'compute', 'citc-image-version': '20261123100000', 'citc-image-arch': 'x86-64'},
      tags: {items: ['citc-demo']},
      disks: [{boot: true, autoDelete: true, initializeParams: {sourceImage: `projects/${PROJECT}/global/images/${IMAGES.x86_64}`}}],
      networkInterfaces: [{subnetwork: SUBNET}],
      metadata: {items: [{key: 'user-data', value: expect.any(String)}, {key: 'block-project-ssh-keys', value: 'TRUE'}, {key: 'enable-oslogin', value: 'FALSE'}]},
      serviceAccounts: [],
    })
    expect(arm.disks[0].initializeParams.sourceImage).toBe(`projects/${PROJECT}/global/images/${IMAGES.arm64}`)
    expect(arm.labels['citc-image-arch']).toBe('arm64')
    // The boot script makes slurmd start as that node; the fake's launch hook sees it decoded.
    expect(launched.map((i) => nodeFromUserData(i.userData))).toEqual(['demo-n2-standard-2-0001', 'demo-t2a-standard-2-0001'])
    expect(launched.map((i) => i.tags)).toEqual([x86.labels, arm.labels])
    // Each insert carries its own UUID requestId, and each operation was waited for.
    const ids = inserts().map((r) => new URL(r.path, gce.url).searchParams.get('requestId'))
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(ids).size).toBe(2)
    expect(gce.requests.filter((r) => r.op === 'wait')).toHaveLength(2)
    expect(inserts()[0].path).toMatch(new RegExp(`^/compute/v1/projects/${PROJECT}/zones/${ZONE}/instances\\?`))
  })

  it('takes its credentials from the metadata server (the attached service account) and sends them as Bearer', async () => {
    const {ctx} = fakeContext()
    await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0002')], ctx)
    expect(metadata.tokens.length).toBeGreaterThan(0)
    for (const r of gce.requests) expect(metadata.tokens).toContain(String(r.headers.authorization).replace(/^Bearer /, ''))
    const tokenCalls = metadata.requests.filter((r) => r.path.startsWith('/computeMetadata/v1/instance/service-accounts/default/token'))
    expect(tokenCalls.length).toBeGreaterThan(0)
    expect(metadata.requests.every((r) => r.flavor)).toBe(true)
  })

  it('adopts an instance of the node that is already pending or running instead of launching a second', async () => {
    const running = ours('demo-n2-standard-2-0003')
    const pending = ours('demo-n2-standard-2-0004', {state: 'pending', launchedAt: Date.now() + 60_000})
    const {ctx} = fakeContext()
    const outcomes = await googleDriver(driverInput(section())).resume([node(running.name), node(pending.name), node('demo-n2-standard-2-0005')], ctx)
    expect(outcomes.slice(0, 2)).toEqual([
      {name: running.name, ok: true, adopted: true, instanceId: running.id, privateIp: running.privateIp, attempts: 0},
      {name: pending.name, ok: true, adopted: true, instanceId: pending.id, privateIp: pending.privateIp, attempts: 0},
    ])
    expect(inserts().map((r) => bodyOf(r).name)).toEqual(['demo-n2-standard-2-0005'])
  })

  it('retries a transient error with the same requestId and backoff delays, and makes one instance', async () => {
    gce.fail({op: 'insert', times: 2, status: 503, code: 'backendError', message: 'Backend Error'})
    const {ctx, sleeps} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0006')], ctx)
    expect(outcome).toMatchObject({ok: true, attempts: 3})
    expect(sleeps).toEqual([500, 1000])
    expect(new Set(inserts().map((r) => new URL(r.path, gce.url).searchParams.get('requestId'))).size).toBe(1)
    expect(gce.instances).toHaveLength(1)
  })

  it('a repeated requestId whose first insert went through gets the same operation back: still one instance', async () => {
    // The first answer is lost on the way back (a slow answer past the client's patience is the same).
    const api = googleComputeApi({cluster: CLUSTER, project: PROJECT, zone: ZONE, subnetwork: SUBNET, networkTag: 'citc-demo', endpoints: {api: gce.url, metadata: metadata.url}})
    const launch = {token: '6f1c2d3e-4a5b-4c6d-a7e8-9f0a1b2c3d4e', imageId: IMAGES.x86_64, userData: '#!/bin/sh\n'}
    const first = await api.create(node('demo-n2-standard-2-0007'), launch)
    const again = await api.create(node('demo-n2-standard-2-0007'), launch)
    expect(again.id).toBe(first.id)
    expect(gce.instances).toHaveLength(1)
  })

  it.each([
    ['429 rateLimitExceeded', 429, 'rateLimitExceeded', 'Rate Limit Exceeded'],
    ['403 rateLimitExceeded', 403, 'rateLimitExceeded', 'Rate Limit Exceeded'],
    ['403 rate quota', 403, 'quotaExceeded', "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com'"],
  ])('throttling (%s) is retried, never reported as capacity', async (_label, status, code, message) => {
    gce.fail({op: 'insert', times: 3, status, code, message})
    const {ctx, sleeps, logs} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0008')], ctx)
    expect(outcome).toMatchObject({ok: true, attempts: 4})
    expect(sleeps).toEqual([500, 1000, 2000])
    expect(logs.filter((l) => /throttled/.test(l))).toHaveLength(3)
  })

  it.each([
    ['capacity', 'ZONE_RESOURCE_POOL_EXHAUSTED', 503],
    ['capacity', 'ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 503],
    ['quota', 'QUOTA_EXCEEDED', 403],
  ])('a %s refusal inside the finished operation (%s) fails the node at once, with the reason', async (cls, code, status) => {
    gce.fail({op: 'insert:operation', times: 1, status, code, message: `The zone '${ZONE}' does not have enough resources (fake)`})
    const {ctx, sleeps} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0009')], ctx)
    expect(outcome).toMatchObject({ok: false, attempts: 1, error: `citc: ${cls}: ${code} for n2-standard-2 in ${ZONE}`, failure: {class: cls, code}})
    expect(sleeps).toEqual([])
    expect(gce.instances).toHaveLength(0)
  })

  it.each([
    ['auth', 403, 'forbidden', "Required 'compute.instances.create' permission for 'projects/citc-test-project/zones/europe-west4-a/instances/x'"],
    ['auth', 401, 'authError', 'Request had invalid authentication credentials.'],
    ['quota', 403, 'quotaExceeded', "Quota 'CPUS' exceeded.  Limit: 24.0 in region europe-west4."],
    ['config', 400, 'invalid', "Invalid value for field 'resource.machineType'"],
    ['config', 404, 'notFound', "The resource 'projects/citc-test-project/global/images/gone' was not found"],
  ])('HTTP %s refusal (%i %s) fails the node after one attempt', async (cls, status, code, message) => {
    gce.fail({op: 'insert', times: 5, status, code, message})
    const {ctx, sleeps} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0010')], ctx)
    expect(outcome).toMatchObject({ok: false, attempts: 1, failure: {class: cls, code}})
    expect(outcome.error).toBe(`citc: ${cls}: ${code} for n2-standard-2 in ${ZONE}`)
    expect(sleeps).toEqual([])
  })

  it('transient errors stop at the retry budget (120 s) and fail the node as transient', async () => {
    gce.fail({op: 'insert', times: 100, status: 503, code: 'backendError'})
    const {ctx, sleeps} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0011')], ctx)
    expect(outcome).toMatchObject({ok: false, failure: {class: 'transient', code: 'backendError'}})
    // 0.5 × min(20 s, 1 s · 2^n): 0.5, 1, 2, 4, 8, 10, 10, … while the sum stays within 120 s.
    expect(sleeps.slice(0, 7)).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000])
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(120_000)
    expect(outcome.attempts).toBe(sleeps.length + 1)
  })

  it('partial failure: one shape out of capacity fails its node, the others start', async () => {
    gce.fail({op: 'insert:operation', times: 1, status: 503, code: 'ZONE_RESOURCE_POOL_EXHAUSTED', shape: 'c3-standard-88'})
    const {ctx} = fakeContext()
    const outcomes = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0012'), node('demo-c3-standard-88-0001', 'c3-standard-88'), node('demo-n2-standard-2-0013')], ctx)
    expect(outcomes.map((o) => [o.name, o.ok])).toEqual([
      ['demo-n2-standard-2-0012', true],
      ['demo-c3-standard-88-0001', false],
      ['demo-n2-standard-2-0013', true],
    ])
    expect(gce.instances.map((i) => i.name).sort()).toEqual(['demo-n2-standard-2-0012', 'demo-n2-standard-2-0013'])
  })

  it('a node without a compute image of its architecture fails with what to run, and launches nothing', async () => {
    writeFileSync(join(dir, 'x86-only.json'), JSON.stringify({version: 1, current: {x86_64: {name: 'a', version: '1', id: 'a'}}, inputs: {}}))
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section({imagesJson: join(dir, 'x86-only.json')}))).resume([node('demo-t2a-standard-2-0002', 't2a-standard-2', 'arm64')], ctx)
    expect(outcome).toMatchObject({ok: false, error: `citc: config: NoImage(arm64) for t2a-standard-2 in ${ZONE}`})
    expect(inserts()).toHaveLength(0)
  })

  it('waits on the operation until DONE (each wait may return early)', async () => {
    gce.waitsBeforeDone = 2
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node('demo-n2-standard-2-0014')], ctx)
    expect(outcome.ok).toBe(true)
    expect(gce.requests.filter((r) => r.op === 'wait')).toHaveLength(3)
  })

  it('the name already taken by our own live instance (the listing missed it) is that node: success', async () => {
    const mine = ours('demo-n2-standard-2-0015')
    gce.fail({op: 'list', times: 1000, status: 503, code: 'backendError'})
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node(mine.name)], ctx)
    expect(outcome).toMatchObject({ok: true, instanceId: mine.id, attempts: 1})
    expect(gce.requests.find((r) => r.op === 'insert')?.status).toBe(409)
    expect(gce.instances).toHaveLength(1)
  })

  it('RESOURCE_ALREADY_EXISTS inside the finished operation is adopted too when the instance is ours', async () => {
    const mine = ours('demo-n2-standard-2-0018')
    gce.fail({op: 'list', times: 1000, status: 503, code: 'backendError'}, {op: 'insert:operation', times: 1, status: 409, code: 'RESOURCE_ALREADY_EXISTS'})
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node(mine.name)], ctx)
    expect(outcome).toMatchObject({ok: true, instanceId: mine.id, privateIp: mine.privateIp, attempts: 1})
    expect(gce.requests.filter((r) => r.op === 'get')).toHaveLength(1)
  })

  it("the name taken by another cluster's instance is a config failure, and that instance is left alone", async () => {
    const theirs = gce.add({name: 'demo-n2-standard-2-0016', tags: {cluster: 'other', type: 'compute'}})
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node(theirs.name)], ctx)
    expect(outcome).toMatchObject({ok: false, attempts: 1, error: `citc: config: RESOURCE_ALREADY_EXISTS for n2-standard-2 in ${ZONE}`})
    expect(gce.requests.filter((r) => r.op === 'delete')).toHaveLength(0)
    expect(theirs.state).toBe('running')
  })

  it('our stopped instance holding the name is deleted, and the node launched anew', async () => {
    const stopped = ours('demo-n2-standard-2-0017', {state: 'terminated'})
    const {ctx, sleeps} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).resume([node(stopped.name)], ctx)
    expect(outcome).toMatchObject({ok: true, attempts: 2})
    expect(sleeps).toEqual([500])
    expect(gce.requests.filter((r) => r.op === 'delete').map((r) => r.path)).toEqual([`/compute/v1/projects/${PROJECT}/zones/${ZONE}/instances/${stopped.name}`])
    expect(gce.instances.filter((i) => i.name === stopped.name).map((i) => i.state)).toEqual(['terminated', 'running'])
  })
})

describe('google driver: suspend, list, terminate', () => {
  it("deletes by name only this cluster's instance, never a same-named one of another cluster, zone or project", async () => {
    const mine = ours('demo-n2-standard-2-0020')
    const otherZone = gce.add({name: mine.name, zone: 'europe-west4-b', tags: {cluster: CLUSTER, type: 'compute'}})
    const otherProject = gce.add({name: mine.name, project: 'someone-else', tags: {cluster: CLUSTER, type: 'compute'}})
    const otherCluster = gce.add({name: 'demo-n2-standard-2-0021', tags: {cluster: 'demo2', type: 'compute'}})
    const {ctx} = fakeContext()
    const outcomes = await googleDriver(driverInput(section())).suspend([node(mine.name), node(otherCluster.name)], ctx)
    expect(outcomes).toEqual([
      {name: mine.name, ok: true, instanceId: mine.id, attempts: 1},
      {name: otherCluster.name, ok: true},
    ])
    expect(gce.requests.filter((r) => r.op === 'delete').map((r) => r.path)).toEqual([`/compute/v1/projects/${PROJECT}/zones/${ZONE}/instances/${mine.name}`])
    expect(terminated).toEqual([mine])
    expect([otherZone.state, otherProject.state, otherCluster.state]).toEqual(['running', 'running', 'running'])
    // The delete operation is not waited for.
    expect(gce.requests.filter((r) => r.op === 'wait')).toHaveLength(0)
  })

  it('an instance already gone (404 on delete) is stopped: ok', async () => {
    const mine = ours('demo-n2-standard-2-0022')
    gce.fail({op: 'delete', times: 1, status: 404, code: 'notFound'})
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).suspend([node(mine.name)], ctx)
    expect(outcome).toMatchObject({ok: true, instanceId: mine.id})
  })

  it('a delete refused for permission fails that node with the class', async () => {
    const mine = ours('demo-n2-standard-2-0023')
    gce.fail({op: 'delete', times: 1, status: 403, code: 'forbidden', message: "Required 'compute.instances.delete' permission"})
    const {ctx} = fakeContext()
    const [outcome] = await googleDriver(driverInput(section())).suspend([node(mine.name)], ctx)
    expect(outcome).toMatchObject({ok: false, error: `citc: auth: forbidden terminating ${mine.id}`})
  })

  it("lists every compute instance of the cluster, page by page, with Compute's statuses mapped", async () => {
    gce.pageSize = 2
    const names = ['a', 'b', 'c', 'd', 'e'].map((x) => `demo-n2-standard-2-00${x}`)
    // (pending until its boot time, which lies ahead)
    const made = names.map((n, k) => ours(n, {state: (['pending', 'running', 'stopping', 'terminated', 'running'] as const)[k], launchedAt: Date.now() + (k === 0 ? 60_000 : 0)}))
    gce.add({name: 'demo-mgmt', tags: {cluster: CLUSTER, type: 'management'}})
    gce.add({name: 'x-n2-standard-2-0001', tags: {cluster: 'x', type: 'compute'}})
    const listed = await googleDriver(driverInput(section())).list()
    expect(listed.map((i) => [i.name, i.state])).toEqual([
      [names[0], 'pending'],
      [names[1], 'running'],
      [names[2], 'stopping'],
      [names[3], 'terminated'],
      [names[4], 'running'],
    ])
    expect(listed[1]).toEqual({id: made[1].id, name: names[1], state: 'running', launchedAt: made[1].launchedAt, privateIp: made[1].privateIp, shape: 'n2-standard-2'})
    const lists = gce.requests.filter((r) => r.op === 'list')
    expect(lists).toHaveLength(3)
    expect(new URL(lists[0].path, gce.url).searchParams.get('filter')).toBe(`labels.cluster = ${CLUSTER} AND labels.type = compute`)
  })

  it('maps every Compute status', () => {
    expect(['PROVISIONING', 'STAGING', 'RUNNING', 'STOPPING', 'SUSPENDING', 'SUSPENDED', 'STOPPED', 'TERMINATED', 'REPAIRING'].map(stateOf)).toEqual([
      'pending', 'pending', 'running', 'stopping', 'stopping', 'terminated', 'terminated', 'terminated', 'stopping',
    ])
  })

  it('terminate (the watchdog) deletes the given instances by name', async () => {
    const mine = ours('demo-n2-standard-2-0024')
    const driver = googleDriver(driverInput(section()))
    const [listed] = await driver.list()
    const {ctx} = fakeContext()
    expect(await driver.terminate([listed], ctx)).toEqual([{name: mine.name, ok: true, instanceId: mine.id, attempts: 1}])
    expect(mine.state).toBe('terminated')
  })
})

describe('google driver: settings and errors', () => {
  it('refuses a section that lacks what the driver needs, naming the fields', () => {
    const {subnetwork: _s, ...rest} = section()
    expect(() => googleDriver(driverInput(rest))).toThrow(/google section of cluster\.json cannot drive nodes: subnetwork: /)
  })

  it("classifies what the real client throws (not only the notes' shapes)", async () => {
    const api = googleComputeApi({cluster: CLUSTER, project: PROJECT, zone: ZONE, subnetwork: SUBNET, networkTag: 'citc-demo', endpoints: {api: gce.url, metadata: metadata.url}})
    const thrown = async (f: Parameters<FakeGce['fail']>[0]) => {
      gce.fail(f)
      return api.create(node('demo-n2-standard-2-0030'), {token: crypto.randomUUID(), imageId: IMAGES.x86_64, userData: '#!/bin/sh\n'}).then(
        () => {
          throw new Error('expected a failure')
        },
        (e: unknown) => e,
      )
    }
    const http = await thrown({op: 'insert', times: 1, status: 429, code: 'rateLimitExceeded', message: 'Rate Limit Exceeded'})
    // gaxios 7: GaxiosError with status and numeric code = HTTP status, Google's body in response.data.
    expect(http).toMatchObject({status: 429, code: 429, response: {data: {error: {errors: [{reason: 'rateLimitExceeded'}]}}}})
    expect(classifyGoogleError(http)).toEqual({class: 'throttled', code: 'rateLimitExceeded', message: 'Rate Limit Exceeded'})
    const op = await thrown({op: 'insert:operation', times: 1, status: 503, code: 'ZONE_RESOURCE_POOL_EXHAUSTED', message: 'no n2 here'})
    expect(classifyGoogleError(op)).toEqual({class: 'capacity', code: 'ZONE_RESOURCE_POOL_EXHAUSTED', message: 'no n2 here'})
    const down = await thrown({op: 'insert', times: 1, status: 503, code: 'backendError', message: 'Backend Error'})
    expect(classifyGoogleError(down)).toMatchObject({class: 'transient', code: 'backendError'})
  })

  it('an unreachable API is transient (socket errors through the real client)', async () => {
    const api = googleComputeApi({cluster: CLUSTER, project: PROJECT, zone: ZONE, subnetwork: SUBNET, networkTag: 'citc-demo', endpoints: {api: 'http://127.0.0.1:9', metadata: metadata.url}})
    const e = await api.list().catch((error: unknown) => error)
    expect(classifyGoogleError(e).class).toBe('transient')
  })
})
