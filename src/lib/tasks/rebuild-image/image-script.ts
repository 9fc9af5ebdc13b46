// The cluster's customisation script (`--script FILE`, CitC's compute_image_extra.sh): kept in the
// cluster's state dir, so every later build (rebuild-image, create) runs it again until it is replaced
// or removed (`--script none`).
import {existsSync, readFileSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'

import writeFileAtomic from 'write-file-atomic'

import {InvalidInputError} from '../../errors.js'

export const SCRIPT_FILE = 'compute-image.sh'

/** The stored script's text, if the cluster has one. */
export function storedScript(clusterDir: string): string | undefined {
  const file = join(clusterDir, SCRIPT_FILE)
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined
}

/** A --script value read and checked (nothing stored yet): text, or null for `none`. */
export function readScriptFlag(value: string): string | null {
  if (value === 'none') return null
  let text: string
  try {
    if (!statSync(value).isFile()) throw Object.assign(new Error('not a file'), {code: 'EISDIR'})
    text = readFileSync(value, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError([{where: `--script ${value}`, message: code === 'ENOENT' ? 'no such file' : `cannot read it (${code})`}], 'give a shell script file, or `none` to stop running the stored one')
  }
  if (text.trim() === '') throw new InvalidInputError([{where: `--script ${value}`, message: 'the file is empty'}], 'give a script that does something, or `none`')
  if (text.includes('\0')) throw new InvalidInputError([{where: `--script ${value}`, message: 'this is not a text file'}], 'give a shell script (it runs as root inside the image)')
  return text
}

/** Store (text) or remove (null) the cluster's script. */
export function storeScript(clusterDir: string, script: string | null): void {
  const file = join(clusterDir, SCRIPT_FILE)
  if (script === null) rmSync(file, {force: true})
  else writeFileAtomic.sync(file, script, {mode: 0o600})
}
