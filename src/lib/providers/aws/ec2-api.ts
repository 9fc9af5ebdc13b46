// EC2 as the cloud driver core sees it (cloud-driver.ts's CloudApi): list the cluster's compute
// instances, launch one, terminate one, classify an error. Loaded only by driver.ts, so the node
// programs pay for @aws-sdk/client-ec2 (~0.6 s to import) only when they drive AWS.
//
// The calls are shaped by the management node's role (templates/terraform/aws/iam.tf):
//   - RunInstances must carry cluster=<id> and type=compute as *request* tags on the instance and its
//     volume (the role may tag only while launching), into the cluster's subnet and security group;
//   - TerminateInstances is allowed only on instances tagged cluster=<id>, type=compute;
//   - compute nodes get no instance profile (iam.tf makes none for them: they call no AWS API), so
//     the role needs no iam:PassRole.
import {
  DescribeInstancesCommand,
  EC2Client,
  type Instance,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2'

import {requireMetadataEnv} from '../metadata-env.js'
import type {CloudApi, LaunchRequest} from '../cloud-driver.js'
import type {CloudInstance, NodeSpec} from '../types.js'
import {classifyAwsError} from './failures.js'

export interface Ec2ApiOptions {
  cluster: string
  region: string
  zone: string
  subnetId: string
  securityGroupId: string
  /**
   * A stand-in's (stand-in.ts): `api` the fake EC2; `metadata` the fake instance metadata service,
   * which the SDK finds only through AWS_EC2_METADATA_SERVICE_ENDPOINT — the environment must say it.
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
 * The client the driver uses: no SDK retries (maxAttempts 1: the driver core retries, with the same
 * ClientToken), the SDK's default credentials chain (on the management node: its instance profile
 * through IMDSv2).
 */
export function ec2Client(o: Pick<Ec2ApiOptions, 'region' | 'endpoints' | 'requestTimeoutMs'>): EC2Client {
  // Tests: the real default chain against the fake metadata server, which the SDK reads from
  // AWS_EC2_METADATA_SERVICE_ENDPOINT only (the AWS SDKs and Tools reference guide, "IMDS client").
  requireMetadataEnv(o, 'AWS_EC2_METADATA_SERVICE_ENDPOINT', (url) => url)
  return withoutNodeVersionWarning(
    () =>
      new EC2Client({
        region: o.region,
        maxAttempts: 1,
        ...(o.endpoints?.api ? {endpoint: o.endpoints.api} : {}),
        // The SDK's default is no timeout at all; and without throwOnRequestTimeout a timeout is only a
        // logged warning while the call goes on waiting.
        requestHandler: {connectionTimeout: 5_000, requestTimeout: o.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true},
      }),
  )
}

/**
 * `make()` without the SDK's NodeVersionSupportWarning. Under Node < 22 the client's constructor emits
 * it (process.emitWarning, once per process): every node program is a process, and its stderr goes
 * to slurmctld's log, so the warning would repeat there on every resume and suspend. Which Node citc
 * runs on is the management node's installation's choice, not one a node program can act on. Other
 * warnings pass through; the SDK's own switch (an environment variable) would need writing process.env.
 */
export function withoutNodeVersionWarning<T>(make: () => T): T {
  const emit = process.emitWarning
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (String(warning instanceof Error ? warning.message : warning).startsWith('NodeVersionSupportWarning')) return
    return (emit as (...a: unknown[]) => void).call(process, warning, ...rest)
  } as typeof process.emitWarning
  try {
    return make()
  } finally {
    process.emitWarning = emit
  }
}

const tagOf = (i: Instance, key: string) => i.Tags?.find((t) => t.Key === key)?.Value

export function ec2Api(o: Ec2ApiOptions, client: EC2Client = ec2Client(o)): CloudApi {
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
        const r = await client.send(
          new DescribeInstancesCommand({
            Filters: [
              {Name: 'tag:cluster', Values: [o.cluster]},
              {Name: 'tag:type', Values: ['compute']},
              {Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped', 'shutting-down']},
            ],
            MaxResults: 1000,
            NextToken: token,
          }),
        )
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
      const r = await client.send(
        new RunInstancesCommand({
          MinCount: 1,
          MaxCount: 1,
          ImageId: launch.imageId,
          InstanceType: node.shape as never,
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
        }),
      )
      const i = r.Instances?.[0]
      if (!i?.InstanceId) throw new Error(`RunInstances for ${node.name} answered without an instance id`)
      return {id: i.InstanceId, ...(i.PrivateIpAddress ? {privateIp: i.PrivateIpAddress} : {})}
    },

    async terminate(instance: CloudInstance) {
      try {
        await client.send(new TerminateInstancesCommand({InstanceIds: [instance.id]}))
      } catch (error) {
        // Already gone (terminated long ago and forgotten by EC2): what terminate wanted.
        if (classifyAwsError(error).code === 'InvalidInstanceID.NotFound') return
        throw error
      }
    },

    classify: classifyAwsError,
  }
}
