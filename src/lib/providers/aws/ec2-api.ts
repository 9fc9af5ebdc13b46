// EC2 as the cloud driver core sees it (cloud-driver.ts's CloudApi): list the cluster's compute
// instances, launch one, terminate one, classify an error. The calls go through ec2-query.ts (EC2's
// Query API on node built-ins), not @aws-sdk/client-ec2, whose import was most of a node program's
// start-up (issue #24).
//
// The calls are shaped by the management node's role (templates/terraform/aws/iam.tf):
//   - RunInstances must carry cluster=<id> and type=compute as *request* tags on the instance and its
//     volume (the role may tag only while launching), into the cluster's subnet and security group;
//   - TerminateInstances is allowed only on instances tagged cluster=<id>, type=compute;
//   - compute nodes get no instance profile (iam.tf makes none for them: they call no AWS API), so
//     the role needs no iam:PassRole.
import {requireMetadataEnv} from '../metadata-env.js'
import type {CloudApi, LaunchRequest} from '../cloud-driver.js'
import type {CloudInstance, NodeSpec} from '../types.js'
import {type Ec2Calls, ec2Endpoint, Ec2Query, type Instance} from './ec2-query.js'
import {classifyAwsError} from './failures.js'
import {runtimeCredentials} from './runtime-credentials.js'

export interface Ec2ApiOptions {
  cluster: string
  region: string
  zone: string
  subnetId: string
  securityGroupId: string
  /**
   * A stand-in's (stand-in.ts): `api` the fake EC2; `metadata` the fake instance metadata service,
   * which is found (as the SDK found it) only through AWS_EC2_METADATA_SERVICE_ENDPOINT — the
   * environment must say it.
   */
  endpoints?: {api?: string; metadata?: string}
  /** How long one call may take (a stand-in may shorten it). */
  requestTimeoutMs?: number
}

/**
 * One EC2 call's limit: RunInstances answers in about a second, and a call that hangs must become a
 * (retried, transient) failure before the node program's deadline rather than hold it.
 */
const REQUEST_TIMEOUT_MS = 30_000

/** Until the connection is made (the SDK client's connectionTimeout before ec2-query.ts). */
const CONNECT_TIMEOUT_MS = 5_000

/** DescribeInstances pages read at most (1000 instances a page: far more than a cluster has). */
const MAX_PAGES = 50

/** EC2's states → the driver's; terminated ones are filtered out by the request already. */
const STATE: Record<string, CloudInstance['state']> = {
  pending: 'pending',
  running: 'running',
  // A stopped machine (nobody but an admin stops one) is still the node's: suspend must terminate it.
  stopping: 'stopping',
  stopped: 'stopping',
  'shutting-down': 'stopping',
  terminated: 'terminated',
}

/**
 * The calls the driver makes: no retries of their own (the driver core retries, with the same
 * ClientToken), signed with the environment's keys or the instance profile's (runtime-credentials.ts).
 */
export function ec2Calls(o: Pick<Ec2ApiOptions, 'region' | 'endpoints' | 'requestTimeoutMs'>): Ec2Calls {
  // Tests: the real IMDSv2 sequence against the fake metadata server, found through
  // AWS_EC2_METADATA_SERVICE_ENDPOINT only (as the AWS SDKs find it: "IMDS client" in their reference guide).
  requireMetadataEnv(o, 'AWS_EC2_METADATA_SERVICE_ENDPOINT', (url) => url)
  return new Ec2Query({
    region: o.region,
    endpoint: o.endpoints?.api ?? ec2Endpoint(o.region),
    credentials: runtimeCredentials(),
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    requestTimeoutMs: o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
  })
}

const tagOf = (i: Instance, key: string) => i.Tags?.find((t) => t.Key === key)?.Value

export function ec2Api(o: Ec2ApiOptions, client: Ec2Calls = ec2Calls(o)): CloudApi {
  const tags = (node: string) => [
    {Key: 'Name', Value: node},
    {Key: 'cluster', Value: o.cluster},
    {Key: 'type', Value: 'compute'},
  ]
  return {
    place: () => o.zone,

    async list() {
      const out: CloudInstance[] = []
      let token: string | undefined
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await client.describeInstances({
          Filters: [
            {Name: 'tag:cluster', Values: [o.cluster]},
            {Name: 'tag:type', Values: ['compute']},
            {Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down']},
          ],
          MaxResults: 1000,
          NextToken: token,
        })
        for (const res of r.Reservations ?? [])
          for (const i of res.Instances ?? []) {
            const name = tagOf(i, 'Name')
            const state = STATE[i.State?.Name ?? '']
            // Without a Name tag it is no node citc launched (every launch tags it): nothing to adopt or stop by name.
            if (!i.InstanceId || !name || !state || state === 'terminated') continue
            out.push({
              id: i.InstanceId,
              name,
              state,
              launchedAt: i.LaunchTime ? i.LaunchTime.getTime() : 0,
              ...(i.PrivateIpAddress ? {privateIp: i.PrivateIpAddress} : {}),
              ...(i.InstanceType ? {shape: i.InstanceType} : {}),
            })
          }
        token = r.NextToken
        if (!token) return out
      }
      throw new Error(`DescribeInstances returned more than ${MAX_PAGES} pages for cluster ${o.cluster}; giving up rather than acting on a partial list`)
    },

    async create(node: NodeSpec, launch: LaunchRequest) {
      const r = await client.runInstances({
        MinCount: 1,
        MaxCount: 1,
        ImageId: launch.imageId,
        InstanceType: node.shape,
        SubnetId: o.subnetId,
        SecurityGroupIds: [o.securityGroupId],
        UserData: Buffer.from(launch.userData, 'utf8').toString('base64'),
        // EC2 answers a repeat with the same token with the first launch's instance (idempotent).
        ClientToken: launch.token,
        TagSpecifications: [
          {ResourceType: 'instance', Tags: tags(node.name)},
          // The role's launch statement requires the request tags on the volume too (iam.tf), and
          // destroy's sweep finds the volume by them.
          {ResourceType: 'volume', Tags: tags(node.name)},
        ],
        // IMDSv2 only: a job on the node cannot read the metadata with a forged plain GET (SSRF).
        MetadataOptions: {HttpTokens: 'required'},
      })
      const i = r.Instances?.[0]
      if (!i?.InstanceId) throw new Error(`RunInstances for ${node.name} answered without an instance id`)
      return {id: i.InstanceId, ...(i.PrivateIpAddress ? {privateIp: i.PrivateIpAddress} : {})}
    },

    async terminate(instance: CloudInstance) {
      try {
        await client.terminateInstances({InstanceIds: [instance.id]})
      } catch (error) {
        // Already gone (terminated long ago and forgotten by EC2): what terminate wanted.
        if (classifyAwsError(error).code === 'InvalidInstanceID.NotFound') return
        throw error
      }
    },

    classify: classifyAwsError,
  }
}
