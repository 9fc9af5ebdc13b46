// A provider's section of cluster.json, checked by the driver's factory against the module's schema
// (node-config.ts). cluster.json was checked when it was read (cluster/management-contract.ts); this
// checks it again for any other caller, and gives the driver its section typed. Loaded only with a
// driver (node programs), which load zod anyway.
import {z, type z as Zod} from 'zod'

export function checkSection<D>(provider: string, schema: (z: typeof Zod) => Zod.ZodType<D>, section: unknown): D {
  const r = schema(z).safeParse(section)
  if (r.success) return r.data
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(section)'}: ${i.message}`).join('; ')
  throw new Error(`the ${provider} section of cluster.json cannot drive nodes: ${problems}`)
}
