// What a compute image needs for the cluster's GPU shapes: compute.yml's variables for the nvidia_gpu
// role (playbooks/roles/nvidia_gpu). Pure: the image steps (tasks/rebuild-image/image-steps.ts
// inputsStep) merge the result into the builder's playbookVars(), from the node groups of the slurm.conf
// the cluster runs (gpuGroupsInConf): `finish` wrote one `Gres=gpu:<model>:<count>` per GPU shape there.
//
// One image serves every shape of a cluster, so it carries the NVIDIA driver as soon as one shape in
// the limits has GPUs; nodes without GPUs boot it unchanged (the driver's packages start nothing, and
// citc-gpu-check ends at once on a node gres.conf does not name). The same holds for NVIDIA Fabric
// Manager: one NVSwitch shape (Gpu.nvswitch in the catalogues) puts it in the image, and it starts only
// on nodes whose PCI bus shows NVSwitches (the role's drop-in runs `citc-gpu-check --has-nvswitch`).
import {CitcError} from '../errors.js'
import {catalogueFor} from '../providers/catalogues.js'
import {CLOUD_PROVIDER_NAMES} from '../providers/registry.js'
import {parseConfLines} from '../slurm/conf-parse.js'
import type {Shape} from '../shapes/types.js'

export interface GpuImageVars {
  /** True when any shape of the cluster's limits has GPUs: compute.yml then runs the nvidia_gpu role. */
  compute_gpu: boolean
  /** Ubuntu's driver branch (nvidia-driver-<branch>-server); only when one was asked for, else the role's default. */
  nvidia_driver_branch?: string
  /**
   * Set (true) when a shape of the cluster has its GPUs on NVSwitches: the nvidia_gpu role then installs
   * NVIDIA Fabric Manager and starts it before slurmd. Absent otherwise, so the image inputs of clusters
   * without such a shape stay what they were.
   */
  compute_gpu_nvswitch?: true
}

export interface GpuImageOptions {
  /** A driver branch other than the role's default, e.g. "570". Debian images ignore it (one driver per release). */
  driverBranch?: string
}

/** NVIDIA's branches are three-digit numbers; the value becomes part of apt package names. */
const BRANCH = /^[1-9]\d{2}$/

/**
 * compute.yml's GPU variables for the catalogue entries of a cluster's limits (the shapes its limits
 * name, each looked up in the provider's catalogue). A branch is passed on only for a GPU image.
 */
export function gpuImageVars(shapes: readonly Pick<Shape, 'gpu'>[], options: GpuImageOptions = {}): GpuImageVars {
  const branch = options.driverBranch
  if (branch !== undefined && !BRANCH.test(branch)) {
    throw new CitcError('invalidInput', `NVIDIA driver branch "${branch}" is not a branch number such as 580`, {
      hint: "give the number of an Ubuntu nvidia-driver-<branch>-server package, e.g. 580",
    })
  }
  const gpus = shapes.flatMap((s) => (s.gpu && s.gpu.count > 0 ? [s.gpu] : []))
  if (gpus.length === 0) return {compute_gpu: false}
  return {
    compute_gpu: true,
    ...(branch === undefined ? {} : {nvidia_driver_branch: branch}),
    ...(gpus.some((g) => g.nvswitch) ? {compute_gpu_nvswitch: true as const} : {}),
  }
}

/** A shape by name in any cloud's catalogue (names do not repeat across providers: a test checks). */
export type ShapeLookup = (name: string) => Pick<Shape, 'gpu'> | undefined

// The clouds' tables only: the local provider's catalogue describes the machine it runs on.
const anyCatalogue: ShapeLookup = (name) => {
  for (const provider of CLOUD_PROVIDER_NAMES) {
    const shape = catalogueFor(provider).get(name)
    if (shape) return shape
  }
  return undefined
}

/**
 * The GPUs of each NodeName line of a slurm.conf (`Gres=gpu:<model>:<count>`, as finish renders a GPU
 * shape; `gpu:<count>` without a model too). Lines without GPUs give nothing. A line's NVSwitch flag
 * comes from its shape (finish's `Features="shape=<name>,…"`) as the catalogues know it; a line without
 * a known shape has none.
 */
export function gpuGroupsInConf(confText: string, lookup: ShapeLookup = anyCatalogue): Array<Pick<Shape, 'gpu'>> {
  const out: Array<Pick<Shape, 'gpu'>> = []
  for (const entry of parseConfLines(confText)) {
    if (entry.key.toLowerCase() !== 'nodename') continue
    for (const gres of (entry.pairs.get('gres') ?? '').split(',')) {
      const parts = gres.split(':')
      if (parts[0] !== 'gpu' || parts.length < 2) continue
      const count = Number.parseInt(parts.at(-1)!, 10)
      if (count <= 0) continue
      const nvswitch = shapeFeature(entry.pairs.get('features') ?? '', lookup)?.gpu?.nvswitch === true
      out.push({gpu: {count, model: parts.length > 2 ? parts[1] : 'gpu', ...(nvswitch ? {nvswitch: true as const} : {})}})
    }
  }
  return out
}

/** The catalogue entry of a NodeName line's `shape=<name>` feature, if it has one the catalogues know. */
function shapeFeature(features: string, lookup: ShapeLookup): Pick<Shape, 'gpu'> | undefined {
  const name = features
    .split(/[,&|]/)
    .map((f) => f.trim())
    .find((f) => f.startsWith('shape='))
    ?.slice('shape='.length)
  return name ? lookup(name) : undefined
}
