// `citc create`'s decisions without a terminal, on a data directory of the test's own: which cluster
// is meant (--resume, -c), its provider, the flags it cannot use, --config under the flags, and the
// input handed to createLocal or createCloud.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {clusterRegistry} from '../../../../src/lib/cluster/registry.js'
import {CLUSTER_NAME} from '../../../../src/lib/cluster/schema.js'
import {CitcError, InvalidInputError} from '../../../../src/lib/errors.js'
import type {Io} from '../../../../src/lib/io.js'
import type {CreateRequest} from '../../../../src/lib/tasks/create/create-request.js'
import {resolveCreate, type CreatePlan} from '../../../../src/lib/tasks/create/resolve-create.js'
import {standInGpuRoot} from '../../../doubles/nvidia-gpus.js'

const root = mkdtempSync(join(tmpdir(), 'citc-resolve-create-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))
// This machine's GPUs are a stand-in's (as create's --stand-in gives): none, unless a test says otherwise
// (the defaults depend on them).
const noGpus = standInGpuRoot([], root)
let gpuRoot = noGpus
const io: Io = {log: () => {}, note: () => {}, json: false, interactive: false, yes: false, renderer: 'silent'}
const FINGERPRINT = `SHA256:${'A'.repeat(43)}`

let dataDir: string
let n = 0
beforeEach(() => {
  vi.stubEnv('CITC_DATA_DIR', '') // the registry under the test's own data directory
  gpuRoot = noGpus
  dataDir = join(root, `data-${++n}`)
})

const request = (r: Partial<CreateRequest> = {}): CreateRequest => ({resume: false, planOnly: false, standIn: {}, providerFlags: {}, gpuRoot, ...r})
/** No credentials anywhere: a home directory with nothing in it, an empty environment. */
const discovery = () => ({home: mkdtempSync(join(root, 'home-')), env: {}})
const plan = (r: Partial<CreateRequest>) => resolveCreate(io, request(r), {dataDir, packageRoot: '/pkg', discovery: discovery()})

function local(p: CreatePlan) {
  if (!('local' in p)) throw new Error(`expected a local plan, got ${p.provider}`)
  return p.local
}

function cloud(p: CreatePlan) {
  if (!('cloud' in p)) throw new Error(`expected a cloud plan, got ${p.provider}`)
  return p.cloud
}

async function refusal(p: Promise<unknown>): Promise<CitcError> {
  try {
    await p
  } catch (error) {
    if (error instanceof CitcError) return error
    throw error
  }
  throw new Error('expected a CitcError')
}

function addLocal(name: string, phase?: 'creating') {
  clusterRegistry(dataDir).create({name, provider: 'local', createdAt: new Date().toISOString(), origin: 'created', phase, mgmt: {host: 'localhost', user: 'root'}})
}

function addAws(name: string) {
  clusterRegistry(dataDir).create({
    name,
    provider: 'aws',
    createdAt: new Date().toISOString(),
    origin: 'created',
    phase: 'creating',
    mgmt: {host: '203.0.113.7', user: 'ubuntu', keyPath: '/keys/admin', hostKeyFingerprint: FINGERPRINT},
    cloud: {region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium'},
  })
}

describe('local', () => {
  it('no --provider and no terminal: a new local cluster, a random name, the default limits, the flags given', async () => {
    const p = await plan({suspendTime: 120, providerFlags: {force: true}})
    expect(p.provider).toBe('local')
    const input = local(p)
    expect(input).toMatchObject({limitsText: 'local.small: 4\n', limitsFile: '(default limits)', suspendTime: 120, force: true, resume: false, packageRoot: '/pkg'})
    expect(input.name).toMatch(CLUSTER_NAME)
  })

  it('refuses what only clouds take', async () => {
    expect((await refusal(plan({provider: 'local', planOnly: true}))).message).toMatch(/^--plan-only is for cloud providers/)
    expect((await refusal(plan({provider: 'local', standIn: {sshPort: 2222}}))).message).toMatch(/^--stand-in's managementNode is for cloud providers/)
    const e = await refusal(plan({provider: 'local', mgmtShape: 'x', sshTimeoutS: 30}))
    expect((e as InvalidInputError).problems).toEqual([
      {where: '--ssh-timeout', message: 'is for cloud providers, not local: leave it out'},
      {where: '--mgmt-shape', message: 'is for cloud providers, not local: leave it out'},
    ])
  })

  it('--resume without a name continues the cluster being created, with the limits it was made with', async () => {
    addLocal('done')
    addLocal('here', 'creating')
    const stored = join(clusterRegistry(dataDir).paths('here').dir, 'limits.yaml')
    writeFileSync(stored, 'local.medium: 2\n')
    expect(local(await plan({resume: true}))).toMatchObject({name: 'here', limitsFile: stored, limitsText: 'local.medium: 2\n', resume: true})
  })

  it('-c (CITC_CLUSTER) names the cluster when neither --name nor the config file does', async () => {
    addLocal('one')
    addLocal('two')
    expect(local(await plan({resume: true, currentCluster: 'two'})).name).toBe('two')
    expect(local(await plan({resume: true, currentCluster: 'two', name: 'one'})).name).toBe('one')
  })
})

describe('the cluster meant', () => {
  it('--resume with nothing to continue is refused, saying how to name one', async () => {
    const none = await refusal(plan({resume: true}))
    expect([none.kind, none.message, none.hint]).toEqual(['usage', 'no cluster to continue: say which with --name', 'see `citc cluster list`'])
    addLocal('a')
    addLocal('b')
    expect((await refusal(plan({resume: true}))).message).toBe('no cluster to continue: say which with --name') // two, neither being created
    expect((await refusal(plan({resume: true, name: 'nope'}))).message).toBe('no cluster named "nope" to continue')
  })

  it('an existing cluster keeps its provider: another --provider is refused', async () => {
    addLocal('here')
    const e = await refusal(plan({name: 'here', provider: 'aws'}))
    expect([e.kind, e.message, e.hint]).toEqual(['usage', 'cluster here exists and is a local cluster, not aws', 'choose another --name, or leave --provider out to continue it'])
  })
})

describe('clouds', () => {
  it('an existing cloud cluster is continued by name: its provider, the limits of this run, no new answers', async () => {
    addAws('lab')
    const limits = join(root, `limits-${n}.yaml`)
    writeFileSync(limits, 't3a.medium: 2\n')
    const p = await plan({name: 'lab', resume: true, limitsFile: limits, sshTimeoutS: 30})
    expect(p.provider).toBe('aws')
    expect(cloud(p)).toEqual({
      name: 'lab',
      limits: {file: limits, text: 't3a.medium: 2\n'},
      resume: true,
      planOnly: false,
      sshTimeoutS: 30,
      packageRoot: '/pkg',
      suspendTime: undefined,
      standIn: {playbook: undefined},
    })
    const missing = await refusal(plan({name: 'lab', limitsFile: join(root, 'none.yaml')}))
    expect((missing as InvalidInputError).problems).toEqual([{where: '--limits', message: `cannot read ${join(root, 'none.yaml')} (ENOENT)`}])
  })

  it('a setting of an existing cloud cluster cannot change; a flag of another provider is refused', async () => {
    addAws('lab')
    const changed = (await refusal(plan({name: 'lab', region: 'eu-west-2'}))) as InvalidInputError
    expect(changed.problems.map((p) => p.where)).toEqual(['--region'])
    expect(changed.problems[0].message).toMatch(/^cluster lab exists and was created with --region us-east-1;/)
    const other = (await refusal(plan({name: 'lab', providerFlags: {project: 'p'}}))) as InvalidInputError
    expect(other.problems).toEqual([{where: '--project', message: 'is for google, not aws: leave it out'}])
  })

  it('a new cloud cluster: its answers resolved, the defaults of this run (ssh timeout 600 s), a stand-in playbook made absolute', async () => {
    const p = await plan({provider: 'aws', name: 'fresh', planOnly: true, standIn: {sshPort: 2222, playbook: 'stand-in.yml'}})
    const options = cloud(p)
    expect(options).toMatchObject({name: 'fresh', planOnly: true, sshTimeoutS: 600, standIn: {sshPort: 2222, playbook: resolve('stand-in.yml')}})
    expect(options.resolved).toMatchObject({provider: 'aws', name: 'fresh', cloud: {region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium'}})
  })
})

describe('--config', () => {
  it('fills what no flag says: provider, name, limits (relative to the file); flags win', async () => {
    const dir = join(root, `cfg-${n}`)
    mkdirSync(dir)
    writeFileSync(join(dir, 'limits.yaml'), 't3a.medium: 2\n')
    writeFileSync(join(dir, 'cluster.yaml'), 'provider: aws\nname: fromfile\nregion: eu-west-1\nzone: eu-west-1b\nlimits: limits.yaml\nsuspend-time: 300\n')
    const options = cloud(await plan({configFile: join(dir, 'cluster.yaml'), region: 'us-west-2', zone: 'us-west-2c'}))
    expect(options).toMatchObject({name: 'fromfile', suspendTime: 300})
    expect(options.resolved).toMatchObject({name: 'fromfile', cloud: {region: 'us-west-2', zone: 'us-west-2c'}, limits: {file: join(dir, 'limits.yaml'), text: 't3a.medium: 2\n'}})
  })

  it('a key the provider cannot use is refused at its line in the file; the same as a flag, at the flag', async () => {
    const file = join(root, `cfg-${n}.yaml`)
    writeFileSync(file, 'provider: aws\nname: lab\nproject: p\n')
    const inFile = (await refusal(plan({configFile: file}))) as InvalidInputError
    expect(inFile.problems).toEqual([{where: `${file}:3:1`, path: 'project', message: 'is for google, not aws: leave it out'}])
    const asFlag = (await refusal(plan({configFile: file, providerFlags: {project: 'q'}}))) as InvalidInputError
    expect(asFlag.problems).toEqual([{where: '--project', message: 'is for google, not aws: leave it out'}])
  })

  it('local: the file\'s limits, relative to it, and its suspend time', async () => {
    const dir = join(root, `cfg-local-${n}`)
    mkdirSync(dir)
    writeFileSync(join(dir, 'limits.yaml'), 'local.large: 1\n')
    writeFileSync(join(dir, 'cluster.yaml'), 'name: mine\nlimits: limits.yaml\nsuspend-time: 90\n')
    expect(local(await plan({configFile: join(dir, 'cluster.yaml')}))).toMatchObject({name: 'mine', limitsFile: join(dir, 'limits.yaml'), limitsText: 'local.large: 1\n', suspendTime: 90})
  })
})

describe('--no-monitoring (issue #21)', () => {
  it('a new cluster takes it from the flag or the config file; the flag wins', async () => {
    expect(local(await plan({monitoring: false})).monitoring).toBe(false)
    expect(local(await plan({})).monitoring).toBeUndefined()
    const file = join(root, `cfg-mon-${n}.yaml`)
    writeFileSync(file, 'name: quiet\nmonitoring: false\n')
    expect(local(await plan({configFile: file})).monitoring).toBe(false)
    expect(local(await plan({configFile: file, monitoring: true})).monitoring).toBe(true)
  })

  it('is fixed once the cluster is made: a change is refused at the flag or at its line in the file; the same value passes', async () => {
    addLocal('watched')
    const off = (await refusal(plan({name: 'watched', monitoring: false}))) as InvalidInputError
    expect(off.problems).toEqual([
      {where: '--no-monitoring', message: 'cluster watched exists and was created with monitoring; it is fixed once made: leave it out to continue the cluster, or destroy it and create it again'},
    ])
    expect(local(await plan({name: 'watched', monitoring: true})).name).toBe('watched')
    clusterRegistry(dataDir).create({name: 'quiet', provider: 'local', createdAt: new Date().toISOString(), origin: 'created', mgmt: {host: 'localhost', user: 'root'}, settings: {monitoring: 'off'}})
    const file = join(root, `cfg-mon-${n}.yaml`)
    writeFileSync(file, 'name: quiet\nmonitoring: true\n')
    const on = (await refusal(plan({configFile: file}))) as InvalidInputError
    expect(on.problems).toEqual([{where: `${file}:2:1`, path: 'monitoring', message: expect.stringMatching(/^cluster quiet exists and was created with --no-monitoring;/)}])
  })
})

describe('--gpu-nodes (issue #22): this machine\'s GPUs as local nodes', () => {
  const h100s = (n: number) => Array.from({length: n}, (_, minor) => ({model: 'NVIDIA H100 80GB HBM3', minor}))
  const useGpus = (gpus: Parameters<typeof standInGpuRoot>[0]) => {
    gpuRoot = standInGpuRoot(gpus, root)
  }

  it('without a terminal: local.small: 4 and one node per GPU of every type; or all in one node; or none', async () => {
    useGpus([...h100s(4), {model: 'NVIDIA L4', minor: 4}])
    expect(local(await plan({}))).toMatchObject({limitsText: 'local.small: 4\nlocal.h100x1: 4\nlocal.l4x1: 1\n', limitsFile: '(default limits)'})
    expect(local(await plan({gpuNodes: 'all'})).limitsText).toBe('local.small: 4\nlocal.h100x4: 1\nlocal.l4x1: 1\n')
    expect(local(await plan({gpuNodes: 'none'})).limitsText).toBe('local.small: 4\n')
  })

  it('from the config file; the flag wins', async () => {
    useGpus(h100s(2))
    const file = join(root, `cfg-gpu-${n}.yaml`)
    writeFileSync(file, 'name: ws\ngpu-nodes: all\n')
    expect(local(await plan({configFile: file})).limitsText).toBe('local.small: 4\nlocal.h100x2: 1\n')
    expect(local(await plan({configFile: file, gpuNodes: 'per-gpu'})).limitsText).toBe('local.small: 4\nlocal.h100x1: 2\n')
    writeFileSync(file, 'name: ws\ngpu-nodes: some\n')
    expect(((await refusal(plan({configFile: file}))) as InvalidInputError).problems[0]).toMatchObject({where: `${file}:2:1`, path: 'gpu-nodes'})
  })

  it('is refused on a machine without GPUs, at the flag or at its line in the file', async () => {
    const e = (await refusal(plan({gpuNodes: 'per-gpu'}))) as InvalidInputError
    expect(e.problems).toEqual([{where: '--gpu-nodes', message: `this machine has no NVIDIA GPU (none listed in ${noGpus}/proc/driver/nvidia/gpus): leave it out`}])
    const file = join(root, `cfg-gpu-none-${n}.yaml`)
    writeFileSync(file, 'name: ws\ngpu-nodes: all\n')
    expect(((await refusal(plan({configFile: file}))) as InvalidInputError).problems).toEqual([
      {where: `${file}:2:1`, path: 'gpu-nodes', message: expect.stringMatching(/^this machine has no NVIDIA GPU/)},
    ])
  })

  it('is refused for a cloud provider, and with a limits file (given, or the one an existing cluster keeps)', async () => {
    useGpus(h100s(2))
    expect(((await refusal(plan({provider: 'aws', name: 'c', gpuNodes: 'all'}))) as InvalidInputError).problems).toEqual([
      {where: '--gpu-nodes', message: 'is for the local provider (this machine\'s GPUs), not aws: leave it out, and name GPU shapes in the limits file'},
    ])
    const limits = join(root, `limits-gpu-${n}.yaml`)
    writeFileSync(limits, 'local.small: 1\n')
    expect(((await refusal(plan({limitsFile: limits, gpuNodes: 'all'}))) as InvalidInputError).problems[0].message).toMatch(/^the limits file \(.*\) says which nodes there are: leave it out/)
    addLocal('kept', 'creating')
    const dir = clusterRegistry(dataDir).paths('kept').dir
    writeFileSync(join(dir, 'limits.yaml'), 'local.small: 1\n')
    expect(((await refusal(plan({name: 'kept', resume: true, gpuNodes: 'all'}))) as InvalidInputError).problems[0].message).toMatch(/^cluster kept keeps the limits it was made with/)
  })
})
