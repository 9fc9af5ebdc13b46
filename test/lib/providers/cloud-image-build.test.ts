// A cloud image build end to end on this machine: the management node is a real OpenSSH sshd on
// loopback (test/helpers/sshd.ts) reached with citc's SSH transport, `packer` on its PATH is the
// TEST DOUBLE test/doubles/packer (it checks its arguments and the var file as Packer would, "creates"
// the image in the cloud API double's state and writes the manifest), and the cloud's CLI on this
// machine is the cloud API double (test/doubles/aws). Through the aws image builder: the var file on
// the node holds the shared and the cloud's variables, the compute nodes' host keys are made there
// once, collect finds the image by its tags, use records it as current in images.json, list shows it;
// a failed build leaves no image and the current one unchanged.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ImageBuilder, ImageRecord} from '../../../src/lib/images/types.js'
import {createAwsImageBuilder} from '../../../src/lib/providers/aws/image-builder.js'
import type {CloudImagePaths} from '../../../src/lib/providers/cloud-image-builder.js'
import {parseImageState} from '../../../src/lib/providers/cloud-image-state.js'
import {connectSsh, type SshTransport} from '../../../src/lib/transport/ssh/index.js'
import type {Transport} from '../../../src/lib/transport/types.js'
import type {Arch} from '../../../src/lib/shapes/types.js'
import {ROOT} from '../../helpers/cli.js'
import {DOUBLES} from '../../helpers/cloud.js'
import {cloudRecord} from '../../helpers/cloud-records.js'
import {startSshd, type SshdSandbox} from '../../helpers/sshd.js'

const work = mkdtempSync(join(tmpdir(), 'citc-cloud-image-'))
const node = join(work, 'mgmt') // what lives on the "management node"
const packageRoot = join(node, 'opt', 'citc', 'lib', 'node_modules', 'citc')
const paths: CloudImagePaths = {workDir: join(node, 'var/lib/citc/image-builds'), stateFile: join(node, 'etc/citc/images.json'), hostKeysDir: join(node, 'etc/citc/compute-host-keys'), mungeKeyFile: join(node, 'etc/munge/munge.key')}
const cloudState = join(work, 'cloud.json')
const packerLog = join(work, 'packer-calls.log')
const savedEnv = {PATH: process.env.PATH, CLOUD_DOUBLE_STATE: process.env.CLOUD_DOUBLE_STATE}
let sshd: SshdSandbox
let ssh: SshTransport

/** The management node as the build sees it: the packer double first on its PATH, the cloud double's state. */
function withDoubles(t: Transport, extra: Record<string, string> = {}): Transport {
  const env = {PATH: `${DOUBLES}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, CLOUD_DOUBLE_STATE: cloudState, PACKER_DOUBLE_LOG: packerLog, ...extra}
  return {
    description: t.description,
    run: (argv, opts = {}) => t.run(argv, {...opts, env: {...env, ...opts.env}}),
    check: (argv, opts = {}) => t.check(argv, {...opts, env: {...env, ...opts.env}}),
    readFile: (p) => t.readFile(p),
    writeFile: (p, d, o) => t.writeFile(p, d, o),
    close: () => t.close(),
  }
}

/**
 * One build as src/lib/images/build.ts (buildImage, the lead's) is specified to run it, until it lands
 * on this branch: the builder's variables and compute.yml's written to its work dir over the
 * Transport, `packer build` there, then collect — or discard on failure.
 */
async function build(builder: ImageBuilder, management: Transport, o: {cluster: string; arch: Arch; version: string; inputs: string}): Promise<ImageRecord> {
  const name = `citc-slurm-compute-${o.cluster}-v${o.version}`
  const root = await builder.packageRoot()
  const own = await builder.vars({name, version: o.version, arch: o.arch})
  const playbookVarsFile = `${builder.workDir}/${name}.playbook-vars.json`
  await management.writeFile(playbookVarsFile, JSON.stringify(await builder.playbookVars()), {mode: 0o600})
  const vars = {cluster: o.cluster, version: o.version, image_name: name, arch: o.arch, playbooks_dir: `${root}/playbooks`, playbook_vars_file: playbookVarsFile, script: '', manifest: `${builder.workDir}/${name}.manifest.json`, ...own}
  const varFile = `${builder.workDir}/${name}.pkrvars.json`
  await management.writeFile(varFile, JSON.stringify(vars, null, 2), {mode: 0o600})
  const r = await management.run(['packer', 'build', '-color=false', '-timestamp-ui', `-only=${builder.packerOnly}`, `-var-file=${varFile}`, `${root}/templates/packer`], {timeoutMs: 60_000})
  if (r.exitCode !== 0) {
    await builder.discard({name, version: o.version, arch: o.arch})
    throw new Error(`packer build failed (exit ${r.exitCode}): ${r.stdout.trim().split('\n').slice(-3).join(' | ')}`)
  }
  return builder.collect({name, version: o.version, arch: o.arch, inputs: o.inputs})
}

beforeAll(async () => {
  // citc as installed on the node: its templates, and a compute.yml (the double does not run it).
  mkdirSync(join(packageRoot, 'playbooks'), {recursive: true})
  symlinkSync(join(ROOT, 'templates'), join(packageRoot, 'templates'))
  writeFileSync(join(packageRoot, 'playbooks', 'compute.yml'), '- hosts: all\n  tasks: []\n')
  mkdirSync(join(node, 'etc/munge'), {recursive: true})
  writeFileSync(paths.mungeKeyFile, Buffer.alloc(1024, 3), {mode: 0o400})
  writeFileSync(cloudState, JSON.stringify({resources: []}))
  process.env.PATH = `${DOUBLES}:${savedEnv.PATH}` // the aws CLI on "this machine"
  process.env.CLOUD_DOUBLE_STATE = cloudState
  sshd = await startSshd()
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
const builderOn = (t: Transport) => createAwsImageBuilder({record: record(), management: t, signal: new AbortController().signal, logFile: join(work, 'build.log')}, paths)
const cloudImages = () => (JSON.parse(readFileSync(cloudState, 'utf8')) as {resources: Array<{kind: string; name?: string; tags?: Record<string, string>}>}).resources.filter((r) => r.kind === 'image')

describe('an aws image build on the management node over SSH (packer and the cloud are TEST DOUBLES)', () => {
  let first: ImageRecord

  it('builds, finds the image by its tags, records it as current', async () => {
    const management = withDoubles(ssh)
    const builder = builderOn(management)
    first = await build(builder, management, {cluster: 'demo', arch: 'x86_64', version: '20260101120000', inputs: 'sha256:first'})
    expect(first).toMatchObject({name: 'citc-slurm-compute-demo-v20260101120000', version: '20260101120000', arch: 'x86_64', inputs: 'sha256:first'})
    expect(first.id).toMatch(/^ami-0[0-9a-f]{16}$/)

    // Packer was called as the build says, in the template dir of the citc installed on the node.
    const call = readFileSync(packerLog, 'utf8').trim().split('\n').at(-1)!
    expect(call).toBe(`build -color=false -timestamp-ui -only=cloud.amazon-ebs.aws -var-file=${paths.workDir}/${first.name}.pkrvars.json ${packageRoot}/templates/packer`)

    // The var file on the node: the shared variables and the cloud's, from the cluster's outputs.
    const vars = JSON.parse(readFileSync(`${paths.workDir}/${first.name}.pkrvars.json`, 'utf8')) as Record<string, unknown>
    expect(vars).toMatchObject({
      cluster: 'demo',
      image_name: first.name,
      playbooks_dir: `${packageRoot}/playbooks`,
      munge_key_file: paths.mungeKeyFile,
      host_keys_dir: paths.hostKeysDir,
      ssh_username: 'ubuntu',
      aws_region: 'eu-west-2',
      aws_subnet_id: 'subnet-0abc',
      aws_security_group_id: 'sg-0abc',
      aws_instance_type: 't3a.medium',
      aws_source_ami_owner: '099720109477',
      aws_source_ami_id: 'ami-0123456789abcdef0',
      aws_source_ami_name: '*',
    })
    const pv = JSON.parse(readFileSync(vars.playbook_vars_file as string, 'utf8')) as Record<string, unknown>
    expect(pv).toMatchObject({provider: 'aws', cluster_name: 'demo', mgmt_private_ip: '10.0.0.10', citc_node_driver: {subnetId: 'subnet-0abc'}})
    // The compute nodes' host keys were made on the node, once.
    for (const t of ['ed25519', 'ecdsa', 'rsa']) expect(existsSync(join(paths.hostKeysDir, `ssh_host_${t}_key.pub`)), t).toBe(true)
    const manifest = JSON.parse(readFileSync(vars.manifest as string, 'utf8')) as {builds: Array<{artifact_id: string}>}
    expect(manifest.builds.at(-1)!.artifact_id).toBe(`eu-west-2:${first.id}`)

    await builder.use(first)
    const state = parseImageState(readFileSync(paths.stateFile, 'utf8'))
    expect(state.current.x86_64).toEqual({name: first.name, version: first.version, id: first.id})
    expect(state.inputs[first.name]).toBe('sha256:first')
    const list = await builder.list()
    expect(list).toEqual([expect.objectContaining({name: first.name, current: true, nodes: 0, inputs: 'sha256:first', sizeBytes: 20 * 1024 ** 3})])
  }, 120_000)

  it('a failed build leaves no image and the current one current', async () => {
    const keyBefore = readFileSync(join(paths.hostKeysDir, 'ssh_host_ed25519_key'))
    const management = withDoubles(ssh, {PACKER_DOUBLE_FAIL: 'ansible'})
    const builder = builderOn(management)
    const e = (await build(builder, management, {cluster: 'demo', arch: 'x86_64', version: '20260102120000', inputs: 'sha256:second'}).catch((x: unknown) => x)) as Error
    expect(e.message).toMatch(/packer build failed \(exit 1\): .*Error executing Ansible: Non-zero exit status/)
    expect(cloudImages().map((i) => i.name)).toEqual([first.name])
    const state = parseImageState(readFileSync(paths.stateFile, 'utf8'))
    expect(state.current.x86_64?.name).toBe(first.name)
    expect(state.inputs['citc-slurm-compute-demo-v20260102120000']).toBeUndefined()
    expect((await builder.list()).filter((i) => i.current).map((i) => i.name)).toEqual([first.name])
    // The host keys are the cluster's, not the build's: unchanged.
    expect(readFileSync(join(paths.hostKeysDir, 'ssh_host_ed25519_key'))).toEqual(keyBefore)
  }, 120_000)

  it('the packer double refuses what Packer would: a var file without the cloud\'s variables', async () => {
    const bad = join(paths.workDir, 'bad.pkrvars.json')
    writeFileSync(bad, JSON.stringify({cluster: 'demo'}))
    const r = await withDoubles(ssh).run(['packer', 'build', '-color=false', '-only=cloud.amazon-ebs.aws', `-var-file=${bad}`, `${packageRoot}/templates/packer`])
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toMatch(/Unset variable "version"/)
  }, 60_000)
})
