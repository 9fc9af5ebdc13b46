// Reading the limits file finish was given: an unreadable one is bad input (exit 3), named by its path.
import {readFileSync} from 'node:fs'

import {InvalidInputError} from '../../errors.js'

export function readLimitsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError(
      [{where: path, message: code === 'ENOENT' ? 'no such file' : `cannot read it (${code})`}],
      'pass the limits file with --limits FILE (see examples/ for the format)',
    )
  }
}
