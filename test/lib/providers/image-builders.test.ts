// The clouds' image builders on their own: a MemoryTransport as the management node (images.json
// kept in its map) and the cloud API TEST DOUBLES (test/doubles/bin/{aws,gcloud,oci}, first on PATH) as
// the clouds. What is checked: list (newest first, current per architecture — recorded, else the
// newest — and the nodes running each image), use, remove (AMI snapshots too), discard, and the
// variables for the other architecture or one a cloud cannot build.
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import type {ImageBuilderContext} from '../../../src/lib/providers/image-types.js'
import {createAwsImageBuilder} from '../../../src/lib/providers/aws/image-builder.js'
import {CLOUD_IMAGE_PATHS} from '../../../src/lib/providers/cloud-image-builder.js'
import {IMAGES_JSON, parseImageState} from '../../../src/lib/providers/cloud-image-state.js'
import {createGoogleImageBuilder, googlePackerVars} from '../../../src/lib/providers/google/image-builder.js'
import {createOracleImageBuilder} from '../../../src/lib/providers/oracle/image-builder.js'
import type {CloudProvider} from '../../../src/lib/providers/registry.js'
import {DOUBLES} from '../../helpers/cloud.js'
import {cloudRecord} from '../../helpers/cloud-records.js'
import {MemoryTransport} from '../../doubles/memory-transport.js'
import {nodeDriverVars} from '../../../src/lib/providers/node-driver-vars.js'
import type {CitcError} from '../../../src/lib/errors.js'
import {archFor, buildableArches, rebuildImage, rollbackImage} from '../../../src/lib/tasks/rebuild-image/rebuild-image.js'
import {clusterRegistry} from '../../../src/lib/cluster/registry.js'
import type {GoogleNodeConfig} from '../../../src/lib/providers/google/node-config.js'
import {readManagementContract} from '../../../src/lib/cluster/management-contract.js'

const work = mkdtempSync(join(tmpdir(), 'citc-image-builders-'))
const state = join(work, 'cloud.json')
const saved = {PATH: process.env.PATH, CLOUD_DOUBLE_STATE: process.env.CLOUD_DOUBLE_STATE}
beforeAll(() => {
  process.env.PATH = `${DOUBLES}:${saved.PATH}`
  process.env.CLOUD_DOUBLE_STATE = state
})
afterAll(() => {
  process.env.PATH = saved.PATH
  if (saved.CLOUD_DOUBLE_STATE === undefined) delete process.env.CLOUD_DOUBLE_STATE
  else process.env.CLOUD_DOUBLE_STATE = saved.CLOUD_DOUBLE_STATE
  rmSync(work, {recursive: true, force: true})
})

const v = (n: number) => `2026010${n}120000`
const nameOf = (n: number) => `citc-slurm-compute-demo-v${v(n)}`
const tags = (n: number, arch = 'x86_64') => ({cluster: 'demo', 'citc-image-version': v(n), 'citc-image-arch': arch})

beforeEach(() => {
  writeFileSync(
    state,
    JSON.stringify({
      resources: [
        {provider: 'aws', kind: 'image', id: 'ami-1', name: nameOf(1), tags: tags(1), created: '2026-01-01T12:10:00Z', snapshots: ['snap-1'], sizeGb: 20},
        {provider: 'aws', kind: 'snapshot', id: 'snap-1', tags: tags(1)},
        {provider: 'aws', kind: 'image', id: 'ami-2', name: nameOf(2), tags: tags(2), created: '2026-01-02T12:10:00Z', snapshots: ['snap-2'], sizeGb: 20},
        {provider: 'aws', kind: 'snapshot', id: 'snap-2', tags: tags(2)},
        {provider: 'aws', kind: 'image', id: 'ami-3', name: nameOf(3), tags: tags(3, 'arm64'), created: '2026-01-03T12:10:00Z', snapshots: []},
        {provider: 'aws', kind: 'image', id: 'ami-x', name: 'not-citc', tags: {cluster: 'demo'}},
        {provider: 'aws', kind: 'instance', id: 'i-1', name: 'demo-c5-xlarge-0001', cluster: 'demo', image: 'ami-1'},
        {provider: 'aws', kind: 'instance', id: 'i-2', name: 'demo-c5-xlarge-0002', cluster: 'demo', image: 'ami-1'},
        {provider: 'aws', kind: 'instance', id: 'i-3', name: 'demo-c5-xlarge-0003', cluster: 'demo', image: 'ami-2'},
        {provider: 'google', kind: 'image', id: nameOf(1), tags: {...tags(1), 'citc-image-arch': 'x86-64'}, created: '2026-01-01T04:10:00.000-08:00', sizeGb: 20},
        {provider: 'google', kind: 'image', id: nameOf(2), tags: {...tags(2), 'citc-image-arch': 'x86-64'}, created: '2026-01-02T04:10:00.000-08:00', sizeGb: 20},
        {provider: 'google', kind: 'instance', id: 'demo-n2-standard-2-0001', zone: 'europe-west2-b', tags: {...tags(1), 'citc-image-arch': 'x86-64'}},
        {provider: 'oracle', kind: 'image', id: 'ocid1.image.oc1..one', name: nameOf(1), tags: tags(1), created: '2026-01-01T12:10:00Z'},
        {provider: 'oracle', kind: 'image', id: 'ocid1.image.oc1..two', name: nameOf(2), tags: tags(2), created: '2026-01-02T12:10:00Z'},
        {provider: 'oracle', kind: 'instance', id: 'ocid1.instance.oc1..a', name: 'demo-vm-0001', cluster: 'demo', image: 'ocid1.image.oc1..two'},
        {provider: 'oracle', kind: 'instance', id: 'ocid1.instance.oc1..b', name: 'other-vm-0001', cluster: 'other', image: 'ocid1.image.oc1..two'},
      ],
    }),
  )
})

const FACTORIES = {aws: createAwsImageBuilder, google: createGoogleImageBuilder, oracle: createOracleImageBuilder}
function builder(provider: CloudProvider, node = new MemoryTransport().on(['install']).on(['sh', '-c'])) {
  const ctx: ImageBuilderContext = {record: cloudRecord(provider), management: node, managementContract: () => readManagementContract(node), signal: new AbortController().signal, logFile: join(work, 'log')}
  return {node, b: FACTORIES[provider](ctx)}
}
const ids = () => (JSON.parse(readFileSync(state, 'utf8')) as {resources: Array<{id: string}>}).resources.map((r) => r.id)

describe('aws image builder', () => {
  it('lists citc images newest first, the newest current per arch until one is recorded, with their nodes', async () => {
    const {b, node} = builder('aws')
    const list = await b.list()
    expect(list.map((i) => [i.name, i.arch, i.current, i.nodes])).toEqual([
      [nameOf(3), 'arm64', true, 0],
      [nameOf(2), 'x86_64', true, 1],
      [nameOf(1), 'x86_64', false, 2],
    ])
    expect(list[1]).toMatchObject({id: 'ami-2', createdAt: '2026-01-02T12:10:00Z', sizeBytes: 20 * 1024 ** 3})

    // Rollback: the older image made current is what new nodes start from.
    await b.use(list[2])
    const s = parseImageState(node.text(IMAGES_JSON)!)
    expect(s.current).toEqual({x86_64: {name: nameOf(1), version: v(1), id: 'ami-1'}})
    expect((await b.list()).filter((i) => i.current).map((i) => i.name)).toEqual([nameOf(3), nameOf(1)])
  })

  it('remove deregisters the AMI and deletes its snapshots; discard deletes what a failed build registered', async () => {
    const {b} = builder('aws')
    const [, second] = await b.list()
    await b.remove(second)
    expect(ids()).not.toContain('ami-2')
    expect(ids()).not.toContain('snap-2')
    await b.discard({name: nameOf(1), version: v(1), arch: 'x86_64'})
    expect(ids()).not.toContain('ami-1')
    expect(ids()).toContain('ami-3')
  })

  it('collect finds the image of a build by its tags and records its inputs; a build that made none is an error', async () => {
    const {b, node} = builder('aws')
    const image = await b.collect({name: nameOf(2), version: v(2), arch: 'x86_64', inputs: 'sha256:abc'})
    expect(image).toMatchObject({id: 'ami-2', inputs: 'sha256:abc'})
    expect(parseImageState(node.text(IMAGES_JSON)!).inputs).toEqual({[nameOf(2)]: 'sha256:abc'})
    await expect(b.collect({name: nameOf(9), version: v(9), arch: 'x86_64', inputs: 'x'})).rejects.toThrow(/has no image of cluster demo tagged citc-image-version=20260109120000/)
  })

  it("collect records the GPU driver the image's own record names; list, currentImages and remove follow it", async () => {
    const {b, node} = builder('aws')
    await b.collect({name: nameOf(2), version: v(2), arch: 'x86_64', inputs: 'a', imageJson: {name: nameOf(2), gpu_driver: '580'}})
    await b.collect({name: nameOf(1), version: v(1), arch: 'x86_64', inputs: 'b', imageJson: {name: nameOf(1), gpu_driver: null}})
    // A build whose template printed no record (an older citc's): nothing is guessed.
    await b.collect({name: nameOf(3), version: v(3), arch: 'arm64', inputs: 'c'})
    expect(parseImageState(node.text(IMAGES_JSON)!).gpuDrivers).toEqual({[nameOf(2)]: '580', [nameOf(1)]: null})
    expect((await b.list()).map((i) => [i.name, i.gpuDriver])).toEqual([
      [nameOf(3), undefined],
      [nameOf(2), '580'],
      [nameOf(1), null],
    ])
    expect(await b.currentImages()).toEqual([])
    const images = await b.list()
    await b.use(images[2])
    await b.use(images[0])
    expect(await b.currentImages()).toEqual([
      {name: nameOf(1), version: v(1), id: 'ami-1', arch: 'x86_64', gpuDriver: null},
      {name: nameOf(3), version: v(3), id: 'ami-3', arch: 'arm64'},
    ])
    await b.use(images[1])
    await b.remove(images[2])
    expect(parseImageState(node.text(IMAGES_JSON)!).gpuDrivers).toEqual({[nameOf(2)]: '580'})
  })

  it('paths: the build dir and the citc installed on the node', async () => {
    const {b} = builder('aws')
    expect(b.workDir).toBe(CLOUD_IMAGE_PATHS.workDir)
    expect(await b.packageRoot()).toBe('/opt/citc/lib/node_modules/citc')
    expect(b.packerOnly).toBe('cloud.amazon-ebs.aws')
  })
})

describe('google image builder', () => {
  it('lists the images of the cluster with the nodes labelled with their version; remove deletes', async () => {
    const {b} = builder('google')
    const list = await b.list()
    expect(list.map((i) => [i.name, i.arch, i.current, i.nodes])).toEqual([
      [nameOf(2), 'x86_64', true, 0],
      [nameOf(1), 'x86_64', false, 1],
    ])
    await b.remove(list[0])
    expect(ids()).not.toContain(nameOf(2))
  })

  it('arm64: the base is the newest image of the arm64 family; one image family per cluster and arch', () => {
    const d = nodeDriverVars('google', cloudRecord('google').terraform!.outputs, 'demo') as GoogleNodeConfig
    expect(googlePackerVars(d, 'demo', 'x86_64')).toMatchObject({google_source_image: 'ubuntu-2404-noble-amd64-v20260110', google_source_image_family: '', google_image_family: 'citc-slurm-compute-demo-x86-64'})
    expect(googlePackerVars(d, 'demo', 'arm64')).toMatchObject({google_source_image: '', google_source_image_family: 'ubuntu-2404-lts-arm64', google_source_image_project: 'ubuntu-os-cloud', google_machine_type: 't2a-standard-2', google_image_family: 'citc-slurm-compute-demo-arm64'})
  })
})

describe('oracle image builder', () => {
  it("lists the cluster's images with the nodes of the cluster (not another's) on each", async () => {
    const {b} = builder('oracle')
    const list = await b.list()
    expect(list.map((i) => [i.id, i.current, i.nodes])).toEqual([
      ['ocid1.image.oc1..two', true, 1],
      ['ocid1.image.oc1..one', false, 0],
    ])
    await b.remove(list[1])
    expect(ids()).not.toContain('ocid1.image.oc1..one')
  })

  it('refuses arm64 before any build: Packer 1.6.6 cannot launch flexible shapes', async () => {
    const {b} = builder('oracle')
    await expect(b.vars({name: nameOf(5), version: v(5), arch: 'arm64', slurmVersion: '22.05.8-4+deb12u3'})).rejects.toThrow(/cannot build arm64 images on Oracle Cloud yet/)
  })

  it('says so up front: --arch arm64 is a usage error (exit 2) from archFor, the other clouds build both', () => {
    const {b} = builder('oracle')
    expect(b.arches).toEqual(['x86_64'])
    const e = (() => {
      try {
        return archFor(cloudRecord('oracle'), 'arm64', b.arches)
      } catch (error) {
        return error as CitcError
      }
    })() as CitcError
    expect(e.kind).toBe('usage')
    expect(e.message).toBe('--arch arm64: citc cannot build arm64 images on oracle (it builds x86_64)')
    expect(e.hint).toMatch(/leave --arch out \(or give x86_64\)/)
    expect(archFor(cloudRecord('oracle'), undefined, b.arches)).toBe('x86_64')
    for (const p of ['aws', 'google'] as const) {
      const other = builder(p).b
      expect(other.arches).toEqual(['x86_64', 'arm64'])
      expect(archFor(cloudRecord(p), 'arm64', other.arches)).toBe('arm64')
    }
  })

  it('rebuild-image --arch arm64 on Oracle: exit 2 before connecting, locking or asking (the node here is unreachable)', async () => {
    expect(await buildableArches(cloudRecord('oracle'))).toEqual(['x86_64'])
    expect(await buildableArches(cloudRecord('aws'))).toEqual(['x86_64', 'arm64'])
    const dataDir = mkdtempSync(join(work, 'data-'))
    clusterRegistry(dataDir).create(cloudRecord('oracle'))
    // No --yes and no terminal: asking first would fail with another message. What proves nothing
    // connected or locked is the empty logs directory (the workflow writes its log first), not the
    // time taken (a bound on it can fail on a loaded machine, importing the provider's module).
    const io = {log: () => {}, note: () => {}, json: false, interactive: false, yes: false, renderer: 'silent' as const}
    for (const run of [() => rebuildImage(io, {cluster: 'demo', keep: 3, arch: 'arm64'}, dataDir), () => rollbackImage(io, {cluster: 'demo', arch: 'arm64'}, dataDir)]) {
      const e = (await run().catch((x: unknown) => x)) as CitcError
      expect(e.exitCode).toBe(2)
      expect(e.message).toBe('--arch arm64: citc cannot build arm64 images on oracle (it builds x86_64)')
    }
    expect(existsSync(join(dataDir, 'clusters', 'demo', 'logs')) && readdirSync(join(dataDir, 'clusters', 'demo', 'logs'))).toEqual([])
  })
})
