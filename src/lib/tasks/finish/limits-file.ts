// Reading a limits file: an unreadable one is bad input (exit 3). finish names it by its path; create
// by the flag or config-file line that gave it.
import {readFileSync} from 'node:fs'

import {readInputFile} from '../../config/input-file.js'
import {InvalidInputError} from '../../errors.js'

export function readLimitsFile(path: string): string {
  return readInputFile(path, {hint: 'pass the limits file with --limits FILE (see examples/ for the format)'})
}

/** A limits file create was given (by --limits or a config file's `limits:`, named by `where`). */
export function readCreateLimits(path: string, where: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new InvalidInputError([{where, message: `cannot read ${path} (${(error as NodeJS.ErrnoException).code})`}])
  }
}
