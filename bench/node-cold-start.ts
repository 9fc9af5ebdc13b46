// Node program cold start per cloud: `citc node resume <one node>` (bin/run.js, the built CLI, as
// slurmctld runs it) against each fake cloud API (test/doubles/cloud-api: TEST DOUBLES, 127.0.0.1), compared
// with `node -e 0`. Goal (issue #11): ≤ 4×. Each run is a whole node program: CLI start, cluster.json,
// the driver and its SDK imported, credentials from the fake metadata server, list + create (+ Google's
// operation wait), the node's features read from a real slurmctld (test/helpers/slurm.ts's sandbox, on a
// loopback port) as on a management node. Needs `npm run build` and root (munged, slurmctld).
// Run: npx tsx bench/node-cold-start.ts [runs=9]
import {execFile, spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {slurmSandbox} from '../test/helpers/slurm.js'
import {startFakeEc2} from '../test/doubles/cloud-api/ec2.js'
import {startFakeGce} from '../test/doubles/cloud-api/gce.js'
import {startFakeMetadata} from '../test/doubles/cloud-api/gce-metadata.js'
import {FAKE_OCI, startFakeOci} from '../test/doubles/cloud-api/oci.js'

const RUNS = Number(process.argv[2] ?? 9)
const bin = join(import.meta.dirname, '..', 'bin', 'run.js')
const work = mkdtempSync(join(tmpdir(), 'citc-node-cold-start-'))
const imagesJson = join(work, 'images.json')
writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: 'citc-slurm-compute-bench-v20260101000000', version: '20260101000000', id: 'img-bench'}}, inputs: {}}))
// The nodes as finish would declare them, each group with its shape feature.
const slurm = await slurmSandbox('bench')
writeFileSync(
  slurm.confPath,
  slurm.base +
    ['SuspendProgram=/bin/true', 'ResumeProgram=/bin/true', 'PrivateData=cloud', 'TreeWidth=65533',
      'NodeName=bench-c5-xlarge-[0001-0050] State=CLOUD CPUs=4 RealMemory=7000 Features=shape=c5.xlarge,arch=x86_64',
      'NodeName=bench-n2-standard-2-[0001-0050] State=CLOUD CPUs=2 RealMemory=7000 Features=shape=n2-standard-2,arch=x86_64',
      'NodeName=bench-e4-flex-[0001-0050] State=CLOUD CPUs=2 RealMemory=7000 Features=shape=VM.Standard.E4.Flex,ad=1,arch=x86_64',
      'PartitionName=p Nodes=bench-c5-xlarge-[0001-0050],bench-n2-standard-2-[0001-0050],bench-e4-flex-[0001-0050] Default=YES', ''].join('\n'),
)
await slurm.startController()
const common = {version: 1, name: 'bench', sharedDir: '/mnt/shared', slurmUser: 'slurm', programsDir: '/usr/local/libexec/citc', confPath: slurm.confPath, elasticLog: join(work, 'elastic.log')}
const cloudCommon = {region: 'eu-west-2', mgmtPrivateIp: '10.0.0.2', sharedFs: {host: '10.0.0.3', path: '/export', type: 'nfs', mountOptions: 'defaults'}}

// Credentials from the fake metadata servers only.
const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('GOOGLE_') && k !== 'GCE_METADATA_HOST'))
env.AWS_SHARED_CREDENTIALS_FILE = join(work, 'none')
env.AWS_CONFIG_FILE = join(work, 'none')

function median(argv: string[]): number {
  const ms: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    const r = spawnSync(process.execPath, argv, {env, encoding: 'utf8', timeout: 60_000})
    ms.push(performance.now() - t0)
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`)
  }
  ms.sort((a, b) => a - b)
  return ms[Math.floor(RUNS / 2)]!
}

/** A child process without blocking this one: the fake clouds answer from here. */
function runAsync(argv: string[], extraEnv: NodeJS.ProcessEnv): Promise<{status: number; out: string}> {
  return new Promise((resolve) =>
    execFile(process.execPath, argv, {env: {...env, ...extraEnv}, encoding: 'utf8', timeout: 60_000}, (error, stdout, stderr) =>
      resolve({status: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out: stdout + stderr}),
    ),
  )
}

/** `citc node resume` against a fake cloud: cluster.json and the doubles through a stand-in (src/lib/stand-in.ts). */
async function resume(provider: string, driver: Record<string, unknown>, endpoints: {api: string; metadata?: string}, node: (i: number) => string): Promise<number> {
  const config = join(work, `${provider}.json`)
  writeFileSync(config, JSON.stringify({...common, provider, driver: {...cloudCommon, ...driver}}))
  const standIn = join(work, `${provider}.stand-in.json`)
  writeFileSync(standIn, JSON.stringify({clusterJson: config, driver: {endpoints, imagesJson}}))
  // The AWS and Google SDKs find their metadata service only through the environment.
  const sdkEnv = endpoints.metadata ? {AWS_EC2_METADATA_SERVICE_ENDPOINT: endpoints.metadata, GCE_METADATA_HOST: new URL(endpoints.metadata).host} : {}
  // A new node each run: every run launches (none is adopted).
  const ms: number[] = []
  for (let k = 0; k < RUNS; k++) {
    const t0 = performance.now()
    const r = await runAsync([bin, 'node', 'resume', node(k), '--stand-in', standIn], sdkEnv)
    ms.push(performance.now() - t0)
    if (r.status !== 0) throw new Error(`node resume exited ${r.status}:\n${r.out}`)
  }
  ms.sort((a, b) => a - b)
  return ms[Math.floor(RUNS / 2)]!
}

const ec2 = await startFakeEc2()
const metadata = await startFakeMetadata({project: 'bench'})
const gce = await startFakeGce({metadata, project: 'bench', zone: 'europe-west4-a'})
const oci = await startFakeOci()
try {
  const base = median(['-e', '0'])
  const rows: Array<[string, number]> = [
    ['aws', await resume('aws', {zone: 'eu-west-2a', vpcId: 'vpc-1', subnetId: 'subnet-1', securityGroupId: 'sg-1', nodeRoleArn: 'arn:aws:iam::1:role/bench', baseImage: {id: 'ami-1', os: 'debian-12'}}, {api: ec2.url, metadata: ec2.metadataUrl}, (i) => `bench-c5-xlarge-${String(i + 1).padStart(4, '0')}`)],
    ['google', await resume('google', {project: 'bench', zone: 'europe-west4-a', network: 'n', subnetwork: 's', networkTag: 'bench-compute', serviceAccount: 'sa@bench.iam.gserviceaccount.com', baseImage: {selfLink: 'debian-12', os: 'debian-12'}}, {api: gce.url, metadata: metadata.url}, (i) => `bench-n2-standard-2-${String(i + 1).padStart(4, '0')}`)],
    ['oracle', await resume('oracle', {region: FAKE_OCI.region, compartmentId: FAKE_OCI.compartment, availabilityDomain: FAKE_OCI.ad, adNumber: 1, vcnId: 'ocid1.vcn.oc1..bench', subnetId: FAKE_OCI.subnet, dnsDomain: 'bench.oraclevcn.com', baseImage: {id: 'ocid1.image.oc1..bench', os: 'debian-12'}}, {api: oci.url, metadata: oci.metadataUrl}, (i) => `bench-e4-flex-${String(i + 1).padStart(4, '0')}`)],
  ]
  console.log(`node -e 0                 median ${base.toFixed(0)} ms (${RUNS} runs)`)
  for (const [p, ms] of rows) console.log(`citc node resume (${p.padEnd(6)}) median ${ms.toFixed(0)} ms = ${(ms / base).toFixed(1)}× (goal ≤ 4×)`)
  console.log(`launched: aws ${ec2.launches()}, google ${gce.instances.length}, oracle ${oci.instances.length} (each run one node)`)
} finally {
  await Promise.all([ec2.close(), gce.close(), metadata.close(), oci.close(), slurm.stop()])
  rmSync(work, {recursive: true, force: true})
}
