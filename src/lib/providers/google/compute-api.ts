// Compute Engine for the Google node driver: a small typed REST client over google-auth-library
// (@google-cloud/compute, the generated client, takes seconds to import; this well under one).
// Credentials are the management node's attached service account, found by the library through the
// metadata server; tests point both the API and the metadata server at doubles (a stand-in's
// endpoints, src/lib/stand-in.ts).
// No retries here (`retry: false`): the driver core retries throttled/transient failures itself
// (cloud-driver.ts), with the same requestId, so a repeated insert never makes a second machine.
//
// One instances.insert per node: each node needs its own name and user-data, and bulkInsert's
// per-node failures can only be read with zoneOperations.list, which the role does not grant.
// Capacity and quota refusals (ZONE_RESOURCE_POOL_EXHAUSTED, QUOTA_EXCEEDED) arrive in the finished
// operation's `error`, not as HTTP errors (Compute Engine API reference, "Handling API responses"),
// so create waits for it (zoneOperations.wait, bounded) and throws what it says.
import {GoogleAuth} from 'google-auth-library'

import {requireMetadataEnv} from '../metadata-env.js'
import type {CloudApi, LaunchRequest} from '../cloud-driver.js'
import type {CloudInstance, NodeSpec} from '../types.js'
import {classifyGoogleError} from './failures.js'

/**
 * Every IAM permission the client's calls need, with the call each one is for. The node programs'
 * custom role (templates/terraform/google/iam.tf) must grant each (a test checks). Nodes get no
 * service account, so neither iam.serviceAccounts.actAs nor compute.instances.setServiceAccount.
 */
export const GOOGLE_NODE_PERMISSIONS: ReadonlyArray<{permission: string; call: string}> = [
  {permission: 'compute.instances.create', call: 'POST …/zones/Z/instances (instances.insert)'},
  {permission: 'compute.disks.create', call: "instances.insert: the boot disk (initializeParams)"},
  {permission: 'compute.images.useReadOnly', call: "instances.insert: the boot disk's source image"},
  {permission: 'compute.subnetworks.use', call: "instances.insert: the network interface in the cluster's subnetwork"},
  {permission: 'compute.instances.setMetadata', call: 'instances.insert: metadata (user-data)'},
  {permission: 'compute.instances.setLabels', call: 'instances.insert: labels cluster, type, citc-image-*'},
  {permission: 'compute.instances.setTags', call: "instances.insert: the cluster's network tag"},
  {permission: 'compute.zoneOperations.get', call: 'POST …/zones/Z/operations/OP/wait (zoneOperations.wait)'},
  {permission: 'compute.instances.list', call: 'GET …/zones/Z/instances?filter=labels… (instances.list)'},
  {permission: 'compute.instances.get', call: 'GET …/zones/Z/instances/NAME (instances.get: address, already-exists check)'},
  {permission: 'compute.instances.delete', call: 'DELETE …/zones/Z/instances/NAME (instances.delete)'},
]

/** Compute's service root; the API is under /compute/v1. Tests set endpoints.api to a double's root instead. */
export const COMPUTE_ROOT = 'https://compute.googleapis.com'
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform'

export interface ComputeApiOptions {
  cluster: string
  project: string
  zone: string
  /** Self link of the cluster's subnetwork. */
  subnetwork: string
  /** The compute nodes' network tag (the firewall lets cluster traffic in by it). */
  networkTag: string
  /**
   * A stand-in's (stand-in.ts): `api` stands for https://compute.googleapis.com; `metadata` for the
   * metadata server, which google-auth-library (gcp-metadata) finds only through GCE_METADATA_HOST —
   * the environment must say it.
   */
  endpoints?: {api?: string; metadata?: string}
  /** Labels naming the image an instance boots (the image builder counts nodes per image by them). */
  imageLabels?(imageId: string): Record<string, string>
  /** How long create waits for its operation before calling it transient (the retry asks again). */
  operationWaitMs?: number
  /** Per request. */
  timeoutMs?: number
}

/** The parts of Compute's Operation the client reads. */
interface Operation {
  name: string
  status: 'PENDING' | 'RUNNING' | 'DONE'
  targetId?: string
  error?: {errors?: Array<{code?: string; message?: string}>}
  httpErrorStatusCode?: number
}

interface Instance {
  id: string
  name: string
  status: string
  creationTimestamp?: string
  machineType?: string
  labels?: Record<string, string>
  networkInterfaces?: Array<{networkIP?: string}>
}

/**
 * Compute's statuses → the driver's. PROVISIONING/STAGING are a machine on its way (pending: adopted,
 * not launched twice); STOPPING/SUSPENDING are on their way down. TERMINATED (stopped), STOPPED and
 * SUSPENDED machines run nothing and citc never restarts them — for the driver they are gone (a resume
 * launches anew; create clears a stopped one of ours out of the way), though they still hold the name.
 */
export function stateOf(status: string): CloudInstance['state'] {
  if (status === 'PROVISIONING' || status === 'STAGING' || status === 'PENDING') return 'pending'
  if (status === 'RUNNING') return 'running'
  if (status === 'STOPPING' || status === 'SUSPENDING' || status === 'REPAIRING') return 'stopping'
  return 'terminated'
}

/** An error shaped like a failed Operation, so classifyGoogleError reads it as Compute's own. */
function operationError(code: string, message: string, httpErrorStatusCode?: number): Error {
  return Object.assign(new Error(message), {error: {errors: [{code, message}]}, ...(httpErrorStatusCode ? {httpErrorStatusCode} : {})})
}

const statusOf = (e: unknown) => (e as {status?: number} | null)?.status
const reasonsOf = (e: unknown) =>
  ((e as {response?: {data?: {error?: {errors?: Array<{reason?: string}>}}}} | null)?.response?.data?.error?.errors ?? []).map((x) => x.reason)

/** Labels take lower-case letters, digits, "_" and "-" (63 at most). */
export const labelValue = (v: string) => v.toLowerCase().replace(/[^a-z0-9_-]/g, '_').slice(0, 63)

/** The boot image: images.json records Google images by name (image-builder.ts), in the cluster's project. */
export const sourceImage = (project: string, imageId: string) => (imageId.includes('/') ? imageId : `projects/${project}/global/images/${imageId}`)

export function googleComputeApi(o: ComputeApiOptions): CloudApi {
  requireMetadataEnv(o, 'GCE_METADATA_HOST', (url) => new URL(url).host)
  // projectId given: the library would otherwise look for it (env, gcloud, metadata) on every run.
  const auth = new GoogleAuth({scopes: [SCOPE], projectId: o.project})
  const zoneBase = `${(o.endpoints?.api ?? COMPUTE_ROOT).replace(/\/$/, '')}/compute/v1/projects/${o.project}/zones/${o.zone}`
  const timeout = o.timeoutMs ?? 30_000
  const operationWaitMs = o.operationWaitMs ?? 90_000

  async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, extra: {params?: Record<string, string>; data?: unknown; timeout?: number} = {}): Promise<T> {
    const res = await auth.request<T>({method, url: `${zoneBase}${path}`, params: extra.params, data: extra.data, timeout: extra.timeout ?? timeout, retry: false, responseType: 'json'})
    return res.data
  }

  /** zoneOperations.wait until DONE (each wait returns within ~2 min, maybe earlier), at most operationWaitMs. */
  async function finished(op: Operation): Promise<Operation> {
    const until = Date.now() + operationWaitMs
    for (let waits = 0; op.status !== 'DONE'; waits++) {
      const left = until - Date.now()
      if (left <= 0 || waits >= 100) throw operationError('OPERATION_NOT_DONE', `operation ${op.name} not done after ${operationWaitMs / 1000} s`, 503)
      op = await call<Operation>('POST', `/operations/${encodeURIComponent(op.name)}/wait`, {timeout: Math.min(left, 130_000)})
    }
    return op
  }

  const get = (name: string) => call<Instance>('GET', `/instances/${encodeURIComponent(name)}`)

  /**
   * The name is taken (a retry whose first insert got through, an earlier resume, or a stranger):
   * ours and alive is the node (adopted); ours and stopped is cleared away and asked again; not ours is
   * a configuration problem — never touched.
   */
  async function existing(node: NodeSpec): Promise<{id: string; privateIp?: string}> {
    const i = await get(node.name)
    if (i.labels?.cluster !== o.cluster || i.labels?.type !== 'compute') {
      throw operationError('RESOURCE_ALREADY_EXISTS', `instance ${node.name} in ${o.zone} exists and is not a compute node of cluster ${o.cluster}: rename or delete it`)
    }
    const state = stateOf(i.status)
    if (state === 'pending' || state === 'running') return {id: i.id, privateIp: i.networkInterfaces?.[0]?.networkIP}
    if (state === 'terminated') await remove(node.name)
    throw operationError('INSTANCE_NOT_RUNNING', `our instance ${node.name} is ${i.status}: deleting it before launching again`, 503)
  }

  async function remove(name: string) {
    try {
      await call<Operation>('DELETE', `/instances/${encodeURIComponent(name)}`)
    } catch (error) {
      if (statusOf(error) !== 404) throw error
    }
  }

  function body(node: NodeSpec, launch: LaunchRequest) {
    const arch = node.arch ?? 'x86_64'
    return {
      name: node.name,
      machineType: `zones/${o.zone}/machineTypes/${node.shape}`,
      labels: {cluster: o.cluster, type: 'compute', ...o.imageLabels?.(launch.imageId), 'citc-image-arch': labelValue(arch.replace('_', '-'))},
      tags: {items: [o.networkTag]},
      disks: [{boot: true, autoDelete: true, initializeParams: {sourceImage: sourceImage(o.project, launch.imageId)}}],
      // No accessConfigs: no public address (Cloud NAT gives outbound access).
      networkInterfaces: [{subnetwork: o.subnetwork}],
      metadata: {
        items: [
          // cloud-init runs the script (as on the management node, templates/terraform/google/mgmt.tf).
          {key: 'user-data', value: launch.userData},
          // Users reach nodes with the cluster's own accounts and keys: no project-wide keys, no OS Login.
          {key: 'block-project-ssh-keys', value: 'TRUE'},
          {key: 'enable-oslogin', value: 'FALSE'},
        ],
      },
      // No identity: a node runs users' jobs, and any process can ask the metadata server for the
      // attached account's token — the management node's account could start and stop machines.
      serviceAccounts: [],
    }
  }

  return {
    place: () => o.zone,

    async list() {
      const out: CloudInstance[] = []
      let pageToken: string | undefined
      for (let page = 0; page < 100; page++) {
        const params: Record<string, string> = {filter: `labels.cluster = ${o.cluster} AND labels.type = compute`, maxResults: '500'}
        if (pageToken) params.pageToken = pageToken
        const res = await call<{items?: Instance[]; nextPageToken?: string}>('GET', '/instances', {params})
        for (const i of res.items ?? []) {
          out.push({
            id: i.id,
            name: i.name,
            state: stateOf(i.status),
            launchedAt: i.creationTimestamp ? Date.parse(i.creationTimestamp) : 0,
            ...(i.networkInterfaces?.[0]?.networkIP ? {privateIp: i.networkInterfaces[0].networkIP} : {}),
            ...(i.machineType ? {shape: i.machineType.slice(i.machineType.lastIndexOf('/') + 1)} : {}),
          })
        }
        pageToken = res.nextPageToken
        if (!pageToken) return out
      }
      throw new Error(`instances.list of cluster ${o.cluster} did not end after 100 pages`)
    },

    async create(node, launch) {
      let op: Operation
      try {
        op = await call<Operation>('POST', '/instances', {params: {requestId: launch.token}, data: body(node, launch)})
      } catch (error) {
        if (statusOf(error) === 409 && reasonsOf(error).includes('alreadyExists')) return existing(node)
        throw error
      }
      op = await finished(op)
      const codes = (op.error?.errors ?? []).map((e) => e.code)
      if (codes.includes('RESOURCE_ALREADY_EXISTS')) return existing(node)
      if (codes.length > 0) {
        const message = op.error?.errors?.[0]?.message ?? `operation ${op.name} failed`
        throw Object.assign(new Error(message), {error: op.error, httpErrorStatusCode: op.httpErrorStatusCode, operation: op.name})
      }
      // The address is a convenience (slurmd registers its own, cloud_reg_addrs): one get, not a failure.
      const ip = await get(node.name).then((i) => i.networkInterfaces?.[0]?.networkIP, () => undefined)
      return {id: op.targetId ?? '', ...(ip ? {privateIp: ip} : {})}
    },

    // By name (Compute's URLs take the name), only for an instance list() returned — labelled with
    // this cluster. Already gone is done; the deletion is not waited for.
    terminate: (instance) => remove(instance.name),

    classify: classifyGoogleError,
  }
}
