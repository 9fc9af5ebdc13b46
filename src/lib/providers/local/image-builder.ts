// The local provider's images: Debian root filesystems under /var/lib/citc/images/<cluster>/, built
// on this machine (its management node) by Packer's null source (templates/packer/local.pkr.hcl):
//   <image>.partial/   while Packer builds it (removed when the build fails)
//   <image>/rootfs/    the node's / (the lower layer of every node's overlay)
//   <image>/image.json what citc records about it (LocalImageRecord: with the key of its base)
//   current → <image>  what new nodes boot (switched atomically: a symlink renamed over the old one)
//   .bases/<key>/      the root filesystem before the customisation script (image-bases.ts), keyed by
//                      what goes into it; every image's rootfs starts as a copy of one (hard links
//                      when the build has no customisation script: templates/packer/local/base.sh).
//                      Built into <key>.partial and renamed, so an interrupted build never leaves one
//                      half made.
// Running nodes keep the image they booted (their overlay holds it; <runDir>/<node>.image names it).
// `citc destroy` removes the whole directory (playbooks/teardown.yml), bases with it.
import {existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {arch as osArch} from 'node:os'
import {join} from 'node:path'

import {CitcError} from '../../errors.js'
import {PACKAGE_ROOT} from '../../package-root.js'
import {gpuDriverOf, type ImageBuilder, type ImageBuilderContext, type ImageBuilderFactory, type ImageInfo, type ImageRecord} from '../image-types.js'
import {run} from '../../tools/exec.js'
import {archOf} from './shapes.js'
import {aptSources, baseExpired, baseKey, prunableBases} from './image-bases.js'
import {currentLocalImage, LOCAL_DRIVER_DEFAULTS, LOCAL_IMAGES_ROOT, localNodeImage} from './driver.js'


export interface LocalImageOptions {
  /** Default LOCAL_IMAGES_ROOT/<cluster>. */
  imagesDir?: string
  /** Where the node driver records which image each node booted. */
  runDir?: string
  /** Default <imagesDir>/.bases. */
  basesDir?: string
  /** The apt sources a base's packages come from (its key has their text); default /etc/apt. */
  aptDir?: string
  now?: () => Date
}

/** What the local builder records in <image>/image.json: the image, and the base it was copied from. */
export interface LocalImageRecord extends ImageRecord {
  /** The key of its base (.bases/<key>); absent in images built before bases. */
  base?: string
}

export function localImagesDir(cluster: string): string {
  return join(LOCAL_IMAGES_ROOT, cluster)
}

/** The GPU driver the image itself says it carries (its /etc/citc/image.json, compute_image's record). */
function gpuDriverIn(rootfs: string): string | null | undefined {
  try {
    return gpuDriverOf(JSON.parse(readFileSync(join(rootfs, 'etc', 'citc', 'image.json'), 'utf8')))
  } catch {
    return undefined
  }
}

function readRecord(dir: string): LocalImageRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, 'image.json'), 'utf8')) as LocalImageRecord
  } catch {
    return undefined
  }
}

/** When a base was built (its base.json, written by templates/packer/local/base.sh); undefined: unreadable. */
function builtAt(base: string): string | undefined {
  try {
    const at = (JSON.parse(readFileSync(join(base, 'base.json'), 'utf8')) as {builtAt?: unknown}).builtAt
    return typeof at === 'string' ? at : undefined
  } catch {
    return undefined
  }
}

/** Mount points under `dir` (deepest first): what an interrupted mmdebstrap can leave behind. */
function mountsUnder(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4]?.replace(/\\040/g, ' '))
    .filter((p): p is string => p !== undefined && (p === dir || p.startsWith(prefix)))
    .sort((a, b) => b.length - a.length)
}

/** Remove an image directory without ever crossing into a mounted filesystem (a bound /dev or /sys). */
async function removeTree(dir: string) {
  if (!existsSync(dir)) return
  for (const m of mountsUnder(dir)) await run('umount', ['--lazy', m])
  const left = mountsUnder(dir)
  if (left.length > 0) throw new CitcError('remote', `cannot remove ${dir}: ${left[0]} is still mounted`, {hint: `umount it (umount -R ${left[0]}), then run the command again`})
  const r = await run('rm', ['-rf', '--one-file-system', dir])
  if (r.exitCode !== 0) throw new CitcError('remote', `cannot remove ${dir}: ${r.stderr.trim()}`)
}

async function sizeOf(dir: string): Promise<number | undefined> {
  const r = await run('du', ['-s', '-x', '-B1', dir])
  const n = Number(r.stdout.split(/\s/)[0])
  return r.exitCode === 0 && Number.isFinite(n) ? n : undefined
}

export const localImageBuilder: ImageBuilderFactory = (ctx) => localImages(ctx.record.name, ctx.managementContract)

/** `managementContract`: this machine's cluster.json (compute.yml's shared_dir is the cluster's). */
export function localImages(cluster: string, managementContract: ImageBuilderContext['managementContract'], o: LocalImageOptions = {}): ImageBuilder {
  const root = o.imagesDir ?? localImagesDir(cluster)
  const runDir = o.runDir ?? LOCAL_DRIVER_DEFAULTS.runDir
  const basesDir = o.basesDir ?? join(root, '.bases')
  const now = o.now ?? (() => new Date())
  const dirOf = (name: string) => join(root, name)
  /** The base key of each build in progress (vars → collect, discard). */
  const building = new Map<string, string>()

  /** Every image's record (what list() shows, without the nodes). */
  function records(): LocalImageRecord[] {
    if (!existsSync(root)) return []
    return readdirSync(root)
      .filter((e) => !e.startsWith('.') && !e.endsWith('.partial') && e !== 'current')
      .flatMap((e) => readRecord(dirOf(e)) ?? [])
  }

  /** Delete the bases no image records (nor `keep`, the build in progress), and half-made ones. */
  async function pruneBases(keep?: string) {
    if (!existsSync(basesDir)) return
    const entries = readdirSync(basesDir)
    for (const d of entries) if (d.endsWith('.partial')) await removeTree(join(basesDir, d))
    const bases = entries.filter((d) => !d.endsWith('.partial'))
    for (const b of prunableBases(bases, [...records(), {base: keep}])) await removeTree(join(basesDir, b))
  }

  /** Images and the nodes running each (only live nodes record one). */
  function nodesByImage(): Map<string, number> {
    const counts = new Map<string, number>()
    if (!existsSync(runDir)) return counts
    for (const f of readdirSync(runDir)) {
      if (!f.endsWith('.image')) continue
      const node = f.slice(0, -'.image'.length)
      if (!existsSync(join(runDir, `${node}.pid`))) continue
      const image = localNodeImage(runDir, node)
      if (image) counts.set(image, (counts.get(image) ?? 0) + 1)
    }
    return counts
  }

  return {
    packerOnly: 'local.null.local',
    // Local nodes are to use this machine's own driver (its kernel module): the image's does not decide.
    gpuDriverInImage: false,
    tools: ['packer', 'mmdebstrap'],
    arches: [archOf(osArch())], // nodes run on this machine
    workDir: join(root, '.builds'),
    packageRoot: async () => PACKAGE_ROOT,
    async playbookVars() {
      const contract = await managementContract()
      return {provider: 'local', cluster_name: cluster, shared_dir: contract.sharedDir}
    },
    async vars({name, slurmVersion, baseInputs}) {
      if (!baseInputs) throw new Error('internal: the local image builder needs the digest of what goes into the base (inputsStep computes it)')
      mkdirSync(root, {recursive: true, mode: 0o755})
      // A build runs under the cluster's lock, so a half-built image here is one whose citc was killed
      // (a failed build discards its own): remove it, or it would stay, unlisted, for ever.
      for (const d of readdirSync(root)) if (d.endsWith('.partial')) await removeTree(join(root, d))
      const key = baseKey(baseInputs, aptSources(o.aptDir))
      const base = join(basesDir, key)
      if (existsSync(base) && baseExpired(builtAt(base), now())) await removeTree(base)
      await pruneBases(key)
      mkdirSync(basesDir, {recursive: true, mode: 0o700})
      building.set(name, key)
      return {output_dir: `${dirOf(name)}.partial`, slurm_version: slurmVersion, base_dir: base}
    },
    async collect({name, version, arch, inputs}) {
      const partial = `${dirOf(name)}.partial`
      if (!existsSync(join(partial, 'rootfs', 'usr', 'sbin', 'slurmd'))) {
        throw new CitcError('remote', `Packer finished, but ${partial}/rootfs has no /usr/sbin/slurmd`, {hint: 'read the build log'})
      }
      rmSync(join(partial, 'manifest.json'), {force: true})
      const gpuDriver = gpuDriverIn(join(partial, 'rootfs'))
      const base = building.get(name)
      building.delete(name)
      const record: LocalImageRecord = {
        name,
        version,
        createdAt: new Date().toISOString(),
        arch,
        inputs,
        id: dirOf(name),
        sizeBytes: await sizeOf(join(partial, 'rootfs')),
        ...(gpuDriver === undefined ? {} : {gpuDriver}),
        ...(base === undefined ? {} : {base}),
      }
      writeFileSync(join(partial, 'image.json'), JSON.stringify(record, null, 2) + '\n')
      renameSync(partial, dirOf(name))
      return record
    },
    async discard({name}) {
      await removeTree(`${dirOf(name)}.partial`).catch(() => undefined)
      // A base is renamed into place only once it is whole: what a failed or interrupted build leaves is its .partial.
      const key = building.get(name)
      building.delete(name)
      if (key) await removeTree(join(basesDir, `${key}.partial`)).catch(() => undefined)
    },
    async list() {
      if (!existsSync(root)) return []
      const current = currentLocalImage(root)?.name
      const nodes = nodesByImage()
      const images: ImageInfo[] = records().map((r) => ({...r, current: r.name === current, nodes: nodes.get(r.name) ?? 0}))
      return images.sort((a, b) => b.version.localeCompare(a.version))
    },
    async currentImages() {
      const current = currentLocalImage(root)
      const record = current && readRecord(dirOf(current.name))
      return record ? [record] : []
    },
    async use(image) {
      if (!existsSync(join(dirOf(image.name), 'rootfs'))) throw new CitcError('invalidInput', `image ${image.name} is not in ${root}`)
      const tmp = join(root, `.current-${process.pid}`)
      rmSync(tmp, {force: true})
      symlinkSync(image.name, tmp)
      renameSync(tmp, join(root, 'current'))
    },
    async remove(image) {
      if (currentLocalImage(root)?.name === image.name) throw new CitcError('invalidInput', `image ${image.name} is current: it stays`)
      if ((nodesByImage().get(image.name) ?? 0) > 0) throw new CitcError('invalidInput', `image ${image.name} runs on a node: it stays until the node powers down`)
      await removeTree(dirOf(image.name))
      // The bases go with the last image that records them (`citc rebuild-image --keep` prunes through here).
      await pruneBases()
    },
  }
}

