// The node driver every cloud shares, and its factory (cloudDriverFactory). A cloud gives only its
// adapter: its cluster.json section's schema and its CloudApi (aws/, google/, oracle/ ec2-api.ts,
// compute-api.ts, oci-api.ts): list the cluster's machines, create one, terminate one, classify an
// error. Everything else is here, the same for every cloud:
//   resume   one list first: a node whose machine is already pending or running is adopted, not
//            launched twice; the rest are created one call per node (each needs its own name and
//            user-data), at most `concurrency` at once behind a token bucket, with an idempotency token
//            per node and resume that every retry reuses. Throttled/transient errors are retried with
//            full-jitter backoff inside a budget well before the deadline (retry-budget.ts); capacity,
//            quota, config and auth fail that node at once with a reason a user can act on, while the
//            others go on.
//   suspend  terminate by instance id, found by name in the cluster's own listing (tag/label cluster=<id>,
//            never by name alone); no machine is success; termination is not waited for.
import {createHash} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'

import pLimit from 'p-limit'
import type {z as Zod} from 'zod'

import {type CloudImageState, IMAGES_JSON, parseImageState, recordedCurrent} from './cloud-image-state.js'
import {checkSection} from './driver-section.js'
import {failureReason, type NodeFailure} from './node-failures.js'
import {nodeUserData} from './node-user-data.js'
import {TokenBucket, type RateLimit} from './rate-limit.js'
import {withRetries} from './retry-budget.js'
import type {DriverStandIn} from '../stand-in.js'
import type {Arch} from '../shapes/types.js'
import type {BootImage, CloudInstance, DriverContext, NodeDriver, NodeDriverFactory, NodeOutcome, NodeSpec} from './types.js'

/** What one launch call gets besides the node. */
export interface LaunchRequest {
  /** Idempotency token (a UUID: Google's requestId must be one; ≤ 64 ASCII for EC2 and OCI). */
  token: string
  /** The cloud's id of the compute image for the node's architecture. */
  imageId: string
  /** The boot script (plain text; the API encodes it as the cloud wants). */
  userData: string
}

/** One cloud, reduced to what the driver needs. Every method throws the SDK's own error on failure. */
export interface CloudApi {
  /** Where a node of this spec is placed, for reasons and logs ("eu-west-1a", "AD-1"). */
  place(node: NodeSpec): string
  /** Every compute machine of the cluster (its tag/label cluster=<id>, type=compute), not terminated. */
  list(): Promise<CloudInstance[]>
  create(node: NodeSpec, launch: LaunchRequest): Promise<{id: string; privateIp?: string}>
  /** Terminate by id; a machine already gone must not throw. */
  terminate(instance: CloudInstance): Promise<void>
  classify(error: unknown): NodeFailure
}

export interface CloudDriverOptions {
  cluster: string
  api: CloudApi
  /** The compute image's id for an architecture, or undefined when the cluster has none. */
  imageFor(arch: string): string | undefined
  userData(node: NodeSpec): string
  rate: RateLimit
  concurrency: number
  /**
   * Retries stop this long after a resume, suspend or terminate began (its listing's included), or
   * earlier at the context's deadline (default 120 s).
   */
  retryBudgetMs: number
  backoff?: {baseMs: number; capMs: number; random?: () => number}
}

/** Defaults for a cloud driver: EC2's RunInstances bucket as the issue gives it (5/s, burst 20). */
export const CLOUD_DRIVER_DEFAULTS = {
  rate: {perSecond: 5, burst: 20},
  concurrency: 8,
  retryBudgetMs: 120_000,
  backoff: {baseMs: 1000, capMs: 20_000},
} as const

/** The node's token for this resume: the same on every retry, new on the next resume. */
export function idempotencyToken(cluster: string, node: string, resumeStartedAt: number): string {
  const h = createHash('sha256').update(`${cluster}\0${node}\0${resumeStartedAt}`).digest('hex')
  // UUID layout, version 4 bits set, so every cloud accepts it.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const alive = (i: CloudInstance) => i.state === 'pending' || i.state === 'running'

export function cloudDriver(o: CloudDriverOptions): NodeDriver {
  const backoff = o.backoff ?? CLOUD_DRIVER_DEFAULTS.backoff
  let bucket: TokenBucket | undefined
  const bucketFor = (ctx: DriverContext) => (bucket ??= new TokenBucket(o.rate, ctx.now, ctx.sleep))

  /**
   * fn through the bucket, retried while throttled/transient and the budget lasts: until `until` (epoch
   * ms), the end of the retry budget of the resume or suspend this call belongs to, and never past the
   * program's deadline. One budget for the whole operation — the listing and then a node's launch share
   * it — so a cloud that fails longer than the budget reaches Slurm as a failure after the budget, not
   * after the listing's budget and then the launch's (twice as late; seen in issue #23's outage fault).
   */
  async function call<T>(what: string, ctx: DriverContext, until: number, fn: () => Promise<T>) {
    const b = bucketFor(ctx)
    const budgetMs = Math.max(0, Math.min(until, ctx.deadline) - ctx.now())
    const noTime = Object.assign(new Error(`no time left before the deadline for ${what}`), {citcNoTime: true})
    return withRetries(
      async () => {
        if (!(await b.take(ctx.deadline))) throw noTime
        return fn()
      },
      (error) => (error === noTime ? {class: 'transient', code: 'DeadlineReached', message: noTime.message} : o.api.classify(error)),
      {
        budgetMs,
        ...backoff,
        now: ctx.now,
        sleep: ctx.sleep,
        onRetry(f, attempt, delayMs) {
          if (f.class === 'throttled') b.drain()
          ctx.log(`${what}: ${f.class} (${f.code}), attempt ${attempt}; again in ${(delayMs / 1000).toFixed(1)} s`)
        },
      },
    )
  }

  function failed(node: NodeSpec, f: NodeFailure, attempts: number, ctx: DriverContext): NodeOutcome {
    const error = failureReason(f, {shape: node.shape, place: o.api.place(node)})
    ctx.log(`${node.name}: ${error} after ${attempts} attempt(s): ${f.message.split('\n', 1)[0]}`)
    return {name: node.name, ok: false, error, failure: f, attempts}
  }

  const listing = (ctx: DriverContext, until: number) => call("listing the cluster's instances", ctx, until, () => o.api.list())
  /** The end of the retry budget of an operation that starts now. */
  const budgetEnd = (ctx: DriverContext) => ctx.now() + o.retryBudgetMs

  async function stop(instance: CloudInstance, ctx: DriverContext, until: number): Promise<NodeOutcome> {
    const r = await call(`${instance.name}: terminating ${instance.id}`, ctx, until, () => o.api.terminate(instance))
    if (r.ok) {
      ctx.log(`${instance.name}: terminating ${instance.id}`)
      return {name: instance.name, ok: true, instanceId: instance.id, attempts: r.attempts}
    }
    const error = `citc: ${r.failure.class}: ${r.failure.code} terminating ${instance.id}`
    ctx.log(`${instance.name}: ${error}: ${r.failure.message.split('\n', 1)[0]}`)
    return {name: instance.name, ok: false, error, failure: r.failure, instanceId: instance.id, attempts: r.attempts}
  }

  return {
    async resume(nodes, ctx) {
      const startedAt = ctx.now()
      const until = budgetEnd(ctx)
      const listed = await listing(ctx, until)
      // Without a listing, adopting is impossible but launching is still safe: the tokens make a
      // repeat create of the same node in this resume harmless, and the watchdog reaps doubles.
      if (!listed.ok) ctx.log(`could not list the cluster's instances (${listed.failure.class}: ${listed.failure.code}); launching without adopting`)
      const existing = new Map<string, CloudInstance>()
      for (const i of listed.ok ? listed.value : []) if (alive(i)) existing.set(i.name, i)
      const limit = pLimit(o.concurrency)
      return Promise.all(
        nodes.map((node) =>
          limit(async (): Promise<NodeOutcome> => {
            const have = existing.get(node.name)
            if (have) {
              ctx.log(`${node.name}: adopting ${have.id} (${have.state}), already launched`)
              return {name: node.name, ok: true, adopted: true, instanceId: have.id, privateIp: have.privateIp, attempts: 0}
            }
            const arch = node.arch ?? 'x86_64'
            const imageId = o.imageFor(arch)
            if (!imageId) {
              const f: NodeFailure = {class: 'config', code: `NoImage(${arch})`, message: `the cluster has no compute image for ${arch}: run citc rebuild-image --arch ${arch}`}
              return failed(node, f, 0, ctx)
            }
            let userData: string
            try {
              userData = o.userData(node)
            } catch (error) {
              // A name the boot script refuses fails this node, not the whole resume (Slurm would wait ResumeTimeout).
              return failed(node, {class: 'config', code: 'BadNodeName', message: error instanceof Error ? error.message : String(error)}, 0, ctx)
            }
            const launch = {token: idempotencyToken(o.cluster, node.name, startedAt), imageId, userData}
            const r = await call(`${node.name}: launching ${node.shape} in ${o.api.place(node)}`, ctx, until, () => o.api.create(node, launch))
            if (!r.ok) return failed(node, r.failure, r.attempts, ctx)
            ctx.log(`${node.name}: launched ${r.value.id}${r.value.privateIp ? ` (${r.value.privateIp})` : ''} after ${r.attempts} attempt(s)`)
            return {name: node.name, ok: true, instanceId: r.value.id, privateIp: r.value.privateIp, attempts: r.attempts}
          }),
        ),
      )
    },

    async suspend(nodes, ctx) {
      const until = budgetEnd(ctx)
      const listed = await listing(ctx, until)
      if (!listed.ok) {
        // Nothing can be found by id: every node fails (the watchdog terminates them on a later run).
        const error = `citc: ${listed.failure.class}: ${listed.failure.code} listing the cluster's instances`
        ctx.log(`${error}: ${listed.failure.message.split('\n', 1)[0]}`)
        return nodes.map((n) => ({name: n.name, ok: false, error, failure: listed.failure}))
      }
      const byName = new Map<string, CloudInstance[]>()
      for (const i of listed.value) if (i.state !== 'terminated') byName.set(i.name, [...(byName.get(i.name) ?? []), i])
      const limit = pLimit(o.concurrency)
      return Promise.all(
        nodes.map((node) =>
          limit(async (): Promise<NodeOutcome> => {
            const mine = byName.get(node.name) ?? []
            if (mine.length === 0) {
              ctx.log(`${node.name}: no instance, nothing to stop`)
              return {name: node.name, ok: true}
            }
            const outcomes = []
            for (const i of mine) outcomes.push(await stop(i, ctx, until))
            return outcomes.find((x) => !x.ok) ?? outcomes[0]!
          }),
        ),
      )
    },

    list: () => o.api.list(),

    async terminate(instances, ctx) {
      const limit = pLimit(o.concurrency)
      const until = budgetEnd(ctx)
      return Promise.all(instances.map((i) => limit(() => stop(i, ctx, until))))
    },
  }
}

/** What cloudNodeDriver needs besides the cloud's api. */
export interface CloudDriverSettings {
  cluster: string
  sharedDir: string
  mgmtPrivateIp: string
  /** The images.json to read the current compute images from (IMAGES_JSON on a management node). */
  imagesJson: string
  rate?: RateLimit
  concurrency?: number
  retryBudgetMs?: number
}

/**
 * The driver of a cloud cluster: the cloud's api, the compute image recorded current per architecture
 * in images.json (read at the first launch; citc rebuild-image and --rollback change it), the boot
 * script, and the defaults above.
 */
export function cloudNodeDriver(s: CloudDriverSettings, api: CloudApi): NodeDriver {
  let state: CloudImageState | undefined
  const images = () => (state ??= existsSync(s.imagesJson) ? parseImageState(readFileSync(s.imagesJson, 'utf8'), s.imagesJson) : undefined)
  const imageFor = (arch: string) => images()?.current[arch as Arch]?.id
  const bootImage = (arch: string): BootImage | undefined => {
    const current = images() && recordedCurrent(images()!).find((c) => c.arch === arch)
    return current && {name: current.name, version: current.version, ...(current.gpuDriver === undefined ? {} : {gpuDriver: current.gpuDriver})}
  }
  const driver = cloudDriver({
    cluster: s.cluster,
    api,
    imageFor,
    userData: (node) => nodeUserData({node: node.name, sharedDir: s.sharedDir, mgmtPrivateIp: s.mgmtPrivateIp}),
    rate: s.rate ?? CLOUD_DRIVER_DEFAULTS.rate,
    concurrency: s.concurrency ?? CLOUD_DRIVER_DEFAULTS.concurrency,
    retryBudgetMs: s.retryBudgetMs ?? CLOUD_DRIVER_DEFAULTS.retryBudgetMs,
  })
  return {...driver, bootImage}
}

/** What a cloud's api is made from besides its section. */
export interface CloudApiInput {
  cluster: string
  /** images.json (IMAGES_JSON unless a stand-in says otherwise): Google labels instances from it. */
  imagesJson: string
  /** Tests and benchmarks only (stand-in.ts): the doubles' endpoints, a shorter request time limit. */
  standIn: DriverStandIn
}

/** One cloud, as its driver's factory needs it: its section's schema and how its CloudApi is made. */
export interface CloudAdapter<D extends {mgmtPrivateIp: string}> {
  /** "aws": how the section is named in messages ("the aws section of cluster.json"). */
  provider: string
  /** The section's schema (the module's nodeConfig.schema). */
  schema(z: typeof Zod): Zod.ZodType<D>
  api(section: D, input: CloudApiInput): CloudApi
}

/**
 * Every cloud's node driver factory: the section checked against its schema (a broken cluster.json
 * fails here, before any node is touched, with each field that is wrong), then cloudNodeDriver over
 * the cloud's api. A new cloud gives only its adapter.
 */
export function cloudDriverFactory<D extends {mgmtPrivateIp: string}>(adapter: CloudAdapter<D>): NodeDriverFactory {
  return (input) => {
    const section = checkSection(adapter.provider, adapter.schema, input.section)
    const standIn = input.standIn ?? {}
    const imagesJson = standIn.imagesJson ?? IMAGES_JSON
    const api = adapter.api(section, {cluster: input.cluster, imagesJson, standIn})
    const {rate, concurrency, retryBudgetMs} = standIn
    return cloudNodeDriver({cluster: input.cluster, sharedDir: input.sharedDir, mgmtPrivateIp: section.mgmtPrivateIp, imagesJson, rate, concurrency, retryBudgetMs}, api)
  }
}
