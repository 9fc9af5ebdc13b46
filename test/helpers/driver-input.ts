// A node driver's input (src/lib/providers/types.ts DriverInput) from one flat object, as the driver
// tests write it: the cluster's fields, a stand-in's fields (src/lib/stand-in.ts DriverStandIn) and
// the rest — the provider's section of cluster.json.
import type {DriverInput} from '../../src/lib/providers/types.js'
import type {DriverStandIn} from '../../src/lib/stand-in.js'

const STAND_IN_KEYS = ['endpoints', 'imagesJson', 'stateDir', 'requestTimeoutMs', 'rate', 'concurrency', 'retryBudgetMs'] as const satisfies ReadonlyArray<keyof DriverStandIn>

export function driverInput(flat: Record<string, unknown>): DriverInput {
  const {cluster, sharedDir = '/mnt/shared', confPath = '/etc/slurm/slurm.conf', ...rest} = flat
  const standIn: Record<string, unknown> = {}
  const section: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(rest)) {
    if ((STAND_IN_KEYS as readonly string[]).includes(k)) standIn[k] = v
    else section[k] = v
  }
  return {cluster: cluster as string, sharedDir: sharedDir as string, confPath: confPath as string, section, standIn: standIn as DriverStandIn}
}
