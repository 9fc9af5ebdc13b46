// The steps of an image build, shared by `citc rebuild-image` and `citc create` (its first image):
// the tools on the management node, the build, the switch to the new image, the pruning of old ones.
import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import {buildImage} from '../../images/build.js'
import {gpuGroupsInConf, gpuImageVars, type GpuImageVars} from '../../images/gpu.js'
import {PACKAGE_ROOT} from '../../package-root.js'
import {baseInputsDigest, imageInputsDigest} from '../../images/inputs.js'
import type {ImageBuilder, ImageInfo, ImageRecord} from '../../providers/image-types.js'
import type {Arch} from '../../shapes/types.js'
import type {Transport} from '../../transport/types.js'
import type {Step, WorkflowContext} from '../workflow.js'
import {storeScript} from './image-script.js'

export interface ImageContext extends WorkflowContext {
  record: ClusterRecord
  /** Root on the management node. */
  management: Transport
  builder: ImageBuilder
  arch: Arch
  /** The customisation script for this build: text, or undefined for none. */
  script?: string
  /** What to store as the cluster's script once the build succeeded (undefined: leave it as it is). */
  storeScript?: {clusterDir: string; script: string | null}
  keep: number
  /** Set by the steps. */
  built?: ImageRecord
  pruned?: string[]
  /** Set by pruneStep: images beyond --keep that stay, and why (a node runs on it, or it is the current one). */
  spared?: SparedImage[]
  /** Set by inputsStep. */
  inputs?: string
  /** Set by inputsStep: the same without the script (what a cached base is keyed by). */
  baseInputs?: string
  slurmVersion?: string
  playbookVars?: Record<string, unknown>
}

const SCRIPT_ON_MANAGEMENT = 'compute-image-extra.sh'

/** The controller's Slurm package version on the management node: the image's slurmd must be exactly it. */
async function slurmVersionOn(t: Transport): Promise<string> {
  const r = await t.run(['dpkg-query', '-W', '-f=${Version}', 'slurmctld'])
  const v = r.stdout.trim()
  if (r.exitCode !== 0 || !v) {
    throw new CitcError('remote', `no Slurm controller package on the management node (${t.description}): dpkg-query says ${r.stderr.trim() || 'nothing'}`, {
      hint: 'run `citc create` for the cluster first: it installs Slurm',
    })
  }
  return v
}

/** The builder's tools on the management node (local: Debian's packer and mmdebstrap), installed with apt when missing. */
export function installImageTools<C extends ImageContext>(): Step<C> {
  return {
    title: (ctx) => `Image tools on the management node (${(ctx.builder.tools ?? []).join(', ') || 'none needed'})`,
    skip: (ctx) => ((ctx.builder.tools ?? []).length === 0 ? 'no image tools needed' : false),
    run: async (ctx, task) => {
      const missing: string[] = []
      for (const p of ctx.builder.tools ?? []) {
        const r = await ctx.management.run(['dpkg-query', '-W', '-f=${Status}', p])
        if (!r.stdout.includes('install ok installed')) missing.push(p)
      }
      if (missing.length === 0) return
      task.output = `apt-get install -y ${missing.join(' ')}`
      const env = {DEBIAN_FRONTEND: 'noninteractive'}
      await ctx.management.check(['apt-get', 'update', '-qq'], {env, signal: ctx.signal, timeoutMs: 10 * 60_000})
      await ctx.management.check(['apt-get', 'install', '-y', '-qq', ...missing], {env, signal: ctx.signal, timeoutMs: 20 * 60_000})
    },
  }
}

/**
 * compute.yml's GPU variables for the cluster as its controller runs it: the node groups of its
 * slurm.conf (none yet, e.g. a cloud cluster before its first `finish`: no GPU driver). None where
 * nodes take the driver from the host, not the image (local: the host's user-space is bound into each
 * GPU node at boot, since it must match the host's kernel module).
 */
async function gpuVarsOn(ctx: ImageContext): Promise<GpuImageVars> {
  if (!ctx.builder.gpuDriverInImage) return gpuImageVars([])
  const conf = await ctx.management.readFile(ctx.record.slurm.confPath)
  return gpuImageVars(gpuGroupsInConf(conf?.toString('utf8') ?? ''))
}

/** What goes into the image (digest): the build step records it, create compares it. */
export function inputsStep<C extends ImageContext>(): Step<C> {
  return {
    title: 'What goes into the image: playbooks, template, script, Slurm version, GPUs',
    run: async (ctx) => {
      ctx.slurmVersion = await slurmVersionOn(ctx.management)
      // The GPU variables are inputs too: a cluster that gains its first GPU shape gets a new image.
      ctx.playbookVars = {...(await ctx.builder.playbookVars()), ...(await gpuVarsOn(ctx))}
      // This machine's template and playbooks are the files the management node runs (its citc is this one).
      const inputs = {packageRoot: PACKAGE_ROOT, slurmVersion: ctx.slurmVersion, arch: ctx.arch, playbookVars: ctx.playbookVars}
      ctx.inputs = imageInputsDigest({...inputs, script: ctx.script})
      ctx.baseInputs = baseInputsDigest(inputs)
    },
  }
}

/** The current image of the build's architecture, if its inputs are what this build would put in. */
export async function unchangedImage(ctx: ImageContext): Promise<ImageInfo | undefined> {
  const images = await ctx.builder.list()
  return images.find((i) => i.current && i.arch === ctx.arch && i.inputs === ctx.inputs)
}

export function buildStep<C extends ImageContext>(opts: {skipWhenUnchanged?: boolean} = {}): Step<C> {
  return {
    title: (ctx) => `Build the compute-node image (${ctx.arch}) with Packer`,
    rendererOptions: {outputBar: 1},
    run: async (ctx, task) => {
      if (opts.skipWhenUnchanged) {
        const same = await unchangedImage(ctx)
        if (same) {
          task.title = `Compute-node image ${same.name}: unchanged (playbooks, script and Slurm version are the same)`
          ctx.built = same
          return
        }
      }
      let scriptOnManagement: string | undefined
      if (ctx.script !== undefined) {
        scriptOnManagement = `${ctx.builder.workDir}/${SCRIPT_ON_MANAGEMENT}`
        await ctx.management.check(['mkdir', '-p', '-m', '0700', ctx.builder.workDir])
        await ctx.management.writeFile(scriptOnManagement, ctx.script, {mode: 0o700})
      }
      const started = Date.now()
      ctx.built = await buildImage(ctx.builder, {
        cluster: ctx.record.name,
        arch: ctx.arch,
        inputs: ctx.inputs!,
        baseInputs: ctx.baseInputs,
        slurmVersion: ctx.slurmVersion!,
        playbookVars: ctx.playbookVars!,
        scriptOnManagement,
        management: ctx.management,
        signal: ctx.signal,
        onLine: (line) => {
          if (line.trim()) task.output = line
        },
      }).finally(async () => {
        if (scriptOnManagement) await ctx.management.run(['rm', '-f', scriptOnManagement]).catch(() => undefined)
      })
      task.title = `Built ${ctx.built.name} in ${Math.round((Date.now() - started) / 1000)} s`
    },
  }
}

/** New nodes start from the new image; running ones keep theirs until they power down. */
export function useStep<C extends ImageContext>(): Step<C> {
  return {
    title: 'Make it the image new nodes start from',
    run: async (ctx, task) => {
      const image = ctx.built!
      await ctx.builder.use(image)
      if (ctx.storeScript) storeScript(ctx.storeScript.clusterDir, ctx.storeScript.script)
      task.title = `New nodes start from ${image.name}`
    },
  }
}

/** Images beyond `keep` (newest first, per architecture). */
function beyondKeep(images: ImageInfo[], keep: number): ImageInfo[] {
  const byArch = new Map<string, ImageInfo[]>()
  for (const i of [...images].sort((a, b) => b.version.localeCompare(a.version))) byArch.set(i.arch, [...(byArch.get(i.arch) ?? []), i])
  return [...byArch.values()].flatMap((list) => list.slice(keep))
}

/** The current image, or one a node runs: never deleted. */
const inUse = (i: ImageInfo) => i.current || i.nodes > 0

/** Images beyond `keep` to delete. */
export function prunable(images: ImageInfo[], keep: number): ImageInfo[] {
  return beyondKeep(images, keep).filter((i) => !inUse(i))
}

export interface SparedImage {
  name: string
  /** Nodes running on it now (it goes once they have powered down, at a later prune). */
  nodes: number
  current: boolean
}

/** Images beyond `keep` that stay all the same, said rather than silently kept. */
export function spared(images: ImageInfo[], keep: number): SparedImage[] {
  return beyondKeep(images, keep)
    .filter(inUse)
    .map((i) => ({name: i.name, nodes: i.nodes, current: i.current}))
}

const why = (s: SparedImage) => (s.current ? 'the current image' : `${s.nodes} node${s.nodes === 1 ? '' : 's'} still on it`)

export function pruneStep<C extends ImageContext>(): Step<C> {
  return {
    title: (ctx) => `Keep the newest ${ctx.keep} images`,
    run: async (ctx, task) => {
      const images = await ctx.builder.list()
      const gone = prunable(images, ctx.keep)
      for (const i of gone) {
        task.output = `deleting ${i.name}`
        await ctx.builder.remove(i)
      }
      ctx.pruned = gone.map((i) => i.name)
      ctx.spared = spared(images, ctx.keep)
      const kept = ctx.spared.length === 0 ? '' : `; kept beyond ${ctx.keep}: ${ctx.spared.map((s) => `${s.name} (${why(s)})`).join(', ')}`
      task.title = (gone.length === 0 ? `Keep the newest ${ctx.keep} images: nothing to delete` : `Deleted ${gone.map((i) => i.name).join(', ')}`) + kept
    },
  }
}

/**
 * `citc create`'s image steps: the first image, or a new one when what goes in changed (a re-run with
 * the same playbooks, script and Slurm version builds nothing). Journaled as "image": --resume skips
 * them all once the image was made current.
 */
export function createImageSteps<C extends ImageContext>(): Array<Step<C>> {
  const unlessDone = (s: Step<C>): Step<C> => ({...s, skip: (ctx) => ctx.doneEarlier('image') || (s.skip?.(ctx) ?? false)})
  return [
    unlessDone(installImageTools<C>()),
    unlessDone(inputsStep<C>()),
    unlessDone(buildStep<C>({skipWhenUnchanged: true})),
    {...unlessDone(useStep<C>()), journal: 'image'},
    unlessDone(pruneStep<C>()),
  ]
}
