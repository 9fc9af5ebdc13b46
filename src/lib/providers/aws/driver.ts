// The AWS node driver: cluster.json's aws section checked, then the shared cloud driver
// (cloud-driver.ts: adopt, idempotency tokens, token bucket, retries) over EC2 (ec2-api.ts).
// Imported lazily by index.ts's nodeDriver(), so only node programs that drive AWS load zod and the SDK.
import {z} from 'zod'

import {cloudNodeDriver} from '../cloud-driver.js'
import type {NodeDriver} from '../types.js'
import {ec2Api} from './ec2-api.js'
import {awsNodeConfig} from './node-config.js'

/** What driverFor adds to the section (node-programs.ts), and what tests and the benchmark may set. */
const extra = z.object({
  cluster: z.string().min(1),
  sharedDir: z.string().min(1),
  /** Tests: images.json elsewhere than /etc/citc. */
  imagesJson: z.string().min(1).optional(),
  /** Tests and bench/resume-burst.ts: the core's defaults otherwise (cloud-driver.ts CLOUD_DRIVER_DEFAULTS). */
  rate: z.object({perSecond: z.number().positive(), burst: z.number().min(1)}).optional(),
  concurrency: z.number().int().positive().optional(),
  retryBudgetMs: z.number().int().nonnegative().optional(),
})

export function awsDriver(options: Record<string, unknown>): NodeDriver {
  const parsed = awsNodeConfig.schema(z).and(extra).safeParse(options)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(section)'}: ${i.message}`).join('; ')
    throw new Error(`the aws section of cluster.json cannot drive nodes: ${problems}`)
  }
  const o = parsed.data
  const api = ec2Api({cluster: o.cluster, region: o.region, zone: o.zone, subnetId: o.subnetId, securityGroupId: o.securityGroupId, endpoints: o.endpoints})
  return cloudNodeDriver(
    {
      cluster: o.cluster,
      sharedDir: o.sharedDir,
      mgmtPrivateIp: o.mgmtPrivateIp,
      imagesJson: o.imagesJson,
      rate: o.rate,
      concurrency: o.concurrency,
      retryBudgetMs: o.retryBudgetMs,
    },
    api,
  )
}
