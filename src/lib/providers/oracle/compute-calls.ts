// The four Core compute calls the Oracle node driver makes (oci-api.ts), with node:crypto and node:http(s)
// alone: oci-core (2.4 MB of every Core model and client) and then oci-common (its signer pulls sshpk,
// http-signature, jsonwebtoken and every auth provider: ≈0.1 s) took most of an Oracle node program's
// start (bench/node-cold-start.ts). oci-common is loaded only for the instance-principal handshake
// (instance-principal.ts). Each call here is what oci-core 2.139.1's ComputeClient method does over
// oci-common, step for step:
//   request   the same path, path parameters (encodeURIComponent), query (key=value in the SDK's order,
//             values as the SDK writes them, empty ones left out) and headers (Content-Type
//             application/json, opc-request-id, opc-retry-token for a launch), signed as
//             DefaultRequestSigner signs it (oci-signer.ts); LaunchInstance's body is JSON.stringify of
//             the details, which is what the SDK's LaunchInstanceDetails serialisation makes of the
//             fields citc sets (plain camelCase). Checked against oci-core at the fake OCI and against
//             oci-common's signer byte for byte (test/lib/providers/oracle/compute-calls.test.ts,
//             oci-signer.test.ts).
//   endpoint  the Core API base (the region's, which the handshake's SDK worked out and the session
//             cache keeps, session-cache.ts; or a stand-in's API base) + /20160918.
//   errors    what the SDK's GenericRetrier threw (oci-http.ts), which failures.ts classifies. Retries:
//             none (the driver retries); the time limit is per request.
// No oci-core here, nor oci-common, nor anywhere the node-program bundle reaches (test/cli/node-program.test.ts).
import {randomUUID} from 'node:crypto'
import {platform, release} from 'node:os'

import {sendOci, type OciAnswer} from './oci-http.js'
import {signOciRequest, type UnsignedRequest} from './oci-signer.js'

/** The fields of OCI's Instance / InstanceSummary the driver reads. */
export interface OciInstance {
  id: string
  displayName?: string
  lifecycleState: string
  timeCreated: string
  shape: string
  freeformTags?: Record<string, string>
}

/** The LaunchInstanceDetails fields citc sets (OCI API reference, LaunchInstanceDetails). */
export interface LaunchDetails {
  availabilityDomain: string
  compartmentId: string
  displayName: string
  shape: string
  shapeConfig?: {ocpus: number; memoryInGBs: number}
  sourceDetails: {sourceType: 'image'; imageId: string}
  createVnicDetails: {subnetId: string; hostnameLabel?: string; assignPublicIp: boolean}
  metadata: Record<string, string>
  freeformTags: Record<string, string>
}

/**
 * What signs the requests: oci-common's AuthenticationDetailsProvider has this shape (an instance
 * principal renews its token in getKeyId), and so has a kept session (oci-api.ts).
 */
export interface RequestKey {
  getKeyId(): string | Promise<string>
  getPrivateKey(): string
}

const API_VERSION = '/20160918'

export interface ComputeCallsOptions {
  key: RequestKey
  /** The Core API base URL: the region's (https://iaas.{region}.{secondLevelDomain}) or a stand-in's. */
  endpoint: string
  /** Per-request time limit. */
  requestTimeoutMs: number
}

type Params = Record<string, string | number | boolean | undefined>

/** One call's request, as oci-core composes it (composeRequest), before it is signed. */
export interface CoreCall {
  op: string
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  pathParams?: Record<string, string>
  queryParams?: Params
  headerParams?: Record<string, string>
  body?: string
}

const USER_AGENT = `citc (Oracle Core API over node:https; ${platform()}/${release()}; Node/${process.version})`

/** The URL and headers of a call at base (the Core API base + /20160918), as the SDK makes them. */
export function composeCoreRequest(base: string, c: CoreCall): UnsignedRequest {
  let path = c.path
  for (const [k, v] of Object.entries(c.pathParams ?? {})) {
    if (!v) throw new Error(`Missing required path parameter for ${k}`)
    path = path.replace(k, encodeURIComponent(v))
  }
  // oci-common's stringify: key=value, unencoded, in the given order; undefined, null and '' left out.
  const query = Object.entries(c.queryParams ?? {})
    .filter(([, v]) => v || v === false || v === 0)
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
  const headers: Record<string, string> = {'content-type': 'application/json'}
  for (const [k, v] of Object.entries(c.headerParams ?? {})) if (v) headers[k.toLowerCase()] = v
  headers['opc-request-id'] = randomUUID().replace('-', '').toUpperCase()
  headers['user-agent'] = USER_AGENT
  return {method: c.method, url: base + path + (query ? `?${query}` : ''), headers, ...(c.body === undefined ? {} : {body: c.body})}
}

export class ComputeCalls {
  private readonly base: string

  constructor(private readonly o: ComputeCallsOptions) {
    this.base = o.endpoint + API_VERSION
  }

  private async call(c: CoreCall): Promise<OciAnswer> {
    const request = composeCoreRequest(this.base, c)
    const keyId = await this.o.key.getKeyId()
    const headers = signOciRequest(request, {keyId, privateKey: this.o.key.getPrivateKey()})
    return sendOci({...request, headers}, c.op, this.o.requestTimeoutMs)
  }

  /** One page of the compartment's instances, and the next page's token (opc-next-page). */
  async listInstances(q: {compartmentId: string; limit: number; page?: string}): Promise<{items: OciInstance[]; opcNextPage?: string}> {
    const res = await this.call({op: 'listInstances', method: 'GET', path: '/instances', queryParams: {compartmentId: q.compartmentId, limit: q.limit, page: q.page}})
    const next = res.headers['opc-next-page']
    return {items: JSON.parse(res.text) as OciInstance[], opcNextPage: (Array.isArray(next) ? next[0] : next) || undefined}
  }

  async launchInstance(q: {opcRetryToken: string; launchInstanceDetails: LaunchDetails}): Promise<{instance: OciInstance}> {
    const res = await this.call({
      op: 'launchInstance',
      method: 'POST',
      path: '/instances',
      // The SDK makes a token when none is given; the driver always gives one (cloud-driver.ts).
      headerParams: {'opc-retry-token': q.opcRetryToken || randomUUID()},
      body: JSON.stringify(q.launchInstanceDetails),
    })
    return {instance: JSON.parse(res.text) as OciInstance}
  }

  async terminateInstance(q: {instanceId: string; preserveBootVolume: boolean}): Promise<void> {
    await this.call({op: 'terminateInstance', method: 'DELETE', path: '/instances/{instanceId}', pathParams: {'{instanceId}': q.instanceId}, queryParams: {preserveBootVolume: q.preserveBootVolume}})
  }

  async getInstance(q: {instanceId: string}): Promise<{instance: OciInstance}> {
    const res = await this.call({op: 'getInstance', method: 'GET', path: '/instances/{instanceId}', pathParams: {'{instanceId}': q.instanceId}})
    return {instance: JSON.parse(res.text) as OciInstance}
  }
}
