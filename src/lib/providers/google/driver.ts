// The Google node driver: the factory every cloud shares (cloud-driver.ts) over Compute Engine's REST
// API (compute-api.ts). Imported only by the node programs, when they run (module.ts: index.ts stays light).
import {existsSync, readFileSync} from 'node:fs'

import {cloudDriverFactory} from '../cloud-driver.js'
import {parseImageState} from '../cloud-image-state.js'
import {googleComputeApi, labelValue} from './compute-api.js'
import {googleNodeConfig} from './node-config.js'

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

export const googleDriver = cloudDriverFactory({
  provider: 'google',
  schema: googleNodeConfig.schema,
  api: (s, {cluster, imagesJson, standIn}) =>
    googleComputeApi({
      cluster,
      project: s.project,
      zone: s.zone,
      subnetwork: s.subnetwork,
      networkTag: s.networkTag,
      endpoints: standIn.endpoints,
      timeoutMs: standIn.requestTimeoutMs,
      imageLabels: imageLabelsFrom(imagesJson),
    }),
})
