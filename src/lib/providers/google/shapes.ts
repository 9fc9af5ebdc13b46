// Google Compute Engine predefined machine types known offline.
//
// Where the numbers come from: the Compute Engine machine family pages (general-purpose: N1, N2, N2D,
// E2, C3, Tau T2A; compute-optimized: C2, C2D; accelerator-optimized: A2, A3, G2). Compiled offline and
// spot-checked on 2026-11-21 against stored public copies of those pages and of machineTypes API output
// (memoryMb); no live page was fetched. Google's "GB" here is GiB:
// n1-standard-1 is 3.75 GB = 3840 MiB; fractional results are rounded as the API does
// (n1-highcpu-16: 14.4 GB → 14746 MiB).
//
// Topology: a Google vCPU is one hyperthread, so x86 types have 2 threads per core (a 1-vCPU type is
// one thread of one core); the shared-core e2-micro/small/medium expose 2 vCPUs = 1 core × 2 threads.
// Tau T2A (Ampere Altra) is arm64 with 1 thread per core. Sockets (see table.ts): one socket up to the
// per-family limit below, two above it — e.g. n1-*-64/96, n2-*-80 and larger, n2d-standard-224,
// c2-standard-60, c2d-standard-112, c3-standard-176, a2-highgpu-8g, a2-megagpu-16g, a3-*-8g,
// g2-standard-96.
// That matches the sizes Google documents as spanning two NUMA nodes as far as we know; it is best
// effort, and Slurm only checks the total core and thread counts.
import {cloudRealMemory} from '../../shapes/memory.js'
import {fixedCatalogue, GIB, toShape, type ShapeSpec} from '../../shapes/table.js'
import type {Arch} from '../../shapes/types.js'

const GOOGLE_SOURCE =
  'Google Compute Engine machine families documentation (cloud.google.com/compute/docs: general-purpose, compute-optimized, accelerator-optimized machine types), checked 2026-11'

interface Series {
  prefix: string
  /** vCPU counts offered, or [name suffix, vCPUs, memory GB, GPUs] rows. */
  vcpus?: number[]
  gbPerVcpu?: number
  rows?: Array<[suffix: string, vcpus: number, memGB: number, gpus?: number]>
  /** Memory overrides for sizes that break the family's ratio: vCPUs → GB. */
  memOverride?: Record<number, number>
  arch?: Arch
  threadsPerCore?: 1 | 2
  maxVcpusPerSocket: number
  gpuModel?: string
  /** Row name suffixes whose GPUs are on an NVSwitch baseboard (shapes/types.ts Gpu.nvswitch). */
  nvswitch?: string[]
}

const SERIES: Series[] = [
  // N1 (Skylake and older)
  {prefix: 'n1-standard', vcpus: [1, 2, 4, 8, 16, 32, 64, 96], gbPerVcpu: 3.75, maxVcpusPerSocket: 48},
  {prefix: 'n1-highmem', vcpus: [2, 4, 8, 16, 32, 64, 96], gbPerVcpu: 6.5, maxVcpusPerSocket: 48},
  {prefix: 'n1-highcpu', vcpus: [2, 4, 8, 16, 32, 64, 96], gbPerVcpu: 0.9, maxVcpusPerSocket: 48},
  // N2 (Cascade Lake / Ice Lake)
  {prefix: 'n2-standard', vcpus: [2, 4, 8, 16, 32, 48, 64, 80, 96, 128], gbPerVcpu: 4, maxVcpusPerSocket: 64},
  // n2-highmem-128 has 864 GB, not 8 × 128.
  {prefix: 'n2-highmem', vcpus: [2, 4, 8, 16, 32, 48, 64, 80, 96, 128], gbPerVcpu: 8, memOverride: {128: 864}, maxVcpusPerSocket: 64},
  {prefix: 'n2-highcpu', vcpus: [2, 4, 8, 16, 32, 48, 64, 80, 96], gbPerVcpu: 1, maxVcpusPerSocket: 64},
  // N2D (AMD EPYC Rome / Milan, 64 cores per socket)
  {prefix: 'n2d-standard', vcpus: [2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224], gbPerVcpu: 4, maxVcpusPerSocket: 128},
  // E2 (at most 32 vCPUs: always one socket)
  {prefix: 'e2-standard', vcpus: [2, 4, 8, 16, 32], gbPerVcpu: 4, maxVcpusPerSocket: 32},
  {prefix: 'e2-highmem', vcpus: [2, 4, 8, 16], gbPerVcpu: 8, maxVcpusPerSocket: 32},
  {prefix: 'e2-highcpu', vcpus: [2, 4, 8, 16, 32], gbPerVcpu: 1, maxVcpusPerSocket: 32},
  // Shared-core E2: 2 vCPUs each (a fraction of their time), fixed memory.
  {prefix: 'e2', rows: [['micro', 2, 1], ['small', 2, 2], ['medium', 2, 4]], maxVcpusPerSocket: 32},
  // Compute optimized
  {prefix: 'c2-standard', vcpus: [4, 8, 16, 30, 60], gbPerVcpu: 4, maxVcpusPerSocket: 30},
  {prefix: 'c2d-standard', vcpus: [2, 4, 8, 16, 32, 56, 112], gbPerVcpu: 4, maxVcpusPerSocket: 56},
  {prefix: 'c3-standard', vcpus: [4, 8, 22, 44, 88, 176], gbPerVcpu: 4, maxVcpusPerSocket: 88},
  // Tau T2A: Ampere Altra, arm64, one thread per core.
  {prefix: 't2a-standard', vcpus: [1, 2, 4, 8, 16, 32, 48], gbPerVcpu: 4, arch: 'arm64', threadsPerCore: 1, maxVcpusPerSocket: 80},
  // A2: NVIDIA A100 40 GB. The 8- and 16-GPU sizes are whole HGX A100 baseboards (NVSwitch). Whether
  // Google's guest sees the switches and so must run Fabric Manager itself could not be confirmed from
  // the stored public pages (dstack issue #2348 lists GCP among the clouds whose 8-GPU A100/H100
  // instances need it): the flag only adds the package to the image; Fabric Manager starts, and
  // citc-gpu-check checks the fabric, only on a node whose PCI bus shows NVSwitches.
  {
    prefix: 'a2',
    gpuModel: 'a100',
    nvswitch: ['highgpu-8g', 'megagpu-16g'],
    maxVcpusPerSocket: 48,
    rows: [
      ['highgpu-1g', 12, 85, 1],
      ['highgpu-2g', 24, 170, 2],
      ['highgpu-4g', 48, 340, 4],
      ['highgpu-8g', 96, 680, 8],
      ['megagpu-16g', 96, 1360, 16],
    ],
  },
  // A3: NVIDIA H100 80 GB (SXM), Intel Xeon 8481C (Sapphire Rapids), 52 cores = 104 vCPUs a socket.
  // Source: https://cloud.google.com/compute/docs/accelerator-optimized-machines#a3-vms and
  // https://cloud.google.com/compute/docs/gpus (A3 High: 26 vCPUs and 234 GB per GPU; A3 Mega: the
  // 8-GPU size only, same vCPUs and memory). Checked 2026-11 against stored copies of those pages
  // ("208 vCPUs, 1872 GB") and tables quoting them. Left out: a3-edgegpu-8g and a3-ultragpu-8g (H200),
  // whose figures could not be confirmed offline.
  // a3-highgpu-8g and a3-megagpu-8g: a whole HGX H100 baseboard, 8 GPUs on NVSwitches ("all to all
  // NVLink", Google's GPU network bandwidth page); flagged as for A2 above.
  {
    prefix: 'a3',
    gpuModel: 'h100',
    nvswitch: ['highgpu-8g', 'megagpu-8g'],
    maxVcpusPerSocket: 104,
    rows: [
      ['highgpu-1g', 26, 234, 1],
      ['highgpu-2g', 52, 468, 2],
      ['highgpu-4g', 104, 936, 4],
      ['highgpu-8g', 208, 1872, 8],
      ['megagpu-8g', 208, 1872, 8],
    ],
  },
  // G2: NVIDIA L4. Source: https://cloud.google.com/compute/docs/accelerator-optimized-machines#g2-vms;
  // re-checked 2026-11 (g2-standard-24 has 2 GPUs, -32 has 1, -48 has 4, -96 has 8).
  {
    prefix: 'g2-standard',
    gpuModel: 'l4',
    maxVcpusPerSocket: 48,
    rows: [
      ['4', 4, 16, 1],
      ['8', 8, 32, 1],
      ['12', 12, 48, 1],
      ['16', 16, 64, 1],
      ['24', 24, 96, 2],
      ['32', 32, 128, 1],
      ['48', 48, 192, 4],
      ['96', 96, 384, 8],
    ],
  },
]

function googleSpecs(): ShapeSpec[] {
  const specs: ShapeSpec[] = []
  for (const s of SERIES) {
    const base = {arch: s.arch ?? 'x86_64', threadsPerCore: s.threadsPerCore ?? 2, maxVcpusPerSocket: s.maxVcpusPerSocket} as const
    for (const vcpus of s.vcpus ?? []) {
      const gb = s.memOverride?.[vcpus] ?? vcpus * (s.gbPerVcpu ?? 0)
      specs.push({name: `${s.prefix}-${vcpus}`, vcpus, memoryMiB: Math.round(gb * GIB), ...base})
    }
    for (const [suffix, vcpus, gb, gpus] of s.rows ?? []) {
      specs.push({
        name: `${s.prefix}-${suffix}`,
        vcpus,
        memoryMiB: Math.round(gb * GIB),
        ...base,
        ...(gpus && s.gpuModel ? {gpu: {count: gpus, model: s.gpuModel, ...(s.nvswitch?.includes(suffix) ? {nvswitch: true as const} : {})}} : {}),
      })
    }
  }
  return specs
}

export const googleCatalogue = fixedCatalogue(
  'google',
  GOOGLE_SOURCE,
  () => googleSpecs().map((s) => toShape(s, cloudRealMemory)),
)
