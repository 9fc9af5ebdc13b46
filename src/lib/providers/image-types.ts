// Compute-node images (`citc rebuild-image`, and create's first build): what every provider's image
// builder does, so the workflow (tasks/rebuild-image/, images/build.ts) is written once.
//
// Packer runs on the management node (this machine for local; over SSH on clouds, as CitC did) with
// citc's template dir (templates/packer/) and playbooks as installed there. citc chooses the version
// (UTC YYYYMMDDhhmmss) and the name, passes them to Packer as variables, and never parses Packer's
// output for them. A provider's builder says which Packer source builds its images, adds its own
// variables, and keeps the cluster's images: which exist, which is current, which nodes use which.
import type {Arch} from '../shapes/types.js'
import type {Transport} from '../transport/types.js'
import type {ClusterView} from './cluster-view.js'

/** An image as its builder records it. */
export interface ImageRecord {
  /** citc-slurm-compute-<cluster>-v<version> */
  name: string
  /** UTC YYYYMMDDhhmmss, chosen by citc. */
  version: string
  /** ISO 8601. */
  createdAt: string
  /** Bytes on disk (local) or the image's size as the cloud reports it; undefined when unknown. */
  sizeBytes?: number
  arch: Arch
  /** Digest of what went into it (playbooks, template, script, Slurm version): create skips a rebuild when unchanged. */
  inputs?: string
  /** The cloud's id (AMI id, image self-link, OCID); local: the image's directory. */
  id?: string
  /**
   * The NVIDIA driver the image carries, as its /etc/citc/image.json says (gpu_driver, written by the
   * compute_image role from the packages installed): Ubuntu's branch ("580") or Debian's
   * ("535 (Debian 12)"); null: none. Undefined: not recorded (an image built before citc recorded it).
   */
  gpuDriver?: string | null
}

/** One line of `citc rebuild-image --list`. */
export interface ImageInfo extends ImageRecord {
  current: boolean
  /** Nodes running this image now. */
  nodes: number
}

/** What a provider's builder gets. */
export interface ImageBuilderContext {
  record: ClusterView
  /** Root on the management node (this machine for local). */
  management: Transport
  /**
   * The management node's /etc/citc/cluster.json, read through `management` when called (the workflow
   * hands in cluster/management-contract.ts's reader): what the cluster says about itself there.
   */
  managementContract(): Promise<{sharedDir: string}>
  signal: AbortSignal
  /** The run's log file on the workstation (builders log their own cloud calls there). */
  logFile: string
  /**
   * Clouds, a stand-in management node only (create's --stand-in managementNode.imageRoot: the tests' sshd on
   * loopback, whose / is this machine's): where the builder keeps its files on the node instead of /.
   */
  nodeRoot?: string
}

/** Variables of templates/packer/ a provider adds (non-secret: they are written to a var file). */
export type PackerVars = Record<string, string | number | boolean | string[]>

export interface ImageBuilder {
  /** The Packer source that builds this provider's images, as -only takes it: "local.null.local". */
  packerOnly: string
  /** The architectures it can build; undefined: x86_64 and arm64. Checked before anything starts (archFor). */
  arches?: Arch[]
  /**
   * Whether GPU nodes load the NVIDIA driver from this builder's images (clouds), so an image without
   * it cannot run them; local: false, its nodes are to use this machine's driver (issue #22).
   */
  gpuDriverInImage: boolean
  /** Debian/Ubuntu packages the management node needs for a build (installed with apt when missing). */
  tools?: string[]
  /** Where on the management node citc writes the var file, the script and Packer's manifest for a build. */
  workDir: string
  /** citc's package on the management node (templates/packer/ and playbooks/ under it). */
  packageRoot(): Promise<string>
  /** compute.yml's variables: the same tree management.yml got (cluster_name, provider, shared_dir, LDAP…). */
  playbookVars(): Promise<Record<string, unknown>>
  /**
   * The provider's variables for one build (network, base image, where the output goes…).
   * `baseInputs`: the digest of what goes into the image but the script (images/inputs.ts; local: its cached base's key).
   */
  vars(build: {name: string; version: string; arch: Arch; slurmVersion: string; baseInputs?: string}): Promise<PackerVars>
  /**
   * After Packer succeeded: the image it made (local: moved into place; clouds: found by its tags).
   * `imageJson`: the image's /etc/citc/image.json as the build printed it (build.ts), if it did.
   */
  collect(build: {name: string; version: string; arch: Arch; inputs: string; imageJson?: Record<string, unknown>}): Promise<ImageRecord>
  /** After Packer failed or was interrupted: remove whatever it left of this build (never throws). */
  discard(build: {name: string; version: string; arch: Arch}): Promise<void>
  /** Every image of the cluster, newest first, with which one is current per architecture and its nodes. */
  list(): Promise<ImageInfo[]>
  /**
   * The image new nodes of each architecture start from, as the cluster records it (no cloud call):
   * what `citc finish` checks GPU shapes against.
   */
  currentImages(): Promise<Array<Pick<ImageRecord, 'name' | 'version' | 'arch' | 'gpuDriver'>>>
  /** Make this image the one new nodes of its architecture start from. */
  use(image: ImageRecord): Promise<void>
  /** Delete an image (never the current one: the caller checks; nor one a node runs). */
  remove(image: ImageRecord): Promise<void>
}

export type ImageBuilderFactory = (ctx: ImageBuilderContext) => ImageBuilder

/**
 * The driver an image's /etc/citc/image.json names (`gpu_driver`, written by the compute_image role):
 * its label, null for none, undefined when the file does not say (an image of an older citc).
 */
export function gpuDriverOf(imageJson: unknown): string | null | undefined {
  if (imageJson === null || typeof imageJson !== 'object' || !('gpu_driver' in imageJson)) return undefined
  const v = (imageJson as {gpu_driver: unknown}).gpu_driver
  if (v === null) return null
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}

