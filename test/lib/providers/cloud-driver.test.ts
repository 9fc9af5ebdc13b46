// The cloud driver core (src/lib/providers/cloud-driver.ts) over an in-memory CloudApi — the
// per-cloud tests (test/lib/providers/<cloud>/) run the same core through the real SDKs and the fake
// clouds. Clock and sleep are injected: no real waiting, the backoff schedule is asserted.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {cloudDriver, cloudNodeDriver, idempotencyToken, type CloudApi, type CloudDriverOptions, type LaunchRequest} from '../../../src/lib/providers/cloud-driver.js'
import type {NodeFailure} from '../../../src/lib/providers/node-failures.js'
import {nodeFromUserData} from '../../../src/lib/providers/node-user-data.js'
import {fakeDriverContext} from '../../doubles/clock.js'
import type {CloudInstance, NodeSpec} from '../../../src/lib/providers/types.js'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, {recursive: true, force: true})))

const fakeContext = (budgetMs?: number) => {
  const c = fakeDriverContext(budgetMs)
  return {ctx: c.ctx, slept: c.sleeps, lines: c.logs}
}

class CodedError extends Error {
  constructor(readonly code: string, readonly cls: NodeFailure['class']) {
    super(`${code}: scripted`)
  }
}

/** An in-memory cloud: instances by id, scripted errors per node name, every call recorded. */
function memoryApi() {
  const instances: CloudInstance[] = []
  const calls: Array<{op: string; node?: string; token?: string; at?: number}> = []
  const script = new Map<string, CodedError[]>()
  let n = 0
  const api: CloudApi & {instances: CloudInstance[]; calls: typeof calls; script: typeof script; launches: LaunchRequest[]} = {
    instances,
    calls,
    script,
    launches: [],
    place: (node) => `zone-${node.ad ?? 1}`,
    async list() {
      calls.push({op: 'list'})
      return instances.filter((i) => i.state !== 'terminated')
    },
    async create(node, launch) {
      calls.push({op: 'create', node: node.name, token: launch.token})
      api.launches.push(launch)
      const next = script.get(node.name)?.shift()
      if (next) throw next
      const i: CloudInstance = {id: `i-${++n}`, name: node.name, state: 'pending', launchedAt: 0, privateIp: `10.0.0.${n}`}
      instances.push(i)
      return {id: i.id, privateIp: i.privateIp}
    },
    async terminate(instance) {
      calls.push({op: 'terminate', node: instance.name})
      const next = script.get(`terminate:${instance.id}`)?.shift()
      if (next) throw next
      const i = instances.find((x) => x.id === instance.id)
      if (i) i.state = 'terminated'
    },
    classify: (e) => (e instanceof CodedError ? {class: e.cls, code: e.code, message: e.message} : {class: 'config', code: 'Unknown', message: String(e)}),
  }
  return api
}

const nodes = (...names: string[]): NodeSpec[] => names.map((name) => ({name, shape: 'c5.xlarge', ad: 1, arch: 'x86_64'}))

function driver(api: CloudApi, extra: Partial<CloudDriverOptions> = {}) {
  return cloudDriver({
    cluster: 'demo',
    api,
    imageFor: (arch) => (arch === 'x86_64' ? 'img-x86' : undefined),
    userData: (n) => `#!/bin/sh\n# citc-node: ${n.name}\n`,
    rate: {perSecond: 1000, burst: 1000},
    concurrency: 4,
    retryBudgetMs: 120_000,
    backoff: {baseMs: 1000, capMs: 20_000, random: () => 1},
    ...extra,
  })
}

describe('cloud driver: resume', () => {
  it('launches each node once with its own token, the image of its arch and its user-data', async () => {
    const api = memoryApi()
    const {ctx} = fakeContext()
    const out = await driver(api).resume(nodes('demo-c5-0001', 'demo-c5-0002'), ctx)
    expect(out.map((o) => [o.name, o.ok, o.instanceId, o.attempts])).toEqual([
      ['demo-c5-0001', true, 'i-1', 1],
      ['demo-c5-0002', true, 'i-2', 1],
    ])
    expect(api.launches.map((l) => l.imageId)).toEqual(['img-x86', 'img-x86'])
    expect(new Set(api.launches.map((l) => l.token)).size).toBe(2)
    expect(api.launches.map((l) => nodeFromUserData(l.userData))).toEqual(['demo-c5-0001', 'demo-c5-0002'])
  })

  it('adopts a node whose instance is already pending or running, and launches the others', async () => {
    const api = memoryApi()
    api.instances.push({id: 'i-old', name: 'demo-c5-0001', state: 'running', launchedAt: 0}, {id: 'i-gone', name: 'demo-c5-0002', state: 'stopping', launchedAt: 0})
    const {ctx, lines} = fakeContext()
    const out = await driver(api).resume(nodes('demo-c5-0001', 'demo-c5-0002'), ctx)
    expect(out[0]).toMatchObject({name: 'demo-c5-0001', ok: true, adopted: true, instanceId: 'i-old', attempts: 0})
    // A stopping instance is on its way out: a new one is launched.
    expect(out[1]).toMatchObject({name: 'demo-c5-0002', ok: true, instanceId: 'i-1'})
    expect(api.calls.filter((c) => c.op === 'create').map((c) => c.node)).toEqual(['demo-c5-0002'])
    expect(lines.join('\n')).toContain('demo-c5-0001: adopting i-old (running), already launched')
  })

  it('retries throttling with growing waits and the same token, then succeeds', async () => {
    const api = memoryApi()
    api.script.set('demo-c5-0001', [new CodedError('RequestLimitExceeded', 'throttled'), new CodedError('RequestLimitExceeded', 'throttled'), new CodedError('InternalError', 'transient')])
    const {ctx, slept} = fakeContext()
    const [o] = await driver(api).resume(nodes('demo-c5-0001'), ctx)
    expect(o).toMatchObject({ok: true, attempts: 4})
    expect(slept).toEqual([1000, 2000, 4000]) // random() = 1: the ceiling of each full-jitter wait
    const tokens = api.calls.filter((c) => c.op === 'create').map((c) => c.token)
    expect(tokens).toHaveLength(4)
    expect(new Set(tokens).size).toBe(1)
  })

  it('fails capacity, quota, config and auth at once — one call, no wait — with a reason a user can act on; the others go on', async () => {
    const api = memoryApi()
    api.script.set('demo-c5-0001', [new CodedError('InsufficientInstanceCapacity', 'capacity')])
    api.script.set('demo-c5-0002', [new CodedError('VcpuLimitExceeded', 'quota')])
    api.script.set('demo-c5-0003', [new CodedError('InvalidSubnetID.NotFound', 'config')])
    api.script.set('demo-c5-0004', [new CodedError('UnauthorizedOperation', 'auth')])
    const {ctx, slept} = fakeContext()
    const out = await driver(api).resume(nodes('demo-c5-0001', 'demo-c5-0002', 'demo-c5-0003', 'demo-c5-0004', 'demo-c5-0005'), ctx)
    expect(out.map((o) => o.error ?? 'ok')).toEqual([
      'citc: capacity: InsufficientInstanceCapacity for c5.xlarge in zone-1',
      'citc: quota: VcpuLimitExceeded for c5.xlarge in zone-1',
      'citc: config: InvalidSubnetID.NotFound for c5.xlarge in zone-1',
      'citc: auth: UnauthorizedOperation for c5.xlarge in zone-1',
      'ok',
    ])
    expect(out.slice(0, 4).map((o) => [o.attempts, o.failure?.class])).toEqual([[1, 'capacity'], [1, 'quota'], [1, 'config'], [1, 'auth']])
    expect(slept).toEqual([])
  })

  it('gives up on throttling when the retry budget is spent, as throttled — never as capacity', async () => {
    const api = memoryApi()
    api.script.set('demo-c5-0001', Array.from({length: 50}, () => new CodedError('RequestLimitExceeded', 'throttled')))
    const {ctx, slept} = fakeContext()
    const [o] = await driver(api, {retryBudgetMs: 30_000}).resume(nodes('demo-c5-0001'), ctx)
    expect(o!.error).toBe('citc: throttled: RequestLimitExceeded for c5.xlarge in zone-1')
    expect(slept).toEqual([1000, 2000, 4000, 8000]) // the next (16 s) would pass 30 s
    expect(o!.attempts).toBe(5)
  })

  it('never retries past the deadline of the node program', async () => {
    const api = memoryApi()
    api.script.set('demo-c5-0001', Array.from({length: 50}, () => new CodedError('Unavailable', 'transient')))
    const {ctx, slept} = fakeContext(5_000)
    const [o] = await driver(api).resume(nodes('demo-c5-0001'), ctx)
    expect(o!.ok).toBe(false)
    expect(slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5_000)
  })

  it('shares one retry budget between the listing and the launches: a cloud down longer than it fails the nodes after the budget, not twice it', async () => {
    const api = memoryApi()
    const down = () => new CodedError('InternalError', 'transient')
    api.list = async () => {
      api.calls.push({op: 'list'})
      throw down()
    }
    api.script.set('demo-c5-0001', Array.from({length: 50}, down))
    const {ctx, slept} = fakeContext()
    const [o] = await driver(api, {retryBudgetMs: 31_000}).resume(nodes('demo-c5-0001'), ctx)
    expect(o!.error).toBe('citc: transient: InternalError for c5.xlarge in zone-1')
    // The listing's retries spent the whole budget (1+2+4+8+16 s): the launch is tried once, not retried 31 s more.
    expect(slept).toEqual([1000, 2000, 4000, 8000, 16_000])
    expect(api.calls.map((c) => c.op)).toEqual(['list', 'list', 'list', 'list', 'list', 'list', 'create'])
    expect(o!.attempts).toBe(1)
  })

  it('fails a node whose architecture has no image, saying what to run, without calling the cloud', async () => {
    const api = memoryApi()
    const {ctx} = fakeContext()
    const [o] = await driver(api).resume([{name: 'demo-c7g-0001', shape: 'c7g.xlarge', ad: 1, arch: 'arm64'}], ctx)
    expect(o!.error).toBe('citc: config: NoImage(arm64) for c7g.xlarge in zone-1')
    expect(o!.failure!.message).toContain('citc rebuild-image --arch arm64')
    expect(api.calls.filter((c) => c.op === 'create')).toEqual([])
  })

  it('fails only the node whose boot script cannot be made (a name it refuses), not the whole resume', async () => {
    const api = memoryApi()
    const {ctx} = fakeContext()
    const out = await driver(api, {userData: (n) => (n.name.includes('bad') ? (() => { throw new Error('not a node name citc makes') })() : '#!/bin/sh\n')}).resume(nodes('demo-bad-0001', 'demo-c5-0002'), ctx)
    expect(out.map((o) => [o.name, o.ok, o.error])).toEqual([
      ['demo-bad-0001', false, 'citc: config: BadNodeName for c5.xlarge in zone-1'],
      ['demo-c5-0002', true, undefined],
    ])
  })

  it('keeps at most `concurrency` creates in flight', async () => {
    const api = memoryApi()
    let inFlight = 0
    let most = 0
    const create = api.create.bind(api)
    api.create = async (node, launch) => {
      most = Math.max(most, ++inFlight)
      await new Promise((r) => setTimeout(r, 5))
      inFlight--
      return create(node, launch)
    }
    const {ctx} = fakeContext()
    const out = await driver(api, {concurrency: 3}).resume(nodes(...Array.from({length: 12}, (_, i) => `demo-c5-${String(i + 1).padStart(4, '0')}`)), ctx)
    expect(out.every((o) => o.ok)).toBe(true)
    expect(most).toBe(3)
  })

  it('paces creates through the token bucket: a burst, then the rate', async () => {
    const api = memoryApi()
    const at: number[] = []
    const {ctx} = fakeContext()
    const create = api.create.bind(api)
    api.create = async (node, launch) => {
      at.push(ctx.now())
      return create(node, launch)
    }
    await driver(api, {rate: {perSecond: 2, burst: 3}, concurrency: 10}).resume(nodes(...Array.from({length: 7}, (_, i) => `demo-c5-${String(i + 1).padStart(4, '0')}`)), ctx)
    const t0 = at[0]!
    // The listing before the launches took the burst's first token.
    expect(at.map((t) => t - t0)).toEqual([0, 0, 500, 1000, 1500, 2000, 2500])
  })
})

describe('cloud driver: suspend and terminate', () => {
  it('terminates by instance id from the cluster listing; no instance is success', async () => {
    const api = memoryApi()
    api.instances.push({id: 'i-a', name: 'demo-c5-0001', state: 'running', launchedAt: 0}, {id: 'i-b', name: 'demo-c5-0001', state: 'pending', launchedAt: 0})
    const {ctx} = fakeContext()
    const out = await driver(api).suspend(nodes('demo-c5-0001', 'demo-c5-0002'), ctx)
    expect(out).toEqual([
      {name: 'demo-c5-0001', ok: true, instanceId: 'i-a', attempts: 1},
      {name: 'demo-c5-0002', ok: true},
    ])
    // Both machines of the node (a double launch) are gone.
    expect(api.instances.map((i) => i.state)).toEqual(['terminated', 'terminated'])
  })

  it('says why when a terminate fails, after retrying a throttle', async () => {
    const api = memoryApi()
    api.instances.push({id: 'i-a', name: 'demo-c5-0001', state: 'running', launchedAt: 0})
    api.script.set('terminate:i-a', [new CodedError('RequestLimitExceeded', 'throttled'), new CodedError('UnauthorizedOperation', 'auth')])
    const {ctx} = fakeContext()
    const [o] = await driver(api).suspend(nodes('demo-c5-0001'), ctx)
    expect(o).toMatchObject({ok: false, error: 'citc: auth: UnauthorizedOperation terminating i-a', attempts: 2})
  })

  it('fails every node of a suspend whose listing fails (nothing is terminated by name alone)', async () => {
    const api = memoryApi()
    api.list = async () => {
      throw new CodedError('UnauthorizedOperation', 'auth')
    }
    const {ctx} = fakeContext()
    const out = await driver(api).suspend(nodes('demo-c5-0001'), ctx)
    expect(out).toMatchObject([{name: 'demo-c5-0001', ok: false, error: "citc: auth: UnauthorizedOperation listing the cluster's instances"}])
    expect(api.calls.some((c) => c.op === 'terminate')).toBe(false)
  })
})

describe('idempotency tokens and the image record', () => {
  it('are UUIDs, stable for one node and resume, new for the next resume or another node', () => {
    const a = idempotencyToken('demo', 'demo-c5-0001', 1)
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(idempotencyToken('demo', 'demo-c5-0001', 1)).toBe(a)
    expect(idempotencyToken('demo', 'demo-c5-0001', 2)).not.toBe(a)
    expect(idempotencyToken('demo', 'demo-c5-0002', 1)).not.toBe(a)
    expect(idempotencyToken('other', 'demo-c5-0001', 1)).not.toBe(a)
  })

  it('cloudNodeDriver launches from the image images.json records for the architecture', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'citc-cloud-driver-'))
    dirs.push(dir)
    const imagesJson = join(dir, 'images.json')
    writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: 'citc-slurm-compute-demo-v20260101000000', version: '20260101000000', id: 'ami-0123'}}, inputs: {}}))
    const api = memoryApi()
    const {ctx} = fakeContext()
    const d = cloudNodeDriver({cluster: 'demo', sharedDir: '/mnt/shared', mgmtPrivateIp: '10.0.0.2', imagesJson}, api)
    const out = await d.resume([...nodes('demo-c5-0001'), {name: 'demo-c7g-0001', shape: 'c7g.xlarge', arch: 'arm64'}], ctx)
    expect(out.map((o) => o.ok)).toEqual([true, false])
    expect(api.launches.map((l) => l.imageId)).toEqual(['ami-0123'])
    expect(api.launches[0]!.userData).toContain('NODE=demo-c5-0001')
  })

  it('cloudNodeDriver tells which image a node of each architecture boots, with the GPU driver images.json records for it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'citc-cloud-driver-'))
    dirs.push(dir)
    const imagesJson = join(dir, 'images.json')
    const x86 = 'citc-slurm-compute-demo-v20260101000000'
    const arm = 'citc-slurm-compute-demo-v20260102000000'
    writeFileSync(
      imagesJson,
      JSON.stringify({version: 1, current: {x86_64: {name: x86, version: '20260101000000', id: 'ami-1'}, arm64: {name: arm, version: '20260102000000', id: 'ami-2'}}, inputs: {}, gpuDrivers: {[x86]: null}}),
    )
    const d = cloudNodeDriver({cluster: 'demo', sharedDir: '/mnt/shared', mgmtPrivateIp: '10.0.0.2', imagesJson}, memoryApi())
    expect(d.bootImage?.('x86_64')).toEqual({name: x86, version: '20260101000000', gpuDriver: null})
    // Not recorded (an image of an older citc): no gpuDriver at all, so nothing is refused for it.
    expect(d.bootImage?.('arm64')).toEqual({name: arm, version: '20260102000000'})
    const none = cloudNodeDriver({cluster: 'demo', sharedDir: '/mnt/shared', mgmtPrivateIp: '10.0.0.2', imagesJson: join(dir, 'missing.json')}, memoryApi())
    expect(none.bootImage?.('x86_64')).toBeUndefined()
  })
})
