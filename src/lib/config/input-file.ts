// Reading a file the user named (a flag's value, a config line): an unreadable one is bad input
// (exit 3), named where the user gave it, with what to do.
import {readFileSync} from 'node:fs'

import {InvalidInputError} from '../errors.js'

/** The file's text, or an InvalidInputError at `where` (default: the path): "no such file" or "cannot read it (CODE)". */
export function readInputFile(path: string, o: {where?: string; hint?: string} = {}): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError([{where: o.where ?? path, message: code === 'ENOENT' ? 'no such file' : `cannot read it (${code})`}], o.hint)
  }
}
