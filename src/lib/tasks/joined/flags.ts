// The joined-machine commands' flag values that need more than oclif's parsing.
import {usageError} from '../../errors.js'

const FEATURE = /^[A-Za-z0-9_.-]+$/

/** --features a,b → ["a", "b"]: Slurm feature names, each once. */
export function parseFeatures(value: string | undefined): string[] {
  if (value === undefined) return []
  const list = value.split(',').map((f) => f.trim()).filter(Boolean)
  const bad = list.find((f) => !FEATURE.test(f) || f === 'static')
  if (bad !== undefined) {
    throw usageError(
      `--features: ${JSON.stringify(bad)} is not a feature citc can add`,
      bad === 'static' ? 'citc marks every joined machine "static" itself; leave it out' : 'use letters, digits, "_", "." and "-", separated by commas, e.g. --features bigmem,ssd',
    )
  }
  return [...new Set(list)]
}
