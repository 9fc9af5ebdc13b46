// Every row of the hand-built error tables (aws/, google/, oracle/failures.ts: AWS_ERROR_TABLE,
// GOOGLE_ERROR_TABLE, OCI_ERROR_TABLE) driven through the drivers' real clients (AWS: ec2-query.ts,
// each row also through @aws-sdk/client-ec2, which must classify the same; Google and Oracle: their SDKs) against the fake clouds
// (test/doubles/cloud-api, TEST DOUBLES): the fake answers the launch with that error in the cloud's own
// wire format (EC2's Query-API XML <Response><Errors><Error><Code>, Compute Engine's JSON error body or
// failed operation, OCI's JSON {code, message}) and its HTTP status, and the test asserts the class and
// the reason Slurm is given: each case runs the whole node program (runNodeProgram: `citc node resume`
// as slurmctld runs it, with the provider's real driver) and asserts the `scontrol update … State=DOWN
// Reason=…` it sends (slurmctld's side is a recording Controller).
// Retry budgets are 0, so a throttled or transient row shows its class after one attempt (that those
// are retried within budget is the drivers' own tests).
//
// Each table's codes must equal the cases here: a code added to a table without a fake-cloud case —
// or a case whose code left the table — fails the first test of its block.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {EC2Client, RunInstancesCommand} from '@aws-sdk/client-ec2'

import {AWS_ERROR_TABLE, classifyAwsError} from '../../../src/lib/providers/aws/failures.js'
import {GOOGLE_ERROR_TABLE} from '../../../src/lib/providers/google/failures.js'
import type {FailureClass} from '../../../src/lib/providers/node-failures.js'
import {OCI_ERROR_TABLE} from '../../../src/lib/providers/oracle/failures.js'
import {runNodeProgram} from '../../../src/lib/tasks/node/node-programs.js'
import {EC2_ERROR_STATUS, type FakeEc2, startFakeEc2} from '../../doubles/cloud-api/ec2.js'
import {type GoogleErrorForm, startFakeGce, type FakeGce} from '../../doubles/cloud-api/gce.js'
import {startFakeMetadata, type FakeMetadata} from '../../doubles/cloud-api/gce-metadata.js'
import {FAKE_OCI, startFakeOci, type FakeOci} from '../../doubles/cloud-api/oci.js'
import {AWS_ZONE, awsClusterJson, GOOGLE_PROJECT, GOOGLE_ZONE, googleClusterJson, isolateAwsEnv, oracleClusterJson, poweringUp, recordingController} from '../../helpers/cloud-node-program.js'

type Row = [code: string, status: number, cls: FailureClass]

/** The codes of a table by class, flattened to "class code" for comparing with the cases. */
const tableRows = (t: Readonly<Record<string, ReadonlySet<string>>>) => Object.entries(t).flatMap(([cls, codes]) => [...codes].map((c) => `${cls} ${c}`)).sort()
const caseRows = (rows: Row[]) => rows.map(([code, , cls]) => `${cls} ${code}`).sort()

/** Math.random at 0.5: with a zero budget the first backoff delay never fits, so one attempt per node. */
beforeEach(() => void vi.spyOn(Math, 'random').mockReturnValue(0.5))
afterEach(() => void vi.restoreAllMocks())

const work = mkdtempSync(join(tmpdir(), 'citc-error-table-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('AWS: every code of AWS_ERROR_TABLE, as EC2 answers RunInstances, reaches Slurm as the node\'s DOWN reason', () => {
  // Statuses as EC2 (or, for the SDK-wide throttling and signature codes, the AWS service that uses
  // them) answers them; EC2_ERROR_STATUS is the fake's own table where it has the code.
  const TABLE: Row[] = [
    ['RequestLimitExceeded', 503, 'throttled'],
    ['Throttling', 400, 'throttled'],
    ['ThrottlingException', 400, 'throttled'],
    ['ThrottledException', 400, 'throttled'],
    ['RequestThrottled', 400, 'throttled'],
    ['RequestThrottledException', 400, 'throttled'],
    ['TooManyRequestsException', 429, 'throttled'],
    ['EC2ThrottledException', 400, 'throttled'],
    ['SlowDown', 503, 'throttled'],
    ['PriorRequestNotComplete', 400, 'throttled'],
    ['BandwidthLimitExceeded', 400, 'throttled'],
    ['InsufficientInstanceCapacity', 500, 'capacity'],
    ['InsufficientHostCapacity', 500, 'capacity'],
    ['InsufficientReservedInstanceCapacity', 500, 'capacity'],
    ['MaxSpotInstanceCountExceeded', 400, 'capacity'],
    ['Unsupported', 400, 'capacity'],
    ['SpotMaxPriceTooLow', 400, 'capacity'],
    ['UnfulfillableCapacity', 500, 'capacity'],
    ['InsufficientCapacity', 500, 'capacity'],
    ['InstanceLimitExceeded', 400, 'quota'],
    ['VcpuLimitExceeded', 400, 'quota'],
    ['AuthFailure', 401, 'auth'],
    ['UnauthorizedOperation', 403, 'auth'],
    ['Blocked', 403, 'auth'],
    ['OptInRequired', 401, 'auth'],
    ['InvalidClientTokenId', 403, 'auth'],
    ['ExpiredToken', 400, 'auth'],
    ['RequestExpired', 400, 'auth'],
    ['SignatureDoesNotMatch', 403, 'auth'],
    ['AccessDenied', 403, 'auth'],
    ['AccessDeniedException', 403, 'auth'],
    ['InternalError', 500, 'transient'],
    ['InternalFailure', 500, 'transient'],
    ['ServiceUnavailable', 503, 'transient'],
    ['Unavailable', 503, 'transient'],
    ['RequestTimeout', 400, 'transient'],
  ]
  /** The rules after the table: Invalid*, Missing*, Malformed*, Unknown* are config; an unknown code by its status. */
  const RULES: Row[] = [
    ['InvalidParameterValue', 400, 'config'],
    ['InvalidAMIID.NotFound', 400, 'config'],
    ['InvalidSubnetID.NotFound', 400, 'config'],
    ['MissingParameter', 400, 'config'],
    ['MalformedQueryString', 400, 'config'],
    ['UnknownParameter', 400, 'config'],
    ['SomethingNewFromEc2', 400, 'config'],
    ['SomethingNewFromEc2', 502, 'transient'],
    ['SomethingNewFromEc2', 403, 'auth'],
  ]

  let fake: FakeEc2
  let restoreEnv: () => void
  let clusterJson: string
  /** The SDK the driver used before ec2-query.ts, as it was configured (no retries of its own). */
  let sdk: EC2Client
  beforeAll(async () => {
    restoreEnv = isolateAwsEnv(work)
    fake = await startFakeEc2()
    // Without its Node version warning (Node < 22): not this test's subject.
    const quiet = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined)
    sdk = new EC2Client({region: 'eu-west-2', endpoint: fake.url, maxAttempts: 1})
    quiet.mockRestore()
    const imagesJson = join(work, 'aws-images.json')
    writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: 'citc-slurm-compute-demo-v20261126000000', version: '20261126000000', id: 'ami-0x86000000000000001'}}, inputs: {}}))
    ;({clusterJson} = awsClusterJson(work, fake, {imagesJson, driver: {retryBudgetMs: 0}}))
  })
  afterAll(async () => {
    sdk?.destroy()
    await fake?.close()
    restoreEnv?.()
  })

  it('the cases are exactly the table\'s codes, each with its class', () => {
    expect(caseRows(TABLE)).toEqual(tableRows(AWS_ERROR_TABLE))
    // Where the fake EC2 knows a code's status, the case uses the same.
    for (const [code, status] of TABLE) if (code in EC2_ERROR_STATUS) expect(status, code).toBe(EC2_ERROR_STATUS[code])
  })

  it.each([...TABLE, ...RULES])('%s (HTTP %i) → %s', async (code, status, cls) => {
    const node = 'demo-c5-xlarge-0001'
    const message = `${code}: the fake EC2's message\nwith a second line (encoded policy dump)`
    // The same answer to the SDK first: its error classifies as the driver's client's must.
    fake.fail({op: 'RunInstances', code, status, times: 1, message})
    const sdkError = await sdk.send(new RunInstancesCommand({MinCount: 1, MaxCount: 1, ImageId: 'ami-0x86000000000000001', InstanceType: 'c5.xlarge'})).then(() => undefined, (e: unknown) => e)
    expect(classifyAwsError(sdkError)).toMatchObject({class: cls, code})
    fake.fail({op: 'RunInstances', code, status, times: 1, message})
    const before = fake.requests.length
    const slurm = recordingController([poweringUp(node, 'c5.xlarge')])
    const [outcome] = await runNodeProgram('resume', node, {clusterJson})
    const reason = `citc: ${cls}: ${code} for c5.xlarge in ${AWS_ZONE}`
    expect(outcome).toMatchObject({name: node, ok: false, error: reason, failure: {class: cls, code}, attempts: 1})
    // What Slurm is told: DOWN with the reason (no message, no second line), then powered down.
    expect(slurm.updates).toEqual([
      [`NodeName=${node}`, 'State=DOWN', `Reason=${reason}`],
      [`NodeName=${node}`, 'State=POWER_DOWN_FORCE'],
    ])
    // One launch, answered with the error's status in EC2's XML: the client parsed it (no retry of its own).
    const launches = fake.requests.slice(before).filter((r) => r.op === 'RunInstances')
    expect(launches.map((r) => r.status)).toEqual([status])
    expect(fake.instances).toEqual([])
  })
})

describe("the reasons docs/elastic-nodes.md shows", () => {
  it('name a code each table puts in that class', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/elastic-nodes.md'), 'utf8')
    const shown = [...doc.matchAll(/`citc: (capacity|quota|throttled|transient|auth|config): ([A-Za-z_.]+)/g)].map((m) => [m[1]!, m[2]!])
    expect(shown.length).toBeGreaterThanOrEqual(2)
    const inTable = (cls: string, code: string) =>
      (AWS_ERROR_TABLE as Record<string, ReadonlySet<string> | undefined>)[cls]?.has(code) ||
      (GOOGLE_ERROR_TABLE as Record<string, ReadonlySet<string> | undefined>)[cls]?.has(code) ||
      OCI_ERROR_TABLE[code]?.class === cls
    for (const [cls, code] of shown) expect(inTable(cls, code), `${cls} ${code}`).toBe(true)
  })
})

/** `citc node resume NODE` with cluster.json `clusterJson`: the node's outcome and what Slurm was told. */
async function resumeReported(clusterJson: string, node: string, shape: string, ad?: number) {
  const slurm = recordingController([poweringUp(node, shape, 'x86_64', ad)])
  const [outcome] = await runNodeProgram('resume', node, {clusterJson})
  return {outcome: outcome!, updates: slurm.updates}
}

/** The two updates a failed start sends: DOWN with the reason, then powered down. */
const downWith = (node: string, reason: string) => [
  [`NodeName=${node}`, 'State=DOWN', `Reason=${reason}`],
  [`NodeName=${node}`, 'State=POWER_DOWN_FORCE'],
]

describe('Google: every code of GOOGLE_ERROR_TABLE, as Compute Engine answers instances.insert, reaches Slurm as the DOWN reason', () => {
  // How each code reaches the client (Compute Engine API reference, "Handling API responses"; Cloud APIs
  // design guide, "Errors"): 'operation' = inside the finished insert operation (error.errors[].code,
  // httpErrorStatusCode); else an HTTP error whose JSON body has the code as errors[].reason
  // ('reason', Compute's v1 format), as its canonical `status` alone ('status'), or as the reason of
  // a google.rpc.ErrorInfo in `details` ('errorInfo').
  type GRow = [code: string, status: number, cls: FailureClass, via: 'operation' | GoogleErrorForm, reported?: string]
  const TABLE: GRow[] = [
    ['rateLimitExceeded', 403, 'throttled', 'reason'],
    ['userRateLimitExceeded', 403, 'throttled', 'reason'],
    ['RATE_LIMIT_EXCEEDED', 429, 'throttled', 'errorInfo'],
    ['RESOURCE_EXHAUSTED_RATE_LIMIT', 429, 'throttled', 'errorInfo'],
    ['ZONE_RESOURCE_POOL_EXHAUSTED', 503, 'capacity', 'operation'],
    ['ZONE_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 503, 'capacity', 'operation'],
    ['REGION_RESOURCE_POOL_EXHAUSTED', 503, 'capacity', 'operation'],
    ['REGION_RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 503, 'capacity', 'operation'],
    ['RESOURCE_POOL_EXHAUSTED', 503, 'capacity', 'operation'],
    ['RESOURCE_POOL_EXHAUSTED_WITH_DETAILS', 503, 'capacity', 'operation'],
    ['VM_MIN_COUNT_NOT_REACHED', 503, 'capacity', 'operation'],
    ['INSUFFICIENT_RESOURCE_CAPACITY', 503, 'capacity', 'operation'],
    ['insufficientCapacity', 503, 'capacity', 'reason'],
    ['resourcePoolExhausted', 503, 'capacity', 'reason'],
    ['QUOTA_EXCEEDED', 403, 'quota', 'operation'],
    ['quotaExceeded', 403, 'quota', 'reason'],
    ['forbidden', 403, 'auth', 'reason'],
    ['insufficientPermissions', 403, 'auth', 'reason'],
    ['authError', 401, 'auth', 'reason'],
    ['PERMISSION_DENIED', 403, 'auth', 'status'],
    ['UNAUTHENTICATED', 401, 'auth', 'status'],
    ['ACCESS_TOKEN_EXPIRED', 401, 'auth', 'errorInfo'],
    ['backendError', 503, 'transient', 'reason'],
    ['internalError', 500, 'transient', 'reason'],
    ['INTERNAL_ERROR', 500, 'transient', 'operation'],
    ['UNAVAILABLE', 503, 'transient', 'status'],
    ['INTERNAL', 500, 'transient', 'status'],
    ['DEADLINE_EXCEEDED', 504, 'transient', 'status'],
    ['ABORTED', 409, 'transient', 'status'],
  ]
  /** After the table: the status decides (404/400 config, 5xx transient, 401/403 auth). */
  const RULES: GRow[] = [
    ['notFound', 404, 'config', 'reason'],
    ['invalid', 400, 'config', 'reason'],
    ['RESOURCE_NOT_FOUND', 404, 'config', 'operation'],
    ['somethingNew', 502, 'transient', 'reason'],
    // An unknown reason beside the 403's canonical status: the status is in the table, and is the code.
    ['somethingNew', 403, 'auth', 'reason', 'PERMISSION_DENIED'],
  ]

  let metadata: FakeMetadata
  let gce: FakeGce
  let clusterJson: string
  let n = 0
  beforeAll(async () => {
    vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', '')
    vi.stubEnv('HOME', work)
    const imagesJson = join(work, 'google-images.json')
    writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: 'citc-slurm-compute-demo-v20261126000000', version: '20261126000000', id: 'citc-slurm-compute-demo-v20261126000000'}}, inputs: {}}))
    metadata = await startFakeMetadata({project: GOOGLE_PROJECT})
    vi.stubEnv('GCE_METADATA_HOST', new URL(metadata.url).host)
    gce = await startFakeGce({metadata, project: GOOGLE_PROJECT, zone: GOOGLE_ZONE})
    const dir = mkdtempSync(join(work, 'google-'))
    ;({clusterJson} = googleClusterJson(dir, gce, metadata, {imagesJson, driver: {retryBudgetMs: 0}}))
  })
  afterAll(async () => {
    await gce?.close()
    await metadata?.close()
    vi.unstubAllEnvs()
  })

  it('the cases are exactly the table\'s codes, each with its class', () => {
    expect(caseRows(TABLE.map(([c, s, k]) => [c, s, k]))).toEqual(tableRows(GOOGLE_ERROR_TABLE))
  })

  it.each([...TABLE, ...RULES])('%s (HTTP %i) → %s, in the %s', async (code, status, cls, via, reported = code) => {
    // A machine type of the case's own: the fault answers only its inserts. Twice: a client that asks
    // again after a 401/403 with a fresh token meets it again, as it would at Google.
    const shape = `n2-standard-${++n}`
    const node = `demo-${shape}-0001`
    if (via === 'operation') gce.fail({op: 'insert:operation', code, status, times: 2, shape, message: `${code}: the fake's message`})
    else gce.fail({op: 'insert', code, status, times: 2, shape, form: via, message: `${code}: the fake's message`})
    const {outcome, updates} = await resumeReported(clusterJson, node, shape)
    const reason = `citc: ${cls}: ${reported} for ${shape} in ${GOOGLE_ZONE}`
    expect(outcome).toMatchObject({ok: false, error: reason, failure: {class: cls, code: reported}, attempts: 1})
    expect(updates).toEqual(downWith(node, reason))
    expect(gce.instances).toEqual([])
  })
})

describe('Oracle: every row of OCI_ERROR_TABLE, as OCI answers LaunchInstance, reaches Slurm as the DOWN reason', () => {
  const TABLE: Row[] = [
    ['TooManyRequests', 429, 'throttled'],
    ['LimitExceeded', 400, 'quota'],
    ['QuotaExceeded', 400, 'quota'],
    ['IncorrectState', 409, 'transient'],
    ['NotAuthenticated', 401, 'auth'],
    ['NotAuthorizedOrNotFound', 404, 'auth'],
    ['NotAllowed', 403, 'auth'],
  ]
  /** Around the table: capacity in OCI's words (a 500), then the status. */
  const RULES: Array<[service: string, status: number, message: string, cls: FailureClass, code: string]> = [
    ['InternalError', 500, 'Out of host capacity.', 'capacity', 'Out of host capacity'],
    ['InternalError', 500, 'Out of capacity for shape VM.Standard.E4.Flex in AD-1.', 'capacity', 'Out of capacity for shape VM.Standard.E4.Flex in AD-1'],
    ['InternalError', 500, 'Internal error', 'transient', 'InternalError'],
    ['ServiceUnavailable', 503, 'Try again', 'transient', 'ServiceUnavailable'],
    ['IncorrectState', 400, 'not a 409', 'config', 'IncorrectState'],
    ['InvalidParameter', 400, 'Shape VM.Nope is not valid', 'config', 'InvalidParameter'],
    ['NotFound', 404, 'Not found', 'config', 'NotFound'],
  ]
  const SHAPE = 'VM.Standard.E4.Flex.2.16'
  const NODE = 'demo-e4-0001'

  let cloud: FakeOci
  let clusterJson: string
  beforeAll(async () => {
    const imagesJson = join(work, 'oracle-images.json')
    writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: 'citc-slurm-compute-demo-v20261126000000', version: '20261126000000', id: 'ocid1.image.oc1.uk-london-1.computex86'}}, inputs: {}}))
    cloud = await startFakeOci()
    const dir = mkdtempSync(join(work, 'oracle-'))
    ;({clusterJson} = oracleClusterJson(dir, cloud, {imagesJson, driver: {retryBudgetMs: 0}}))
  })
  afterAll(async () => {
    await cloud?.close()
  })
  beforeEach(() => cloud.reset())

  it('the cases are exactly the table\'s service codes, each with its class and status', () => {
    expect(TABLE.map(([code, , cls]) => `${cls} ${code}`).sort()).toEqual(Object.entries(OCI_ERROR_TABLE).map(([code, row]) => `${row.class} ${code}`).sort())
    for (const [code, status] of TABLE) if (OCI_ERROR_TABLE[code]?.status !== undefined) expect(status, code).toBe(OCI_ERROR_TABLE[code]!.status)
  })

  /** Twice: a signer that refreshes its session token after a 401 and asks again meets it again. */
  const launch = (service: string, status: number, message: string) => {
    cloud.fail({op: 'LaunchInstance', code: service, status, times: 2, message})
    return resumeReported(clusterJson, NODE, SHAPE, 1)
  }

  it.each(TABLE)('%s (HTTP %i) → %s', async (code, status, cls) => {
    const {outcome, updates} = await launch(code, status, `${code}: the fake's message`)
    const reason = `citc: ${cls}: ${code} for ${SHAPE} in ${FAKE_OCI.ad}`
    expect(outcome).toMatchObject({ok: false, error: reason, failure: {class: cls, code}, attempts: 1})
    expect(updates).toEqual(downWith(NODE, reason))
    expect(cloud.instances).toEqual([])
  })

  it.each(RULES)('%s (HTTP %i) "%s" → %s', async (service, status, message, cls, code) => {
    const {outcome, updates} = await launch(service, status, message)
    const reason = `citc: ${cls}: ${code} for ${SHAPE} in ${FAKE_OCI.ad}`
    expect(outcome).toMatchObject({ok: false, error: reason, failure: {class: cls, code}, attempts: 1})
    expect(updates).toEqual(downWith(NODE, reason))
  })
})
