// What citc knows about one machine shape: enough to write a NodeName line Slurm will accept.
// Each provider's catalogue lives in its folder (providers/<name>/shapes.ts); its rule for memory too.
// This folder is below providers/: it knows no provider (a catalogue names its provider as a string).
export type Arch = 'x86_64' | 'arm64'

export interface Gpu {
  count: number
  /** Lower-case model as Slurm's Gres type, e.g. "t4", "v100", "a100". */
  model: string
  /**
   * The GPUs sit on an NVSwitch baseboard (HGX A100/H100, 8 or 16 SXM GPUs): NVIDIA Fabric Manager must
   * run before CUDA can use them (cuInit fails with 802, "system not yet initialized", until it has).
   * The image build installs it when a shape of the cluster has this flag (images/gpu.ts).
   */
  nvswitch?: true
  /**
   * Device files of the very GPUs this shape uses, on this machine (local catalogue only; clouds give every
   * node its own GPUs). Sorted by device minor; node k (1-based) of a group gets
   * devices.slice((k-1)*count, k*count), so a group may have at most devices.length / count nodes, and
   * two groups with the same devices may not both be configured. gres.conf gets one line per node.
   */
  devices?: readonly string[]
}

export interface Shape {
  /** The provider's own name, exactly as the user writes it in limits.yaml (e.g. "c5.xlarge"). */
  name: string
  sockets: number
  coresPerSocket: number
  threadsPerCore: number
  /** Memory the provider advertises, in MiB. */
  memoryMiB: number
  /** Memory Slurm may hand to jobs (RealMemory), in MiB: conservative so nodes never drain "Low RealMemory". */
  realMemoryMiB: number
  arch: Arch
  gpu?: Gpu
}

export interface ShapeCatalogue {
  /** The provider's name, as providers/registry.ts lists it. */
  provider: string
  /** Where the data came from (documentation page and date). */
  source: string
  /** The shape, or undefined. Parses sized names such as "VM.Standard.E4.Flex.4.64" on oracle. */
  get(name: string): Shape | undefined
  /** Every fixed shape name (flex families listed by their pattern), for suggestions and listings. */
  names(): string[]
}
