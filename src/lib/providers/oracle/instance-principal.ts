// The instance principal's handshake, the one part of the Oracle node driver that needs the SDK
// (oci-common): the certificate from the metadata service, a session token from the auth service, and
// the region's Core API endpoint as the SDK works it out (realms, region files and variables). Loaded by
// oci-api.ts only when no session is kept from an earlier node program (session-cache.ts) or the API
// refused the kept one — so most node programs never load oci-common (≈0.1 s, bench/node-cold-start.ts).
// oci-api.ts imports it dynamically: in the node programs' bundle (package.json's bundle-node-programs,
// split) it is a chunk of its own, with oci-common, loaded only then (test/cli/node-program.test.ts).
//
// What the SDK is told, and why:
//   console   the federation client console.logs its token retries, and the SDK's retrier console.warns
//             on a failed call. Those lines are dropped (quietSdkConsole): the thrown error carries the
//             same text, and the driver logs each failure once, classified, to the elastic log. Any
//             other console output passes through.
//   key       the session key the token is bound to: one generation, started early (session-key.ts).
//   tests     the metadata and auth services of the fake OCI (test/doubles/cloud-api/oci.ts) through a
//             stand-in's endpoints (src/lib/stand-in.ts): `metadata` is the metadata base URL, and when
//             `api` is set the auth service is asked there too (one fake plays Core API and auth service).
import {generateKeyPairSync} from 'node:crypto'

import * as common from 'oci-common'

import type {RequestKey} from './compute-calls.js'
import {takeSessionKey, type SessionKeyPair} from './session-key.js'

const SDK_NOISE = [/^Request cannot be retried/, /^All retry attempts have exhausted/, /^Request failed with Exception/, /^Failed to fetch the token from auth server/, /^Retry attempts exhausted/, /^Retrying the request/]
const QUIET = Symbol.for('citc.oracle.quietSdkConsole')

/**
 * Drop the SDK's own failure lines from console.warn/console.log (see the header); everything else
 * passes. Wraps whatever console.warn/log are now, unless that is already this filter (so a console
 * replaced since — a test's spy — is wrapped again).
 */
export function quietSdkConsole() {
  for (const level of ['warn', 'log'] as const) {
    const current = console[level] as ((...args: unknown[]) => void) & {[QUIET]?: true}
    if (current[QUIET]) continue
    console[level] = Object.assign(
      (...args: unknown[]) => {
        if (typeof args[0] === 'string' && SDK_NOISE.some((r) => r.test(args[0] as string))) return
        current.apply(console, args)
      },
      {[QUIET]: true as const},
    )
  }
}

/**
 * The session key the auth service binds the token to. The SDK's own supplier makes an RSA-2048 pair
 * when it is built and another when the first token is fetched (refreshKeys before every fetch): two
 * key generations, 0.2–0.6 s each on a small machine. This one makes none for the first token when a
 * pair was started early (session-key.ts, while the SDK loaded), and one per later token.
 */
class OneKeySession {
  private pair?: {getPublic(): string; getPrivate(): string}
  constructor(private first?: SessionKeyPair) {}
  refreshKeys() {
    const {publicKey, privateKey} =
      this.first ??
      generateKeyPairSync('rsa', {modulusLength: 2048, publicKeyEncoding: {type: 'spki', format: 'pem'}, privateKeyEncoding: {type: 'pkcs8', format: 'pem'}})
    this.first = undefined
    this.pair = {getPublic: () => publicKey, getPrivate: () => privateKey}
  }
  getKeyPair() {
    if (!this.pair) this.refreshKeys()
    return this.pair!
  }
}

// oci-core's ComputeClient.serviceEndpointTemplate and endpointServiceName.
const ENDPOINT_TEMPLATE = 'https://iaas.{region}.{dualStack?ds.oci.:}{secondLevelDomain}'
const ENDPOINT_SERVICE = 'iaas'

/** The Core API base URL of a region, as oci-core's ComputeClient sets it for region (no API version). */
export function coreEndpoint(region: string): string {
  const endpoint = common.EndpointBuilder.createEndpointFromRegionId(ENDPOINT_TEMPLATE, region, ENDPOINT_SERVICE)
  return common.EndpointBuilder.updateEndpointTemplateForOptions(endpoint, undefined, false)
}

/**
 * The instance principal (metadata reads, a session token from the auth service): its key renews the
 * token when it expires. Its getKeyId is "ST$<session token>".
 */
export async function instancePrincipal(endpoints: {api?: string; metadata?: string} | undefined): Promise<RequestKey> {
  quietSdkConsole()
  const builder = new common.InstancePrincipalsAuthenticationDetailsProviderBuilder()
  // The builder's public setter; its declared type is the SDK's KeyPair class, which OneKeySession's
  // pair matches in what the SDK calls (getPublic, getPrivate).
  ;(builder as unknown as {sessionKeySupplier: OneKeySession}).sessionKeySupplier = new OneKeySession(await takeSessionKey())
  if (endpoints?.metadata) builder.metadataBaseUrl = endpoints.metadata
  if (endpoints?.api) builder.federationEndpoint = new URL(endpoints.api).origin
  return builder.build()
}
