// `citc rebuild-image --rollback` on a cloud cluster (AWS, Google, Oracle) as a user runs it, and the
// launch that follows. The built CLI (bin/run.js) builds two images and rolls back to the first; then
// `citc node resume` (the real node program, the cloud's driver and SDK) launches a node, and the fake
// cloud is asked for the FIRST image — the promise of --rollback ("new nodes start from it"); then
// `--rollback VERSION` goes forward again and the next launch follows.
//
// The management node is a real OpenSSH sshd on loopback (test/helpers/sshd.ts) recorded in each
// cluster's cluster.yaml; on it `packer` is the packer TEST DOUBLE (test/doubles/bin/packer, through
// sshd's SetEnv), which "creates" each image in the cloud API double's state that the cloud's CLI double
// on this machine (aws, gcloud, oci) lists. The image builds' files on the node (images.json, host keys,
// build dir) live under this test's directory: rebuild-image's hidden --stand-in managementNode.imageRoot.
// The clouds' APIs are the fake EC2, Compute Engine and OCI (test/doubles/cloud-api); slurmctld's side
// is a recording Controller.
import {mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {ClusterRegistry} from '../../src/lib/cluster/registry.js'
import {sleep} from '../../src/lib/proc.js'
import {parseImageState} from '../../src/lib/providers/cloud-image-state.js'
import {sourceImage} from '../../src/lib/providers/google/compute-api.js'
import type {CloudProvider} from '../../src/lib/providers/registry.js'
import {runNodeProgram} from '../../src/lib/tasks/node/node-programs.js'
import {startFakeEc2} from '../doubles/cloud-api/ec2.js'
import {startFakeGce} from '../doubles/cloud-api/gce.js'
import {startFakeMetadata, type FakeMetadata} from '../doubles/cloud-api/gce-metadata.js'
import {startFakeOci} from '../doubles/cloud-api/oci.js'
import type {FakeCloud} from '../doubles/cloud-api/types.js'
import {awsClusterJson, GOOGLE_PROJECT, GOOGLE_ZONE, googleClusterJson, isolateAwsEnv, oracleClusterJson, poweringUp, recordingController} from '../helpers/cloud-node-program.js'
import {citc, ROOT, type CliResult} from '../helpers/cli.js'
import {doublesEnv, packerBuilds, packerDoubleEnv} from '../helpers/cloud.js'
import {cloudRecord} from '../helpers/cloud-records.js'
import {startSshd, type SshdSandbox} from '../helpers/sshd.js'

const work = mkdtempSync(join(tmpdir(), 'citc-rollback-cloud-'))
const dataDir = join(work, 'data')
const prefix = join(work, 'remote-citc') // where citc is "installed" on the management node
const packageRoot = join(prefix, 'lib', 'node_modules', 'citc')
const cloudState = join(work, 'cloud.json')
const packerLog = join(work, 'packer-calls.log')
let sshd: SshdSandbox
let metadata: FakeMetadata
let restoreEnv: () => void

beforeAll(async () => {
  mkdirSync(join(packageRoot, 'playbooks'), {recursive: true})
  symlinkSync(join(ROOT, 'templates'), join(packageRoot, 'templates'))
  writeFileSync(join(packageRoot, 'playbooks', 'compute.yml'), '- hosts: all\n  tasks: []\n') // the double does not run it
  writeFileSync(cloudState, JSON.stringify({resources: []}))
  mkdirSync(join(work, 'home'))
  sshd = await startSshd({setEnv: packerDoubleEnv({cloudState, packerLog})})
  restoreEnv = isolateAwsEnv(work)
  // Google's client finds its metadata server only through GCE_METADATA_HOST, once per process: one for the file.
  vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', '')
  metadata = await startFakeMetadata({project: GOOGLE_PROJECT})
  vi.stubEnv('GCE_METADATA_HOST', new URL(metadata.url).host)
}, 60_000)

afterAll(async () => {
  await metadata?.close()
  vi.unstubAllEnvs()
  restoreEnv?.()
  await sshd?.stop()
  rmSync(work, {recursive: true, force: true})
})

afterEach(() => {
  vi.restoreAllMocks()
})

/** Image versions are UTC seconds: the next build must not share the previous one's. */
const nextSecond = () => sleep(1000 - (Date.now() % 1000) + 20)

interface Launcher {
  shape: string
  ad?: number
  /** A fake of this cloud's API; the image the launch asked for, read from its request. */
  start(): Promise<FakeCloud>
  clusterJson(dir: string, fake: FakeCloud, imagesJson: string): string
  launchedImage(fake: FakeCloud): string
  /** The image as the launch names it, from images.json's id. */
  asLaunched(id: string): string
  /** Google: the citc-image-version label the launch gave (what --list counts a node's image by). */
  versionLabel?(fake: FakeCloud): string
}

const body = (r: {body: string}) => JSON.parse(r.body) as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
const only = <T>(xs: T[]): T => {
  expect(xs).toHaveLength(1)
  return xs[0]!
}

const LAUNCHERS: Record<CloudProvider, Launcher> = {
  aws: {
    shape: 'c5.xlarge',
    start: () => startFakeEc2(),
    clusterJson: (dir, fake, imagesJson) => awsClusterJson(dir, fake as Awaited<ReturnType<typeof startFakeEc2>>, {imagesJson}).clusterJson,
    launchedImage: (fake) => new URLSearchParams(only(fake.requests.filter((r) => r.op === 'RunInstances')).body).get('ImageId')!,
    asLaunched: (id) => id,
  },
  google: {
    shape: 'n2-standard-2',
    start: () => startFakeGce({metadata, project: GOOGLE_PROJECT, zone: GOOGLE_ZONE}),
    clusterJson: (dir, fake, imagesJson) => googleClusterJson(dir, fake as Awaited<ReturnType<typeof startFakeGce>>, metadata, {imagesJson}).clusterJson,
    launchedImage: (fake) => body(only(fake.requests.filter((r) => r.op === 'insert'))).disks.find((d: {boot?: boolean}) => d.boot).initializeParams.sourceImage,
    asLaunched: (id) => sourceImage(GOOGLE_PROJECT, id),
    versionLabel: (fake) => body(only(fake.requests.filter((r) => r.op === 'insert'))).labels['citc-image-version'],
  },
  oracle: {
    shape: 'VM.Standard.E4.Flex.2.16',
    ad: 1,
    start: () => startFakeOci(),
    clusterJson: (dir, fake, imagesJson) => oracleClusterJson(dir, fake as Awaited<ReturnType<typeof startFakeOci>>, {imagesJson}).clusterJson,
    launchedImage: (fake) => body(only(fake.requests.filter((r) => r.op === 'LaunchInstance'))).sourceDetails.imageId,
    asLaunched: (id) => id,
  },
}

describe.each(['aws', 'google', 'oracle'] as const)('citc rebuild-image --rollback on a %s cluster (built CLI; packer, the cloud and its API are TEST DOUBLES)', (provider) => {
  const name = `rb${provider.slice(0, 3)}`
  const nodeRoot = join(work, `node-root-${provider}`) // the management node's / for the image builds' files
  const imagesJson = join(nodeRoot, 'etc', 'citc', 'images.json')
  const standInFile = join(work, `stand-in-${provider}.json`)
  const launcher = LAUNCHERS[provider]
  const built: Array<{name: string; version: string; id: string}> = []
  let nodes = 0

  beforeAll(() => {
    mkdirSync(join(nodeRoot, 'etc', 'munge'), {recursive: true})
    writeFileSync(join(nodeRoot, 'etc', 'munge', 'munge.key'), Buffer.alloc(1024, 7), {mode: 0o400})
    writeFileSync(standInFile, JSON.stringify({managementNode: {imageRoot: nodeRoot}}))
    new ClusterRegistry(dataDir).create({
      ...cloudRecord(provider, name, {prefix}),
      phase: 'ready',
      mgmt: {host: sshd.host, port: sshd.port, user: sshd.user, keyPath: sshd.clientKeyPath, hostKeyFingerprint: sshd.hostKeyFingerprint, hostname: 'mgmt', sudo: false},
    })
  })

  const env = () => doublesEnv({dataDir, home: join(work, 'home'), tfLog: join(work, 'tf.log'), cloudState})
  const rebuildImage = (...args: string[]): Promise<CliResult> => citc(['rebuild-image', '-c', name, '--json', '--stand-in', standInFile, ...args], {env: env(), timeoutMs: 120_000})
  const current = () => parseImageState(readFileSync(imagesJson, 'utf8')).current.x86_64
  const builds = () => packerBuilds(packerLog).filter((b) => b.includes(`/node-root-${provider}/`))

  /** `citc node resume` of one new node against a fresh fake of the cloud's API; the image it launched (Google: and labelled). */
  async function resumeOneNode(): Promise<string> {
    const fake = await launcher.start()
    try {
      const node = `${name}-node-${String(++nodes).padStart(4, '0')}`
      const clusterJson = launcher.clusterJson(mkdtempSync(join(work, 'resume-')), fake, imagesJson)
      const slurm = recordingController([poweringUp(node, launcher.shape, 'x86_64', launcher.ad)])
      const outcomes = await runNodeProgram('resume', node, {clusterJson})
      expect(outcomes.map((o) => [o.name, o.ok, o.error])).toEqual([[node, true, undefined]])
      expect(slurm.updates).toEqual([])
      expect(fake.instances.map((i) => i.name)).toEqual([node])
      const image = launcher.launchedImage(fake)
      if (launcher.versionLabel) expect(launcher.versionLabel(fake)).toBe(built.find((b) => launcher.asLaunched(b.id) === image)?.version)
      return image
    } finally {
      await fake.close()
    }
  }

  it('two builds: each becomes current in images.json with its id, and a node launches from the newest', async () => {
    for (let n = 0; n < 2; n++) {
      await nextSecond()
      const r = await rebuildImage('--yes')
      expect(r.code, r.stderr).toBe(0)
      const image = r.json().image as {name: string; version: string; id: string}
      expect(image.id).toBeTruthy()
      expect(current()).toEqual({name: image.name, version: image.version, id: image.id})
      built.push(image)
    }
    expect(builds()).toHaveLength(2)
    expect(built[0]!.id).not.toBe(built[1]!.id)
    expect(await resumeOneNode()).toBe(launcher.asLaunched(built[1]!.id))
  }, 240_000)

  it('--rollback makes the first image current again (both still listed), and the next launch asks for it', async () => {
    const [first, second] = built
    const r = await rebuildImage('--rollback', '--yes')
    expect(r.code, r.stderr).toBe(0)
    expect(r.json()).toMatchObject({cluster: name, current: {name: first!.name, version: first!.version, id: first!.id}, previous: second!.name})
    expect(current()).toEqual({name: first!.name, version: first!.version, id: first!.id})

    const list = await rebuildImage('--list')
    expect(list.code, list.stderr).toBe(0)
    const images = list.json().images as Array<{name: string; current: boolean}>
    expect(images.map((i) => [i.name, i.current])).toEqual([
      [second!.name, false],
      [first!.name, true],
    ])

    expect(await resumeOneNode()).toBe(launcher.asLaunched(first!.id))
    expect(builds()).toHaveLength(2) // no build ran for the rollback
  }, 240_000)

  it('--rollback VERSION goes forward again to the newer image, and launches follow it', async () => {
    const [first, second] = built
    const r = await rebuildImage('--rollback', second!.version, '--yes')
    expect(r.code, r.stderr).toBe(0)
    expect(r.json()).toMatchObject({current: {name: second!.name, id: second!.id}, previous: first!.name})
    expect(await resumeOneNode()).toBe(launcher.asLaunched(second!.id))
  }, 240_000)
})
