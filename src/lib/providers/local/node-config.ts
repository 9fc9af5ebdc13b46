// The local provider's section of /etc/citc/cluster.json: overrides of the local driver's settings
// (driver.ts LOCAL_DRIVER_DEFAULTS; confPath is the file's own). Empty on a normal cluster; tests
// point the driver at private paths with it.
import type {z as Zod} from 'zod'

import type {NodeConfigSection} from '../module.js'
import type {LocalDriverOptions} from './driver.js'

function schema(z: typeof Zod) {
  const path = z.string().startsWith('/', 'must be an absolute path')
  const seconds = z.number().positive()
  return z.object({
    runDir: path.optional(),
    logDir: path.optional(),
    slurmd: path.optional(),
    unshare: path.optional(),
    slurmdPidFile: path.optional(),
    startTimeoutS: seconds.optional(),
    stopGraceS: seconds.optional(),
    imagesDir: path.optional(),
    slurmLogDir: path.optional(),
  }) satisfies Zod.ZodType<Partial<LocalDriverOptions>>
}
export type LocalNodeConfig = Zod.output<ReturnType<typeof schema>>

/** The provider's section of cluster.json (citc_node_driver, when a test sets one); no Terraform. */
export const localNodeConfig = {schema} satisfies NodeConfigSection<LocalNodeConfig>
