// `citc finish` and the compute image: a configuration whose GPU shapes would boot an image without
// the NVIDIA driver says so in its plan, names the command that fixes it, and is not applied with
// --yes unless --without-gpu-image says the user knows (docs/finish.md: "GPU shapes and the image").
//
// Why refuse instead of applying and then building the image: an image build is Packer for 10-30
// minutes on a temporary machine, and can fail for reasons of its own; finish stays a configuration
// change of seconds that rolls back. The image can only follow the configuration (rebuild-image puts
// the driver in when the slurm.conf the cluster runs has a GPU shape), so the way out is
// `finish --without-gpu-image`, then `citc rebuild-image`; meanwhile the resume program fails those
// nodes at once with the same advice (tasks/node/node-programs.ts refuseWithoutGpuDriver).
import {CitcError} from '../../errors.js'
import {gpuImageCheck, type GpuImageCheck} from '../../images/gpu-driver.js'
import type {ImageBuilder} from '../../providers/image-types.js'
import type {NodeGroup} from '../../slurm/nodes.js'
import type {FinishPlan} from '../../slurm/plan.js'

export interface GpuImageNotice extends GpuImageCheck {
  /** What builds an image with the driver. */
  command: string
}

/**
 * The GPU shapes of `groups` whose image (the builder's current one per architecture) has no driver,
 * or undefined. Asks nothing of a builder whose nodes do not take the driver from the image (local),
 * nor when no group has GPUs.
 */
export async function gpuImageNotice(cluster: string, groups: readonly NodeGroup[], builder: () => Promise<Pick<ImageBuilder, 'gpuDriverInImage' | 'currentImages'>>): Promise<GpuImageNotice | undefined> {
  if (!groups.some((g) => (g.gpu?.count ?? 0) > 0)) return undefined
  const b = await builder()
  if (!b.gpuDriverInImage) return undefined
  const check = gpuImageCheck(groups, await b.currentImages())
  return check && {...check, command: `citc rebuild-image -c ${cluster}`}
}

/** The plan's lines about it. */
export function gpuImageLines(n: GpuImageNotice): string[] {
  const images = n.images.map((i) => `v${i.version} (${i.arch})`).join(', ')
  return [
    `! GPU shapes ${n.shapes.join(', ')}: the image their nodes boot, ${images}, has no GPU driver. They fail to start`,
    `  (DOWN, "has no GPU driver") until \`${n.command}\` builds one with it, after this configuration is applied.`,
  ]
}

/** The shape of a plan's group key ("BM.GPU.H100.8 (AD 1)" → "BM.GPU.H100.8"). */
const shapeOf = (key: string) => key.replace(/ \(AD \d+\)$/, '')

/**
 * The refusal of `finish --yes` that brings GPUs onto shapes whose image has no driver (exit 3,
 * before anything changed), unless --without-gpu-image. A finish that changes no GPU line goes on
 * (the plan still says it): scripts that only add CPU nodes are not held up by an older GPU problem.
 */
export function gpuImageRefusal(n: GpuImageNotice | undefined, plan: Pick<FinishPlan, 'gpus'>, o: {yes: boolean; withoutGpuImage: boolean; cluster: string}): CitcError | undefined {
  if (!n || !o.yes || o.withoutGpuImage) return undefined
  const brought = plan.gpus.filter((g) => g.after && n.shapes.includes(shapeOf(g.shape))).map((g) => shapeOf(g.shape))
  if (brought.length === 0) return undefined
  const images = n.images.map((i) => `v${i.version} (${i.arch})`).join(', ')
  return new CitcError('invalidInput', `nothing changed: the GPU shapes ${[...new Set(brought)].join(', ')} would boot image ${images}, which has no GPU driver, so their nodes could not start`, {
    hint: `apply it with \`citc finish -c ${o.cluster} --without-gpu-image --yes\`, then run \`${n.command}\` (the image gets the driver once the cluster runs a GPU shape)`,
    details: {gpuImage: n},
  })
}

/** The confirmation question, saying what a yes leaves to do. */
export function applyQuestion(cluster: string, n: GpuImageNotice | undefined): string {
  return n ? `Apply this configuration to ${cluster}? Its GPU nodes fail to start until \`${n.command}\` has run` : `Apply this configuration to ${cluster}?`
}
