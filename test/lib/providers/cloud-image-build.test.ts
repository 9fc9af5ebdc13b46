// A cloud image build end to end on this machine: the management node is a real OpenSSH sshd on
// loopback (test/helpers/sshd.ts) reached with citc's SSH transport, `packer` on its PATH is the
// TEST DOUBLE test/doubles/bin/packer (it checks its arguments and the var file as Packer would, "creates"
// the image in the cloud API double's state and writes the manifest), and the cloud's CLI on this
// machine is the cloud API double (test/doubles/bin/aws). What runs is citc's own: the image steps of
// create (createImageSteps) and of rebuild-image (image-steps.ts) in a workflow, the real buildImage
// (src/lib/images/build.ts) and the aws image builder — so a change that breaks any of them for
// clouds fails here. The var files hold the shared, the cloud's and compute.yml's variables; the
// compute nodes' host keys are made on the node once; collect finds the image by its tags, use
// records it as current in images.json with its inputs, list shows it; create's re-run with nothing
// changed builds nothing; a failed build leaves no image and the current one unchanged.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import type {ImageRecord} from '../../../src/lib/providers/image-types.js'
import {sleep} from '../../../src/lib/proc.js'
import {createAwsImageBuilder} from '../../../src/lib/providers/aws/image-builder.js'
import type {CloudImagePaths} from '../../../src/lib/providers/cloud-image-builder.js'
import {parseImageState} from '../../../src/lib/providers/cloud-image-state.js'
import {connectSsh, type SshTransport} from '../../../src/lib/transport/ssh/index.js'
import type {Transport} from '../../../src/lib/transport/types.js'
import {buildStep, createImageSteps, type ImageContext, installImageTools, inputsStep, pruneStep, useStep} from '../../../src/lib/tasks/rebuild-image/image-steps.js'
import {DEFAULT_KEEP} from '../../../src/lib/tasks/rebuild-image/rebuild-image.js'
import {SCRIPT_FILE} from '../../../src/lib/tasks/rebuild-image/image-script.js'
import type {CloudCreateContext} from '../../../src/lib/tasks/create/cloud-create-context.js'
import {cloudImageContext} from '../../../src/lib/tasks/create/cloud-image-steps.js'
import {clusterWorkflow, type Workflow} from '../../../src/lib/tasks/workflow.js'
import {ROOT} from '../../helpers/cli.js'
import {DOUBLES, packerDoubleEnv} from '../../helpers/cloud.js'
import {cloudRecord} from '../../helpers/cloud-records.js'
import {startSshd, type SshdSandbox} from '../../helpers/sshd.js'
import {readManagementContract} from '../../../src/lib/cluster/management-contract.js'

const work = mkdtempSync(join(tmpdir(), 'citc-cloud-image-'))
const node = join(work, 'mgmt') // what lives on the "management node"
const packageRoot = join(node, 'opt', 'citc', 'lib', 'node_modules', 'citc')
const paths: CloudImagePaths = {workDir: join(node, 'var/lib/citc/image-builds'), stateFile: join(node, 'etc/citc/images.json'), hostKeysDir: join(node, 'etc/citc/compute-host-keys'), mungeKeyFile: join(node, 'etc/munge/munge.key')}
const cloudState = join(work, 'cloud.json')
const packerLog = join(work, 'packer-calls.log')
const savedEnv = {PATH: process.env.PATH, CLOUD_DOUBLE_STATE: process.env.CLOUD_DOUBLE_STATE}
let sshd: SshdSandbox
let ssh: SshTransport

/**
 * The management node with a test's own settings of the packer double (PACKER_DOUBLE_FAIL, _KEEP) on
 * every command. The double first on the node's PATH and the cloud double's state come from the sshd
 * itself (SetEnv, as the e2e tests' stand-in nodes get them), so citc passes no PATH of its own.
 */
function withDoubles(t: Transport, env: Record<string, string> = {}): Transport {
  return {
    description: t.description,
    run: (argv, opts = {}) => t.run(argv, {...opts, env: {...env, ...opts.env}}),
    check: (argv, opts = {}) => t.check(argv, {...opts, env: {...env, ...opts.env}}),
    readFile: (p) => t.readFile(p),
    writeFile: (p, d, o) => t.writeFile(p, d, o),
    close: () => t.close(),
  }
}

/** The cluster's state dir on the workstation: the workflow's lock, journal and logs. */
const clusterDir = join(work, 'cluster')

/**
 * Image steps as the commands run them: a workflow over the cluster's state dir (lock, journal) and
 * an ImageContext whose management node is the sshd with the doubles. `create`: create's steps
 * (createImageSteps: journaled "image", no rebuild when unchanged); else rebuild-image's.
 */
async function runSteps(management: Transport, o: {create?: boolean; resume?: boolean; keep?: number} = {}): Promise<ImageContext> {
  return clusterWorkflow(
    {paths: {dir: clusterDir, journal: join(clusterDir, 'journal'), logsDir: join(clusterDir, 'logs')}, command: 'citc test', renderer: 'silent', journal: {resume: o.resume ?? false, reset: false}},
    async (wf) => {
      const ctx: ImageContext = {...wf.context, record: record(), management, builder: builderOn(management), arch: 'x86_64', keep: o.keep ?? DEFAULT_KEEP}
      await wf.steps(o.create ? createImageSteps() : [installImageTools(), inputsStep(), buildStep(), useStep(), pruneStep()], ctx)
      return ctx
    },
  )
}

/** Image versions are UTC seconds: the next build must not share the previous one's. */
async function nextSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 20)
}

beforeAll(async () => {
  mkdirSync(join(clusterDir, 'logs'), {recursive: true})
  // citc as installed on the node: its templates, and a compute.yml (the double does not run it).
  mkdirSync(join(packageRoot, 'playbooks'), {recursive: true})
  symlinkSync(join(ROOT, 'templates'), join(packageRoot, 'templates'))
  writeFileSync(join(packageRoot, 'playbooks', 'compute.yml'), '- hosts: all\n  tasks: []\n')
  mkdirSync(join(node, 'etc/munge'), {recursive: true})
  writeFileSync(paths.mungeKeyFile, Buffer.alloc(1024, 3), {mode: 0o400})
  writeFileSync(cloudState, JSON.stringify({resources: []}))
  process.env.PATH = `${DOUBLES}:${savedEnv.PATH}` // the aws CLI on "this machine"
  process.env.CLOUD_DOUBLE_STATE = cloudState
  sshd = await startSshd({setEnv: packerDoubleEnv({cloudState, packerLog})})
  ssh = await connectSsh({host: sshd.host, port: sshd.port, user: sshd.user, privateKey: sshd.clientKeyPath, hostKeyFingerprint: sshd.hostKeyFingerprint})
}, 60_000)

afterAll(async () => {
  await ssh?.close()
  await sshd?.stop()
  process.env.PATH = savedEnv.PATH
  if (savedEnv.CLOUD_DOUBLE_STATE === undefined) delete process.env.CLOUD_DOUBLE_STATE
  else process.env.CLOUD_DOUBLE_STATE = savedEnv.CLOUD_DOUBLE_STATE
  rmSync(work, {recursive: true, force: true})
})

const record = () => cloudRecord('aws', 'demo', {prefix: join(node, 'opt', 'citc')})
const builderOn = (t: Transport) => createAwsImageBuilder({record: record(), management: t, managementContract: () => readManagementContract(t), signal: new AbortController().signal, logFile: join(work, 'build.log')}, paths)
const cloudImages = () => (JSON.parse(readFileSync(cloudState, 'utf8')) as {resources: Array<{kind: string; name?: string; tags?: Record<string, string>}>}).resources.filter((r) => r.kind === 'image')

describe('an aws image build on the management node over SSH (packer and the cloud are TEST DOUBLES)', () => {
  let first: ImageRecord

  it("create's image steps: build with the real buildImage, find the image by its tags, make it current", async () => {
    const management = withDoubles(ssh)
    const ctx = await runSteps(management, {create: true})
    first = ctx.built!
    expect(first).toMatchObject({name: expect.stringMatching(/^citc-slurm-compute-demo-v\d{14}$/), arch: 'x86_64', inputs: ctx.inputs})
    expect(ctx.inputs).toMatch(/^[0-9a-f]{16}$/)
    expect(first.id).toMatch(/^ami-0[0-9a-f]{16}$/)
    expect(ctx.slurmVersion).toBe(spawnSync('dpkg-query', ['-W', '-f=${Version}', 'slurmctld'], {encoding: 'utf8'}).stdout)

    // Packer was called as buildImage calls it, in the template dir of the citc installed on the node.
    const call = readFileSync(packerLog, 'utf8').trim().split('\n').at(-1)!
    expect(call).toBe(`build -color=false -timestamp-ui -only=cloud.amazon-ebs.aws -var-file=${paths.workDir}/${first.name}.pkrvars.json ${packageRoot}/templates/packer`)
    // buildImage removes its var files and the manifest once the build is over; the double saw them (it checks them as Packer would).
    expect(readdirSync(paths.workDir)).toEqual([])
    // The compute nodes' host keys were made on the node, once.
    for (const t of ['ed25519', 'ecdsa', 'rsa']) expect(existsSync(join(paths.hostKeysDir, `ssh_host_${t}_key.pub`)), t).toBe(true)

    // Current in images.json, with what went into it; list says so (create's unchangedImage reads it).
    const state = parseImageState(readFileSync(paths.stateFile, 'utf8'))
    expect(state.current.x86_64).toEqual({name: first.name, version: first.version, id: first.id})
    expect(state.inputs[first.name]).toBe(ctx.inputs)
    const list = await builderOn(management).list()
    expect(list).toEqual([expect.objectContaining({name: first.name, current: true, nodes: 0, inputs: ctx.inputs, sizeBytes: 20 * 1024 ** 3})])
  }, 120_000)

  it('the var files buildImage wrote held the shared variables, the cloud\'s and compute.yml\'s (seen by a packer that keeps them)', async () => {
    await nextSecond()
    const keep = join(work, 'kept')
    mkdirSync(keep)
    const management = withDoubles(ssh, {PACKER_DOUBLE_KEEP: keep})
    const ctx = await runSteps(management)
    const name = ctx.built!.name
    const vars = JSON.parse(readFileSync(join(keep, `${name}.pkrvars.json`), 'utf8')) as Record<string, unknown>
    expect(vars).toMatchObject({
      cluster: 'demo',
      image_name: name,
      playbooks_dir: `${packageRoot}/playbooks`,
      munge_key_file: paths.mungeKeyFile,
      host_keys_dir: paths.hostKeysDir,
      ssh_username: 'ubuntu',
      script: '',
      aws_region: 'eu-west-2',
      aws_subnet_id: 'subnet-0abc',
      aws_security_group_id: 'sg-0abc',
      aws_instance_type: 't3a.medium',
      aws_source_ami_owner: '099720109477',
      aws_source_ami_id: 'ami-0123456789abcdef0',
      aws_source_ami_name: '*',
    })
    const pv = JSON.parse(readFileSync(join(keep, `${name}.playbook-vars.json`), 'utf8')) as Record<string, unknown>
    expect(pv).toMatchObject({provider: 'aws', cluster_name: 'demo', mgmt_private_ip: '10.0.0.10', citc_node_driver: {subnetId: 'subnet-0abc'}, slurm_version: ctx.slurmVersion, citc_image: {name, version: ctx.built!.version, cluster: 'demo', arch: 'x86_64'}})
    // rebuild-image's steps built it even though nothing changed, and made it current.
    expect((await builderOn(management).list()).filter((i) => i.current).map((i) => i.name)).toEqual([name])
    first = ctx.built!
  }, 120_000)

  it("a re-run of create's steps with nothing changed builds nothing", async () => {
    const calls = readFileSync(packerLog, 'utf8').trim().split('\n').length
    const ctx = await runSteps(withDoubles(ssh), {create: true})
    expect(ctx.built?.name).toBe(first.name)
    expect(readFileSync(packerLog, 'utf8').trim().split('\n')).toHaveLength(calls)
  }, 120_000)

  it('a failed build leaves no image and the current one current, and says where it failed', async () => {
    await nextSecond()
    const keyBefore = readFileSync(join(paths.hostKeysDir, 'ssh_host_ed25519_key'))
    const imagesBefore = cloudImages().map((i) => i.name)
    const management = withDoubles(ssh, {PACKER_DOUBLE_FAIL: 'ansible'})
    const e = (await runSteps(management).catch((x: unknown) => x)) as CitcError
    expect(e).toBeInstanceOf(CitcError)
    expect(e.exitCode).toBe(4)
    expect(e.message).toMatch(/^image citc-slurm-compute-demo-v\d{14} failed at starting Packer \(task slurmd : Install slurmd at the controller's version\):/)
    expect(e.message).toMatch(/No package matching 'slurmd=23\.11\.4-1\.2u' is available/)
    expect(cloudImages().map((i) => i.name)).toEqual(imagesBefore)
    const state = parseImageState(readFileSync(paths.stateFile, 'utf8'))
    expect(state.current.x86_64?.name).toBe(first.name)
    expect((await builderOn(management).list()).filter((i) => i.current).map((i) => i.name)).toEqual([first.name])
    expect(readdirSync(paths.workDir)).toEqual([])
    // The host keys are the cluster's, not the build's: unchanged.
    expect(readFileSync(join(paths.hostKeysDir, 'ssh_host_ed25519_key'))).toEqual(keyBefore)
  }, 120_000)

  it('discard never deletes an image citc recorded, even one of the same version (a build in the same second)', async () => {
    const management = withDoubles(ssh)
    await builderOn(management).discard({name: first.name, version: first.version, arch: 'x86_64'})
    expect(cloudImages().map((i) => i.name)).toContain(first.name)
  }, 60_000)

  it('the packer double refuses what Packer would: a var file without the cloud\'s variables', async () => {
    const bad = join(paths.workDir, 'bad.pkrvars.json')
    writeFileSync(bad, JSON.stringify({cluster: 'demo'}))
    const r = await withDoubles(ssh).run(['packer', 'build', '-color=false', '-only=cloud.amazon-ebs.aws', `-var-file=${bad}`, `${packageRoot}/templates/packer`])
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toMatch(/Unset variable "version"/)
  }, 60_000)
})

describe("cloud create's image context (cloud-image-steps.ts)", () => {
  const createCtx = (provider: 'aws' | 'oracle', mgmtShape: string, imageRoot?: string) => {
    const r = cloudRecord(provider, 'demo', {prefix: join(node, 'opt', 'citc')})
    r.cloud = {...r.cloud!, mgmtShape}
    return {provider, record: () => r, node: {ssh, root: ssh, rootUnlogged: ssh}, paths: {dir: clusterDir}, opts: {standIn: imageRoot ? {imageRoot} : undefined}} as unknown as CloudCreateContext
  }
  const inWorkflow = <T>(fn: (wf: Workflow) => Promise<T>) =>
    clusterWorkflow({paths: {dir: clusterDir, journal: join(clusterDir, 'journal'), logsDir: join(clusterDir, 'logs')}, command: 'citc test', renderer: 'silent'}, fn)

  it("the management node's root, the provider's builder with its files under a stand-in's root, the shape's arch, the stored script", async () => {
    writeFileSync(join(clusterDir, SCRIPT_FILE), '#!/bin/sh\necho extra\n')
    try {
      const ctx = await inWorkflow((wf) => cloudImageContext(wf, createCtx('aws', 't4g.medium', join(work, 'stand-in-root'))))
      expect(ctx.management).toBe(ssh)
      expect(ctx.builder.packerOnly).toBe('cloud.amazon-ebs.aws')
      expect(ctx.builder.workDir).toBe(join(work, 'stand-in-root', 'var/lib/citc/image-builds'))
      expect(ctx.arch).toBe('arm64') // t4g: Graviton
      expect(ctx.script).toBe('#!/bin/sh\necho extra\n')
      expect(ctx.keep).toBe(DEFAULT_KEEP)
      const real = await inWorkflow((wf) => cloudImageContext(wf, createCtx('aws', 't3a.medium')))
      expect(real.builder.workDir).toBe('/var/lib/citc/image-builds')
      expect(real.arch).toBe('x86_64')
    } finally {
      rmSync(join(clusterDir, SCRIPT_FILE), {force: true})
    }
  })

  it('an Oracle management node on an Ampere shape: a usage error before any image step (Oracle builds x86_64 only)', async () => {
    const e = (await inWorkflow((wf) => cloudImageContext(wf, createCtx('oracle', 'VM.Standard.A1.Flex.2.12'))).catch((x: unknown) => x)) as CitcError
    expect(e).toBeInstanceOf(CitcError)
    expect(e.exitCode).toBe(2)
    expect(e.message).toBe('--arch arm64: citc cannot build arm64 images on oracle (it builds x86_64)')
  })
})
