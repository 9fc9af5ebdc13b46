// `citc rebuild-image`: build a new compute-node image and make it current (with --script, the
// cluster's customisation script, stored only once the build succeeded), list the images (--list), or
// make an older one current again (--rollback). The provider's image builder does the provider's part
// (providers/<name>/image-builder.ts); the steps are image-steps.ts.
import {readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError, usageError} from '../../errors.js'
import {gpuDriverLabel} from '../../images/gpu-driver.js'
import {isImageVersion, versionDate} from '../../images/naming.js'
import type {ImageBuilder, ImageInfo, ImageRecord} from '../../providers/image-types.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import {providerModule} from '../../providers/registry.js'
import type {Arch} from '../../shapes/types.js'
import type {Transport} from '../../transport/types.js'
import {withManagementNode} from '../management-session.js'
import {clusterWorkflow, type Workflow} from '../workflow.js'
import {readScriptFlag, storedScript} from './image-script.js'
import {buildStep, type ImageContext, installImageTools, inputsStep, pruneStep, useStep} from './image-steps.js'

export const DEFAULT_KEEP = 3

export interface RebuildImageInput {
  cluster?: string
  /** A script file, or "none". */
  script?: string
  keep: number
  arch?: string
  wait?: boolean
  /** A stand-in management node's root for the image builds' files (stand-in.ts managementNode.imageRoot; tests only). */
  nodeRoot?: string
}

/** The provider's image builder for a cluster, or a clear refusal. */
export async function imageBuilderFor(record: ClusterRecord, management: Transport, signal: AbortSignal, logFile: string, nodeRoot?: string): Promise<ImageBuilder> {
  const make = await providerModule(record.provider).imageBuilder()
  if (!make) throw new CitcError('usage', `citc cannot build images for provider ${record.provider} yet`)
  return make({record, management, managementContract: () => readManagementContract(management), signal, logFile, nodeRoot})
}

/**
 * `citc create`'s image steps' context (local and cloud): the management node's root, the provider's
 * builder, the architecture (`arch`, else the only one the builder builds, else x86_64: a usage error
 * when the builder cannot build it), the cluster's stored script.
 */
export async function createImageContext(
  wf: Workflow,
  o: {record: ClusterRecord; management: Transport; clusterDir: string; arch?: Arch; nodeRoot?: string},
): Promise<ImageContext> {
  const builder = await imageBuilderFor(o.record, o.management, wf.signal, wf.logFile('create'), o.nodeRoot)
  return {
    ...wf.context,
    record: o.record,
    management: o.management,
    builder,
    arch: archFor(o.record, o.arch, builder.arches),
    script: storedScript(o.clusterDir),
    keep: DEFAULT_KEEP,
  }
}

/** A management node not connected yet: builders are made without using it, so a builder's own facts (arches) can be asked first. */
const NOT_CONNECTED: Transport = (() => {
  const refuse = async (): Promise<never> => {
    throw new Error('internal: the image builder used the management node before citc connected to it')
  }
  return {description: 'the management node (not connected)', run: refuse, check: refuse, readFile: refuse, writeFile: refuse, close: async () => {}}
})()

/**
 * The architectures the provider's builder can build (undefined: any), asked before anything
 * connects or starts, so an --arch it cannot build is a usage error at once (not after SSH).
 */
export async function buildableArches(record: ClusterRecord): Promise<Arch[] | undefined> {
  const make = await providerModule(record.provider).imageBuilder()
  return make?.({record, management: NOT_CONNECTED, managementContract: () => readManagementContract(NOT_CONNECTED), signal: new AbortController().signal, logFile: '/dev/null'}).arches
}

/**
 * The architecture to build, as far as the provider's builder can build it (`arches`: local builds
 * this machine's only, Oracle's cannot build arm64); the only one it builds, else x86_64, when not
 * given. A usage error, before anything starts.
 */
export function archFor(record: ClusterRecord, given: string | undefined, arches?: readonly Arch[]): Arch {
  if (given !== undefined && given !== 'x86_64' && given !== 'arm64') throw usageError(`--arch ${given}: expected x86_64 or arm64`)
  const arch = (given as Arch | undefined) ?? (arches?.length === 1 ? arches[0] : 'x86_64')
  if (arches && !arches.includes(arch)) {
    throw usageError(`--arch ${arch}: citc cannot build ${arch} images on ${record.provider} (it builds ${arches.join(', ')})`, arches.length === 1 ? `leave --arch out (or give ${arches[0]})` : `give one of ${arches.join(', ')}`)
  }
  return arch
}

export async function rebuildImage(io: Io, input: RebuildImageInput, dataDir: string) {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const paths = registry.paths(name)
  if (!Number.isInteger(input.keep) || input.keep < 1) throw usageError(`--keep ${input.keep}: keep at least 1 image`)
  const arch = archFor(record, input.arch, await buildableArches(record))
  // Read and check --script before anything changes; it is stored only once the build succeeded.
  const given = input.script === undefined ? undefined : readScriptFlag(input.script)
  const script = given === undefined ? storedScript(paths.dir) : (given ?? undefined)
  await confirmOrRefuse(io, `Build a new compute-node image for cluster ${name}${script ? ' (with its customisation script)' : ''}?`)

  return clusterWorkflow(
    {
      paths,
      command: 'citc rebuild-image',
      renderer: io.renderer,
      lock: {wait: input.wait ?? false, timeoutMs: 60 * 60_000},
      rewrap: (error, {interrupted, logFile}) => {
        if (interrupted) return new CitcError('cancelled', 'image build interrupted: nothing changed, the current image stays current', {hint: `full output: ${logFile('rebuild-image')}`})
        return new CitcError(error.kind, error.message, {hint: {...error.hintParts, log: logFile('rebuild-image')}, details: {...error.details, logFile: logFile('rebuild-image')}})
      },
    },
    async (wf) => {
      const logFile = wf.logFile('rebuild-image')
      const management = await wf.connect(record, {log: 'rebuild-image'})
      const builder = await imageBuilderFor(record, management, wf.signal, logFile, input.nodeRoot)
      const ctx: ImageContext = {
        ...wf.context,
        record,
        management,
        builder,
        arch,
        script,
        storeScript: given === undefined ? undefined : {clusterDir: paths.dir, script: given},
        keep: input.keep,
      }
      await wf.steps([installImageTools(), inputsStep(), buildStep(), useStep(), pruneStep()], ctx)
      const image = ctx.built!
      io.log(
        `New nodes of cluster ${name} start from ${image.name}. Nodes running now keep their image until they power down` +
          ` (after ${record.settings?.suspendTime ?? 'the cluster’s'} s idle).`,
      )
      return {cluster: name, image, pruned: ctx.pruned ?? [], spared: ctx.spared ?? [], logFile}
    },
  )
}

export async function listImages(io: Io, cluster: string | undefined, dataDir: string, nodeRoot?: string): Promise<{cluster: string; images: ImageInfo[]}> {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(cluster)
  const record = registry.get(name)
  return withManagementNode(record, {command: 'citc rebuild-image --list'}, async (management, signal) => {
    const builder = await imageBuilderFor(record, management, signal, registry.paths(name).logsDir + '/images.log', nodeRoot)
    const images = await builder.list()
    io.log(imagesTable(name, images))
    return {cluster: name, images}
  })
}

export function imagesTable(cluster: string, images: ImageInfo[]): string {
  if (images.length === 0) return `Cluster ${cluster} has no compute-node image yet: \`citc rebuild-image -c ${cluster}\` builds one.`
  const rows = images.map((i) => [
    i.current ? '*' : '',
    i.version,
    versionDate(i.version),
    i.sizeBytes === undefined ? '?' : `${Math.round(i.sizeBytes / 1e6)} MB`,
    i.arch,
    gpuDriverLabel(i.gpuDriver),
    String(i.nodes),
    i.name,
  ])
  const head = ['', 'VERSION', 'BUILT', 'SIZE', 'ARCH', 'GPU DRIVER', 'NODES', 'NAME']
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)))
  const line = (r: string[]) => r.map((v, c) => v.padEnd(widths[c])).join('  ').trimEnd()
  const notes = ['* current: new nodes start from it']
  if (images.some((i) => i.gpuDriver === undefined)) notes.push('GPU DRIVER ?: built before citc recorded the driver (`citc rebuild-image` makes one that says)')
  return [line(head), ...rows.map(line), '', ...notes].join('\n')
}

/** The image --rollback makes current: the named version, or the newest one older than the current. */
export function rollbackTarget(images: ImageInfo[], arch: Arch, version?: string): ImageInfo {
  const mine = images.filter((i) => i.arch === arch).sort((a, b) => b.version.localeCompare(a.version))
  if (version !== undefined) {
    if (!isImageVersion(version)) throw usageError(`--rollback ${version}: a version is 14 digits (YYYYMMDDhhmmss), as \`citc rebuild-image --list\` shows`)
    const found = mine.find((i) => i.version === version)
    if (!found) throw new CitcError('invalidInput', `no ${arch} image has version ${version}`, {hint: 'see `citc rebuild-image --list`'})
    if (found.current) throw new CitcError('invalidInput', `${found.name} is current already`)
    return found
  }
  const current = mine.findIndex((i) => i.current)
  const previous = current === -1 ? undefined : mine[current + 1]
  if (!previous) throw new CitcError('invalidInput', `no ${arch} image older than the current one to go back to`, {hint: 'see `citc rebuild-image --list`'})
  return previous
}

export async function rollbackImage(io: Io, input: {cluster?: string; version?: string; arch?: string; wait?: boolean; nodeRoot?: string}, dataDir: string): Promise<{cluster: string; current: ImageRecord; previous?: string}> {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const arch = archFor(record, input.arch, await buildableArches(record))
  return clusterWorkflow({paths: registry.paths(name), command: 'citc rebuild-image --rollback', renderer: io.renderer, lock: {wait: input.wait ?? false, timeoutMs: 10 * 60_000}}, async (wf) => {
    const logFile = wf.logFile('rebuild-image')
    const management = await wf.connect(record, {log: 'rebuild-image'})
    const builder = await imageBuilderFor(record, management, wf.signal, logFile, input.nodeRoot)
    const images = await builder.list()
    const target = rollbackTarget(images, arch, input.version)
    const previous = images.find((i) => i.current && i.arch === arch)?.name
    await confirmOrRefuse(io, `New nodes of cluster ${name} start from ${target.name} (built ${versionDate(target.version)}) instead of ${previous ?? 'none'}?`)
    await wf.guard(() => builder.use(target))
    io.log(`New nodes of cluster ${name} start from ${target.name}. Nodes running now keep their image until they power down.`)
    return {cluster: name, current: target, previous}
  })
}
