// The Oracle Cloud node driver: cluster.json's oracle section checked, then the driver every cloud
// shares (cloud-driver.ts) over OCI's Core API (oci-api.ts). Imported only when a node program asks
// for the driver (index.ts), so the SDK is never loaded by commands that do not start machines.
import {z} from 'zod'

import {cloudNodeDriver, type CloudDriverSettings} from '../cloud-driver.js'
import type {NodeDriver} from '../types.js'
import {ociApi, type OciApiOptions} from './oci-api.js'
import {oracleNodeConfig} from './node-config.js'

/** What the factory gets besides the section (node-programs driverFor), and what tests may add. */
const settings = z.object({
  cluster: z.string().min(1),
  sharedDir: z.string().min(1),
  imagesJson: z.string().min(1).optional(),
  rate: z.object({perSecond: z.number().positive(), burst: z.number().min(1)}).optional(),
  concurrency: z.number().int().min(1).optional(),
  retryBudgetMs: z.number().int().min(0).optional(),
  /** Tests only: a shorter per-request time limit than oci-api.ts's default. */
  requestTimeoutMs: z.number().int().min(1).optional(),
})

/**
 * `options`: {cluster, sharedDir, ...cluster.json's oracle section, confPath}. A section that does not
 * match the schema throws here, before any node is touched: the node program logs it and fails.
 */
export function oracleDriver(options: Record<string, unknown>): NodeDriver {
  const where = 'the oracle section of cluster.json'
  const s = settings.safeParse(options)
  const section = oracleNodeConfig.schema(z).safeParse(options)
  if (!s.success || !section.success) {
    const issues = [...(s.error?.issues ?? []), ...(section.error?.issues ?? [])]
    throw new Error(`${where} is not usable: ${issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`)
  }
  const api: OciApiOptions = {cluster: s.data.cluster, section: section.data, requestTimeoutMs: s.data.requestTimeoutMs}
  const common: CloudDriverSettings = {...s.data, mgmtPrivateIp: section.data.mgmtPrivateIp}
  return cloudNodeDriver(common, ociApi(api))
}
