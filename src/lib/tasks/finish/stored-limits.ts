// The cluster's own copy of limits.yaml (<cluster dir>/limits.yaml): the one place joined machines are
// kept. `citc node add/remove` edit its static: section; `citc finish --limits F` keeps it: F without a
// static: gets the stored one, F with one must name the same machines, and after finish the copy is F's
// text with the stored static section.
import {existsSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {staticNamesOf, staticSectionOf, withStaticSection} from '../../config/limits-static-edit.js'
import {parseYamlDocument} from '../../config/yaml.js'
import {InvalidInputError} from '../../errors.js'

/** Where a cluster keeps its limits.yaml (create writes it; finish and node add/remove update it). */
export const storedLimitsPath = (clusterDir: string): string => join(clusterDir, 'limits.yaml')

/** The stored copy's text, or undefined when the cluster has none yet. */
export function readStoredLimits(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined
}

/** Replace the stored copy atomically (a temporary file renamed over it), readable by its owner only. */
export function writeStoredLimits(path: string, text: string): void {
  const tmp = `${path}.citc-tmp-${process.pid}`
  try {
    writeFileSync(tmp, text, {mode: 0o600})
    renameSync(tmp, path)
  } catch (error) {
    rmSync(tmp, {force: true})
    throw error
  }
}

/**
 * The limits text finish applies for a given file: its text with the stored copy's static section (the
 * joined machines stay). A given static: must name exactly the stored machines: InvalidInputError at
 * its static: otherwise, nothing changed. Pure.
 */
export function withStoredMachines(given: string, givenFile: string, stored: string | undefined): string {
  const storedSection = stored === undefined ? undefined : staticSectionOf(stored)
  const givenNames = staticNamesOf(given)
  if (givenNames.length > 0) {
    const storedNames = stored === undefined ? [] : staticNamesOf(stored)
    const extra = givenNames.filter((n) => !storedNames.includes(n))
    const missing = storedNames.filter((n) => !givenNames.includes(n))
    if (extra.length > 0 || missing.length > 0) {
      const yaml = parseYamlDocument(given, givenFile)
      const what = [
        ...(extra.length > 0 ? [`names ${extra.join(', ')}, which ${extra.length === 1 ? 'has' : 'have'} not joined the cluster`] : []),
        ...(missing.length > 0 ? [`leaves out ${missing.join(', ')}, which ${missing.length === 1 ? 'has' : 'have'} joined it`] : []),
      ]
      throw new InvalidInputError(
        [yaml.problem(['static'], `this static: section ${what.join(' and ')}; joined machines are added and removed with citc node add/remove`)],
        `remove static: from ${givenFile} (finish keeps the cluster's joined machines), or use citc node add/remove; nothing was changed`,
      )
    }
  }
  if (storedSection === undefined && givenNames.length === 0) return given
  return withStaticSection(given, storedSection)
}
