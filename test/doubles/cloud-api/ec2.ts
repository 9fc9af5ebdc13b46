// TEST DOUBLE of Amazon EC2's query API — not EC2. Only what citc's AWS node driver calls
// (RunInstances, DescribeInstances, TerminateInstances), over HTTP on 127.0.0.1 the way the real
// @aws-sdk/client-ec2 speaks it (Amazon EC2 API Reference, "Making API requests"): form-encoded POST /, XML answers with EC2's element
// names, errors as <Response><Errors><Error><Code>… with EC2's HTTP status for the code. Like EC2 it
// requires a SigV4 signature by the fake IMDS's temporary key and session token, and checks it: the
// signature is computed again by @smithy/signature-v4 over the headers the request says it signed (so
// the driver's own signer, src/lib/providers/aws/sigv4.ts, is checked by another implementation), honours
// ClientToken (the same token again = the same instance), and can meter mutating calls with a token
// bucket answering RequestLimitExceeded. Faults are scripted; every request is recorded.
import {createHash, createHmac} from 'node:crypto'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'

import {SignatureV4} from '@smithy/signature-v4'

import {type FakeImds, startFakeImds} from './imds.js'
import type {Fault, FakeCloud, FakeCloudOptions, FakeInstance, RecordedRequest} from './types.js'
import {listenOnLoopback} from './listen.js'

/** cluster.json's aws driver section for a cluster in the fake account (its endpoints come from the stand-in). */
export const FAKE_EC2_SECTION = {
  region: 'eu-west-2',
  zone: 'eu-west-2a',
  mgmtPrivateIp: '10.0.0.10',
  sharedFs: {host: '10.0.0.20', path: '/', type: 'nfs4', mountOptions: 'nfsvers=4.1'},
  vpcId: 'vpc-0abc',
  subnetId: 'subnet-0abc',
  securityGroupId: 'sg-0abc',
  nodeRoleArn: 'arn:aws:iam::123456789012:role/citc-demo-mgmt',
  baseImage: {id: 'ami-0base', os: 'ubuntu-24.04'},
}

/** EC2's HTTP status for its error codes (client errors 4xx, server errors 5xx; Amazon EC2 API Reference, "Error codes"). */
export const EC2_ERROR_STATUS: Record<string, number> = {
  InsufficientInstanceCapacity: 500,
  InsufficientHostCapacity: 500,
  InternalError: 500,
  Unavailable: 503,
  RequestLimitExceeded: 503,
  InstanceLimitExceeded: 400,
  VcpuLimitExceeded: 400,
  UnauthorizedOperation: 403,
  AuthFailure: 401,
  'InvalidAMIID.NotFound': 400,
  'InvalidInstanceID.NotFound': 400,
  InvalidParameterValue: 400,
  IdempotentParameterMismatch: 400,
}

/** A scripted EC2 error with its real status: ec2Fault('RunInstances', 'InsufficientInstanceCapacity', 1, {shape}). */
export function ec2Fault(op: string, code: string, times = 1, extra: Partial<Fault> = {}): Fault {
  return {op, code, times, status: EC2_ERROR_STATUS[code] ?? 400, message: `${code} (fake EC2)`, ...extra}
}

/** What EC2 keeps about a launch besides the common fields. */
export interface Ec2Instance extends FakeInstance {
  subnetId: string
  securityGroupIds: string[]
  clientToken?: string
  /** The tags the launch asked for its volume. */
  volumeTags: Record<string, string>
  /** MetadataOptions.HttpTokens as asked ('required' = IMDSv2 only). */
  httpTokens?: string
}

export interface FakeEc2 extends FakeCloud {
  metadataUrl: string
  instances: Ec2Instance[]
  /** Errors thrown by the hooks (a hook failing must not fail the API call, but a test should see it). */
  hookErrors: unknown[]
  /** Launches accepted (the first of each ClientToken), for throughput figures. */
  launches(): number
}

const STATE_CODE: Record<string, number> = {pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopping: 64, stopped: 80}
/** The fake's states as EC2 names them: a terminating instance is shutting-down. */
const ec2State = (s: FakeInstance['state']) => (s === 'stopping' ? 'shutting-down' : s)
const MUTATING = new Set(['RunInstances', 'TerminateInstances'])

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const el = (name: string, value: string | number | undefined) => (value === undefined ? '' : `<${name}>${esc(String(value))}</${name}>`)
const NS = 'xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"'

/** Indexed parameters "Prefix.1", "Prefix.2", … in order (bounded: EC2 itself caps lists far lower). */
function indexed(p: URLSearchParams, prefix: string): string[] {
  const out: string[] = []
  for (let i = 1; i <= 1000 && p.has(`${prefix}.${i}`); i++) out.push(p.get(`${prefix}.${i}`)!)
  return out
}

/** TagSpecification.N of a resource type → its tags. */
function tagSpec(p: URLSearchParams, resourceType: string): Record<string, string> | undefined {
  for (let n = 1; n <= 20 && p.has(`TagSpecification.${n}.ResourceType`); n++) {
    if (p.get(`TagSpecification.${n}.ResourceType`) !== resourceType) continue
    const tags: Record<string, string> = {}
    for (let t = 1; t <= 50 && p.has(`TagSpecification.${n}.Tag.${t}.Key`); t++) tags[p.get(`TagSpecification.${n}.Tag.${t}.Key`)!] = p.get(`TagSpecification.${n}.Tag.${t}.Value`) ?? ''
    return tags
  }
  return undefined
}

/** A token bucket on the real clock (the cloud's, not the driver's). */
class Bucket {
  private tokens: number
  private last = Date.now()
  constructor(private readonly limit: {perSecond: number; burst: number}) {
    this.tokens = limit.burst
  }
  take(): boolean {
    const now = Date.now()
    this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.last) / 1000) * this.limit.perSecond)
    this.last = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }
}

/** The hash @smithy/signature-v4 asks for, on node:crypto (its SDK passes @smithy/hash-node's, node:crypto too). */
type HashData = string | ArrayBuffer | ArrayBufferView
const hashBytes = (d: HashData) => (typeof d === 'string' ? d : ArrayBuffer.isView(d) ? new Uint8Array(d.buffer, d.byteOffset, d.byteLength) : new Uint8Array(d))
export class NodeSha256 {
  private readonly h
  constructor(secret?: HashData) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', hashBytes(secret))
  }
  update(data: HashData) {
    this.h.update(hashBytes(data))
  }
  async digest() {
    return new Uint8Array(this.h.digest())
  }
}

export interface FakeEc2Options extends FakeCloudOptions {
  /** The identity EC2 accepts; the fake IMDS hands out the same (default FAKE_IMDS_CREDENTIALS). */
  imds?: Parameters<typeof startFakeImds>[1]
}

export async function startFakeEc2(options: FakeEc2Options = {}): Promise<FakeEc2> {
  const requests: RecordedRequest[] = []
  const instances: Ec2Instance[] = []
  const faults: Fault[] = []
  const hookErrors: unknown[] = []
  const byToken = new Map<string, Ec2Instance>()
  const buckets = new Map<string, Bucket>()
  const bootMs = options.bootMs ?? 0
  let seq = 0
  let launches = 0
  let addresses = 0
  const imds: FakeImds = await startFakeImds(requests, options.imds)

  const nextId = () => (++seq).toString(16).padStart(17, '0')
  const nextIp = () => {
    const n = addresses++
    return `10.0.${Math.floor(n / 250) % 250}.${(n % 250) + 4}`
  }

  /** Time passes on every read: pending boots after bootMs, shutting-down ends terminated. */
  function age() {
    const now = Date.now()
    for (const i of instances) {
      if (i.state === 'pending' && now - i.launchedAt >= bootMs) i.state = 'running'
      else if (i.state === 'stopping') i.state = 'terminated'
    }
  }

  function instanceXml(i: Ec2Instance): string {
    const state = ec2State(i.state)
    const tags = Object.entries(i.tags).map(([k, v]) => `<item>${el('key', k)}${el('value', v)}</item>`).join('')
    return (
      `<item>${el('instanceId', i.id)}${el('imageId', i.imageId)}<instanceState>${el('code', STATE_CODE[state])}${el('name', state)}</instanceState>` +
      `${el('instanceType', i.shape)}${el('launchTime', new Date(i.launchedAt).toISOString())}<placement>${el('availabilityZone', i.zone)}</placement>` +
      `${el('subnetId', i.subnetId)}${el('privateIpAddress', i.privateIp)}<tagSet>${tags}</tagSet></item>`
    )
  }

  function reservationXml(i: Ec2Instance, wrapper: 'instancesSet'): string {
    return `${el('reservationId', `r-${i.id.slice(2)}`)}${el('ownerId', '123456789012')}<groupSet/><${wrapper}>${instanceXml(i)}</${wrapper}>`
  }

  type Answer = {status: number; xml: string}
  const error = (code: string, message: string, status = EC2_ERROR_STATUS[code] ?? 400): Answer => ({
    status,
    xml: `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>${el('Code', code)}${el('Message', message)}</Error></Errors>${el('RequestID', `req-${requests.length}`)}</Response>`,
  })
  const ok = (action: string, inner: string): Answer => ({
    status: 200,
    xml: `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response ${NS}>${el('requestId', `req-${requests.length}`)}${inner}</${action}Response>`,
  })

  /** SigV4 by the IMDS's key, with its session token: what a role's temporary credentials sign with; the signature recomputed. */
  async function authProblem(req: IncomingMessage, body: string): Promise<string | undefined> {
    const auth = String(req.headers.authorization ?? '')
    const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([a-z0-9-]+)\/ec2\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(auth)
    if (!m) return 'the request is not signed with AWS Signature Version 4'
    const [, keyId, , region, signedNames, signature] = m
    if (keyId !== imds.credentials.accessKeyId) return `AWS was not able to validate the provided access credentials (key ${keyId})`
    if (req.headers['x-amz-security-token'] !== imds.credentials.sessionToken) return 'the security token included in the request is invalid'
    const names = signedNames!.split(';')
    const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(String(req.headers['x-amz-date'] ?? ''))
    if (!date || !names.includes('host') || !names.includes('x-amz-date')) return 'the signature must cover host and x-amz-date'
    const headers = Object.fromEntries(names.map((n) => [n, String(req.headers[n] ?? '')]))
    const signer = new SignatureV4({
      credentials: {accessKeyId: imds.credentials.accessKeyId, secretAccessKey: imds.credentials.secretAccessKey, sessionToken: imds.credentials.sessionToken},
      region: region!,
      service: 'ec2',
      sha256: NodeSha256,
      applyChecksum: names.includes('x-amz-content-sha256'),
    })
    const host = String(req.headers.host ?? '')
    const again = await signer.sign(
      {method: req.method ?? 'POST', protocol: 'http:', hostname: host.replace(/:\d+$/, ''), path: req.url ?? '/', query: {}, headers, body},
      {signingDate: new Date(Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!))},
    )
    const expected = /Signature=([0-9a-f]{64})/.exec(String(again.headers.authorization))?.[1]
    if (expected !== signature) return 'The request signature we calculated does not match the signature you provided.'
    return undefined
  }

  function takeFault(action: string, shape: string | undefined): Fault | undefined {
    const f = faults.find((x) => x.op === action && x.times > 0 && (x.shape === undefined || x.shape === shape))
    if (!f) return undefined
    f.times -= 1
    if (f.times <= 0) faults.splice(faults.indexOf(f), 1)
    return f
  }

  function runInstances(p: URLSearchParams): Answer {
    const token = p.get('ClientToken') ?? undefined
    const shape = p.get('InstanceType') ?? ''
    const imageId = p.get('ImageId') ?? ''
    const again = token ? byToken.get(token) : undefined
    if (again) {
      if (again.shape !== shape || again.imageId !== imageId) return error('IdempotentParameterMismatch', `client token ${token} was used with other parameters`)
      return ok('RunInstances', reservationXml(again, 'instancesSet'))
    }
    if (p.get('MinCount') !== '1' || p.get('MaxCount') !== '1') return error('InvalidParameterValue', 'this fake launches one instance per call (MinCount=MaxCount=1)')
    if (!imageId) return error('MissingParameter', 'The request must contain the parameter ImageId')
    if (!shape) return error('InvalidParameterValue', 'InstanceType is required')
    const tags = tagSpec(p, 'instance') ?? {}
    launches += 1
    const instance: Ec2Instance = {
      id: `i-${nextId()}`,
      name: tags.Name ?? '',
      tags,
      shape,
      zone: p.get('Placement.AvailabilityZone') ?? 'eu-west-2a',
      imageId,
      userData: Buffer.from(p.get('UserData') ?? '', 'base64').toString('utf8'),
      state: 'pending',
      privateIp: nextIp(),
      launchedAt: Date.now(),
      subnetId: p.get('SubnetId') ?? '',
      securityGroupIds: indexed(p, 'SecurityGroupId'),
      clientToken: token,
      volumeTags: tagSpec(p, 'volume') ?? {},
      httpTokens: p.get('MetadataOptions.HttpTokens') ?? undefined,
    }
    instances.push(instance)
    if (token) byToken.set(token, instance)
    hook(() => options.hooks?.onLaunch?.(instance))
    return ok('RunInstances', reservationXml(instance, 'instancesSet'))
  }

  function describeInstances(p: URLSearchParams): Answer {
    age()
    let found = instances.slice()
    const ids = indexed(p, 'InstanceId')
    if (ids.length > 0) found = found.filter((i) => ids.includes(i.id))
    for (let n = 1; n <= 50 && p.has(`Filter.${n}.Name`); n++) {
      const name = p.get(`Filter.${n}.Name`)!
      const values = indexed(p, `Filter.${n}.Value`)
      if (name.startsWith('tag:')) found = found.filter((i) => values.includes(i.tags[name.slice(4)] ?? '\0'))
      else if (name === 'instance-state-name') found = found.filter((i) => values.includes(ec2State(i.state)))
      else if (name === 'instance-id') found = found.filter((i) => values.includes(i.id))
      else return error('InvalidParameterValue', `The filter '${name}' is invalid (fake EC2 knows tag:*, instance-state-name, instance-id)`)
    }
    const max = Number(p.get('MaxResults') ?? 1000)
    if (!(max >= 5 && max <= 1000)) return error('InvalidParameterValue', 'MaxResults must be between 5 and 1000')
    const start = p.has('NextToken') ? Number(Buffer.from(p.get('NextToken')!, 'base64').toString('utf8')) : 0
    if (!Number.isInteger(start) || start < 0) return error('InvalidParameterValue', 'Invalid NextToken')
    const page = found.slice(start, start + max)
    const next = start + max < found.length ? Buffer.from(String(start + max)).toString('base64') : undefined
    const reservations = page.map((i) => `<item>${reservationXml(i, 'instancesSet')}</item>`).join('')
    return ok('DescribeInstances', `<reservationSet>${reservations}</reservationSet>${el('nextToken', next)}`)
  }

  function terminateInstances(p: URLSearchParams): Answer {
    age()
    const ids = indexed(p, 'InstanceId')
    const missing = ids.filter((id) => !instances.some((i) => i.id === id))
    if (missing.length > 0) return error('InvalidInstanceID.NotFound', `The instance ID '${missing.join("', '")}' does not exist`)
    const items = ids.map((id) => {
      const i = instances.find((x) => x.id === id)!
      const previous = ec2State(i.state)
      if (i.state !== 'terminated') {
        i.state = 'stopping'
        hook(() => options.hooks?.onTerminate?.(i))
      }
      const current = ec2State(i.state)
      return `<item>${el('instanceId', id)}<currentState>${el('code', STATE_CODE[current])}${el('name', current)}</currentState><previousState>${el('code', STATE_CODE[previous])}${el('name', previous)}</previousState></item>`
    })
    return ok('TerminateInstances', `<instancesSet>${items.join('')}</instancesSet>`)
  }

  function hook(fn: () => void | Promise<void>) {
    // After the answer is on its way: the e2e's hook boots a node, which the API call must not wait for.
    setImmediate(() => {
      Promise.resolve()
        .then(fn)
        .catch((e: unknown) => hookErrors.push(e))
    })
  }

  async function handle(req: IncomingMessage, body: string, record: RecordedRequest): Promise<Answer> {
    if (req.method !== 'POST' || (req.url ?? '/') !== '/') return error('InvalidAction', `${req.method} ${req.url} is not an EC2 query request`, 400)
    const p = new URLSearchParams(body)
    const action = p.get('Action') ?? ''
    record.op = action
    const unauthorized = await authProblem(req, body)
    if (unauthorized) return error(unauthorized.startsWith('The request signature') ? 'SignatureDoesNotMatch' : 'AuthFailure', unauthorized, unauthorized.startsWith('The request signature') ? 403 : 401)
    const fault = takeFault(action, action === 'RunInstances' ? (p.get('InstanceType') ?? undefined) : undefined)
    if (fault) {
      if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs))
      return error(fault.code, fault.message ?? fault.code, fault.status)
    }
    if (options.rateLimit && MUTATING.has(action)) {
      // One bucket per action, as EC2 meters each API separately.
      let b = buckets.get(action)
      if (!b) buckets.set(action, (b = new Bucket(options.rateLimit)))
      if (!b.take()) return error('RequestLimitExceeded', 'Request limit exceeded.')
    }
    if (action === 'RunInstances') return runInstances(p)
    if (action === 'DescribeInstances') return describeInstances(p)
    if (action === 'TerminateInstances') return terminateInstances(p)
    return error('InvalidAction', `The action ${action} is not valid for this web service (fake EC2)`, 400)
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const record: RecordedRequest = {op: '', method: req.method ?? '', path: req.url ?? '', headers: {...req.headers}, body, status: 0, at: Date.now()}
      requests.push(record)
      handle(req, body, record)
        .catch((e: unknown) => error('InternalError', `fake EC2 failed: ${e instanceof Error ? e.message : String(e)}`, 500))
        .then((a) => {
          record.status = a.status
          res.writeHead(a.status, {'content-type': 'text/xml;charset=UTF-8'})
          res.end(a.xml)
        })
    })
  })
  const url = await listenOnLoopback(server)

  return {
    url,
    metadataUrl: imds.url,
    instances,
    requests,
    hookErrors,
    launches: () => launches,
    fail: (...more) => faults.push(...more.map((f) => ({...f}))),
    add(partial) {
      const i: Ec2Instance = {
        id: `i-${nextId()}`,
        shape: 'c5.xlarge',
        zone: 'eu-west-2a',
        imageId: 'ami-00000000000000001',
        userData: '',
        state: 'running',
        privateIp: nextIp(),
        launchedAt: Date.now(),
        subnetId: 'subnet-0abc',
        securityGroupIds: [],
        volumeTags: {},
        ...partial,
        tags: {Name: partial.name, ...partial.tags},
      }
      instances.push(i)
      return i
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await imds.close()
    },
  }
}
