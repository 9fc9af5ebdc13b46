// Google Cloud compute images (cloud-image-builder.ts says what is shared): googlecompute from the
// management node's image (the other architecture: the newest of the same family for it), in the
// cluster's subnetwork with its network tag, into one image family per cluster and architecture;
// listed, counted and deleted through gcloud here.
import type {Arch} from '../../shapes/types.js'
import {archFromTag, cloudImageBuilder, GIB, type CloudImageApi, type CloudImagePaths} from '../cloud-image-builder.js'
import {cloudOf, sweepContextFor} from '../cloud-cluster.js'
import type {ImageBuilderContext, ImageBuilderFactory, ImageRecord} from '../image-types.js'
import {nodeDriverVars} from '../node-driver-vars.js'
import {parseToolJson} from '../sweep.js'
import type {GoogleNodeConfig} from './node-config.js'
import {gcloudTool, googleToolContext} from './sweep.js'

/**
 * What Packer's googlecompute build (templates/packer/cloud.pkr.hcl, run on the management node as its
 * service account) calls, beyond the node driver's own (compute-api.ts GOOGLE_NODE_PERMISSIONS): the
 * custom role in templates/terraform/google/iam.tf grants both lists (a test checks). From the
 * plugin's steps: StepCheckExistingImage, StepCreateInstance (zone, machine type, source image),
 * StepTeardownInstance (the boot disk is kept, autoDelete false, and deleted in its cleanup),
 * StepCreateImage (images.insert from the disk, a global operation, then the deprecation status).
 * The build machine is created, read and deleted like a node (those are in the driver's list).
 */
export const GOOGLE_IMAGE_BUILD_PERMISSIONS: ReadonlyArray<{permission: string; call: string}> = [
  {permission: 'compute.images.get', call: 'images.get: does the image exist already; the source image; the new image'},
  {permission: 'compute.images.getFromFamily', call: "images.getFromFamily: the other architecture's source image"},
  {permission: 'compute.zones.get', call: 'zones.get before the build machine is created'},
  {permission: 'compute.machineTypes.get', call: 'machineTypes.get before the build machine is created'},
  {permission: 'compute.disks.useReadOnly', call: "images.insert: the build machine's disk as source"},
  {permission: 'compute.disks.delete', call: "disks.delete: the build machine's kept boot disk"},
  {permission: 'compute.images.create', call: 'images.insert'},
  {permission: 'compute.images.setLabels', call: 'images.insert with labels (cluster, citc-image-version, citc-image-arch)'},
  {permission: 'compute.images.deprecate', call: 'images.deprecate: the plugin sets the (empty) deprecation status after creating'},
  {permission: 'compute.globalOperations.get', call: "waiting on images.insert's global operation"},
]

const MACHINE_TYPE: Record<Arch, string> = {x86_64: 'e2-standard-2', arm64: 't2a-standard-2'}

interface GoogleImage {
  name: string
  creationTimestamp?: string
  labels?: Record<string, string>
  diskSizeGb?: string
  archiveSizeBytes?: string
}

/** ".../projects/P/global/images/N" → {project: P, name: N}. */
export function imageOfSelfLink(selfLink: string): {project?: string; name: string} {
  const m = /projects\/([^/]+)\/global\/images\/([^/]+)$/.exec(selfLink)
  return m ? {project: m[1], name: m[2]} : {name: selfLink.slice(selfLink.lastIndexOf('/') + 1)}
}

/** The family new nodes of one architecture boot from (newest non-deprecated image). */
export const imageFamily = (cluster: string, arch: Arch) => `citc-slurm-compute-${cluster}-${arch === 'arm64' ? 'arm64' : 'x86-64'}`

/** cloud.pkr.hcl's google_* variables for a build. Pure. */
export function googlePackerVars(d: GoogleNodeConfig, cluster: string, arch: Arch) {
  const base = imageOfSelfLink(d.baseImage.selfLink)
  const project = d.baseImage.project ?? base.project ?? ''
  // Ubuntu's families are ubuntu-2404-lts-amd64 / -arm64: the family names the management node's architecture.
  const mgmtArch: Arch = /arm64/.test(d.baseImage.family ?? base.name) ? 'arm64' : 'x86_64'
  const sameArch = mgmtArch === arch
  const family = d.baseImage.family ?? ''
  return {
    google_project: d.project,
    google_zone: d.zone,
    google_subnetwork: d.subnetwork,
    google_network_tag: d.networkTag,
    google_machine_type: MACHINE_TYPE[arch],
    google_source_image: sameArch ? base.name : '',
    google_source_image_family: sameArch ? '' : arch === 'arm64' ? family.replace(/amd64/g, 'arm64') : family.replace(/arm64/g, 'amd64'),
    google_source_image_project: project,
    google_image_family: imageFamily(cluster, arch),
  }
}

export function googleImageApi(ctx: ImageBuilderContext): CloudImageApi {
  const {record} = ctx
  const tool = googleToolContext(sweepContextFor(record, {logFile: ctx.logFile, signal: ctx.signal}), cloudOf(record).cloud).then(gcloudTool)
  const gcloud = async (args: string[]) => (await tool)(args)
  const filter = `--filter=labels.cluster=${record.name}`
  return {
    packerOnly: 'cloud.googlecompute.google',
    vars: (build) => googlePackerVars(nodeDriverVars('google', record.terraform?.outputs ?? {}, record.name) as GoogleNodeConfig, record.name, build.arch),
    async images() {
      const out: ImageRecord[] = []
      for (const i of parseToolJson('gcloud', await gcloud(['compute', 'images', 'list', '--no-standard-images', filter, '--format=json'])) as GoogleImage[]) {
        const version = i.labels?.['citc-image-version']
        const arch = archFromTag(i.labels?.['citc-image-arch'])
        if (!version || !arch) continue
        const bytes = Number(i.archiveSizeBytes) || Number(i.diskSizeGb) * GIB
        out.push({name: i.name, version, arch, id: i.name, createdAt: i.creationTimestamp ?? '', ...(bytes > 0 ? {sizeBytes: bytes} : {})})
      }
      return out
    },
    async nodes(images) {
      // An instance does not name its image; the node driver gives it the image's labels (citc-image-version).
      const instances = parseToolJson('gcloud', await gcloud(['compute', 'instances', 'list', filter, '--format=json'])) as Array<{labels?: Record<string, string>}>
      const counts = new Map<string, number>()
      for (const i of instances) {
        const image = images.find((im) => im.version === i.labels?.['citc-image-version'] && im.arch === archFromTag(i.labels?.['citc-image-arch']))
        if (image) counts.set(image.name, (counts.get(image.name) ?? 0) + 1)
      }
      return counts
    },
    async delete(image) {
      await gcloud(['compute', 'images', 'delete', image.id ?? image.name])
    },
  }
}

export const createGoogleImageBuilder = (ctx: ImageBuilderContext, paths?: CloudImagePaths) => cloudImageBuilder(ctx, googleImageApi(ctx), paths)

export const googleImageBuilder: ImageBuilderFactory = (ctx) => createGoogleImageBuilder(ctx)
