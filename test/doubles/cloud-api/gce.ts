// TEST DOUBLE of the Compute Engine API (compute/v1) — not Google's. Just what citc's Google node
// driver calls (src/lib/providers/google/compute-api.ts): instances insert/list/get/delete in zones
// of projects, and zone operations get/wait. It behaves as Compute does where the driver depends on it:
//   - insert answers with a RUNNING operation; the operation is DONE at the next wait (or after
//     `waitsBeforeDone` waits), and a stockout or quota refusal arrives INSIDE the finished operation
//     (`error.errors[0].code`, `httpErrorStatusCode`), not as an HTTP error (Compute Engine API reference, "Handling API responses");
//   - a repeated requestId gets the first request's operation back (no second instance);
//   - inserting a name that exists in the zone is HTTP 409 alreadyExists;
//   - HTTP errors use Google's JSON error format ({error: {code, message, errors: [{reason, …}], status}});
//   - every call needs `Authorization: Bearer <a token the fake metadata server issued>` (401 otherwise);
//   - list filters `labels.k = v AND …` and pages with pageToken.
// Scripted faults (fail()): op 'insert' | 'list' | 'get' | 'delete' | 'wait' answer with an HTTP error
// whose reason is `code`; op 'insert:operation' lets the insert be accepted and puts `code` in its
// finished operation (with `status` as httpErrorStatusCode). An HTTP fault's `form` (GceFault) says
// where the body carries `code`, as Google's APIs do (Cloud APIs design guide, "Errors"): 'reason' (the
// default: errors[].reason, Compute's v1 format), 'status' (only the canonical `status`, no errors[]),
// 'errorInfo' (a google.rpc.ErrorInfo in `details`, the canonical status of the HTTP code beside it).
// Listens on 127.0.0.1 only.
import {randomBytes} from 'node:crypto'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'

import type {FakeMetadata} from './gce-metadata.js'
import type {Fault, FakeCloud, FakeCloudOptions, FakeInstance, RecordedRequest} from './types.js'
import {listenOnLoopback} from './listen.js'

export interface GceInstance extends FakeInstance {
  project: string
}

export interface FakeGce extends FakeCloud {
  instances: GceInstance[]
  /** Queue faults (GceFault: with the form of an HTTP error's body). */
  fail(...faults: GceFault[]): void
  add(instance: Partial<GceInstance> & {name: string}): GceInstance
  /** The project new instances and the default zone belong to. */
  project: string
  zone: string
  /** Instances per list page (Compute's maxResults default is 500; small to test paging). */
  pageSize: number
  /** How many waits answer RUNNING before an operation is DONE. */
  waitsBeforeDone: number
}

export interface FakeGceOptions extends FakeCloudOptions {
  /** The fake metadata server: only the tokens it issued are accepted. */
  metadata: FakeMetadata
  project?: string
  zone?: string
}

interface Operation {
  kind: 'compute#operation'
  id: string
  name: string
  zone: string
  operationType: string
  targetLink: string
  targetId: string
  status: 'PENDING' | 'RUNNING' | 'DONE'
  progress: number
  insertTime: string
  selfLink: string
  error?: {errors: Array<{code: string; message: string}>}
  httpErrorStatusCode?: number
  httpErrorMessage?: string
}

const HTTP_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ALREADY_EXISTS',
  429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE',
}
const HTTP_MESSAGE: Record<number, string> = {403: 'Forbidden', 409: 'Conflict', 429: 'Too Many Requests', 503: 'Service Unavailable'}

const NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Compute's instance status for the common states (a deleted instance is not shown at all). */
const STATUS: Record<FakeInstance['state'], string> = {pending: 'PROVISIONING', running: 'RUNNING', stopping: 'STOPPING', terminated: 'TERMINATED'}

/** Where an HTTP error's body carries its code (header). */
export type GoogleErrorForm = 'reason' | 'status' | 'errorInfo'

/** A scripted fault of the fake Compute Engine. */
export interface GceFault extends Fault {
  form?: GoogleErrorForm
}

class HttpError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string, readonly form: GoogleErrorForm = 'reason') {
    super(message)
  }
}

/** Google's JSON error body for an HttpError, in its form. */
function errorBody(e: HttpError): unknown {
  const canonical = HTTP_STATUS[e.status] ?? 'UNKNOWN'
  if (e.form === 'status') return {error: {code: e.status, message: e.message, status: e.reason}}
  if (e.form === 'errorInfo') {
    const info = {'@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: e.reason, domain: 'googleapis.com', metadata: {service: 'compute.googleapis.com', method: 'compute.v1.InstancesService.Insert'}}
    return {error: {code: e.status, message: e.message, status: canonical, details: [info]}}
  }
  return {error: {code: e.status, message: e.message, errors: [{message: e.message, domain: 'global', reason: e.reason}], status: canonical}}
}

export async function startFakeGce(options: FakeGceOptions): Promise<FakeGce> {
  const instances: GceInstance[] = []
  const deleted = new Set<GceInstance>()
  const requests: RecordedRequest[] = []
  const faults: GceFault[] = []
  const operations = new Map<string, Operation & {waits: number; project: string}>()
  /** requestId → operation name, per project/zone (Compute keys them so too). */
  const byRequestId = new Map<string, string>()
  let nextId = 4_000_000_000_000_000_000n
  let nextIp = 10
  const bucket = options.rateLimit ? {tokens: options.rateLimit.burst, at: Date.now()} : undefined

  let base = ''
  const zoneUrl = (project: string, zone: string) => `${base}/compute/v1/projects/${project}/zones/${zone}`
  const selfLink = (i: GceInstance) => `${zoneUrl(i.project, i.zone)}/instances/${i.name}`

  function refresh(i: GceInstance) {
    if (i.state === 'pending' && Date.now() - i.launchedAt >= (options.bootMs ?? 0)) i.state = 'running'
  }

  function asJson(i: GceInstance) {
    refresh(i)
    return {
      kind: 'compute#instance',
      id: i.id,
      name: i.name,
      zone: zoneUrl(i.project, i.zone),
      status: STATUS[i.state],
      machineType: `${zoneUrl(i.project, i.zone)}/machineTypes/${i.shape}`,
      labels: i.tags,
      creationTimestamp: new Date(i.launchedAt).toISOString(),
      networkInterfaces: [{name: 'nic0', networkIP: i.privateIp}],
      disks: [{boot: true, source: `${zoneUrl(i.project, i.zone)}/disks/${i.name}`}],
      metadata: {items: [{key: 'user-data', value: i.userData}]},
      selfLink: selfLink(i),
    }
  }

  function add(partial: Partial<GceInstance> & {name: string}): GceInstance {
    const i: GceInstance = {
      id: String(nextId++),
      tags: {},
      shape: 'n2-standard-2',
      zone: fake.zone,
      project: fake.project,
      imageId: '',
      userData: '',
      state: 'running',
      privateIp: `10.0.0.${nextIp++}`,
      launchedAt: Date.now(),
      ...partial,
    }
    instances.push(i)
    return i
  }

  const visible = (project: string, zone: string) => instances.filter((i) => i.project === project && i.zone === zone && !deleted.has(i))

  function newOperation(project: string, zone: string, type: string, target: GceInstance | string): Operation & {waits: number; project: string} {
    const name = `operation-${Date.now()}-${randomBytes(6).toString('hex')}`
    const op = {
      kind: 'compute#operation' as const,
      id: String(nextId++),
      name,
      zone: zoneUrl(project, zone),
      operationType: type,
      targetLink: typeof target === 'string' ? `${zoneUrl(project, zone)}/instances/${target}` : selfLink(target),
      targetId: typeof target === 'string' ? '' : target.id,
      status: 'RUNNING' as const,
      progress: 0,
      insertTime: new Date().toISOString(),
      selfLink: `${zoneUrl(project, zone)}/operations/${name}`,
      waits: 0,
      project,
    }
    operations.set(name, op)
    return op
  }

  const publicOp = ({waits: _w, project: _p, ...op}: Operation & {waits: number; project: string}) => op

  /** The next scripted fault for this request, used up by one. */
  function takeFault(op: string, shape?: string): GceFault | undefined {
    const f = faults.find((x) => x.op === op && x.times > 0 && (!x.shape || x.shape === shape))
    if (f) f.times -= 1
    return f
  }

  function takeRate(): boolean {
    if (!bucket || !options.rateLimit) return true
    const now = Date.now()
    bucket.tokens = Math.min(options.rateLimit.burst, bucket.tokens + ((now - bucket.at) / 1000) * options.rateLimit.perSecond)
    bucket.at = now
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }

  /** Compute's list filter as the driver writes it: `labels.k = v` terms joined by AND. */
  function matcher(filter: string | null): (i: GceInstance) => boolean {
    if (!filter) return () => true
    const terms = filter.split(/\s+AND\s+/).map((t) => {
      const m = /^\(?\s*labels\.([a-z0-9_-]+)\s*=\s*"?([a-z0-9_-]*)"?\s*\)?$/.exec(t.trim())
      if (!m) throw new HttpError(400, 'invalid', `Invalid value for field 'filter': '${filter}'. Invalid list filter expression.`)
      return {key: m[1], value: m[2]}
    })
    return (i) => terms.every((t) => i.tags[t.key] === t.value)
  }

  async function insert(project: string, zone: string, query: URLSearchParams, body: string): Promise<unknown> {
    const requestId = query.get('requestId')
    if (requestId !== null && !UUID.test(requestId)) throw new HttpError(400, 'invalid', `Invalid value for field 'requestId': '${requestId}'. The requestId must be a valid UUID.`)
    const key = requestId ? `${project}/${zone}/${requestId}` : undefined
    if (key && byRequestId.has(key)) return publicOp(operations.get(byRequestId.get(key)!)!)
    let spec: {
      name?: string
      machineType?: string
      labels?: Record<string, string>
      metadata?: {items?: Array<{key: string; value: string}>}
      disks?: Array<{boot?: boolean; initializeParams?: {sourceImage?: string}}>
      networkInterfaces?: Array<{subnetwork?: string}>
    }
    try {
      spec = JSON.parse(body) as typeof spec
    } catch {
      throw new HttpError(400, 'parseError', 'Invalid JSON payload received.')
    }
    const name = spec.name ?? ''
    if (!NAME.test(name)) throw new HttpError(400, 'invalid', `Invalid value for field 'resource.name': '${name}'. Must be a match of regex '(?:[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?)'`)
    const shape = /machineTypes\/([^/]+)$/.exec(spec.machineType ?? '')?.[1]
    if (!shape) throw new HttpError(400, 'invalid', `Invalid value for field 'resource.machineType': '${spec.machineType ?? ''}'.`)
    const image = spec.disks?.find((d) => d.boot)?.initializeParams?.sourceImage
    if (!image) throw new HttpError(400, 'invalid', "Invalid value for field 'resource.disks': a boot disk needs a source image.")
    const refused = takeFault('insert:operation', shape)
    if (refused) {
      const op = newOperation(project, zone, 'insert', name)
      op.error = {errors: [{code: refused.code, message: refused.message ?? `${refused.code} (fake) for ${shape} in ${zone}`}]}
      op.httpErrorStatusCode = refused.status
      op.httpErrorMessage = HTTP_MESSAGE[refused.status] ?? 'Error'
      if (key) byRequestId.set(key, op.name)
      return publicOp(op)
    }
    if (visible(project, zone).some((i) => i.name === name)) {
      throw new HttpError(409, 'alreadyExists', `The resource 'projects/${project}/zones/${zone}/instances/${name}' already exists`)
    }
    const userData = spec.metadata?.items?.find((m) => m.key === 'user-data')?.value ?? ''
    const instance = add({name, project, zone, shape, imageId: image, userData, tags: {...(spec.labels ?? {})}, state: 'pending', launchedAt: Date.now()})
    const op = newOperation(project, zone, 'insert', instance)
    if (key) byRequestId.set(key, op.name)
    await options.hooks?.onLaunch?.(instance)
    return publicOp(op)
  }

  async function route(method: string, path: string, query: URLSearchParams, body: string): Promise<{op: string; result: () => Promise<unknown>}> {
    const m = /^\/compute\/v1\/projects\/([^/]+)\/zones\/([^/]+)\/(instances|operations)(?:\/([^/]+))?(\/wait)?$/.exec(path)
    if (!m) return {op: 'unknown', result: async () => { throw new HttpError(404, 'notFound', `The requested URL ${path} was not found on this server.`) }}
    const [, project, zone, kind, name, wait] = m
    if (kind === 'instances' && !name && method === 'POST') return {op: 'insert', result: () => insert(project, zone, query, body)}
    if (kind === 'instances' && !name && method === 'GET') {
      return {
        op: 'list',
        result: async () => {
          const match = matcher(query.get('filter'))
          const all = visible(project, zone).filter(match)
          const start = Number(query.get('pageToken') ?? 0)
          const size = Math.min(fake.pageSize, Number(query.get('maxResults') ?? 500))
          const page = all.slice(start, start + size).map(asJson)
          return {kind: 'compute#instanceList', ...(page.length ? {items: page} : {}), ...(start + size < all.length ? {nextPageToken: String(start + size)} : {})}
        },
      }
    }
    if (kind === 'instances' && name && (method === 'GET' || method === 'DELETE')) {
      const found = () => {
        const i = visible(project, zone).find((x) => x.name === name)
        if (!i) throw new HttpError(404, 'notFound', `The resource 'projects/${project}/zones/${zone}/instances/${name}' was not found`)
        return i
      }
      if (method === 'GET') return {op: 'get', result: async () => asJson(found())}
      return {
        op: 'delete',
        result: async () => {
          const i = found()
          i.state = 'terminated'
          deleted.add(i)
          const op = newOperation(project, zone, 'delete', i)
          await options.hooks?.onTerminate?.(i)
          return publicOp(op)
        },
      }
    }
    if (kind === 'operations' && name && (wait ? method === 'POST' : method === 'GET')) {
      return {
        op: wait ? 'wait' : 'operation.get',
        result: async () => {
          const op = operations.get(name)
          if (!op || op.project !== project) throw new HttpError(404, 'notFound', `The resource 'projects/${project}/zones/${zone}/operations/${name}' was not found`)
          if (op.status !== 'DONE') {
            op.waits += 1
            if (op.waits > fake.waitsBeforeDone) Object.assign(op, {status: 'DONE', progress: 100})
          }
          return publicOp(op)
        },
      }
    }
    return {op: 'unknown', result: async () => { throw new HttpError(400, 'badRequest', `${method} ${path} is not a method the fake knows`) }}
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const url = new URL(req.url ?? '/', base)
    const method = req.method ?? 'GET'
    const {op, result} = await route(method, url.pathname, url.searchParams, body)
    let status = 200
    let payload: unknown
    try {
      const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1]
      if (!token || !options.metadata.tokens.includes(token)) {
        throw new HttpError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.')
      }
      let shape: string | undefined
      if (op === 'insert') shape = /machineTypes\/([^/"]+)/.exec(body)?.[1]
      const fault = takeFault(op, shape)
      if (fault?.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs))
      if (fault) throw new HttpError(fault.status, fault.code, fault.message ?? `${fault.code} (fake)`, fault.form)
      if ((op === 'insert' || op === 'delete') && !takeRate()) throw new HttpError(403, 'rateLimitExceeded', 'Rate Limit Exceeded')
      payload = await result()
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      status = error.status
      payload = errorBody(error)
    }
    requests.push({op, method, path: `${url.pathname}${url.search}`, headers: req.headers, body, status, at: Date.now()})
    res.writeHead(status, {'Content-Type': 'application/json; charset=UTF-8'})
    res.end(JSON.stringify(payload))
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, {'Content-Type': 'application/json'})
      res.end(JSON.stringify({error: {code: 500, message: String(error), errors: [{reason: 'internalError', message: String(error)}], status: 'INTERNAL'}}))
    })
  })
  base = await listenOnLoopback(server)

  const fake: FakeGce = {
    url: base,
    metadataUrl: options.metadata.url,
    instances,
    requests,
    project: options.project ?? 'citc-test-project',
    zone: options.zone ?? 'europe-west4-a',
    pageSize: 500,
    waitsBeforeDone: 0,
    fail: (...f: GceFault[]) => void faults.push(...f.map((x) => ({...x}))),
    add,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return fake
}
