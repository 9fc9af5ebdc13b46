// AWS EC2 instance types known offline.
//
// Where the numbers come from: the AWS EC2 "Instance types" specification tables (general purpose,
// compute optimized, memory optimized, accelerated computing: vCPUs, memory in GiB, GPUs) and the
// "CPU options / default vCPUs, cores and threads per core" tables. Compiled offline and spot-checked
// on 2026-11-21 against stored public copies (no live page was fetched): re-check a row against the
// live page before relying on a shape that is new to you. Memory is GiB × 1024 MiB.
//
// Rules that keep the tables short (and are checked by the tests):
// - Sizes follow EC2's naming: medium = 1 vCPU (Graviton), large = 2, xlarge = 4, Nxlarge = 4N,
//   metal-Nxl = 4N; plain "metal" has its vCPUs in the table.
// - Regular families have a fixed GiB per vCPU (c = 2, m = 4, r = 8); burstable and GPU families,
//   whose ratios vary, are listed row by row.
// - x86 families (Intel and AMD, including t3/t3a) have 2 threads per core by default; none of the
//   families below is an exception (the 1-thread x86 ones, such as c7a/m7a/hpc6a, are not listed).
//   Graviton (t4g, c6g, c7g, m6g, m7g, r6g) is arm64 with 1 thread per core.
// - Sockets: see table.ts; maxVcpusPerSocket is one socket of the family's host CPU (e.g. c5 on
//   24-core Xeon 8275CL = 48 vCPUs, so c5.18xlarge/24xlarge/metal are two sockets). Best effort:
//   Slurm only checks the total core and thread counts.
import {cloudRealMemory} from '../../shapes/memory.js'
import {fixedCatalogue, GIB, toShape, type ShapeSpec} from '../../shapes/table.js'
import type {Arch, Shape} from '../../shapes/types.js'

const AWS_SOURCE =
  'AWS EC2 instance types documentation (docs.aws.amazon.com/ec2/latest/instancetypes: general purpose, compute optimized, memory optimized, accelerated computing specifications; CPU options per instance type), checked 2026-11'

interface FamilyBase {
  family: string
  arch: Arch
  threadsPerCore: 1 | 2
  maxVcpusPerSocket: number
}

/** Fixed GiB per vCPU; sizes as EC2 names them ("metal:96" gives a plain metal size its vCPUs). */
interface RegularFamily extends FamilyBase {
  gibPerVcpu: number
  sizes: string
}

/** [size, vCPUs, memory GiB, GPUs] */
type Row = [size: string, vcpus: number, memGiB: number, gpus?: number]

interface RowFamily extends FamilyBase {
  rows: Row[]
  gpuModel?: string
  /** Every size's GPUs are on an NVSwitch baseboard: Fabric Manager must run (shapes/types.ts Gpu.nvswitch). */
  nvswitch?: true
}

const X86 = {arch: 'x86_64', threadsPerCore: 2} as const
const GRAVITON = {arch: 'arm64', threadsPerCore: 1, maxVcpusPerSocket: 64} as const

const SIZES_C5 = 'large xlarge 2xlarge 4xlarge 9xlarge 12xlarge 18xlarge 24xlarge metal:96'
const SIZES_5TH = 'large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge'
const SIZES_6I = 'large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge metal:128'
const SIZES_6A = 'large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 32xlarge 48xlarge metal:192'
const SIZES_7I = 'large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge 24xlarge 48xlarge metal-24xl metal-48xl'
const SIZES_GRAVITON = 'medium large xlarge 2xlarge 4xlarge 8xlarge 12xlarge 16xlarge metal:64'

const REGULAR: RegularFamily[] = [
  // Compute optimized, 2 GiB per vCPU.
  {family: 'c5', ...X86, maxVcpusPerSocket: 48, gibPerVcpu: 2, sizes: SIZES_C5}, // Xeon 8124M/8275CL
  {family: 'c5a', ...X86, maxVcpusPerSocket: 96, gibPerVcpu: 2, sizes: SIZES_5TH}, // EPYC 7R32, 48 cores
  {family: 'c6i', ...X86, maxVcpusPerSocket: 64, gibPerVcpu: 2, sizes: SIZES_6I}, // Xeon 8375C, 32 cores
  {family: 'c6a', ...X86, maxVcpusPerSocket: 96, gibPerVcpu: 2, sizes: SIZES_6A}, // EPYC 7R13, 48 cores
  {family: 'c7i', ...X86, maxVcpusPerSocket: 96, gibPerVcpu: 2, sizes: SIZES_7I}, // Xeon 8488C, 48 cores
  {family: 'c6g', ...GRAVITON, gibPerVcpu: 2, sizes: SIZES_GRAVITON},
  {family: 'c7g', ...GRAVITON, gibPerVcpu: 2, sizes: SIZES_GRAVITON},
  // General purpose, 4 GiB per vCPU.
  {family: 'm5', ...X86, maxVcpusPerSocket: 48, gibPerVcpu: 4, sizes: `${SIZES_5TH} metal:96`}, // Xeon 8175M/8259CL
  {family: 'm5a', ...X86, maxVcpusPerSocket: 64, gibPerVcpu: 4, sizes: SIZES_5TH}, // EPYC 7571, 32 cores
  {family: 'm6i', ...X86, maxVcpusPerSocket: 64, gibPerVcpu: 4, sizes: SIZES_6I},
  {family: 'm6a', ...X86, maxVcpusPerSocket: 96, gibPerVcpu: 4, sizes: SIZES_6A},
  {family: 'm7i', ...X86, maxVcpusPerSocket: 96, gibPerVcpu: 4, sizes: SIZES_7I},
  {family: 'm6g', ...GRAVITON, gibPerVcpu: 4, sizes: SIZES_GRAVITON},
  {family: 'm7g', ...GRAVITON, gibPerVcpu: 4, sizes: SIZES_GRAVITON},
  // Memory optimized, 8 GiB per vCPU.
  {family: 'r5', ...X86, maxVcpusPerSocket: 48, gibPerVcpu: 8, sizes: `${SIZES_5TH} metal:96`},
  {family: 'r6i', ...X86, maxVcpusPerSocket: 64, gibPerVcpu: 8, sizes: SIZES_6I},
  {family: 'r6g', ...GRAVITON, gibPerVcpu: 8, sizes: SIZES_GRAVITON},
]

const BURSTABLE: Row[] = [
  ['nano', 2, 0.5],
  ['micro', 2, 1],
  ['small', 2, 2],
  ['medium', 2, 4],
  ['large', 2, 8],
  ['xlarge', 4, 16],
  ['2xlarge', 8, 32],
]

const ROWS: RowFamily[] = [
  {family: 't3', ...X86, maxVcpusPerSocket: 48, rows: BURSTABLE},
  {family: 't3a', ...X86, maxVcpusPerSocket: 64, rows: BURSTABLE},
  {family: 't4g', ...GRAVITON, rows: BURSTABLE},
  {
    family: 'g4dn', // Xeon 8259CL (24 cores) + NVIDIA T4
    ...X86,
    maxVcpusPerSocket: 48,
    gpuModel: 't4',
    rows: [
      ['xlarge', 4, 16, 1],
      ['2xlarge', 8, 32, 1],
      ['4xlarge', 16, 64, 1],
      ['8xlarge', 32, 128, 1],
      ['12xlarge', 48, 192, 4],
      ['16xlarge', 64, 256, 1],
      ['metal', 96, 384, 8],
    ],
  },
  {
    family: 'g5', // EPYC 7R32 (48 cores) + NVIDIA A10G
    ...X86,
    maxVcpusPerSocket: 96,
    gpuModel: 'a10g',
    rows: [
      ['xlarge', 4, 16, 1],
      ['2xlarge', 8, 32, 1],
      ['4xlarge', 16, 64, 1],
      ['8xlarge', 32, 128, 1],
      ['12xlarge', 48, 192, 4],
      ['16xlarge', 64, 256, 1],
      ['24xlarge', 96, 384, 4],
      ['48xlarge', 192, 768, 8],
    ],
  },
  {
    family: 'p3', // Xeon E5-2686 v4 (16 cores per socket used) + NVIDIA V100 16 GB
    ...X86,
    maxVcpusPerSocket: 32,
    gpuModel: 'v100',
    rows: [
      ['2xlarge', 8, 61, 1],
      ['8xlarge', 32, 244, 4],
      ['16xlarge', 64, 488, 8],
    ],
  },
  // p3dn: the 32 GB V100 variant of p3, same Slurm Gres type.
  {family: 'p3dn', ...X86, maxVcpusPerSocket: 48, gpuModel: 'v100', rows: [['24xlarge', 96, 768, 8]]},
  // NVSwitch families (p4d, p5): 8 SXM GPUs on an HGX baseboard whose NVSwitches the instance sees, so
  // NVIDIA Fabric Manager must run in it before CUDA works. Sources, checked 2026-11 through stored public
  // copies: dstack issue #2348 ("fabricmanager-dependent GPUs": 8×A100 and 8×H100 on AWS fail with CUDA
  // error 802 until nvidia-fabricmanager runs), aws-samples/aws-deep-learning-ami-ubuntu-dcv-desktop
  // issue #33 (the same on A100/H100 instances), NVIDIA's Fabric Manager user guide (HGX A100 and H100
  // baseboards are NVSwitch systems). p3/p3dn (V100) have NVLink without NVSwitch. Not in this table:
  // p4de.24xlarge (A100 80 GB, also NVSwitch).
  {family: 'p4d', ...X86, maxVcpusPerSocket: 48, gpuModel: 'a100', nvswitch: true, rows: [['24xlarge', 96, 1152, 8]]}, // 8275CL + A100 40 GB
  // GPU families added 2026-11 (issue 10). Source per family: the EC2 accelerated computing
  // specifications, https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html, cross-checked against
  // stored copies of the AWS Batch GPU jobs page (g6 rows) and public tables that repeat them
  // (torchx's named AWS resources for g6e and p5). Host CPU of all three: AMD EPYC 7R13, 48 cores a
  // socket, so 96 vCPUs a socket and the 48xlarge sizes are two sockets.
  {
    family: 'g6', // NVIDIA L4 24 GB
    ...X86,
    maxVcpusPerSocket: 96,
    gpuModel: 'l4',
    rows: [
      ['xlarge', 4, 16, 1],
      ['2xlarge', 8, 32, 1],
      ['4xlarge', 16, 64, 1],
      ['8xlarge', 32, 128, 1],
      ['12xlarge', 48, 192, 4],
      ['16xlarge', 64, 256, 1],
      ['24xlarge', 96, 384, 4],
      ['48xlarge', 192, 768, 8],
    ],
  },
  {
    family: 'g6e', // NVIDIA L40S 48 GB
    ...X86,
    maxVcpusPerSocket: 96,
    gpuModel: 'l40s',
    rows: [
      ['xlarge', 4, 32, 1],
      ['2xlarge', 8, 64, 1],
      ['4xlarge', 16, 128, 1],
      ['8xlarge', 32, 256, 1],
      ['12xlarge', 48, 384, 4],
      ['16xlarge', 64, 512, 1],
      ['24xlarge', 96, 768, 4],
      ['48xlarge', 192, 1536, 8],
    ],
  },
  // p5.48xlarge: 8 × NVIDIA H100 80 GB (SXM, NVSwitch), 192 vCPUs, 2048 GiB.
  {family: 'p5', ...X86, maxVcpusPerSocket: 96, gpuModel: 'h100', nvswitch: true, rows: [['48xlarge', 192, 2048, 8]]},
]

/** vCPUs of an EC2 size name ("metal:96" carries its own). */
export function awsSizeVcpus(size: string): number {
  const explicit = /^metal:(\d+)$/.exec(size)
  if (explicit) return Number(explicit[1])
  if (size === 'medium') return 1
  if (size === 'large') return 2
  if (size === 'xlarge') return 4
  const n = /^(?:(\d+)xlarge|metal-(\d+)xl)$/.exec(size)
  if (n) return 4 * Number(n[1] ?? n[2])
  throw new Error(`internal: unknown EC2 size ${size}`)
}

function awsShapes(): Shape[] {
  const specs: ShapeSpec[] = []
  for (const f of REGULAR) {
    for (const size of f.sizes.split(/\s+/)) {
      const vcpus = awsSizeVcpus(size)
      specs.push({
        name: `${f.family}.${size.replace(/:\d+$/, '')}`,
        vcpus,
        memoryMiB: vcpus * f.gibPerVcpu * GIB,
        threadsPerCore: f.threadsPerCore,
        arch: f.arch,
        maxVcpusPerSocket: f.maxVcpusPerSocket,
      })
    }
  }
  for (const f of ROWS) {
    for (const [size, vcpus, memGiB, gpus] of f.rows) {
      specs.push({
        name: `${f.family}.${size}`,
        vcpus,
        memoryMiB: Math.round(memGiB * GIB),
        threadsPerCore: f.threadsPerCore,
        arch: f.arch,
        maxVcpusPerSocket: f.maxVcpusPerSocket,
        ...(gpus && f.gpuModel ? {gpu: {count: gpus, model: f.gpuModel, ...(f.nvswitch ? {nvswitch: true as const} : {})}} : {}),
      })
    }
  }
  return specs.map((s) => toShape(s, cloudRealMemory))
}

export const awsCatalogue = fixedCatalogue('aws', AWS_SOURCE, awsShapes)
