// `citc usage`: jobs from sacct in a window → usage per account, user, shape or day (usage/aggregate.ts),
// priced with a prices file when one is known (--prices FILE, else the cluster's own prices.yaml in its
// citc state directory), printed as a table with bars (a terminal), CSV, or the versioned JSON
// document (usage/schema.ts). Reads only: no lock. Dates and prices are checked before connecting.
import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {readInputFile} from '../../config/input-file.js'
import {usageError} from '../../errors.js'
import type {Io} from '../../io.js'
import {Controller} from '../../slurm/controller.js'
import {connectCluster} from '../../cluster/management-node.js'
import {withLog} from '../../transport/logged.js'
import {aggregateUsage, type UsageBy} from '../../usage/aggregate.js'
import {nodeShapeMap} from '../../usage/node-shapes.js'
import {parsePrices, type Prices} from '../../usage/prices.js'
import {renderUsageCsv, renderUsageTable, usageDocument} from '../../usage/render.js'
import {parseSacct, sacctArgv} from '../../usage/sacct.js'
import type {UsageDocument} from '../../usage/schema.js'
import {usageWindow} from '../../usage/window.js'
import {logStamp} from '../workflow.js'

/** The cluster's own prices, used when --prices is not given. */
export const CLUSTER_PRICES_FILE = 'prices.yaml'

export interface UsageInput {
  cluster?: string
  since?: string
  until?: string
  by: UsageBy
  csv: boolean
  /** A prices file; undefined: the cluster's prices.yaml if it has one. */
  prices?: string
}

/** sacct over a long window on a busy cluster takes a while: bounded, but generously. */
const SACCT_TIMEOUT_MS = 10 * 60_000

const readPrices = (file: string): Prices => parsePrices(readInputFile(file, {hint: 'pass a prices file with --prices (see examples/prices.yaml)'}), file)

export async function runUsage(io: Io, input: UsageInput, dataDir: string, now: () => number = () => Date.now() / 1000): Promise<UsageDocument> {
  if (input.csv && io.json) throw usageError('--csv and --json both choose the output: give one')
  const window = usageWindow({since: input.since, until: input.until}, now())
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const paths = registry.paths(name)
  const ownPrices = join(paths.dir, CLUSTER_PRICES_FILE)
  const pricesFile = input.prices ?? (existsSync(ownPrices) ? ownPrices : undefined)
  const prices = pricesFile === undefined ? undefined : readPrices(pricesFile)

  const transport = withLog(await connectCluster(record), join(paths.logsDir, `usage-${logStamp()}.log`))
  try {
    const contract = await readManagementContract(transport)
    const controller = new Controller(transport, {confPath: contract.confPath})
    const [sacct, nodes] = await Promise.all([
      transport.check(sacctArgv(window, {confPath: contract.confPath}), {timeoutMs: SACCT_TIMEOUT_MS}),
      controller.nodes(),
    ])
    const report = aggregateUsage(parseSacct(sacct.stdout), {
      by: input.by,
      since: window.since,
      until: window.until,
      now: Math.floor(now()),
      nodeShapes: nodeShapeMap(nodes),
      prices: prices?.shapes,
    })
    const doc = usageDocument(report, {cluster: name, currency: prices?.currency ?? null})
    if (input.csv) io.log(renderUsageCsv(doc).trimEnd())
    else io.log(renderUsageTable(doc, {barWidth: io.interactive ? 20 : 0}).trimEnd())
    return doc
  } finally {
    await transport.close()
  }
}
