// Every provider's shape catalogue (each module holds its own, providers/<name>/shapes.ts), for the
// commands that look shapes up (finish, create, a cloud's tfvars). Imported once by the first of them:
// the provider modules leave their tables out, so the commands that never look a shape up (the node
// programs slurmctld starts) do not load them.
import type {ShapeCatalogue} from '../shapes/types.js'
import type {CatalogueOptions} from './module.js'
import {PROVIDER_MODULES, type Provider} from './registry.js'

export type {CatalogueOptions} from './module.js'

const catalogues = new Map(await Promise.all(PROVIDER_MODULES.map(async (m) => [m.name, await m.shapes()] as const)))

export function catalogueFor(provider: Provider, opts: CatalogueOptions = {}): ShapeCatalogue {
  const catalogue = catalogues.get(provider)
  if (!catalogue) throw new Error(`internal: no shape catalogue for provider ${provider}`)
  return catalogue(opts)
}
