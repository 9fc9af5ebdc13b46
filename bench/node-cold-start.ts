// Node program cold start per cloud: `citc node resume <one node>` (bin/run.js, the built CLI, as
// slurmctld runs it) against each fake cloud API (test/doubles/cloud-api: TEST DOUBLES, 127.0.0.1), compared
// with `node -e 0`. Goal (issue #24): ≤ 2.5×, bar ≤ 4×. Each run is a whole node program: CLI start,
// cluster.json, the driver and its SDK imported, credentials from the fake metadata server, list + create
// (+ Google's operation wait), the node's features read from a real slurmctld (test/helpers/slurm.ts's
// sandbox, on a loopback port) as on a management node. Needs `npm run build` and root (munged, slurmctld).
//
// Before and after in one run (the machine is shared and noisy: only ratios taken side by side compare):
// `--before DIR` names another citc checkout, built (e.g. `git worktree add /tmp/before main`, its
// node_modules linked, `npm run build` there). Its runs, this tree's and `node -e 0` take turns, each with
// a new node (none is adopted). Oracle: this tree caches its session token between runs (the stand-in's
// driver.stateDir, as /var/lib/citc/node-programs on a management node); the first run fetches it, and its
// time is printed apart ("first"), the median is over all runs.
// Where the time goes: BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' adds node options to this tree's runs.
// Run: npx tsx bench/node-cold-start.ts [runs=9] [--before DIR]
import {execFile} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'

import {slurmSandbox} from '../test/helpers/slurm.js'
import {startFakeEc2} from '../test/doubles/cloud-api/ec2.js'
import {startFakeGce} from '../test/doubles/cloud-api/gce.js'
import {startFakeMetadata} from '../test/doubles/cloud-api/gce-metadata.js'
import {FAKE_OCI, startFakeOci} from '../test/doubles/cloud-api/oci.js'

const args = process.argv.slice(2)
const beforeAt = args.indexOf('--before')
const beforeDir = beforeAt >= 0 ? resolve(args[beforeAt + 1] ?? '') : undefined
const RUNS = Number(args.find((a, i) => /^\d+$/.test(a) && (beforeAt < 0 || i !== beforeAt + 1)) ?? 9)
if (RUNS > 25) throw new Error('at most 25 runs: each run launches new nodes of 50 per shape')
const trees: Array<{label: string; bin: string; current: boolean}> = [{label: 'after', bin: join(import.meta.dirname, '..', 'bin', 'run.js'), current: true}]
if (beforeDir) {
  const bin = join(beforeDir, 'bin', 'run.js')
  if (!existsSync(join(beforeDir, 'dist'))) throw new Error(`--before ${beforeDir}: no dist/ there (run npm run build in it)`)
  trees.push({label: 'before', bin, current: false})
}

const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []

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

/** A child process without blocking this one (the fake clouds answer from here); its wall time. */
function timed(argv: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<number> {
  const t0 = performance.now()
  return new Promise((resolve, reject) =>
    execFile(process.execPath, argv, {env: {...env, ...extraEnv}, encoding: 'utf8', timeout: 60_000}, (error, stdout, stderr) => {
      const ms = performance.now() - t0
      if (error) reject(new Error(`${argv.join(' ')} failed (${error.code}):\n${stdout}${stderr}`))
      else resolve(ms)
    }),
  )
}

const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!

interface Cloud {
  provider: string
  driver: Record<string, unknown>
  endpoints: {api: string; metadata?: string}
  node(i: number): string
}

/** `citc node resume` per tree against a fake cloud, turn about with `node -e 0`: cluster.json and the doubles through a stand-in (src/lib/stand-in.ts). */
async function resume(c: Cloud, base: number[]): Promise<Map<string, number[]>> {
  const config = join(work, `${c.provider}.json`)
  writeFileSync(config, JSON.stringify({...common, provider: c.provider, driver: {...cloudCommon, ...c.driver}}))
  const standIns = new Map<string, string>()
  for (const t of trees) {
    const stateDir = join(work, `state-${c.provider}-${t.label}`)
    mkdirSync(stateDir, {mode: 0o700})
    const file = join(work, `${c.provider}.${t.label}.stand-in.json`)
    // The tree before this change knows no stateDir (its stand-in schema is strict).
    writeFileSync(file, JSON.stringify({clusterJson: config, driver: {endpoints: c.endpoints, imagesJson, ...(t.current ? {stateDir} : {})}}))
    standIns.set(t.label, file)
  }
  // The AWS and Google SDKs find their metadata service only through the environment.
  const sdkEnv = c.endpoints.metadata ? {AWS_EC2_METADATA_SERVICE_ENDPOINT: c.endpoints.metadata, GCE_METADATA_HOST: new URL(c.endpoints.metadata).host} : {}
  const ms = new Map(trees.map((t) => [t.label, [] as number[]]))
  let n = 0
  for (let k = 0; k < RUNS; k++) {
    base.push(await timed(['-e', '0']))
    // A new node each run: every run launches (none is adopted).
    for (const t of trees) ms.get(t.label)!.push(await timed([...(t.current ? nodeArgs : []), t.bin, 'node', 'resume', c.node(n++), '--stand-in', standIns.get(t.label)!], sdkEnv))
  }
  return ms
}

const ec2 = await startFakeEc2()
const metadata = await startFakeMetadata({project: 'bench'})
const gce = await startFakeGce({metadata, project: 'bench', zone: 'europe-west4-a'})
const oci = await startFakeOci()
const pad = (n: number) => String(n + 1).padStart(4, '0')
try {
  const clouds: Cloud[] = [
    {provider: 'aws', driver: {zone: 'eu-west-2a', vpcId: 'vpc-1', subnetId: 'subnet-1', securityGroupId: 'sg-1', nodeRoleArn: 'arn:aws:iam::1:role/bench', baseImage: {id: 'ami-1', os: 'debian-12'}}, endpoints: {api: ec2.url, metadata: ec2.metadataUrl}, node: (i) => `bench-c5-xlarge-${pad(i)}`},
    {provider: 'google', driver: {project: 'bench', zone: 'europe-west4-a', network: 'n', subnetwork: 's', networkTag: 'bench-compute', serviceAccount: 'sa@bench.iam.gserviceaccount.com', baseImage: {selfLink: 'debian-12', os: 'debian-12'}}, endpoints: {api: gce.url, metadata: metadata.url}, node: (i) => `bench-n2-standard-2-${pad(i)}`},
    {provider: 'oracle', driver: {region: FAKE_OCI.region, compartmentId: FAKE_OCI.compartment, availabilityDomain: FAKE_OCI.ad, adNumber: 1, vcnId: 'ocid1.vcn.oc1..bench', subnetId: FAKE_OCI.subnet, dnsDomain: 'bench.oraclevcn.com', baseImage: {id: 'ocid1.image.oc1..bench', os: 'debian-12'}}, endpoints: {api: oci.url, metadata: oci.metadataUrl}, node: (i) => `bench-e4-flex-${pad(i)}`},
  ]
  const base: number[] = []
  const rows: Array<[string, Map<string, number[]>]> = []
  for (const c of clouds) rows.push([c.provider, await resume(c, base)])
  const b = median(base)
  console.log(`node -e 0                          median ${b.toFixed(0)} ms (${base.length} runs, between the others)`)
  for (const [p, byTree] of rows) {
    for (const t of trees) {
      const ms = byTree.get(t.label)!
      const m = median(ms)
      console.log(`citc node resume (${p.padEnd(6)}) ${t.label.padEnd(6)} median ${m.toFixed(0).padStart(5)} ms = ${(m / b).toFixed(1)}× node -e 0 (first ${ms[0]!.toFixed(0)} ms; goal ≤ 2.5×, bar ≤ 4×)`)
    }
  }
  const each = RUNS * trees.length
  console.log(`launched: aws ${ec2.launches()}, google ${gce.instances.length}, oracle ${oci.instances.length} (${each} runs per cloud, each one node)`)
} finally {
  await Promise.all([ec2.close(), gce.close(), metadata.close(), oci.close(), slurm.stop()])
  rmSync(work, {recursive: true, force: true})
}
