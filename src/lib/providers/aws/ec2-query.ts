// The three EC2 calls the node driver makes (DescribeInstances, RunInstances, TerminateInstances) over
// EC2's Query API by hand (Amazon EC2 API Reference, "Making API requests": a form-encoded POST of
// Action=…&Version=2016-11-15, SigV4-signed, XML answers), on node built-ins only. It replaces
// @aws-sdk/client-ec2 in the node programs: importing the SDK was most of their start-up, and
// slurmctld starts one on every power event. Inputs and outputs use the SDK's names and shapes (the
// part the driver reads), and errors carry what failures.ts read of the SDK's (name/Code, message,
// $fault, $metadata.httpStatusCode): test/lib/providers/aws/ec2-query.test.ts makes each call both
// ways against the fake EC2 and compares requests, results and errors.
import {randomUUID} from 'node:crypto'

import {httpExchange, type HttpAnswer, type HttpLimits} from '../http-exchange.js'
import {child, itemsOf, parseXml, textOf, type XmlElement} from './ec2-xml.js'
import {type AwsCredentials, signV4, uriEncode} from './sigv4.js'

const VERSION = '2016-11-15'

export interface Tag {
  Key?: string
  Value?: string
}

export interface DescribeInstancesInput {
  Filters?: Array<{Name: string; Values: string[]}>
  InstanceIds?: string[]
  MaxResults?: number
  NextToken?: string
}

export interface RunInstancesInput {
  MinCount: number
  MaxCount: number
  ImageId: string
  InstanceType: string
  SubnetId?: string
  SecurityGroupIds?: string[]
  /** Base64, as the API takes it. */
  UserData?: string
  ClientToken?: string
  /** The resource types citc tags at launch (EC2 knows more). */
  TagSpecifications?: Array<{ResourceType: 'instance' | 'volume'; Tags: Tag[]}>
  MetadataOptions?: {HttpTokens?: 'required' | 'optional'}
}

export interface TerminateInstancesInput {
  InstanceIds: string[]
}

export interface InstanceState {
  Code?: number
  Name?: string
}

/** The fields of EC2's Instance the driver reads, as the SDK names and types them. */
export interface Instance {
  InstanceId?: string
  ImageId?: string
  State?: InstanceState
  InstanceType?: string
  LaunchTime?: Date
  Placement?: {AvailabilityZone?: string}
  SubnetId?: string
  PrivateIpAddress?: string
  Tags?: Tag[]
}

export interface Reservation {
  ReservationId?: string
  OwnerId?: string
  Instances?: Instance[]
}

export interface DescribeInstancesOutput {
  Reservations?: Reservation[]
  NextToken?: string
}

export interface TerminateInstancesOutput {
  TerminatingInstances?: Array<{InstanceId?: string; CurrentState?: InstanceState; PreviousState?: InstanceState}>
}

/** What ec2-api.ts calls (the SDK's commands by another route). */
export interface Ec2Calls {
  describeInstances(input: DescribeInstancesInput): Promise<DescribeInstancesOutput>
  runInstances(input: RunInstancesInput): Promise<Reservation>
  terminateInstances(input: TerminateInstancesInput): Promise<TerminateInstancesOutput>
}

/**
 * An error EC2 answered (<Response><Errors><Error><Code>…): shaped like the SDK's EC2ServiceException
 * where failures.ts and the driver look — `name` and `Code` are EC2's code, `$fault` client or server,
 * `$metadata.httpStatusCode` the status. An answer without EC2's error body (a proxy's page) has no
 * Code, and the SDK's stand-in name: NotFound for a 404, else Unknown.
 */
export class Ec2Error extends Error {
  readonly Code: string | undefined
  readonly $fault: 'client' | 'server'
  readonly $metadata: {httpStatusCode: number; requestId?: string; attempts: number; totalRetryDelay: number}
  readonly Error: {Code: string | undefined; Message: string}
  /** EC2's RequestID from the error body, for AWS support. */
  readonly RequestID?: string

  constructor(o: {code: string | undefined; message: string; status: number; requestId?: string; bodyRequestId?: string}) {
    super(o.message)
    this.name = o.code ?? (o.status === 404 ? 'NotFound' : 'Unknown')
    this.Code = o.code
    this.$fault = o.status >= 500 ? 'server' : 'client'
    this.$metadata = {httpStatusCode: o.status, ...(o.requestId ? {requestId: o.requestId} : {}), attempts: 1, totalRetryDelay: 0}
    this.Error = {Code: o.code, Message: o.message}
    if (o.bodyRequestId) this.RequestID = o.bodyRequestId
  }
}

/**
 * EC2's list and structure members as the query protocol names them (the model's ec2QueryName:
 * a list member's name in the singular, members numbered from 1).
 */
const QUERY_NAME: Record<string, string> = {
  Filters: 'Filter',
  Values: 'Value',
  InstanceIds: 'InstanceId',
  SecurityGroupIds: 'SecurityGroupId',
  TagSpecifications: 'TagSpecification',
  Tags: 'Tag',
}

/** EC2 query serialisation: Filter.1.Name, Filter.1.Value.1, MetadataOptions.HttpTokens, … (empty lists and undefined left out). */
export function queryParams(input: object, prefix = '', out: Array<[string, string]> = []): Array<[string, string]> {
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || value === null) continue
    const name = prefix + (QUERY_NAME[key] ?? key)
    if (Array.isArray(value)) {
      value.forEach((v: unknown, i) => (typeof v === 'object' && v !== null ? queryParams(v, `${name}.${i + 1}.`, out) : out.push([`${name}.${i + 1}`, String(v)])))
    } else if (typeof value === 'object') {
      queryParams(value as object, `${name}.`, out)
    } else {
      out.push([name, String(value)])
    }
  }
  return out
}

export interface Ec2QueryOptions extends HttpLimits {
  region: string
  /** The API's base URL: https://ec2.<region>.amazonaws.com, or a stand-in's. */
  endpoint: string
  credentials: () => Promise<AwsCredentials>
  /** For tests: the signing time. */
  now?: () => Date
}

/** EC2's regional endpoint (China's regions are under amazonaws.com.cn). */
export function ec2Endpoint(region: string): string {
  return `https://ec2.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`
}

export class Ec2Query implements Ec2Calls {
  constructor(private readonly o: Ec2QueryOptions) {}

  /** One call: the signed POST, then the answer's root element, or the Ec2Error EC2 answered. */
  async call(action: string, input: object): Promise<XmlElement> {
    const body = [['Action', action], ['Version', VERSION], ...queryParams(input)].map(([k, v]) => `${uriEncode(k!)}=${uriEncode(v!)}`).join('&')
    const url = new URL(this.o.endpoint)
    const credentials = await this.o.credentials()
    // The headers the SDK sends and signs (the invocation id and attempt are its retry bookkeeping;
    // kept so both send the same signed set).
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(body)),
      'x-amz-user-agent': 'citc',
      'amz-sdk-invocation-id': randomUUID(),
      'amz-sdk-request': 'attempt=1; max=1',
    }
    const signed = signV4({method: 'POST', url, headers, body}, {credentials, region: this.o.region, service: 'ec2', now: this.o.now?.() ?? new Date()})
    const answer = await httpExchange(url, {method: 'POST', headers: {...headers, ...signed, 'user-agent': 'citc'}, body, connectTimeoutMs: this.o.connectTimeoutMs, requestTimeoutMs: this.o.requestTimeoutMs})
    if (answer.status < 200 || answer.status >= 300) throw errorOf(answer)
    return parseXml(answer.body)
  }

  async describeInstances(input: DescribeInstancesInput): Promise<DescribeInstancesOutput> {
    const r = await this.call('DescribeInstances', input)
    return defined({Reservations: itemsOf(r, 'reservationSet')?.map(reservation), NextToken: textOf(r, 'nextToken')})
  }

  async runInstances(input: RunInstancesInput): Promise<Reservation> {
    return reservation(await this.call('RunInstances', input))
  }

  async terminateInstances(input: TerminateInstancesInput): Promise<TerminateInstancesOutput> {
    const r = await this.call('TerminateInstances', input)
    return defined({
      TerminatingInstances: itemsOf(r, 'instancesSet')?.map((i) =>
        defined({InstanceId: textOf(i, 'instanceId'), CurrentState: state(child(i, 'currentState')), PreviousState: state(child(i, 'previousState'))}),
      ),
    })
  }
}

/** The error in EC2's body (its code, message and RequestID), or just the status when there is none. */
function errorOf(a: HttpAnswer): Ec2Error {
  let root: XmlElement | undefined
  try {
    root = parseXml(a.body)
  } catch {
    root = undefined // an HTML page from a proxy, say: the status decides
  }
  const error = child(child(root, 'Errors'), 'Error') ?? child(root, 'Error')
  const code = textOf(error, 'Code')
  const header = a.headers['x-amzn-requestid'] ?? a.headers['x-amzn-request-id'] ?? a.headers['x-amz-request-id']
  return new Ec2Error({code, message: textOf(error, 'Message') ?? 'Unknown', status: a.status, requestId: typeof header === 'string' ? header : undefined, bodyRequestId: textOf(root, 'RequestID')})
}

/** The object without its undefined fields (the SDK leaves absent members out). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T
}

function state(e: XmlElement | undefined): InstanceState | undefined {
  if (!e) return undefined
  const code = textOf(e, 'code')
  return defined({Code: code === undefined ? undefined : Number(code), Name: textOf(e, 'name')})
}

function timestamp(s: string | undefined): Date | undefined {
  if (s === undefined) return undefined
  const d = new Date(s)
  if (Number.isNaN(d.getTime())) throw new Error(`EC2 answered a time that is not one: ${JSON.stringify(s)}`)
  return d
}

function instance(e: XmlElement): Instance {
  const placement = child(e, 'placement')
  return defined({
    InstanceId: textOf(e, 'instanceId'),
    ImageId: textOf(e, 'imageId'),
    State: state(child(e, 'instanceState')),
    InstanceType: textOf(e, 'instanceType'),
    LaunchTime: timestamp(textOf(e, 'launchTime')),
    Placement: placement && defined({AvailabilityZone: textOf(placement, 'availabilityZone')}),
    SubnetId: textOf(e, 'subnetId'),
    PrivateIpAddress: textOf(e, 'privateIpAddress'),
    Tags: itemsOf(e, 'tagSet')?.map((t) => defined({Key: textOf(t, 'key'), Value: textOf(t, 'value')})),
  })
}

function reservation(e: XmlElement): Reservation {
  return defined({ReservationId: textOf(e, 'reservationId'), OwnerId: textOf(e, 'ownerId'), Instances: itemsOf(e, 'instancesSet')?.map(instance)})
}
