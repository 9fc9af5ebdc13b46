// A file the node programs read on every run (cluster.json; a test's stand-in), checked once per content
// instead of on every run: slurmctld starts a node program on every power event, and the check's
// schema library (zod) took ~0.1 s of each start (bench/node-cold-start.ts). The first run checks the
// text as before and keeps the result in the node programs' state directory (providers/state-dir.ts),
// keyed by the text, the file's path and this citc's build; a later run with the same text, path and
// build takes the kept result without loading zod. Anything else — another text, a rebuilt or upgraded
// citc, a kept file that cannot be read or is not ours alone — is checked again, with the same result
// and the same errors as always (a file that fails its check is never kept). No state directory: every
// run checks. No zod, of course.
import {createHash} from 'node:crypto'
import {readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {readPrivateJson, writePrivateJson} from '../../providers/state-dir.js'

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
  const kept = readPrivateJson(keptFile) as Partial<Kept<T>> | undefined
  if (kept?.key === key && kept.value !== undefined) return kept.value
  const value = await o.check()
  writePrivateJson(keptFile, {key, value} satisfies Kept<T>)
  return value
}

/**
 * A file read and checked once per content (checkedOnce) in the directory `dir` names for its text. A file
 * that cannot be read goes to `check(undefined)`, whose reader says what is wrong with it, as always.
 */
export async function checkedFileOnce<T>(o: {file: string; name: string; dir(text: string): string | undefined; check(text: string | undefined): Promise<T>}): Promise<T> {
  let text: string
  try {
    text = readFileSync(o.file, 'utf8')
  } catch {
    return o.check(undefined)
  }
  return checkedOnce({dir: o.dir(text), name: o.name, file: o.file, text, check: () => o.check(text)})
}
