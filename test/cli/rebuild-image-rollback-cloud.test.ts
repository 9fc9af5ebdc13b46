// `citc rebuild-image --rollback` on an AWS cluster as a user runs it, and the launch that follows.
// The built CLI (bin/run.js) builds two images and rolls back to the first; then `citc node resume`
// (the real node program, AWS driver and @aws-sdk/client-ec2) launches a node, and the fake EC2 is
// asked for the FIRST image's AMI id — the promise of --rollback ("new nodes start from it").
//
// The management node is a real OpenSSH sshd on loopback (test/helpers/sshd.ts) recorded in the
// cluster's cluster.yaml; on it `packer` is the packer TEST DOUBLE (test/doubles/bin/packer, through
// sshd's SetEnv), which "creates" each image in the cloud API double's state that the aws CLI double
// on this machine lists. The image builds' files on the node (images.json, host keys, build dir) live
// under this test's directory: rebuild-image's hidden --stand-in managementNode.imageRoot.
// EC2 is the fake EC2 (test/doubles/cloud-api/ec2.ts); slurmctld's side is a recording Controller.
import {mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {ClusterRegistry} from '../../src/lib/cluster/registry.js'
import {sleep} from '../../src/lib/proc.js'
import {parseImageState} from '../../src/lib/providers/cloud-image-state.js'
import {runNodeProgram} from '../../src/lib/tasks/node/node-programs.js'
import {startFakeEc2, type FakeEc2} from '../doubles/cloud-api/ec2.js'
import {awsClusterJson, isolateAwsEnv, poweringUp, recordingController} from '../helpers/cloud-node-program.js'
import {citc, ROOT, type CliResult} from '../helpers/cli.js'
import {doublesEnv, packerBuilds, packerDoubleEnv} from '../helpers/cloud.js'
import {cloudRecord} from '../helpers/cloud-records.js'
import {startSshd, type SshdSandbox} from '../helpers/sshd.js'

const NAME = 'demo'
const work = mkdtempSync(join(tmpdir(), 'citc-rollback-cloud-'))
const dataDir = join(work, 'data')
const prefix = join(work, 'remote-citc') // where citc is "installed" on the management node
const packageRoot = join(prefix, 'lib', 'node_modules', 'citc')
const nodeRoot = join(work, 'node-root') // the management node's / for the image builds' files
const imagesJson = join(nodeRoot, 'etc', 'citc', 'images.json')
const cloudState = join(work, 'cloud.json')
const packerLog = join(work, 'packer-calls.log')
const standInFile = join(work, 'stand-in.json')
let sshd: SshdSandbox
let restoreEnv: () => void

beforeAll(async () => {
  mkdirSync(join(packageRoot, 'playbooks'), {recursive: true})
  symlinkSync(join(ROOT, 'templates'), join(packageRoot, 'templates'))
  writeFileSync(join(packageRoot, 'playbooks', 'compute.yml'), '- hosts: all\n  tasks: []\n') // the double does not run it
  mkdirSync(join(nodeRoot, 'etc', 'munge'), {recursive: true})
  writeFileSync(join(nodeRoot, 'etc', 'munge', 'munge.key'), Buffer.alloc(1024, 7), {mode: 0o400})
  writeFileSync(cloudState, JSON.stringify({resources: []}))
  mkdirSync(join(work, 'home'))
  writeFileSync(standInFile, JSON.stringify({managementNode: {imageRoot: nodeRoot}}))
  sshd = await startSshd({setEnv: packerDoubleEnv({cloudState, packerLog})})
  const record = cloudRecord('aws', NAME, {prefix})
  new ClusterRegistry(dataDir).create({
    ...record,
    phase: 'ready',
    mgmt: {host: sshd.host, port: sshd.port, user: sshd.user, keyPath: sshd.clientKeyPath, hostKeyFingerprint: sshd.hostKeyFingerprint, hostname: 'mgmt', sudo: false},
  })
  restoreEnv = isolateAwsEnv(work)
}, 60_000)

afterAll(async () => {
  restoreEnv?.()
  await sshd?.stop()
  rmSync(work, {recursive: true, force: true})
})

afterEach(() => {
  vi.restoreAllMocks()
})

const env = () => doublesEnv({dataDir, home: join(work, 'home'), tfLog: join(work, 'tf.log'), cloudState})
const rebuildImage = (...args: string[]): Promise<CliResult> => citc(['rebuild-image', '-c', NAME, '--json', '--stand-in', standInFile, ...args], {env: env(), timeoutMs: 120_000})
const current = () => parseImageState(readFileSync(imagesJson, 'utf8')).current.x86_64

/** Image versions are UTC seconds: the next build must not share the previous one's. */
const nextSecond = () => sleep(1000 - (Date.now() % 1000) + 20)

/** `citc node resume NODE` (c5.xlarge, x86_64) against a fresh fake EC2; the AMI id it launched. */
async function resumeOneNode(node: string): Promise<string> {
  const fake: FakeEc2 = await startFakeEc2()
  try {
    const dir = mkdtempSync(join(work, 'resume-'))
    const {clusterJson} = awsClusterJson(dir, fake, {cluster: NAME, imagesJson})
    const slurm = recordingController([poweringUp(node, 'c5.xlarge')])
    const outcomes = await runNodeProgram('resume', node, {clusterJson})
    expect(outcomes.map((o) => [o.name, o.ok, o.error])).toEqual([[node, true, undefined]])
    expect(slurm.updates).toEqual([])
    const runs = fake.requests.filter((r) => r.op === 'RunInstances')
    expect(runs).toHaveLength(1)
    expect(fake.instances.map((i) => i.name)).toEqual([node])
    return new URLSearchParams(runs[0]!.body).get('ImageId')!
  } finally {
    await fake.close()
  }
}

describe('citc rebuild-image --rollback on an aws cluster (built CLI; packer, the cloud and EC2 are TEST DOUBLES)', () => {
  const built: Array<{name: string; version: string; id: string}> = []

  it('two builds: each becomes current in images.json with its AMI id, and a node launches from the newest', async () => {
    for (let n = 0; n < 2; n++) {
      if (n > 0) await nextSecond()
      const r = await rebuildImage('--yes')
      expect(r.code, r.stderr).toBe(0)
      const image = r.json().image as {name: string; version: string; id: string}
      expect(image.id).toMatch(/^ami-0[0-9a-f]{16}$/)
      expect(current()).toEqual({name: image.name, version: image.version, id: image.id})
      built.push(image)
    }
    expect(packerBuilds(packerLog)).toHaveLength(2)
    expect(built[0]!.id).not.toBe(built[1]!.id)
    expect(await resumeOneNode('demo-c5-xlarge-0001')).toBe(built[1]!.id)
  }, 240_000)

  it('--rollback makes the first image current again (both still listed), and the next launch asks EC2 for its AMI id', async () => {
    const [first, second] = built
    const r = await rebuildImage('--rollback', '--yes')
    expect(r.code, r.stderr).toBe(0)
    expect(r.json()).toMatchObject({cluster: NAME, current: {name: first!.name, version: first!.version, id: first!.id}, previous: second!.name})
    expect(current()).toEqual({name: first!.name, version: first!.version, id: first!.id})

    const list = await rebuildImage('--list')
    expect(list.code, list.stderr).toBe(0)
    const images = list.json().images as Array<{name: string; current: boolean}>
    expect(images.map((i) => [i.name, i.current])).toEqual([
      [second!.name, false],
      [first!.name, true],
    ])

    expect(await resumeOneNode('demo-c5-xlarge-0002')).toBe(first!.id)
    // No build ran for the rollback.
    expect(packerBuilds(packerLog)).toHaveLength(2)
  }, 240_000)

  it('--rollback VERSION goes forward again to the newer image, and launches follow it', async () => {
    const [first, second] = built
    const r = await rebuildImage('--rollback', second!.version, '--yes')
    expect(r.code, r.stderr).toBe(0)
    expect(r.json()).toMatchObject({current: {name: second!.name, id: second!.id}, previous: first!.name})
    expect(await resumeOneNode('demo-c5-xlarge-0003')).toBe(second!.id)
  }, 240_000)
})
