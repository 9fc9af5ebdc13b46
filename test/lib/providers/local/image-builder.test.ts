// The local image store on disk (a temp dir stands in for /var/lib/citc/images/<cluster>): a finished
// build moved into place with its record, `current` switched by one rename, images listed newest first
// with the nodes running each, and removal refused for the current image and for one a node runs.
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {localImages} from '../../../../src/lib/providers/local/image-builder.js'
import {currentLocalImage} from '../../../../src/lib/providers/local/driver.js'
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

function store() {
  const dir = tempDir()
  const imagesDir = join(dir, 'images')
  const runDir = join(dir, 'run')
  mkdirSync(runDir)
  const images = localImages('demo', () => readManagementContract(new MemoryTransport()), {imagesDir, runDir})
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
  return {imagesDir, runDir, images, build, packerBuilt}
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
    const vars = await s.images.vars({name: 'citc-slurm-compute-demo-v20260103000000', version: '20260103000000', arch: 'x86_64', slurmVersion: '22.05.8'})
    expect(vars.output_dir).toBe(join(s.imagesDir, 'citc-slurm-compute-demo-v20260103000000.partial'))
    expect(existsSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260102000000.partial'))).toBe(false)
    expect(existsSync(join(s.imagesDir, 'citc-slurm-compute-demo-v20260101000000'))).toBe(true)
  })
})
