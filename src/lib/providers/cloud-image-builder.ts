// What the three clouds' image builders share (ImageBuilder, image-types.ts): Packer runs on the
// management node with templates/packer/cloud.pkr.hcl of the citc installed there, compute.yml gets
// the variables management.yml got, the munge key and the compute nodes' shared host keys are read
// there by Packer's file provisioners, and which image is current per architecture is recorded there
// (cloud-image-state.ts). Each cloud adds its Packer source and variables and how its images and
// nodes are listed and deleted (CloudImageApi, in <cloud>/image-builder.ts).
//
// How citc talks to the cloud for list/collect/remove: the cloud's CLI on THIS machine with the
// cluster's credentials, as destroy's sweep does (sweep.ts), not a CLI on the management node. The
// management node has none (Ubuntu 24.04 packages no AWS CLI, gcloud and the OCI CLI are in no
// distribution), its identity is fenced to what the node programs and Packer need, and the user's
// CLI is already what `citc destroy` needs. The images carry the cluster's tag, so either identity
// finds them. Packer itself runs with the management node's identity.
import {posix} from 'node:path'

import {remoteError} from '../errors.js'
import {gpuDriverOf, type ImageBuilder, type ImageBuilderContext, type ImageInfo, type ImageRecord, type PackerVars} from './image-types.js'
import type {Arch} from '../shapes/types.js'
import {cloudPlaybookVars} from './cloud-playbook-vars.js'
import type {ClusterView} from './cluster-view.js'
import {IMAGES_JSON, readImageState, recordedCurrent, selectImage, updateImageState} from './cloud-image-state.js'

/** Where things are on the management node (tests move them into a sandbox). */
export interface CloudImagePaths {
  /** The var files, the script and the manifest of each build. */
  workDir: string
  stateFile: string
  /** ssh_host_{ed25519,ecdsa,rsa}_key (and .pub): made once, baked into every image. */
  hostKeysDir: string
  mungeKeyFile: string
}

export const CLOUD_IMAGE_PATHS: CloudImagePaths = {
  workDir: '/var/lib/citc/image-builds',
  stateFile: IMAGES_JSON,
  hostKeysDir: '/etc/citc/compute-host-keys',
  mungeKeyFile: '/etc/munge/munge.key',
}

/** CLOUD_IMAGE_PATHS under `root` (a stand-in management node's sandbox), or as they are. */
export function cloudImagePathsUnder(root: string | undefined): CloudImagePaths {
  if (!root) return CLOUD_IMAGE_PATHS
  return Object.fromEntries(Object.entries(CLOUD_IMAGE_PATHS).map(([k, v]) => [k, posix.join(root, v)])) as unknown as CloudImagePaths
}

/** Where create installs citc on a management node when cluster.yaml does not say (management-node-setup.ts). */
const DEFAULT_PACKAGE_ROOT = '/opt/citc/lib/node_modules/citc'

export interface BuildRef {
  name: string
  version: string
  arch: Arch
}

/** One cloud's part. */
export interface CloudImageApi {
  /** -only for its source in cloud.pkr.hcl. */
  packerOnly: string
  /** What it can build (ImageBuilder.arches); default both. */
  arches?: Arch[]
  /** Its variables of cloud.pkr.hcl for a build (from cluster.json's driver section). */
  vars(build: BuildRef): PackerVars
  /** Every citc image tagged with the cluster (inputs are not known to the cloud). */
  images(): Promise<ImageRecord[]>
  /** How many of the cluster's machines run each image, by image name. */
  nodes(images: readonly ImageRecord[]): Promise<Map<string, number>>
  /** Delete an image (and what only it uses: AWS snapshots). */
  delete(image: ImageRecord): Promise<void>
}

/** version and arch as the tags carry them (Google labels: "x86-64"). */
export function archFromTag(value: string | undefined): Arch | undefined {
  if (value === 'x86_64' || value === 'x86-64' || value === 'amd64') return 'x86_64'
  if (value === 'arm64' || value === 'aarch64') return 'arm64'
  return undefined
}

export const GIB = 1024 ** 3

/** The login user of the base image (the management node's: Terraform's mgmt_user). */
export function sshUsername(record: ClusterView): string {
  const user = record.terraform?.outputs?.mgmt_user
  return typeof user === 'string' && user !== '' ? user : record.mgmt.user
}

/** Make the compute nodes' host keys once (they must not change with each image: users' known_hosts). */
export const HOST_KEYS_SCRIPT = [
  'set -e',
  'install -d -m 0700 "$1"',
  'for t in ed25519 ecdsa rsa; do',
  '  [ -e "$1/ssh_host_${t}_key" ] || ssh-keygen -q -t "$t" -N "" -C root@compute-node -f "$1/ssh_host_${t}_key"',
  'done',
].join('\n')

export function cloudImageBuilder(ctx: ImageBuilderContext, api: CloudImageApi, paths: CloudImagePaths = cloudImagePathsUnder(ctx.nodeRoot)): ImageBuilder {
  const {record, management} = ctx
  const images = async () => (await api.images()).sort((a, b) => b.version.localeCompare(a.version))
  const mine = (all: ImageRecord[], b: BuildRef) => all.filter((i) => i.version === b.version && i.arch === b.arch)

  return {
    packerOnly: api.packerOnly,
    gpuDriverInImage: true,
    arches: api.arches ?? ['x86_64', 'arm64'],
    workDir: paths.workDir,

    async packageRoot() {
      const bin = record.cloud?.citcBin
      return bin ? posix.dirname(posix.dirname(bin)) : DEFAULT_PACKAGE_ROOT
    },

    async playbookVars() {
      return cloudPlaybookVars(record)
    },

    async vars(build) {
      // The provider's variables first: a cluster whose outputs lack something fails here, before any key is made.
      // (buildImage made workDir already, and wrote compute.yml's variables there.)
      const own = api.vars(build)
      await management.check(['sh', '-c', HOST_KEYS_SCRIPT, 'citc-host-keys', paths.hostKeysDir], {timeoutMs: 120_000, signal: ctx.signal})
      return {munge_key_file: paths.mungeKeyFile, host_keys_dir: paths.hostKeysDir, ssh_username: sshUsername(record), ...own}
    },

    async collect(build) {
      const found = mine(await images(), build)[0]
      if (!found) {
        throw remoteError(`Packer finished, but ${record.provider} has no image of cluster ${record.name} tagged citc-image-version=${build.version} (${build.arch})`, {
          hint: `look for ${build.name} in the cloud's console; the build log says what Packer made`,
        })
      }
      // The driver as the image's own record says (printed by the template's last step): never guessed.
      const gpuDriver = gpuDriverOf(build.imageJson)
      await updateImageState(
        management,
        (s) => {
          s.inputs[found.name] = build.inputs
          if (gpuDriver !== undefined) s.gpuDrivers[found.name] = gpuDriver
        },
        paths.stateFile,
      )
      return {...found, inputs: build.inputs, ...(gpuDriver === undefined ? {} : {gpuDriver})}
    },

    async discard(build) {
      // Packer removes its build machine itself; an image it registered before failing is ours to delete.
      // Never one citc recorded (collected or current): a build in the same UTC second as an earlier
      // one has the same version, and that image is not this build's.
      try {
        const state = await readImageState(management, paths.stateFile)
        const recorded = (i: ImageRecord) => state.inputs[i.name] !== undefined || Object.values(state.current).some((c) => c?.name === i.name)
        for (const image of mine(await images(), build)) if (!recorded(image)) await api.delete(image).catch(() => {})
      } catch {
        // Never throws: the build's own error is what the user must see.
      }
    },

    async list() {
      const all = await images()
      const state = await readImageState(management, paths.stateFile)
      const nodes = await api.nodes(all)
      const current = new Set<string>()
      for (const arch of ['x86_64', 'arm64'] as const) {
        const c = selectImage(all, state, arch)
        if (c) current.add(c.name)
      }
      return all.map(
        (i): ImageInfo => ({
          ...i,
          ...(state.inputs[i.name] ? {inputs: state.inputs[i.name]} : {}),
          ...(i.name in state.gpuDrivers ? {gpuDriver: state.gpuDrivers[i.name]} : {}),
          current: current.has(i.name),
          nodes: nodes.get(i.name) ?? 0,
        }),
      )
    },

    async currentImages() {
      const state = await readImageState(management, paths.stateFile)
      return recordedCurrent(state)
    },

    async use(image) {
      await updateImageState(management, (s) => void (s.current[image.arch] = {name: image.name, version: image.version, ...(image.id ? {id: image.id} : {})}), paths.stateFile)
    },

    async remove(image) {
      await api.delete(image)
      await updateImageState(
        management,
        (s) => {
          delete s.inputs[image.name]
          delete s.gpuDrivers[image.name]
          if (s.current[image.arch]?.name === image.name) delete s.current[image.arch]
        },
        paths.stateFile,
      )
    },
  }
}
