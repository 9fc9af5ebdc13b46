// The local image store on disk (a temp dir stands in for /var/lib/citc/images/<cluster>): a finished
// build moved into place with its record, `current` switched by one rename, images listed newest first
// with the nodes running each, and removal refused for the current image and for one a node runs.
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {localImages, type LocalImageRecord} from '../../../../src/lib/providers/local/image-builder.js'
import {currentLocalImage} from '../../../../src/lib/providers/local/driver.js'
import {baseInputsDigest} from '../../../../src/lib/images/inputs.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'
import {readManagementContract} from '../../../../src/lib/cluster/management-contract.js'

const temps: string[] = []
/** A temp dir removed after the file's tests. */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'citc-images-'))
  temps.push(d)
  return d
}
afterAll(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

const PLAYBOOK_VARS = {provider: 'local', cluster_name: 'demo', shared_dir: '/mnt/shared'}
/** What the image steps hand the builder for a build with this Slurm version (inputsStep's baseInputs). */
const baseInputs = (slurmVersion = '22.05.8-4+deb12u3') => baseInputsDigest({packageRoot: join(import.meta.dirname, '..', '..', '..', '..'), slurmVersion, arch: 'x86_64', playbookVars: PLAYBOOK_VARS})

function store(o: {now?: () => Date} = {}) {
  const dir = tempDir()
  const imagesDir = join(dir, 'images')
  const runDir = join(dir, 'run')
  mkdirSync(runDir)
  // The apt sources of the base's key: a file of the test's own, so a change of it is the test's.
  const aptDir = join(dir, 'apt')
  mkdirSync(aptDir)
  writeFileSync(join(aptDir, 'sources.list'), 'deb http://deb.debian.org/debian bookworm main\n')
  const images = localImages('demo', () => readManagementContract(new MemoryTransport()), {imagesDir, runDir, aptDir, ...o})
  /** What Packer's local build leaves: <name>.partial/rootfs with a slurmd. */
  const packerBuilt = (name: string) => {
    mkdirSync(join(imagesDir, `${name}.partial`, 'rootfs', 'usr', 'sbin'), {recursive: true})
    writeFileSync(join(imagesDir, `${name}.partial`, 'rootfs', 'usr', 'sbin', 'slurmd'), 'x'.repeat(5000))
    writeFileSync(join(imagesDir, `${name}.partial`, 'manifest.json'), '{}')
  }
  const build = async (version: string) => {
    const name = `citc-slurm-compute-demo-v${version}`
    packerBuilt(name)
    return images.collect({name, version, arch: 'x86_64', inputs: `in-${version}`})
  }
  /** A whole build: vars (which picks the base), what Packer's base step leaves (the base, when it made one), collect. */
  const buildFrom = async (version: string, o: {slurmVersion?: string} = {}) => {
    const name = `citc-slurm-compute-demo-v${version}`
    const vars = await images.vars({name, version, arch: 'x86_64', slurmVersion: o.slurmVersion ?? '22.05.8-4+deb12u3', baseInputs: baseInputs(o.slurmVersion)})
    const base = String(vars.base_dir)
    if (!existsSync(base)) {
      mkdirSync(join(base, 'rootfs'), {recursive: true})
      writeFileSync(join(base, 'base.json'), JSON.stringify({builtAt: new Date().toISOString()}))
    }
    packerBuilt(name)
    return {record: (await images.collect({name, version, arch: 'x86_64', inputs: `in-${version}`})) as LocalImageRecord, base}
  }
  return {dir, imagesDir, runDir, aptDir, images, build, buildFrom, packerBuilt}
}

describe('local images', () => {
  it('collect moves the build into place with its record; use switches current; list shows newest first', async () => {
    const s = store()
    const a = await s.build('20260101000000')
    const b = await s.build('20260102000000')
    expect(a).toMatchObject({name: 'citc-slurm-compute-demo-v20260101000000', arch: 'x86_64', inputs: 'in-20260101000000', id: join(s.imagesDir, a.name)})
    expect(a.sizeBytes).toBeGreaterThanOrEqual(5000)
    expect(existsSync(join(s.imagesDir, `${a.name}.partial`))).toBe(false)
    expect(existsSync(join(s.imagesDir, a.name, 'manifest.json'))).toBe(false)
    expect(JSON.parse(readFileSync(join(s.imagesDir, a.name, 'image.json'), 'utf8'))).toEqual(a)

    await s.images.use(a)
    expect(readlinkSync(join(s.imagesDir, 'current'))).toBe(a.name) // relative: the directory can move
    await s.images.use(b)
    expect(currentLocalImage(s.imagesDir)).toEqual({name: b.name, rootfs: join(s.imagesDir, b.name, 'rootfs')})
    const list = await s.images.list()
    expect(list.map((i) => [i.version, i.current, i.nodes])).toEqual([
      ['20260102000000', true, 0],
      ['20260101000000', false, 0],
    ])
  })

  it("records the GPU driver the image's own /etc/citc/image.json names; currentImages is the current one's record", async () => {
    const s = store()
    const name = 'citc-slurm-compute-demo-v20260101000000'
    s.packerBuilt(name)
    mkdirSync(join(s.imagesDir, `${name}.partial`, 'rootfs', 'etc', 'citc'), {recursive: true})
    writeFileSync(join(s.imagesDir, `${name}.partial`, 'rootfs', 'etc', 'citc', 'image.json'), JSON.stringify({name, gpu_driver: '535 (Debian 12)'}))
    const a = await s.images.collect({name, version: '20260101000000', arch: 'x86_64', inputs: 'x'})
    expect(a.gpuDriver).toBe('535 (Debian 12)')
    // An image whose record says nothing (an older citc's) records nothing: never "none" by guess.
    const b = await s.build('20260102000000')
    expect(b).not.toHaveProperty('gpuDriver')
    expect(await s.images.currentImages()).toEqual([])
    await s.images.use(a)
    expect(await s.images.currentImages()).toEqual([expect.objectContaining({name, arch: 'x86_64', gpuDriver: '535 (Debian 12)'})])
    expect((await s.images.list()).map((i) => i.gpuDriver)).toEqual([undefined, '535 (Debian 12)'])
    expect(s.images.gpuDriverInImage).toBe(false)
  })

  it('counts the nodes running each image (a node records its image while its launcher pid file exists)', async () => {
    const s = store()
    const a = await s.build('20260101000000')
    await s.images.use(a)
    writeFileSync(join(s.runDir, 'demo-node-1.image'), `${a.name}\n`)
    writeFileSync(join(s.runDir, 'demo-node-1.pid'), '123\n')
    writeFileSync(join(s.runDir, 'demo-node-2.image'), `${a.name}\n`) // stopped: no pid file
    expect((await s.images.list())[0].nodes).toBe(1)
  })

  it('refuses to remove the current image or one a node runs; removes the others', async () => {
    const s = store()
    const a = await s.build('20260101000000')
    const b = await s.build('20260102000000')
    const c = await s.build('20260103000000')
    await s.images.use(c)
    await expect(s.images.remove(c)).rejects.toThrow(/is current: it stays/)
    writeFileSync(join(s.runDir, 'n1.image'), `${b.name}\n`)
    writeFileSync(join(s.runDir, 'n1.pid'), '1\n')
    await expect(s.images.remove(b)).rejects.toThrow(/runs on a node: it stays until the node powers down/)
    await s.images.remove(a)
    expect(existsSync(join(s.imagesDir, a.name))).toBe(false)
    expect((await s.images.list()).map((i) => i.version)).toEqual(['20260103000000', '20260102000000'])
  })

  it('discard removes what a failed build left; collect refuses a build without slurmd', async () => {
    const s = store()
    s.packerBuilt('citc-slurm-compute-demo-v20260101000000')
    await s.images.discard({name: 'citc-slurm-compute-demo-v20260101000000', version: '20260101000000', arch: 'x86_64'})
    expect(existsSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260101000000.partial'))).toBe(false)
    mkdirSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260102000000.partial', 'rootfs'), {recursive: true})
    await expect(s.images.collect({name: 'citc-slurm-compute-demo-v20260102000000', version: '20260102000000', arch: 'x86_64', inputs: 'x'})).rejects.toThrow(/has no \/usr\/sbin\/slurmd/)
    expect(lstatSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260102000000.partial')).isDirectory()).toBe(true)
    await expect(s.images.use({name: 'nope', version: '1', arch: 'x86_64', createdAt: ''})).rejects.toThrow(/is not in/)
  })

  it('a build removes what a killed build left (a *.partial), and keeps the images', async () => {
    const s = store()
    await s.build('20260101000000')
    s.packerBuilt('citc-slurm-compute-demo-v20260102000000') // its citc was killed before collect
    const vars = await s.images.vars({name: 'citc-slurm-compute-demo-v20260103000000', version: '20260103000000', arch: 'x86_64', slurmVersion: '22.05.8', baseInputs: baseInputs('22.05.8')})
    expect(vars.output_dir).toBe(join(s.imagesDir, 'citc-slurm-compute-demo-v20260103000000.partial'))
    expect(existsSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260102000000.partial'))).toBe(false)
    expect(existsSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260101000000'))).toBe(true)
  })

  it("a build's base: under .bases/<key>, recorded with the image, the same for the next build, another for another Slurm version", async () => {
    const s = store()
    const a = await s.buildFrom('20260101000000')
    expect(a.base).toMatch(new RegExp(`^${join(s.imagesDir, '.bases')}/[0-9a-f]{16}$`))
    expect(a.record).toMatchObject({base: a.base.split('/').at(-1)})
    expect(JSON.parse(readFileSync(join(s.imagesDir, a.record.name, 'image.json'), 'utf8')).base).toBe(a.record.base)
    const b = await s.buildFrom('20260102000000')
    expect(b.base).toBe(a.base)
    const c = await s.buildFrom('20260103000000', {slurmVersion: '22.05.9-1'})
    expect(c.base).not.toBe(a.base)
    // The sources the packages come from are in the key: another mirror, another base.
    writeFileSync(join(s.aptDir, 'sources.list'), 'deb http://mirror.example/debian bookworm main\n')
    const d = await s.buildFrom('20260104000000', {slurmVersion: '22.05.9-1'})
    expect(d.base).not.toBe(c.base)
    // The bases the images record stay; .bases is no image.
    expect(readdirSync(join(s.imagesDir, '.bases')).sort()).toEqual([a.base, c.base, d.base].map((p) => p.split('/').at(-1)).sort())
    expect((await s.images.list()).map((i) => i.version)).toEqual(['20260104000000', '20260103000000', '20260102000000', '20260101000000'])
  })

  it('removing images removes the bases no remaining image records (what --keep and its pruning do)', async () => {
    const s = store()
    const a = await s.buildFrom('20260101000000')
    const b = await s.buildFrom('20260102000000')
    const c = await s.buildFrom('20260103000000', {slurmVersion: '22.05.9-1'})
    await s.images.use(c.record)
    await s.images.remove(a.record)
    expect(existsSync(a.base)).toBe(true) // b still records it
    await s.images.remove(b.record)
    expect(existsSync(a.base)).toBe(false)
    expect(existsSync(c.base)).toBe(true)
  })

  it('a half-made base (an interrupted build) is removed, never used; an old base is built again; a failed build discards its own', async () => {
    let now = new Date()
    const s = store({now: () => now})
    const a = await s.buildFrom('20260101000000')
    // Interrupted: its base is only a .partial (base.sh renames it once whole).
    mkdirSync(join(`${a.base}x.partial`, 'rootfs'), {recursive: true})
    // A base no image records (its build failed after making it) and that is not this build's.
    mkdirSync(join(s.imagesDir, '.bases', '0123456789abcdef', 'rootfs'), {recursive: true})
    const vars = await s.images.vars({name: 'citc-slurm-compute-demo-v20260102000000', version: '20260102000000', arch: 'x86_64', slurmVersion: '22.05.8-4+deb12u3', baseInputs: baseInputs()})
    expect(vars.base_dir).toBe(a.base)
    expect(readdirSync(join(s.imagesDir, '.bases'))).toEqual([a.base.split('/').at(-1)])
    // Failed while making its base: discard removes the .partial, keeps the whole one.
    mkdirSync(join(`${a.base}.partial`, 'rootfs'), {recursive: true})
    await s.images.discard({name: 'citc-slurm-compute-demo-v20260102000000', version: '20260102000000', arch: 'x86_64'})
    expect(existsSync(`${a.base}.partial`)).toBe(false)
    expect(existsSync(a.base)).toBe(true)
    // Eight days on, the same inputs build their base again (Debian's updates reach new images).
    now = new Date(now.getTime() + 8 * 86_400_000)
    await s.images.vars({name: 'citc-slurm-compute-demo-v20260103000000', version: '20260103000000', arch: 'x86_64', slurmVersion: '22.05.8-4+deb12u3', baseInputs: baseInputs()})
    expect(existsSync(a.base)).toBe(false)
  })
})
