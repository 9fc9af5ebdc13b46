// Image names and versions: citc chooses both (never parsed from Packer's output).

/** UTC YYYYMMDDhhmmss. */
export function imageVersion(at: Date): string {
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 14)
}

export function imageName(cluster: string, version: string): string {
  return `citc-slurm-compute-${cluster}-v${version}`
}

const VERSION = /^\d{14}$/

export function isImageVersion(s: string): boolean {
  return VERSION.test(s)
}

/** "20261123134502" → "2026-11-23 13:45:02 UTC". */
export function versionDate(version: string): string {
  const v = version
  return `${v.slice(0, 4)}-${v.slice(4, 6)}-${v.slice(6, 8)} ${v.slice(8, 10)}:${v.slice(10, 12)}:${v.slice(12, 14)} UTC`
}
