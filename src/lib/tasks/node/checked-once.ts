// A file the node programs read on every run (cluster.json; a test's stand-in), checked once per content
// instead of on every run: slurmctld starts a node program on every power event, and the check's
// schema library (zod) took ~0.1 s of each start (bench/node-cold-start.ts). The first run checks the
// text as before and keeps the result in the node programs' state directory (providers/state-dir.ts),
// keyed by the text, the file's path and this citc's build; a later run with the same text, path and
// build takes the kept result without loading zod. Anything else — another text, a rebuilt or upgraded
// citc, a kept file that cannot be read or is not ours alone — is checked again, with the same result
// and the same errors as always (a file that fails its check is never kept). No state directory: every
// run checks. node:fs, node:crypto and node:path only.
import {createHash, randomBytes} from 'node:crypto'
import {closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

interface Kept<T> {
  key: string
  value: T
}

/** This citc's build: the time and size of this very file (a build or an install writes it anew). */
function build(): string | undefined {
  try {
    const st = statSync(fileURLToPath(import.meta.url))
    return `${st.mtimeMs} ${st.size} ${st.ino}`
  } catch {
    return undefined
  }
}

function readKept<T>(file: string, key: string): T | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || (st.mode & 0o077) !== 0 || (process.getuid && st.uid !== process.getuid())) return undefined
    const kept = JSON.parse(readFileSync(fd, 'utf8')) as Partial<Kept<T>>
    return kept.key === key && kept.value !== undefined ? kept.value : undefined
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

function keep<T>(file: string, kept: Kept<T>) {
  const tmp = `${file}.${randomBytes(6).toString('hex')}`
  try {
    mkdirSync(join(file, '..'), {recursive: true, mode: 0o700})
    const fd = openSync(tmp, 'wx', 0o600)
    try {
      writeSync(fd, `${JSON.stringify(kept)}\n`)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
  } catch {
    // Not kept: the next run checks again.
    try {
      rmSync(tmp, {force: true})
    } catch {
      // no directory to clean
    }
  }
}

/**
 * `check()`'s result for this text of `file`: kept from an earlier run with the same text, path and build
 * (in `dir`, as `checked-<name>.json`), or checked now (and kept when it passes). `check` must be pure in
 * the text and path, and its result plain JSON.
 */
export async function checkedOnce<T>(o: {dir: string | undefined; name: string; file: string; text: string; check: () => Promise<T>}): Promise<T> {
  const stamp = o.dir === undefined ? undefined : build()
  if (o.dir === undefined || stamp === undefined) return o.check()
  const key = createHash('sha256').update(`${stamp}\0${o.file}\0${o.text}`).digest('hex')
  const keptFile = join(o.dir, `checked-${o.name}.json`)
  const kept = readKept<T>(keptFile, key)
  if (kept !== undefined) return kept
  const value = await o.check()
  keep(keptFile, {key, value})
  return value
}
