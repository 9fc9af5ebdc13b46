// Shared helpers for the offline catalogues: from a compact row (vCPUs, memory, GPUs) to a Shape.
//
// Topology rule used by every cloud table: a VM no larger than one socket of its host CPU is shown as one
// socket; a larger one spans both sockets of a two-socket host and is shown as two. Each table gives,
// per family, the most vCPUs one socket of its host holds. This is best effort and does not need to be
// exact: slurmctld only drains a node whose *total* core or thread count is below the configured one
// ("Low socket*core count", "Low socket*core*thread count"); a different split into sockets is accepted.
import type {Arch, Gpu, Shape, ShapeCatalogue} from './types.js'

export interface ShapeSpec {
  name: string
  vcpus: number
  memoryMiB: number
  /** Hardware threads per core the guest sees (2 on x86 with SMT, 1 on Graviton / Ampere). */
  threadsPerCore: 1 | 2
  arch: Arch
  /** Most vCPUs one host socket holds: larger VMs are shown as two sockets. */
  maxVcpusPerSocket: number
  gpu?: Gpu
}

export const GIB = 1024

export function toShape(spec: ShapeSpec, realMemory: (memoryMiB: number) => number): Shape {
  // A one-vCPU VM is one thread of one core, whatever the host's SMT.
  const threadsPerCore = spec.vcpus === 1 ? 1 : spec.threadsPerCore
  const sockets = spec.vcpus > spec.maxVcpusPerSocket ? 2 : 1
  const coresPerSocket = spec.vcpus / threadsPerCore / sockets
  if (!Number.isInteger(coresPerSocket) || coresPerSocket < 1) {
    throw new Error(`internal: shape table entry ${spec.name} has ${spec.vcpus} vCPUs, not ${sockets} socket(s) × ${threadsPerCore} thread(s)`)
  }
  if (!Number.isInteger(spec.memoryMiB) || spec.memoryMiB < 1) {
    throw new Error(`internal: shape table entry ${spec.name} has memory ${spec.memoryMiB} MiB`)
  }
  return Object.freeze({
    name: spec.name,
    sockets,
    coresPerSocket,
    threadsPerCore,
    memoryMiB: spec.memoryMiB,
    realMemoryMiB: realMemory(spec.memoryMiB),
    arch: spec.arch,
    ...(spec.gpu ? {gpu: Object.freeze({...spec.gpu})} : {}),
  })
}

/** A copy, so callers can never change the table. */
export function copyShape(s: Shape): Shape {
  return s.gpu ? {...s, gpu: {...s.gpu}} : {...s}
}

/**
 * A catalogue of fixed shapes, looked up by exact name. The table is built on first use:
 * providers/catalogues.ts imports every provider's catalogue, and only the one looked up builds its table.
 */
export function fixedCatalogue(provider: string, source: string, shapes: () => readonly Shape[]): ShapeCatalogue {
  let table: {byName: Map<string, Shape>; names: string[]} | undefined
  const built = () => {
    if (table) return table
    const list = shapes()
    const byName = new Map<string, Shape>()
    for (const s of list) {
      if (byName.has(s.name)) throw new Error(`internal: shape ${s.name} listed twice in the ${provider} table`)
      byName.set(s.name, s)
    }
    table = {byName, names: list.map((s) => s.name)}
    return table
  }
  return {
    provider,
    source,
    get(name: string) {
      const s = built().byName.get(name)
      return s ? copyShape(s) : undefined
    },
    names: () => [...built().names],
  }
}
