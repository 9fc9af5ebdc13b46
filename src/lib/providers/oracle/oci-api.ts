// Oracle Cloud's CloudApi (cloud-driver.ts) over OCI's Core compute calls (compute-calls.ts: signed with
// node:crypto and sent with node:https, no SDK): list, launch and terminate the cluster's compute
// instances. The node programs reach it through driver.ts, imported when a driver is asked for.
//
//   auth      instance principals — the management node's dynamic group (templates/terraform/oracle/
//             iam.tf): the certificate from the metadata service, a session token from the auth
//             service. That handshake is the SDK's (oci-common), in instance-principal.ts, loaded only
//             when it is needed: with a session cache (sessionCache: the node programs' state directory,
//             session-cache.ts) the token, its key and the region's Core API endpoint are kept between
//             node programs until shortly before the token expires, so most programs load no SDK at all;
//             a token the API refuses (401) is dropped and fetched again, once.
//   retries   none here: the driver retries throttled/transient itself within its budget (the SDK's own
//             condition would have retried "Out of host capacity", a 500, as if it were transient).
//   time      a per-request time limit: one slow answer fails one call, classified ETIMEDOUT → transient.
//   tests     the fake OCI (test/doubles/cloud-api/oci.ts) through a stand-in's endpoints
//             (src/lib/stand-in.ts): `api` is the Core API base (and the auth service), `metadata` the
//             metadata base URL.
import type {CloudApi, LaunchRequest} from '../cloud-driver.js'
import type {NodeFailure} from '../node-failures.js'
import type {CloudInstance, NodeSpec} from '../types.js'
import {ComputeCalls, type RequestKey} from './compute-calls.js'
import {classifyOciError} from './failures.js'
import type {OracleNodeConfig} from './node-config.js'
import {dropSession, readSession, writeSession} from './session-cache.js'
import {startSessionKey} from './session-key.js'
import {splitOracleShape} from './shape-name.js'

/**
 * What the driver asks of OCI, and therefore what iam.tf's policy must allow (checked by
 * test/lib/providers/oracle/iam.test.ts): verb and resource type per call, in OCI policy words.
 */
export const ORACLE_DRIVER_PERMISSIONS = [
  // ListInstances, LaunchInstance (INSTANCE_CREATE), TerminateInstance (INSTANCE_DELETE).
  {verb: 'manage', resource: 'instance-family', why: 'ListInstances, LaunchInstance, TerminateInstance'},
  // LaunchInstance creates and deletes the boot volume (preserveBootVolume=false on terminate).
  {verb: 'use', resource: 'volume-family', why: 'the boot volume LaunchInstance creates and TerminateInstance deletes'},
  // The VNIC in the cluster's subnet (createVnicDetails): subnet attach, vnic create/delete.
  {verb: 'use', resource: 'virtual-network-family', why: "the VNIC LaunchInstance places in the cluster's subnet"},
  // The compute image (sourceDetails.imageId): INSTANCE_IMAGE_READ is part of instance-family.
] as const

/** Pages of 100 instances read at most per listing (10,000 instances: far beyond any citc cluster). */
export const MAX_LIST_PAGES = 100

/** A node asked for in an availability domain the cluster has no subnet in: never launched elsewhere. */
export class OtherAdError extends Error {
  constructor(readonly ad: number, readonly clusterAd: number) {
    super(`the node asks for availability domain ${ad}, but the cluster's subnet is in availability domain ${clusterAd}: fix the node's ad feature (limits.yaml) or the cluster`)
  }
}

export interface OciApiOptions {
  cluster: string
  section: Pick<OracleNodeConfig, 'region' | 'compartmentId' | 'availabilityDomain' | 'adNumber' | 'subnetId'>
  /** A stand-in's (stand-in.ts): the fake OCI's Core API and auth service (`api`) and metadata service. */
  endpoints?: {api?: string; metadata?: string}
  /** Per-request time limit (default 60 s; a stand-in may shorten it). */
  requestTimeoutMs?: number
  /** The file that keeps the instance principal's session between processes (session-cache.ts); none: each process fetches its own. */
  sessionCache?: string
}

const STATE: Record<string, CloudInstance['state'] | undefined> = {
  PROVISIONING: 'pending',
  STARTING: 'pending',
  MOVING: 'pending',
  RUNNING: 'running',
  STOPPING: 'stopping',
  TERMINATING: 'stopping',
  // A stopped instance still holds its boot volume and its name: listed as going away, so suspend and
  // the watchdog terminate it, and resume never adopts it (citc never stops instances itself).
  STOPPED: 'stopping',
  CREATING_IMAGE: 'running',
  TERMINATED: 'terminated',
}

/** The instance principal's key, and whether its session came from the cache (then its token may have been revoked). */
interface Principal {
  key: RequestKey
  /** The Core API base URL of the region (or the stand-in's). */
  endpoint: string
  fromCache: boolean
  /** Keep a fetched session for the next process (after a call it signed succeeded; once). */
  keep(): Promise<void>
}

/**
 * instance-principal.ts, and oci-common with it, only when the handshake is needed: a dynamic import,
 * which the node programs' bundle (package.json's bundle-node-programs, split) makes a chunk of its own,
 * loaded then. (The per-driver bundles of bundle-drivers, not split, carry it but run it only then.)
 */
async function loadHandshake(): Promise<typeof import('./instance-principal.js')> {
  try {
    return await import('./instance-principal.js')
  } catch (error) {
    throw new Error(`the Oracle driver could not load its instance-principal handshake (instance-principal.js, beside the driver): ${(error as Error).message}. Reinstall citc on this management node.`, {cause: error})
  }
}

/**
 * The instance principal, built once per process, endpoints, region and cache file (metadata reads, a
 * session key, one call to the auth service: 0.3–0.8 s) and shared by every driver made in it; the SDK
 * renews its token when it expires. Or the cached session (session-cache.ts), when it has time left. A
 * failed build is forgotten, so the next call tries again.
 */
const principals = new Map<string, Promise<Principal>>()

const endpointsKey = (endpoints: OciApiOptions['endpoints']) => `${endpoints?.metadata ?? ''} ${endpoints?.api ?? ''}`
const principalKey = (endpoints: OciApiOptions['endpoints'], region: string, sessionCache: string | undefined) => `${endpointsKey(endpoints)} ${region} ${sessionCache ?? ''}`

function instancePrincipal(endpoints: OciApiOptions['endpoints'], region: string, sessionCache: string | undefined): Promise<Principal> {
  const key = principalKey(endpoints, region, sessionCache)
  let p = principals.get(key)
  if (!p) {
    p = principal(endpoints, region, sessionCache)
    principals.set(key, p)
    p.catch(() => principals.delete(key))
  }
  return p
}

/** Forget the principal of a cache whose token the API refused (unless forgotten already): the next call does the handshake. */
function forgetCached(endpoints: OciApiOptions['endpoints'], region: string, sessionCache: string, refused: Promise<Principal>) {
  const key = principalKey(endpoints, region, sessionCache)
  if (principals.get(key) !== refused) return
  principals.delete(key)
  dropSession(sessionCache)
}

async function principal(endpoints: OciApiOptions['endpoints'], region: string, sessionCache: string | undefined): Promise<Principal> {
  const key = endpointsKey(endpoints)
  const cached = sessionCache === undefined ? undefined : readSession(sessionCache, key, region)
  if (cached) {
    return {key: {getKeyId: () => `ST$${cached.token}`, getPrivateKey: () => cached.privateKey}, endpoint: endpoints?.api ?? cached.coreEndpoint, fromCache: true, keep: async () => {}}
  }
  const handshake = await loadHandshake()
  const auth = await handshake.instancePrincipal(endpoints)
  const endpoint = endpoints?.api ?? handshake.coreEndpoint(region)
  let kept: Promise<void> | undefined
  const keep = () =>
    (kept ??= (async () => {
      if (sessionCache === undefined) return
      // The token the SDK holds now (fetched for the call that just succeeded: no second fetch), and its key.
      const keyId = await auth.getKeyId()
      if (keyId.startsWith('ST$')) writeSession(sessionCache, key, region, {token: keyId.slice(3), privateKey: auth.getPrivateKey(), coreEndpoint: endpoint})
    })().catch(() => {}))
  return {key: auth, endpoint, fromCache: false, keep}
}

/**
 * The VNIC's hostname label: the node's name when OCI takes it (a DNS label: a letter first, letters,
 * digits and '-', at most 63), else none — OCI then makes one up. The boot script names the host
 * itself and slurmd reports its address (cloud_reg_addrs), so only the subnet's DNS name is lost.
 */
export function hostnameLabel(name: string): {hostnameLabel?: string} {
  return /^[a-z][a-z0-9-]{0,62}$/i.test(name) ? {hostnameLabel: name} : {}
}

export function ociApi(o: OciApiOptions): CloudApi {
  const {section, cluster} = o
  // Without a kept session the handshake needs a key pair: started now, on the thread pool, it is made
  // while the metadata service is read. With one (most node programs), no key is made at all.
  if (o.sessionCache === undefined || !readSession(o.sessionCache, endpointsKey(o.endpoints), section.region)) startSessionKey()
  let client: Promise<{compute: ComputeCalls; principal: Principal; made: Promise<Principal>}> | undefined
  const compute = () =>
    (client ??= (async () => {
      const made = instancePrincipal(o.endpoints, section.region, o.sessionCache)
      const principal = await made
      const c = new ComputeCalls({key: principal.key, endpoint: principal.endpoint, requestTimeoutMs: o.requestTimeoutMs ?? 60_000})
      return {compute: c, principal, made}
    })().catch((error: unknown) => {
      client = undefined // the next call tries again (the metadata service may have been slow)
      throw error
    }))

  /** fn with the client; a cached token the API refuses is dropped and fn asked once more after the handshake. */
  async function withCompute<T>(fn: (c: ComputeCalls) => Promise<T>): Promise<T> {
    const made = compute()
    const first = await made
    try {
      const r = await fn(first.compute)
      await first.principal.keep()
      return r
    } catch (error) {
      if (!(first.principal.fromCache && o.sessionCache !== undefined && (error as {statusCode?: number}).statusCode === 401)) throw error
      // Once for all the calls that were refused with this client: the first to get here starts over.
      if (client === made) client = undefined
      forgetCached(o.endpoints, section.region, o.sessionCache, first.made)
      const again = await compute()
      const r = await fn(again.compute)
      await again.principal.keep()
      return r
    }
  }

  return {
    place: () => section.availabilityDomain,

    list: () =>
      withCompute(async (c) => {
        const out: CloudInstance[] = []
        let page: string | undefined
        for (let n = 0; n < MAX_LIST_PAGES; n++) {
          // The whole compartment, not just the cluster's AD: an instance of ours anywhere in it is ours
          // to find (the watchdog's orphans). OCI filters on one lifecycle state at most, so the
          // states are sorted here, as are the tags (ListInstances has no tag filter).
          const r = await c.listInstances({compartmentId: section.compartmentId, limit: 100, page})
          for (const i of r.items) {
            const tags = i.freeformTags ?? {}
            if (tags.cluster !== cluster || tags.type !== 'compute') continue
            const state = STATE[i.lifecycleState] ?? 'pending'
            if (state === 'terminated') continue
            out.push({id: i.id, name: i.displayName ?? '', state, launchedAt: new Date(i.timeCreated).getTime(), shape: i.shape})
          }
          page = r.opcNextPage
          if (!page) return out
        }
        throw new Error(`more than ${MAX_LIST_PAGES} pages of instances in compartment ${section.compartmentId}: listing stopped`)
      }),

    async create(node: NodeSpec, launch: LaunchRequest) {
      if (node.ad !== undefined && node.ad !== section.adNumber) throw new OtherAdError(node.ad, section.adNumber)
      const {shape, ocpus, memoryGb} = splitOracleShape(node.shape)
      const r = await withCompute((c) =>
        c.launchInstance({
          opcRetryToken: launch.token,
          launchInstanceDetails: {
            availabilityDomain: section.availabilityDomain,
            compartmentId: section.compartmentId,
            displayName: node.name,
            shape,
            ...(ocpus !== undefined && memoryGb !== undefined ? {shapeConfig: {ocpus, memoryInGBs: memoryGb}} : {}),
            sourceDetails: {sourceType: 'image', imageId: launch.imageId},
            // No private IP lookup (a VNIC attachment list and a getVnic per node): with cloud_reg_addrs
            // slurmd reports its own address when it registers, which is all Slurm needs.
            createVnicDetails: {subnetId: section.subnetId, ...hostnameLabel(node.name), assignPublicIp: false},
            metadata: {user_data: Buffer.from(launch.userData, 'utf8').toString('base64')},
            freeformTags: {cluster, type: 'compute'},
          },
        }),
      )
      return {id: r.instance.id}
    },

    terminate: (instance) =>
      withCompute(async (c) => {
        try {
          await c.terminateInstance({instanceId: instance.id, preserveBootVolume: false})
        } catch (error) {
          const status = (error as {statusCode?: number}).statusCode
          // 404 NotAuthorizedOrNotFound on an id we just listed: it is gone (OCI cannot say which).
          if (status === 404) return
          // 409 IncorrectState: if that is because it is terminating already, it is stopped as asked;
          // otherwise (mid-launch) the driver retries it as transient.
          if (status === 409) {
            const now = await c.getInstance({instanceId: instance.id}).catch(() => undefined)
            if (now && (now.instance.lifecycleState === 'TERMINATING' || now.instance.lifecycleState === 'TERMINATED')) return
          }
          throw error
        }
      }),

    classify(error: unknown): NodeFailure {
      if (error instanceof OtherAdError) return {class: 'config', code: `OtherAvailabilityDomain(${error.ad})`, message: error.message}
      return classifyOciError(error)
    },
  }
}
