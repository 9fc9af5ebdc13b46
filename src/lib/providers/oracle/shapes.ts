// Oracle Cloud Infrastructure compute shapes known offline.
//
// Where the numbers come from: the OCI "Compute Shapes" reference (docs.oracle.com/iaas/Content/Compute/
// References/computeshapes.htm: VM and bare metal standard, optimized and GPU shapes, flexible shape
// limits). Compiled offline and spot-checked on 2026-11-21 against stored public copies of that page,
// OCI's SDK/service documentation and ListShapes output; no live page was fetched. OCI's "GB" is GiB.
//
// An OCPU is one physical core: 2 hardware threads on x86 (Intel, AMD), 1 on Ampere A1 (arm64).
// Flexible shapes carry their size in the name, as CitC writes them in limits.yaml:
//   VM.Standard.E4.Flex.<OCPUs>.<GB>   e.g. VM.Standard.E4.Flex.4.64
// Whole OCPUs and whole GB only (no burstable fractions). Memory must be at least 1 GB per OCPU (OCI:
// "1 GB or a value matching the number of OCPUs, whichever is greater"), at most 64 GB per OCPU and at
// most the family's total. Limits per family are in FLEX_FAMILIES below; the E5 limits (94 OCPUs, 1049 GB) and
// the A1 total (512 GB: the compute documentation; some service pages say more) are the least certain —
// a shape citc refuses can still be used by widening the limit here, one that OCI refuses would only fail
// at launch, so the tighter documented value is kept.
//
// Sockets: VMs are one socket (every VM below fits in one socket of its host); bare metal shapes are the
// whole two-socket host.
import {cloudRealMemory} from '../../shapes/memory.js'
import {copyShape, GIB, toShape, type ShapeSpec} from '../../shapes/table.js'
import type {Arch, Shape, ShapeCatalogue} from '../../shapes/types.js'

const ORACLE_SOURCE =
  'OCI Compute Shapes reference (docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm: standard, optimized, GPU and flexible shapes), checked 2026-11'

export interface FlexFamily {
  name: string
  arch: Arch
  threadsPerOcpu: 1 | 2
  minOcpus: number
  maxOcpus: number
  minGbPerOcpu: number
  maxGbPerOcpu: number
  maxGb: number
}

export const FLEX_FAMILIES: readonly FlexFamily[] = [
  {name: 'VM.Standard3.Flex', arch: 'x86_64', threadsPerOcpu: 2, minOcpus: 1, maxOcpus: 32, minGbPerOcpu: 1, maxGbPerOcpu: 64, maxGb: 512}, // Xeon 8358 (Ice Lake)
  {name: 'VM.Standard.E3.Flex', arch: 'x86_64', threadsPerOcpu: 2, minOcpus: 1, maxOcpus: 64, minGbPerOcpu: 1, maxGbPerOcpu: 64, maxGb: 1024}, // EPYC 7742
  {name: 'VM.Standard.E4.Flex', arch: 'x86_64', threadsPerOcpu: 2, minOcpus: 1, maxOcpus: 64, minGbPerOcpu: 1, maxGbPerOcpu: 64, maxGb: 1024}, // EPYC 7J13
  {name: 'VM.Standard.E5.Flex', arch: 'x86_64', threadsPerOcpu: 2, minOcpus: 1, maxOcpus: 94, minGbPerOcpu: 1, maxGbPerOcpu: 64, maxGb: 1049}, // EPYC 9J14
  {name: 'VM.Standard.A1.Flex', arch: 'arm64', threadsPerOcpu: 1, minOcpus: 1, maxOcpus: 80, minGbPerOcpu: 1, maxGbPerOcpu: 64, maxGb: 512}, // Ampere Altra
  {name: 'VM.Optimized3.Flex', arch: 'x86_64', threadsPerOcpu: 2, minOcpus: 1, maxOcpus: 18, minGbPerOcpu: 1, maxGbPerOcpu: 64, maxGb: 256}, // Xeon 6354
]

/** [name, OCPUs, memory GB, sockets, GPUs, GPU model] — all x86_64, 2 threads per OCPU. */
type Row = [name: string, ocpus: number, memGB: number, sockets?: 1 | 2, gpus?: number, gpuModel?: string]

// Bare metal HGX hosts: their 8 SXM GPUs are on NVSwitches the host itself manages, so NVIDIA Fabric
// Manager must run on it before CUDA works (shapes/types.ts Gpu.nvswitch). Sources, checked 2026-11
// through stored public copies: NVIDIA's Fabric Manager user guide (HGX A100 and HGX H100 baseboards:
// NVSwitch-based, Fabric Manager required in bare metal mode) and dstack issue #2348 (8×A100 and 8×H100
// on OCI fail with CUDA error 802 without nvidia-fabricmanager).
const NVSWITCH = new Set(['BM.GPU4.8', 'BM.GPU.H100.8'])

const FIXED: Row[] = [
  // X7 (Xeon Platinum 8167M)
  ['VM.Standard2.1', 1, 15],
  ['VM.Standard2.2', 2, 30],
  ['VM.Standard2.4', 4, 60],
  ['VM.Standard2.8', 8, 120],
  ['VM.Standard2.16', 16, 240],
  ['VM.Standard2.24', 24, 320],
  ['BM.Standard2.52', 52, 768, 2],
  // E2 (EPYC 7551)
  ['VM.Standard.E2.1', 1, 8],
  ['VM.Standard.E2.2', 2, 16],
  ['VM.Standard.E2.4', 4, 32],
  ['VM.Standard.E2.8', 8, 64],
  // Bare metal AMD
  ['BM.Standard.E3.128', 128, 2048, 2],
  ['BM.Standard.E4.128', 128, 2048, 2],
  // GPU
  ['VM.GPU2.1', 12, 72, 1, 1, 'p100'],
  ['VM.GPU3.1', 6, 90, 1, 1, 'v100'],
  ['VM.GPU3.2', 12, 180, 1, 2, 'v100'],
  ['VM.GPU3.4', 24, 360, 1, 4, 'v100'],
  ['BM.GPU4.8', 64, 2048, 2, 8, 'a100'],
  // 8 × NVIDIA H100 80 GB (SXM), 2 × Xeon Platinum 8480+ (56 cores each), 2048 GB. Source: the GPU
  // shapes table of https://docs.oracle.com/iaas/Content/Compute/References/computeshapes.htm#bm-gpu,
  // checked 2026-11 against stored public copies (OCI HPC's Slurm shape table: 2 sockets × 56 cores,
  // gpu:H100:8; SkyPilot's OCI catalogue: 224 vCPUs, 2048 GB).
  ['BM.GPU.H100.8', 112, 2048, 2, 8, 'h100'],
]

function fixedSpec([name, ocpus, gb, sockets = 1, gpus, gpuModel]: Row): ShapeSpec {
  return {
    name,
    vcpus: ocpus * 2,
    memoryMiB: gb * GIB,
    threadsPerCore: 2,
    arch: 'x86_64',
    // One socket unless the row says two: split evenly.
    maxVcpusPerSocket: sockets === 2 ? ocpus : ocpus * 2,
    ...(gpus && gpuModel ? {gpu: {count: gpus, model: gpuModel, ...(NVSWITCH.has(name) ? {nvswitch: true as const} : {})}} : {}),
  }
}

let fixedShapes: ReadonlyMap<string, Shape> | undefined
/** The fixed shapes, built on first use (see fixedCatalogue). */
const FIXED_SHAPES = () => (fixedShapes ??= new Map(FIXED.map((r) => [r[0], toShape(fixedSpec(r), cloudRealMemory)])))

/** The pattern a flex family is listed under in names(). */
const flexPattern = (family: string) => `${family}.<ocpus>.<gb>`

/** Why a sized flex name is not valid, or undefined when it is (or is not a flex name at all). */
export function flexProblem(name: string): string | undefined {
  const parsed = splitFlex(name)
  if (!parsed) return undefined
  const {family: f, parts} = parsed
  if (parts.length === 0) return `${f.name} needs its size: ${flexPattern(f.name)}, e.g. ${f.name}.4.64`
  if (parts.length !== 2) return `${name} is not of the form ${flexPattern(f.name)}`
  const [ocpusText, gbText] = parts
  if (!/^[1-9]\d*$/.test(ocpusText) || !/^[1-9]\d*$/.test(gbText)) return `${name}: OCPUs and GB must be whole numbers without leading zeros`
  const ocpus = Number(ocpusText)
  const gb = Number(gbText)
  if (ocpus < f.minOcpus || ocpus > f.maxOcpus) return `${f.name} takes ${f.minOcpus}-${f.maxOcpus} OCPUs, not ${ocpus}`
  const min = Math.max(1, ocpus * f.minGbPerOcpu)
  const max = Math.min(f.maxGb, ocpus * f.maxGbPerOcpu)
  if (gb < min || gb > max) return `${f.name} with ${ocpus} OCPUs takes ${min}-${max} GB of memory, not ${gb}`
  return undefined
}

/** The flex family a name belongs to, and the dot-separated parts after the family name. */
function splitFlex(name: string): {family: FlexFamily; parts: string[]} | undefined {
  for (const family of FLEX_FAMILIES) {
    if (name === family.name) return {family, parts: []}
    if (name.startsWith(`${family.name}.`)) return {family, parts: name.slice(family.name.length + 1).split('.')}
  }
  return undefined
}

function flexShape(name: string): Shape | undefined {
  const parsed = splitFlex(name)
  if (!parsed || flexProblem(name) !== undefined) return undefined
  const f = parsed.family
  const [ocpus, gb] = parsed.parts.map(Number)
  const shape = toShape(
    {
      name,
      vcpus: ocpus * f.threadsPerOcpu,
      memoryMiB: gb * GIB,
      threadsPerCore: f.threadsPerOcpu,
      arch: f.arch,
      maxVcpusPerSocket: ocpus * f.threadsPerOcpu,
    },
    cloudRealMemory,
  )
  return copyShape(shape)
}

export const oracleCatalogue: ShapeCatalogue = {
  provider: 'oracle',
  source: ORACLE_SOURCE,
  get(name: string) {
    const fixed = FIXED_SHAPES().get(name)
    return fixed ? copyShape(fixed) : flexShape(name)
  },
  names: () => [...FIXED_SHAPES().keys(), ...FLEX_FAMILIES.map((f) => flexPattern(f.name))],
}
