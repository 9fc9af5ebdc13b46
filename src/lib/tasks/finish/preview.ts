// `citc finish --dry-run --provider P`: the configuration for a limits file, without a cluster.
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {usageError} from '../../errors.js'
import type {Io} from '../../io.js'
import {PROVIDER_MODULES, providerModule, type Provider} from '../../providers/registry.js'
import {nodeDocuments, type Generated} from '../../slurm/generate.js'
import {generateFromLimits} from './generate-config.js'
import {readLimitsFile} from './limits-file.js'

export interface PreviewInput {
  provider: Provider
  /** The cluster id used in node names. */
  clusterId: string
  limitsFile: string
  /** Oracle: the management node's shape and availability domain, subtracted once from the limits. */
  mgmtShape?: string
  mgmtAd?: number
  /** Write slurm.conf and gres.conf here instead of printing. */
  outputDir?: string
}

/** Document shape of `finish --json` for a preview; scripts rely on these names. */
export function previewDocument(provider: Provider, clusterId: string, g: Generated) {
  return {
    provider,
    clusterId,
    nodes: [...nodeDocuments(g.groups, g.staticNodes)],
    groups: g.groups.map((x) => ({hostlist: x.hostlist, shape: x.shape, ad: x.ad ?? null, count: x.count, weight: x.weight})),
    partitions: g.partitions,
    slurmConf: g.slurmConf,
    gresConf: g.gresConf,
  }
}

export function preview(io: Io, input: PreviewInput) {
  const {provider} = input
  const given = [input.mgmtShape, input.mgmtAd].filter((v) => v !== undefined).length
  if (given > 0 && !providerModule(provider).availabilityDomains) throw usageError(`--mgmt-shape and --mgmt-ad are for --provider ${PROVIDER_MODULES.filter((m) => m.availabilityDomains).map((m) => m.name).join(', ')} only`)
  if (given === 1) throw usageError('give both --mgmt-shape and --mgmt-ad (the management node uses one unit of that shape in that AD), or neither')
  const mgmt = given === 2 ? {shape: input.mgmtShape!, ad: input.mgmtAd} : undefined
  const {generated} = generateFromLimits({
    provider,
    clusterId: input.clusterId,
    limitsText: readLimitsFile(input.limitsFile),
    limitsFile: input.limitsFile,
    mgmt,
  })
  const out = input.outputDir
  if (out) {
    mkdirSync(out, {recursive: true})
    writeFileSync(join(out, 'slurm.conf'), generated.slurmConf)
    writeFileSync(join(out, 'gres.conf'), generated.gresConf)
    io.note(`wrote ${join(out, 'slurm.conf')} and ${join(out, 'gres.conf')}`)
  } else {
    io.log(generated.slurmConf.trimEnd())
    if (generated.groups.some((g) => g.gpu)) io.note('(GPU shapes: gres.conf is in --json output, or written with --output-dir)')
  }
  return previewDocument(provider, input.clusterId, generated)
}
