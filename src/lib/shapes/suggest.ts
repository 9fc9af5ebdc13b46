// "Did you mean …" suggestions for unknown shape names (the catalogues themselves are the provider
// modules': providers/catalogues.ts).
import {editDistance} from '../edit-distance.js'
import type {ShapeCatalogue} from './types.js'

/** Distance from the user's name to one catalogue entry; patterns (Oracle flex) match on their family. */
function distanceTo(query: string, candidate: string): number {
  const lower = candidate.toLowerCase()
  const at = lower.indexOf('.<')
  if (at < 0) return editDistance(query, lower)
  // "VM.Standard.E4.Flex.<ocpus>.<gb>": compare the family with the query minus up to two size parts,
  // so "vm.standard.e4.flex", "vm.standard.e4.flex.65.100" and "vm.standard.e4.flx.4.64" all match it.
  const family = lower.slice(0, at)
  const parts = query.split('.')
  let best = editDistance(query, family)
  for (let drop = 1; drop <= 2 && drop < parts.length; drop++) {
    best = Math.min(best, editDistance(parts.slice(0, parts.length - drop).join('.'), family))
  }
  return best
}

const commonPrefix = (a: string, b: string) => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/**
 * Up to `max` known names closest to `name`, best first, for "unknown shape X: did you mean …".
 * Case-insensitive ("T3a.Medium" → t3a.medium); catches typos in the size ("c5.xlarg") and in the
 * family ("n1-standrad-2", "c5n.xlarge"). Names too far from every known one give no suggestion.
 */
export function suggestShapes(catalogue: ShapeCatalogue, name: string, max = 3): string[] {
  const query = name.trim().toLowerCase()
  if (query === '' || max <= 0) return []
  const scored = catalogue.names().map((candidate, order) => {
    const distance = distanceTo(query, candidate)
    return {candidate, order, distance, prefix: commonPrefix(query, candidate.toLowerCase())}
  })
  // Allow about one edit in three characters, and at least two.
  const allowed = (c: string) => Math.max(2, Math.floor(Math.min(query.length, c.length) / 3))
  return scored
    .filter((s) => s.distance <= allowed(s.candidate.replace(/\.<.*$/, '')))
    .sort((x, y) => x.distance - y.distance || y.prefix - x.prefix || x.order - y.order)
    .slice(0, max)
    .map((s) => s.candidate)
}
