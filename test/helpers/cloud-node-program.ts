// `citc node resume` of a cloud cluster in this process, as slurmctld would run it, against a fake cloud
// (test/doubles/cloud-api, TEST DOUBLES): a stand-in cluster.json with the provider's section and
// `standIn.driver` pointing at the fake and at an images.json, the real node program (runNodeProgram)
// and the real driver and SDK — slurmctld's side replaced by a recording Controller (spies, not
// vi.mock: unit files share their worker's module cache).
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {vi} from 'vitest'

import {Controller, type NodeState} from '../../src/lib/slurm/controller.js'
import type {DriverStandIn} from '../../src/lib/stand-in.js'
import {FAKE_EC2_SECTION, type FakeEc2} from '../doubles/cloud-api/ec2.js'
import type {FakeGce} from '../doubles/cloud-api/gce.js'
import type {FakeMetadata} from '../doubles/cloud-api/gce-metadata.js'
import {FAKE_OCI_SECTION, type FakeOci} from '../doubles/cloud-api/oci.js'

/** The environment the AWS SDK's default chain reads: emptied, so only the fake IMDS answers. */
const AWS_ENV = [
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_DEFAULT_PROFILE',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_ROLE_ARN', 'AWS_EC2_METADATA_DISABLED', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'AWS_REGION',
  'AWS_DEFAULT_REGION', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_EC2', 'AWS_EC2_METADATA_SERVICE_ENDPOINT',
  'AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE',
]

/** Empty the AWS environment (credential files pointed into `dir`, which holds none); returns the restore. */
export function isolateAwsEnv(dir: string): () => void {
  const saved = new Map(AWS_ENV.map((k) => [k, process.env[k]]))
  for (const k of AWS_ENV) delete process.env[k]
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'no-credentials')
  process.env.AWS_CONFIG_FILE = join(dir, 'no-config')
  return () => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

/**
 * A node programs' cluster.json in `dir` for cluster `name` on `provider`: its section of the provider
 * (`driver`) and the stand-in's driver part. Returns the file and its elastic log.
 */
export function writeClusterJson(dir: string, o: {name: string; provider: string; driver: Record<string, unknown>; standIn: DriverStandIn}): {clusterJson: string; elasticLog: string} {
  const clusterJson = join(dir, 'cluster.json')
  const elasticLog = join(dir, 'elastic.log')
  const doc = {
    version: 1,
    name: o.name,
    sharedDir: '/mnt/shared',
    slurmUser: 'root',
    programsDir: '/usr/local/libexec/citc',
    confPath: '/etc/slurm/slurm.conf',
    elasticLog,
    provider: o.provider,
    driver: o.driver,
    standIn: {driver: o.standIn},
  }
  writeFileSync(clusterJson, JSON.stringify(doc))
  return {clusterJson, elasticLog}
}

export const AWS_ZONE = FAKE_EC2_SECTION.zone

/**
 * cluster.json of AWS cluster `cluster` in `dir` whose node driver talks to `fake` and reads `imagesJson`;
 * sets the metadata endpoint the SDK reads from the environment (the stand-in requires it to agree).
 */
export function awsClusterJson(dir: string, fake: FakeEc2, o: {cluster?: string; imagesJson: string; driver?: DriverStandIn}): {clusterJson: string; elasticLog: string} {
  process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = fake.metadataUrl
  return writeClusterJson(dir, {
    name: o.cluster ?? 'demo',
    provider: 'aws',
    driver: FAKE_EC2_SECTION,
    standIn: {endpoints: {api: fake.url, metadata: fake.metadataUrl}, imagesJson: o.imagesJson, ...o.driver},
  })
}

export const GOOGLE_PROJECT = 'citc-test-project'
export const GOOGLE_ZONE = 'europe-west4-a'

/**
 * cluster.json of Google cluster `cluster` whose node driver talks to `gce` and `metadata`. The caller
 * points GCE_METADATA_HOST at `metadata` (google-auth-library reads it only from the environment, and
 * detects its metadata server once per process: one fake metadata server per test file).
 */
export function googleClusterJson(dir: string, gce: FakeGce, metadata: FakeMetadata, o: {cluster?: string; imagesJson: string; driver?: DriverStandIn}): {clusterJson: string; elasticLog: string} {
  return writeClusterJson(dir, {
    name: o.cluster ?? 'demo',
    provider: 'google',
    driver: {
      region: 'europe-west4',
      mgmtPrivateIp: '10.0.0.2',
      sharedFs: {host: '10.0.0.3', path: '/shared', type: 'nfs', mountOptions: 'nfsvers=3'},
      project: GOOGLE_PROJECT,
      zone: GOOGLE_ZONE,
      network: `https://www.googleapis.com/compute/v1/projects/${GOOGLE_PROJECT}/global/networks/citc-demo`,
      subnetwork: `https://www.googleapis.com/compute/v1/projects/${GOOGLE_PROJECT}/regions/europe-west4/subnetworks/citc-demo`,
      networkTag: 'citc-demo',
      serviceAccount: `citc-demo-mgmt@${GOOGLE_PROJECT}.iam.gserviceaccount.com`,
      baseImage: {selfLink: 'https://www.googleapis.com/compute/v1/projects/ubuntu-os-cloud/global/images/ubuntu-2404-noble-amd64-v20261101', os: 'ubuntu-24.04'},
    },
    standIn: {endpoints: {api: gce.url, metadata: metadata.url}, imagesJson: o.imagesJson, ...o.driver},
  })
}

/** cluster.json of Oracle cluster `cluster` whose node driver talks to the fake OCI `cloud` (its instance principal too). */
export function oracleClusterJson(dir: string, cloud: FakeOci, o: {cluster?: string; imagesJson: string; driver?: DriverStandIn}): {clusterJson: string; elasticLog: string} {
  return writeClusterJson(dir, {
    name: o.cluster ?? 'demo',
    provider: 'oracle',
    driver: FAKE_OCI_SECTION,
    standIn: {endpoints: {api: cloud.url, metadata: cloud.metadataUrl}, imagesJson: o.imagesJson, ...o.driver},
  })
}

/**
 * slurmctld as the node program sees it: `nodes` answers with these nodes (features shape=…,arch=…),
 * every `scontrol update` is recorded in `updates`. Restore with vi.restoreAllMocks().
 */
export function recordingController(nodes: NodeState[]): {updates: string[][]} {
  const updates: string[][] = []
  vi.spyOn(Controller.prototype, 'nodes').mockResolvedValue(nodes)
  vi.spyOn(Controller.prototype, 'update').mockImplementation(async (args: string[]) => void updates.push(args))
  return {updates}
}

/** A node powering up, of this shape and architecture (its Slurm features as finish writes them). */
export const poweringUp = (name: string, shape: string, arch = 'x86_64', ad?: number): NodeState => ({name, state: ['IDLE', 'POWERING_UP'], features: `shape=${shape},${ad === undefined ? '' : `ad=${ad},`}arch=${arch}`, gres: '(null)'})
