// Shapes of the local provider: every "node" is a slurmd process on this machine, so the numbers come
// from this machine (Node's os module and, on Linux, /sys/devices/system/cpu), not from a price list.
//
// Every slurmd on this machine registers the whole machine's hardware. slurmctld drains a node whose
// registered totals are below its configuration ("Low socket*core count" under CR_Core, "Low RealMemory"),
// so a local shape must never configure more *physical cores* or more memory than the host has:
// - cores are physical cores (hyperthread siblings counted once), threads per core 1, one socket;
// - memory is at most half of the host's, leaving the rest to slurmctld, slurmdbd and the jobs' neighbours.
// local.small: 1 core, 512 MiB; local.medium: 2 cores (1 on a one-core host), 1024 MiB;
// local.large: every physical core, half the host's memory.
//
// With NVIDIA GPUs (gpus.ts), per GPU type T with n GPUs: local.Tx1 — one GPU per node, up to n nodes, each
// with its share of the cores and of the memory cap (divided by the number of GPUs of every type, so that
// one node per GPU fits the host together) — and, when n ≥ 2, local.Txn — all n GPUs in one node, every
// core, the whole cap. A GPU shape's gpu.devices lists this machine's device files; gres.conf gives node k
// of a group its own slice of them.
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import os from 'node:os'
import {join} from 'node:path'

import {fixedCatalogue, toShape} from '../../shapes/table.js'
import type {Arch, Shape, ShapeCatalogue} from '../../shapes/types.js'
import {detectGpus, type LocalGpu} from './gpus.js'

const LOCAL_SOURCE =
  'this machine (os.cpus, os.totalmem, /sys/devices/system/cpu topology, /proc/driver/nvidia/gpus), read at run time'

export interface LocalHost {
  /** Logical CPUs (hardware threads). */
  cpus: number
  memoryMiB: number
  /** Physical cores; defaults to `cpus` when a host is given, detected otherwise. */
  cores?: number
  arch?: Arch
  /** This machine's NVIDIA GPUs, sorted by device minor; none when absent (detected when no host is given). */
  gpus?: LocalGpu[]
}

/** Node's name for the CPU architecture, as citc's. Anything that is not arm64 is treated as x86_64. */
export function archOf(nodeArch: string): Arch {
  return nodeArch === 'arm64' ? 'arm64' : 'x86_64'
}

/** This machine: logical CPUs, physical cores, memory in MiB, architecture, NVIDIA GPUs (under gpuRoot). */
export function detectHost(sysCpuDir = '/sys/devices/system/cpu', gpuRoot = '/'): Required<LocalHost> {
  const cpus = Math.max(1, os.cpus().length || os.availableParallelism())
  const cores = physicalCores(sysCpuDir) ?? cpus
  return {
    cpus,
    cores: Math.min(cores, cpus),
    memoryMiB: Math.floor(os.totalmem() / 1024 / 1024),
    arch: archOf(os.arch()),
    gpus: detectGpus(gpuRoot),
  }
}

/** Distinct (package, core) pairs under /sys/devices/system/cpu, or undefined where that is not readable. */
export function physicalCores(sysCpuDir: string): number | undefined {
  try {
    if (!existsSync(sysCpuDir)) return undefined
    const seen = new Set<string>()
    for (const entry of readdirSync(sysCpuDir)) {
      if (!/^cpu\d+$/.test(entry)) continue
      const topo = join(sysCpuDir, entry, 'topology')
      if (!existsSync(join(topo, 'core_id'))) continue // offline CPUs have no topology
      const pkg = readFileSync(join(topo, 'physical_package_id'), 'utf8').trim()
      const core = readFileSync(join(topo, 'core_id'), 'utf8').trim()
      seen.add(`${pkg}:${core}`)
    }
    return seen.size > 0 ? seen.size : undefined
  } catch {
    return undefined
  }
}

/** local: the shape's memory is already a cap below the host's memory, so Slurm gets all of it. */
export function localRealMemory(memoryMiB: number): number {
  return Math.max(1, Math.floor(memoryMiB))
}

/** The local shapes of `host`, or of this machine (its GPUs listed under gpuRoot: '/' unless a stand-in's). */
export function localCatalogue(host?: LocalHost, gpuRoot = '/'): ShapeCatalogue {
  const h = host ?? detectHost(undefined, gpuRoot)
  const cpus = Math.max(1, Math.floor(h.cpus))
  const cores = Math.max(1, Math.min(cpus, Math.floor(h.cores ?? cpus)))
  const hostMiB = Math.max(1, Math.floor(h.memoryMiB))
  const arch = h.arch ?? archOf(os.arch())
  const cap = Math.max(1, Math.floor(hostMiB / 2))

  const sizes: Array<[name: string, cores: number, memoryMiB: number]> = [
    ['local.small', 1, Math.min(512, cap)],
    ['local.medium', Math.min(2, cores), Math.min(1024, cap)],
    ['local.large', cores, cap],
  ]
  const shapes = sizes.map(([name, n, memoryMiB]) =>
    toShape({name, vcpus: n, memoryMiB, threadsPerCore: 1, arch, maxVcpusPerSocket: n}, localRealMemory),
  )
  const gpus = h.gpus ?? []
  shapes.push(...gpuShapes(gpus, cores, cap, arch))
  const source = `${LOCAL_SOURCE}: ${cores} core(s), ${cpus} CPU(s), ${hostMiB} MiB, ${arch}, ${describeGpus(gpus)}`
  return fixedCatalogue('local', source, () => shapes)
}

/** The GPU types of a GPU list, in order of first appearance (lowest device minor first), with their GPUs. */
export function gpusByType(gpus: readonly LocalGpu[]): Map<string, LocalGpu[]> {
  const byType = new Map<string, LocalGpu[]>()
  for (const g of gpus) byType.set(g.type, [...(byType.get(g.type) ?? []), g])
  return byType
}

/** local.<type>x1 and, for two or more GPUs of a type, local.<type>x<n>; none without GPUs. */
function gpuShapes(gpus: readonly LocalGpu[], cores: number, cap: number, arch: Arch): Shape[] {
  if (gpus.length === 0) return []
  // One node per GPU of every type must fit the host together: each gets its share of cores and memory.
  const perGpuCores = Math.max(1, Math.floor(cores / gpus.length))
  const perGpuMiB = Math.max(1, Math.floor(cap / gpus.length))
  const shapes: Shape[] = []
  for (const [type, list] of gpusByType(gpus)) {
    const devices = list.map((g) => g.device)
    const one = (name: string, n: number, memoryMiB: number, count: number) =>
      toShape(
        {name, vcpus: n, memoryMiB, threadsPerCore: 1, arch, maxVcpusPerSocket: n, gpu: {count, model: type, devices: Object.freeze(devices)}},
        localRealMemory,
      )
    shapes.push(one(`local.${type}x1`, perGpuCores, perGpuMiB, 1))
    if (list.length >= 2) shapes.push(one(`local.${type}x${list.length}`, cores, cap, list.length))
  }
  return shapes
}

function describeGpus(gpus: readonly LocalGpu[]): string {
  if (gpus.length === 0) return 'no NVIDIA GPU'
  return [...gpusByType(gpus)].map(([type, list]) => `${list.length} ${type} GPU(s) (${list.map((g) => g.device).join(', ')})`).join(', ')
}
