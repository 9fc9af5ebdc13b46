// A provider's section of cluster.json, checked by the driver's factory against the module's schema
// (node-config.ts). A section read from cluster.json was checked with the whole file already
// (cluster/management-contract.ts marks it so): it is not checked twice. Any other caller's is checked
// here. zod is loaded only then, synchronously (the factory is), and outside the drivers' bundles: a node
// program's driver (bundled with its SDK, package.json's bundle-drivers) then carries no copy of zod.
import {createRequire} from 'node:module'

import type {z as Zod} from 'zod'

/** Set (not enumerable) on a section the contract's reader checked against this same schema. */
const CHECKED = Symbol.for('citc.driverSectionChecked')

/** The section as checked already: the driver's factory takes it as it is. */
export function markSectionChecked<T extends object>(section: T): T {
  if (!(CHECKED in section)) Object.defineProperty(section, CHECKED, {value: true, enumerable: false})
  return section
}

export function checkSection<D>(provider: string, schema: (z: typeof Zod) => Zod.ZodType<D>, section: unknown): D {
  if (section !== null && typeof section === 'object' && (section as {[CHECKED]?: boolean})[CHECKED] === true) return section as D
  const {z} = createRequire(import.meta.url)('zod') as {z: typeof Zod}
  const r = schema(z).safeParse(section)
  if (r.success) return r.data
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(section)'}: ${i.message}`).join('; ')
  throw new Error(`the ${provider} section of cluster.json cannot drive nodes: ${problems}`)
}
