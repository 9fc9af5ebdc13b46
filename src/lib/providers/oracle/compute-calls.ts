// The four Core compute calls the Oracle node driver makes (oci-api.ts), written over oci-common alone:
// oci-core (2.4 MB of CommonJS: every Core model and client) took most of an Oracle node program's
// start (bench/node-cold-start.ts), and the driver needs four of its methods. Each call here is what
// oci-core 2.139.1's ComputeClient method does, step for step, with the same oci-common pieces:
//   request   composeRequest with the same path, path/query parameters and headers (Content-Type,
//             opc-retry-token), so the signed request (DefaultRequestSigner, through FetchHttpClient)
//             is byte for byte the SDK's; LaunchInstance's body is JSON.stringify of the details, which
//             is what the SDK's LaunchInstanceDetails serialisation makes of the fields citc sets (plain
//             camelCase; checked by test/lib/providers/oracle/compute-calls.test.ts against oci-core).
//   endpoint  the SDK's template for the region (https://iaas.{region}.{secondLevelDomain}/20160918),
//             or a stand-in's API base + /20160918.
//   errors    GenericRetrier.makeServiceCall throws exactly what it throws for the SDK (OciError with
//             statusCode, serviceCode, message, opcRequestId; {code, message} below HTTP), which is
//             what failures.ts classifies. Retries: none (NoRetryConfigurationDetails, as oci-api.ts
//             asked of the SDK); the time limit is the breaker handed to FetchHttpClient.
// No oci-core here, nor anywhere the node-program bundle reaches (test/cli/node-program.test.ts).
import * as common from 'oci-common'

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

// oci-core's ComputeClient.serviceEndpointTemplate and endpointServiceName.
const ENDPOINT_TEMPLATE = 'https://iaas.{region}.{dualStack?ds.oci.:}{secondLevelDomain}'
const ENDPOINT_SERVICE = 'iaas'
const API_VERSION = '/20160918'
const TARGET_SERVICE = 'Compute'
const JSON_TYPE = common.Constants.APPLICATION_JSON

export interface ComputeCallsOptions {
  auth: common.AuthenticationDetailsProvider
  /** A stand-in's Core API base URL; else the region's endpoint. */
  endpoint?: string
  region: string
  /** Per-request time limit (the breaker's timeout). */
  requestTimeoutMs: number
}

export class ComputeCalls {
  private readonly http: common.FetchHttpClient
  private readonly base: string

  constructor(o: ComputeCallsOptions) {
    // The breaker only as a per-request time limit: it can never open (oci-api.ts's header).
    const breaker = new common.CircuitBreaker({timeout: o.requestTimeoutMs, errorThresholdPercentage: 100, volumeThreshold: Number.MAX_SAFE_INTEGER, resetTimeout: 1000})
    this.http = new common.FetchHttpClient(new common.DefaultRequestSigner(o.auth), breaker.circuit)
    this.base = (o.endpoint ?? common.EndpointBuilder.createEndpointFromRegionId(ENDPOINT_TEMPLATE, o.region, ENDPOINT_SERVICE)) + API_VERSION
  }

  private async call(
    op: string,
    link: string,
    r: {method: common.Method; path: string; pathParams?: common.Params; queryParams?: common.Params; headerParams?: common.Params; body?: string; required: string[]},
  ): Promise<Response> {
    const pathParams = r.pathParams ?? {}
    const queryParams = r.queryParams ?? {}
    let endpoint = common.EndpointBuilder.updateEndpointTemplateForOptions(this.base, undefined, false)
    endpoint = common.EndpointBuilder.populateServiceParamsInEndpoint(endpoint, pathParams, queryParams, new Set(r.required))
    const retrier = common.GenericRetrier.createPreferredRetrier(common.NoRetryConfigurationDetails, undefined, common.NoRetryConfigurationDetails)
    const request = await common.composeRequest({
      baseEndpoint: endpoint,
      defaultHeaders: {},
      path: r.path,
      method: r.method,
      ...(r.body === undefined ? {} : {bodyContent: r.body}),
      pathParams,
      headerParams: {'Content-Type': JSON_TYPE, ...r.headerParams},
      queryParams,
    })
    return retrier.makeServiceCall(this.http, request, TARGET_SERVICE, op, link)
  }

  /** One page of the compartment's instances, and the next page's token (opc-next-page). */
  async listInstances(q: {compartmentId: string; limit: number; page?: string}): Promise<{items: OciInstance[]; opcNextPage?: string}> {
    const res = await this.call('listInstances', 'https://docs.oracle.com/iaas/api/#/en/iaas/20160918/Instance/ListInstances', {
      method: 'GET',
      path: '/instances',
      queryParams: {compartmentId: q.compartmentId, limit: q.limit, page: q.page},
      required: ['compartmentId'],
    })
    const items = (await res.json()) as OciInstance[]
    return {items, opcNextPage: res.headers.get('opc-next-page') ?? undefined}
  }

  async launchInstance(q: {opcRetryToken: string; launchInstanceDetails: LaunchDetails}): Promise<{instance: OciInstance}> {
    const res = await this.call('launchInstance', 'https://docs.oracle.com/iaas/api/#/en/iaas/20160918/Instance/LaunchInstance', {
      method: 'POST',
      path: '/instances',
      headerParams: {'opc-retry-token': q.opcRetryToken},
      body: JSON.stringify(q.launchInstanceDetails),
      required: [],
    })
    return {instance: (await res.json()) as OciInstance}
  }

  async terminateInstance(q: {instanceId: string; preserveBootVolume: boolean}): Promise<void> {
    // oci-core gives this operation no API reference link.
    await this.call('terminateInstance', '', {
      method: 'DELETE',
      path: '/instances/{instanceId}',
      pathParams: {'{instanceId}': q.instanceId},
      queryParams: {preserveBootVolume: q.preserveBootVolume},
      required: ['instanceId'],
    })
  }

  async getInstance(q: {instanceId: string}): Promise<{instance: OciInstance}> {
    const res = await this.call('getInstance', 'https://docs.oracle.com/iaas/api/#/en/iaas/20160918/Instance/GetInstance', {
      method: 'GET',
      path: '/instances/{instanceId}',
      pathParams: {'{instanceId}': q.instanceId},
      required: ['instanceId'],
    })
    return {instance: (await res.json()) as OciInstance}
  }
}
