// An image's base: the root filesystem as it is before the customisation script runs (the local
// provider's mmdebstrap and compute.yml), cached under its key (inputs.ts baseInputsDigest) so a build
// that changes only the script copies it instead of making it again. Images are copies, never overlays
// of it: a base is a build cache, which images recorded it (their `base`) is what keeps it.

/** A base this old is built again, so new images get Debian's updates though nothing citc knows changed. */
export const BASE_MAX_AGE_DAYS = 7

/**
 * The bases to delete: those no image records as its own. Run once images are pruned (or one was
 * removed), it keeps exactly the bases of the kept images; a base only a failed build made goes at the
 * next successful build.
 */
export function prunableBases(bases: readonly string[], images: ReadonlyArray<{base?: string}>): string[] {
  const kept = new Set(images.map((i) => i.base).filter((b): b is string => b !== undefined))
  return bases.filter((b) => !kept.has(b))
}

/** Whether a base built at `builtAt` (ISO 8601; undefined: its record is unreadable) is to be built again. */
export function baseExpired(builtAt: string | undefined, now: Date, maxAgeDays = BASE_MAX_AGE_DAYS): boolean {
  const t = builtAt === undefined ? Number.NaN : Date.parse(builtAt)
  return !Number.isFinite(t) || now.getTime() - t > maxAgeDays * 86_400_000
}
