// The Google node driver: the cloud driver core (cloud-driver.ts) over Compute Engine's REST API
// (compute-api.ts). Imported only by the node programs, when they run (module.ts: index.ts stays light).
// Its options are cluster.json's google section (node-config.ts) plus the cluster's name and shared
// directory (node-programs.ts driverFor), checked here so a broken file fails with what is wrong.
import {existsSync, readFileSync} from 'node:fs'

import {z} from 'zod'

import {cloudNodeDriver} from '../cloud-driver.js'
import {IMAGES_JSON, parseImageState} from '../cloud-image-state.js'
import type {NodeDriver} from '../types.js'
import {googleComputeApi, labelValue} from './compute-api.js'
import {googleNodeConfig} from './node-config.js'

const common = z.object({
  cluster: z.string().min(1),
  sharedDir: z.string().min(1),
  /** Tests: an images.json elsewhere than /etc/citc/images.json. */
  imagesJson: z.string().min(1).optional(),
})

function check<T>(schema: z.ZodType<T>, options: Record<string, unknown>): T {
  const r = schema.safeParse(options)
  if (r.success) return r.data
  const problems = r.error.issues.map((i) => `${i.path.join('.') || '(section)'}: ${i.message}`).join('; ')
  throw new Error(`the google section of cluster.json cannot drive nodes: ${problems}`)
}

/**
 * The image labels an instance gets (citc-image-version, citc-image-arch), from images.json's entry
 * whose id is the image launched: the image builder counts the nodes running each image by them.
 */
function imageLabelsFrom(file: string) {
  let current: ReturnType<typeof parseImageState>['current'] | undefined
  return (imageId: string): Record<string, string> => {
    current ??= existsSync(file) ? parseImageState(readFileSync(file, 'utf8'), file).current : {}
    for (const [arch, image] of Object.entries(current)) {
      if (image?.id === imageId) return {'citc-image-version': labelValue(image.version), 'citc-image-arch': labelValue(arch.replace('_', '-'))}
    }
    return {}
  }
}

export function googleDriver(options: Record<string, unknown>): NodeDriver {
  const {cluster, sharedDir, imagesJson} = check(common, options)
  const section = check(googleNodeConfig.schema(z), options)
  const api = googleComputeApi({
    cluster,
    project: section.project,
    zone: section.zone,
    subnetwork: section.subnetwork,
    networkTag: section.networkTag,
    endpoints: section.endpoints,
    imageLabels: imageLabelsFrom(imagesJson ?? IMAGES_JSON),
  })
  return cloudNodeDriver({cluster, sharedDir, mgmtPrivateIp: section.mgmtPrivateIp, imagesJson}, api)
}
