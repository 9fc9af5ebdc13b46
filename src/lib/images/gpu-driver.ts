// Whether an image can run a node's GPUs: the GPU count in a node's Gres, the reason a GPU node is
// refused when its image has no driver, finish's check of the images GPU shapes boot, and how --list
// shows a driver. Apart from images/gpu.ts (the image build's variables) because the node programs
// import it, and they must not load the shape catalogues gpu.ts reads (test/cli/node-program.test.ts).
/** The GPUs of a node as `scontrol show node` gives its Gres ("gpu:h100:8(S:0-1)", "gpu:2", "(null)"). */
export function gresGpuCount(gres: string | undefined): number {
  let n = 0
  for (const item of (gres ?? '').split(',')) {
    const parts = item.replace(/\(.*$/, '').split(':')
    if (parts[0] !== 'gpu' || parts.length < 2) continue
    const count = Number.parseInt(parts.at(-1)!, 10)
    if (count > 0) n += count
  }
  return n
}

/** The image a node boots, as far as the GPU check needs it (ImageRecord's fields). */
export interface GpuBootImage {
  name: string
  version: string
  /** The driver's label; null: none; undefined: not recorded (citc cannot tell, so it does not refuse). */
  gpuDriver?: string | null
}

/**
 * Why a node with `gpus` GPUs cannot start from `image`, as its Slurm reason, or undefined when it
 * can (no GPUs, no image to judge, or an image whose driver is not recorded). Slurm's node state
 * then says what to run, at once, instead of slurmd failing on a missing /dev/nvidia0 after boot.
 */
export function noGpuDriverReason(gpus: number, image: GpuBootImage | undefined): string | undefined {
  if (gpus <= 0 || image === undefined || image.gpuDriver !== null) return undefined
  return `citc: config: image v${image.version} has no GPU driver; run citc rebuild-image`
}

/** A GPU group of a configuration: what `finish` checks against the current images. */
export interface GpuGroup {
  shape: string
  arch: string
  gpu?: {count: number}
}

/** What `finish` says about the images its GPU shapes will boot. */
export interface GpuImageCheck {
  /** GPU shapes whose architecture's current image records no GPU driver. */
  shapes: string[]
  /** Those images (one per architecture). */
  images: Array<{name: string; version: string; arch: string}>
}

/**
 * The GPU shapes of a new configuration whose nodes would boot an image recorded without a GPU
 * driver (`current`: the image of each architecture new nodes start from). Undefined when none
 * would: no GPU shape, no current image for its architecture (the node driver reports that), or an
 * image whose driver is not recorded.
 */
export function gpuImageCheck(groups: readonly GpuGroup[], current: ReadonlyArray<GpuBootImage & {arch: string}>): GpuImageCheck | undefined {
  const shapes: string[] = []
  const images = new Map<string, {name: string; version: string; arch: string}>()
  for (const g of groups) {
    if ((g.gpu?.count ?? 0) <= 0) continue
    const image = current.find((i) => i.arch === g.arch)
    if (!image || image.gpuDriver !== null) continue
    if (!shapes.includes(g.shape)) shapes.push(g.shape)
    images.set(image.name, {name: image.name, version: image.version, arch: image.arch})
  }
  return shapes.length === 0 ? undefined : {shapes, images: [...images.values()]}
}

/** How --list shows an image's driver: its label, "none", or "?" when not recorded. */
export function gpuDriverLabel(gpuDriver: string | null | undefined): string {
  return gpuDriver === null ? 'none' : (gpuDriver ?? '?')
}
