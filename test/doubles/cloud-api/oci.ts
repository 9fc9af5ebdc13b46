// TEST DOUBLE of Oracle Cloud — not OCI. One HTTP server on 127.0.0.1 plays the three services the
// Oracle node driver talks to (its instance-principal handshake from oci-common, its Core calls signed
// by oci-signer.ts; compute-calls.ts's test also drives oci-core's ComputeClient here):
//   metadata  GET /opc/v2/instance/region, /opc/v2/identity/{cert,key,intermediate}.pem
//             (Authorization: Bearer Oracle, as the real one demands)
//   auth      POST /v1/x509: a session token for the instance certificate (oci-identity.ts)
//   Core API  POST/GET /20160918/instances, GET/DELETE /20160918/instances/{id}
// Every Core and auth request's signature is checked (401 NotAuthenticated otherwise); launches are
// idempotent per opc-retry-token; errors are OCI's JSON {code, message} with its statuses; faults are
// scripted per operation (LaunchInstance, ListInstances, GetInstance, TerminateInstance, Federate, Metadata);
// every request is recorded. In-memory, closed by close().
import {generateKeyPairSync} from 'node:crypto'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'

import {FakeAuthService, makeInstanceIdentity, signatureProblem, type InstanceIdentity} from './oci-identity.js'
import type {Fault, FakeCloud, FakeCloudOptions, FakeInstance, RecordedRequest} from './types.js'
import {listenOnLoopback} from './listen.js'

export const FAKE_OCI = {
  tenancy: 'ocid1.tenancy.oc1..aaaafaketenancy',
  compartment: 'ocid1.compartment.oc1..aaaafakecompartment',
  region: 'uk-london-1',
  ad: 'Uocm:UK-LONDON-1-AD-1',
  subnet: 'ocid1.subnet.oc1.uk-london-1.aaaafakesubnet',
  mgmtInstance: 'ocid1.instance.oc1.uk-london-1.aaaafakemgmt',
} as const

/** cluster.json's oracle driver section for a cluster in the fake tenancy (its endpoints come from the stand-in). */
export const FAKE_OCI_SECTION = {
  region: FAKE_OCI.region,
  mgmtPrivateIp: '10.0.0.2',
  sharedFs: {host: '10.0.0.3', path: '/shared', type: 'nfs', mountOptions: 'nfsvers=3'},
  compartmentId: FAKE_OCI.compartment,
  availabilityDomain: FAKE_OCI.ad,
  adNumber: 1,
  vcnId: 'ocid1.vcn.oc1..fake',
  subnetId: FAKE_OCI.subnet,
  dnsDomain: 'cluster.oraclevcn.com',
  baseImage: {id: 'ocid1.image.oc1..base', os: 'ubuntu-24.04'},
}

/** The fake's instances carry their compartment (OCI lists per compartment, not per cluster). */
export interface FakeOciInstance extends FakeInstance {
  compartmentId: string
}

export interface FakeOci extends FakeCloud {
  instances: FakeOciInstance[]
  add(instance: Partial<FakeOciInstance> & {name: string}): FakeOciInstance
  /** Session tokens the auth service issued. */
  readonly tokensIssued: number
  /** Forget every session token: the next Core call's signature names a key the fake no longer knows. */
  revokeSessions(): void
  /** Forget instances, requests, faults, retry tokens and the rate bucket; session tokens stay valid. */
  reset(): void
}

/** Max page size the fake allows (OCI: limit 1–1000); small pages are what tests use to check paging. */
const MAX_LIMIT = 1000

const OCI_STATE: Record<FakeInstance['state'], string> = {pending: 'PROVISIONING', running: 'RUNNING', stopping: 'TERMINATING', terminated: 'TERMINATED'}

interface Options extends FakeCloudOptions {
  /** Reuse an identity across fakes (making one runs openssl three times, ≈0.1 s). */
  identity?: InstanceIdentity
}

let identityCache: InstanceIdentity | undefined
let jwtKeyCache: string | undefined

export async function startFakeOci(options: Options = {}): Promise<FakeOci> {
  const identity = options.identity ?? (identityCache ??= makeInstanceIdentity(FAKE_OCI.tenancy, FAKE_OCI.mgmtInstance))
  const jwtKey = (jwtKeyCache ??= generateKeyPairSync('rsa', {modulusLength: 2048}).privateKey.export({type: 'pkcs8', format: 'pem'}).toString())
  const auth = new FakeAuthService(identity, jwtKey)
  const instances: FakeOciInstance[] = []
  const requests: RecordedRequest[] = []
  const faults: Fault[] = []
  const tokens = new Map<string, {body: string; id: string}>()
  let seq = 0
  let bucket = options.rateLimit ? {tokens: options.rateLimit.burst, at: Date.now()} : undefined

  /** Terminated through the API: TERMINATING until the next read, then TERMINATED. */
  const terminating = new Set<string>()
  /** pending → running once booted; terminating → terminated at the next read. */
  function settle(i: FakeOciInstance) {
    if (i.state === 'pending' && Date.now() >= i.launchedAt + (options.bootMs ?? 0)) i.state = 'running'
    else if (i.state === 'stopping' && terminating.delete(i.id)) i.state = 'terminated'
  }

  const asOci = (i: FakeOciInstance) => ({
    id: i.id,
    displayName: i.name,
    availabilityDomain: i.zone,
    compartmentId: i.compartmentId,
    region: FAKE_OCI.region,
    shape: i.shape,
    imageId: i.imageId,
    sourceDetails: {sourceType: 'image', imageId: i.imageId},
    lifecycleState: OCI_STATE[i.state],
    timeCreated: new Date(i.launchedAt).toISOString(),
    freeformTags: i.tags,
    metadata: {user_data: Buffer.from(i.userData).toString('base64')},
  })

  function add(p: Partial<FakeOciInstance> & {name: string}): FakeOciInstance {
    const i: FakeOciInstance = {
      id: p.id ?? `ocid1.instance.oc1.${FAKE_OCI.region}.fake${String(++seq).padStart(4, '0')}`,
      name: p.name,
      tags: p.tags ?? {},
      shape: p.shape ?? 'VM.Standard2.1',
      zone: p.zone ?? FAKE_OCI.ad,
      imageId: p.imageId ?? 'ocid1.image.oc1..fake',
      userData: p.userData ?? '',
      state: p.state ?? 'running',
      privateIp: p.privateIp ?? `10.0.0.${10 + (seq % 240)}`,
      launchedAt: p.launchedAt ?? Date.now(),
      compartmentId: p.compartmentId ?? FAKE_OCI.compartment,
    }
    instances.push(i)
    return i
  }

  /** Mutating calls spend a token; none left is OCI's 429. */
  function throttled(): boolean {
    if (!bucket || !options.rateLimit) return false
    const now = Date.now()
    bucket.tokens = Math.min(options.rateLimit.burst, bucket.tokens + ((now - bucket.at) / 1000) * options.rateLimit.perSecond)
    bucket.at = now
    if (bucket.tokens < 1) return true
    bucket.tokens -= 1
    return false
  }

  function route(method: string, path: string): string | undefined {
    if (method === 'GET' && path.startsWith('/opc/v2/')) return 'Metadata'
    if (method === 'POST' && path === '/v1/x509') return 'Federate'
    if (method === 'POST' && path === '/20160918/instances') return 'LaunchInstance'
    if (method === 'GET' && path === '/20160918/instances') return 'ListInstances'
    if (method === 'GET' && /^\/20160918\/instances\/[^/]+$/.test(path)) return 'GetInstance'
    if (method === 'DELETE' && /^\/20160918\/instances\/[^/]+$/.test(path)) return 'TerminateInstance'
    return undefined
  }

  async function handle(req: IncomingMessage, body: string): Promise<{status: number; json?: unknown; text?: string; headers?: Record<string, string>}> {
    const method = req.method ?? 'GET'
    const url = new URL(req.url ?? '/', 'http://fake')
    const op = route(method, url.pathname)
    const err = (status: number, code: string, message: string) => ({status, json: {code, message}})
    if (!op) return err(404, 'NotAuthorizedOrNotFound', `no such route ${method} ${url.pathname}`)

    const launchShape = op === 'LaunchInstance' ? (JSON.parse(body || '{}') as {shape?: string}).shape : undefined
    const fi = faults.findIndex((f) => f.op === op && (f.shape === undefined || f.shape === launchShape))
    if (fi >= 0) {
      const f = faults[fi]!
      if (--f.times <= 0) faults.splice(fi, 1)
      if (f.delayMs) await new Promise((resolve) => setTimeout(resolve, f.delayMs))
      return err(f.status, f.code, f.message ?? f.code)
    }

    if (op === 'Metadata') {
      if (req.headers.authorization !== 'Bearer Oracle') return err(401, 'NotAuthenticated', 'metadata v2 needs Authorization: Bearer Oracle')
      const what = url.pathname.slice('/opc/v2/'.length)
      const text = {'instance/region': FAKE_OCI.region, 'identity/cert.pem': identity.leafCert, 'identity/key.pem': identity.leafKey, 'identity/intermediate.pem': identity.intermediateCert}[what]
      return text === undefined ? err(404, 'NotFound', what) : {status: 200, text}
    }

    const problem = signatureProblem(method, req.url ?? '/', req.headers, body, (keyId) => auth.keyFor(keyId, op === 'Federate'))
    if (problem) return err(401, 'NotAuthenticated', `The required information to complete authentication was not provided or was incorrect (${problem}).`)

    if (op === 'Federate') return auth.federate(body)

    if (op === 'LaunchInstance') {
      if (throttled()) return err(429, 'TooManyRequests', 'Too many requests for the tenancy.')
      const d = JSON.parse(body) as {
        availabilityDomain?: string
        compartmentId?: string
        displayName?: string
        shape?: string
        sourceDetails?: {sourceType?: string; imageId?: string}
        createVnicDetails?: {subnetId?: string}
        metadata?: Record<string, string>
        freeformTags?: Record<string, string>
      }
      for (const [k, v] of Object.entries({availabilityDomain: d.availabilityDomain, compartmentId: d.compartmentId, shape: d.shape, 'sourceDetails.imageId': d.sourceDetails?.imageId, 'createVnicDetails.subnetId': d.createVnicDetails?.subnetId})) {
        if (!v) return err(400, 'InvalidParameter', `${k} must be given`)
      }
      const token = req.headers['opc-retry-token']
      if (typeof token === 'string') {
        const seen = tokens.get(token)
        if (seen && seen.body !== body) return err(409, 'Conflict', 'The opc-retry-token was used with a different request.')
        const same = seen && instances.find((i) => i.id === seen.id)
        if (same) return {status: 200, json: asOci(same), headers: {etag: same.id}}
      }
      const i = add({
        name: d.displayName ?? '',
        tags: d.freeformTags ?? {},
        shape: d.shape,
        zone: d.availabilityDomain,
        imageId: d.sourceDetails?.imageId,
        userData: d.metadata?.user_data ? Buffer.from(d.metadata.user_data, 'base64').toString('utf8') : '',
        state: 'pending',
        launchedAt: Date.now(),
        compartmentId: d.compartmentId,
      })
      if (typeof token === 'string') tokens.set(token, {body, id: i.id})
      await options.hooks?.onLaunch?.(i)
      return {status: 200, json: asOci(i), headers: {etag: i.id}}
    }

    if (op === 'ListInstances') {
      const compartment = url.searchParams.get('compartmentId')
      if (!compartment) return err(400, 'MissingParameter', 'compartmentId must be given')
      const ad = url.searchParams.get('availabilityDomain')
      const name = url.searchParams.get('displayName')
      const limit = Math.min(MAX_LIMIT, Number(url.searchParams.get('limit') ?? 100) || 100)
      const start = Number(url.searchParams.get('page') ?? 0) || 0
      instances.forEach(settle)
      const all = instances.filter((i) => i.compartmentId === compartment && (!ad || i.zone === ad) && (!name || i.name === name))
      const page = all.slice(start, start + limit)
      return {status: 200, json: page.map(asOci), headers: start + limit < all.length ? {'opc-next-page': String(start + limit)} : {}}
    }

    const id = decodeURIComponent(url.pathname.split('/').pop() ?? '')
    const found = instances.find((i) => i.id === id)
    if (!found) return err(404, 'NotAuthorizedOrNotFound', `Authorization failed or requested resource not found.`)
    if (op === 'GetInstance') {
      settle(found)
      return {status: 200, json: asOci(found)}
    }
    // TerminateInstance
    if (throttled()) return err(429, 'TooManyRequests', 'Too many requests for the tenancy.')
    if (url.searchParams.get('preserveBootVolume') !== 'false') return err(400, 'InvalidParameter', 'the fake expects preserveBootVolume=false (citc keeps no boot volumes)')
    if (found.state !== 'terminated' && found.state !== 'stopping') {
      found.state = 'stopping'
      terminating.add(found.id)
      await options.hooks?.onTerminate?.(found)
    }
    return {status: 204}
  }

  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      handle(req, body)
        .catch((error: unknown) => ({status: 500, json: {code: 'InternalError', message: `fake OCI: ${error instanceof Error ? error.message : String(error)}`}}))
        .then((r: {status: number; json?: unknown; text?: string; headers?: Record<string, string>}) => {
          const url = new URL(req.url ?? '/', 'http://fake')
          requests.push({op: route(req.method ?? 'GET', url.pathname) ?? 'unknown', method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, status: r.status, at: Date.now()})
          const out = r.text ?? (r.json === undefined ? '' : JSON.stringify(r.json))
          res.writeHead(r.status, {
            'content-type': r.text === undefined ? 'application/json' : 'text/plain',
            'opc-request-id': `fake/${requests.length}`,
            ...r.headers,
          })
          res.end(r.status === 204 ? undefined : out)
        })
    })
  })
  const url = await listenOnLoopback(server)

  return {
    url,
    metadataUrl: `${url}/opc/v2/`,
    instances,
    requests,
    fail: (...f) => faults.push(...f.map((x) => ({...x}))),
    add,
    get tokensIssued() {
      return auth.tokensIssued
    },
    revokeSessions: () => auth.revoke(),
    reset() {
      instances.length = 0
      requests.length = 0
      faults.length = 0
      tokens.clear()
      terminating.clear()
      if (options.rateLimit) bucket = {tokens: options.rateLimit.burst, at: Date.now()}
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
