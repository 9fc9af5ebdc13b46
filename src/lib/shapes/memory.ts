// RealMemory policy: how much of a shape's memory Slurm may hand to jobs.
//
// slurmd registers with RealMemory = the kernel's MemTotal (in MiB). If that is below the RealMemory in
// slurm.conf, slurmctld drains the node with "Low RealMemory" — CitC's most frequent complaint. MemTotal
// is always below what the provider advertises: firmware holes, the kernel image, crashkernel, and the
// page map (64 bytes of struct page per 4 KiB page, 1/64 ≈ 1.6 % of RAM) are never counted. So the
// configured value must stay under MemTotal with margin, on every image and kernel a user may bake.
//
// The rule for clouds (AWS, Google, Oracle alike):
//   1. CitC's AWS formula: MiB − (MiB^0.7 × 0.9 + 500). It keeps ~0.5 GiB plus a share that shrinks
//      with size (≈ 13 % at 8 GiB, 4 % at 64 GiB) — but at 512 GiB it keeps 1.8 % and at 1 TiB 1.45 %,
//      which is *less* than the page map alone: on the largest shapes the formula overstates MemTotal.
//   2. So never more than 95 % of the advertised memory (AWS ParallelCluster's default for RealMemory
//      is the same 95 %). This only bites above ≈ 45 GiB.
//   3. The formula goes negative below ≈ 1.2 GiB (t3.nano, e2-micro): there half the memory is kept,
//      which is still well under MemTotal on such machines (the kernel takes ~100-150 MiB).
//   Always an integer (floor), at least 1, and below the advertised memory.
// CitC's Google code kept only the overhead term (n1-standard-2 → 972 MiB for a 7.5 GiB machine): fixed.
//
// Each provider's catalogue applies its rule when it builds its shapes (toShape): the clouds this
// one; local its own (providers/local/shapes.ts: a cap citc chose well under this machine's memory).

/** CitC's overhead estimate, in MiB, for a machine of `mib` MiB. */
export function citcOverheadMiB(mib: number): number {
  return mib ** 0.7 * 0.9 + 500
}

/** Largest share of the advertised memory ever given to Slurm on a cloud shape. */
const CLOUD_MAX_FRACTION = 0.95
/** Share kept on machines too small for the formula. */
const CLOUD_MIN_FRACTION = 0.5

/** The conservative cloud rule (see above). */
export function cloudRealMemory(memoryMiB: number): number {
  const formula = memoryMiB - citcOverheadMiB(memoryMiB)
  const value = Math.max(Math.min(formula, memoryMiB * CLOUD_MAX_FRACTION), memoryMiB * CLOUD_MIN_FRACTION)
  return clamp(Math.floor(value), memoryMiB)
}

/** At least 1, and strictly below the advertised memory whenever that is possible. */
function clamp(value: number, memoryMiB: number): number {
  const ceiling = memoryMiB >= 2 ? Math.ceil(memoryMiB) - 1 : 1
  return Math.min(Math.max(1, value), ceiling)
}
