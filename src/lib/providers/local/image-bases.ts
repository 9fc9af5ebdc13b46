// A local image's base: the root filesystem as it is before the customisation script runs (mmdebstrap
// and compute.yml, templates/packer/local/base.sh), cached under its key so a build that changes only
// the script copies it instead of making it again. Images are copies (or, with no script, hard links)
// of it, never overlays: a base is a build cache, kept by the images that record it as theirs.
import {createHash} from 'node:crypto'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

/** A base this old is built again, so new images get Debian's updates though nothing citc knows changed. */
export const BASE_MAX_AGE_DAYS = 7

/**
 * A base's key: what goes into it as the image steps digest it (images/inputs.ts baseInputsDigest: the
 * image's inputs but the script), and the text of the apt sources its packages come from (a new
 * mirror or suite there, a new base).
 */
export function baseKey(baseInputs: string, sources: Record<string, string>): string {
  const h = createHash('sha256').update(`${baseInputs}\0`)
  for (const f of Object.keys(sources).sort()) h.update(`${f}\0${sources[f]}\0`)
  return h.digest('hex').slice(0, 16)
}

/** The text of this machine's apt sources (rootfs.sh picks the suite's among them), by file name. */
export function aptSources(aptDir = '/etc/apt'): Record<string, string> {
  const files = [join(aptDir, 'sources.list')]
  const d = join(aptDir, 'sources.list.d')
  if (existsSync(d)) for (const f of readdirSync(d).sort()) if (f.endsWith('.list') || f.endsWith('.sources')) files.push(join(d, f))
  const text: Record<string, string> = {}
  for (const f of files) if (existsSync(f)) text[f.slice(aptDir.length + 1)] = readFileSync(f, 'utf8')
  return text
}

/**
 * The bases to delete: those no image records as its own. Run once images are pruned (or one was
 * removed), it keeps exactly the bases of the kept images; the caller adds the build in progress.
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
