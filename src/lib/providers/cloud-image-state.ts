// /etc/citc/images.json on a cloud cluster's management node: which compute image new nodes of each
// architecture start from (what `citc rebuild-image` and its --rollback change), and what went into
// each image citc built (its inputs digest, for create to skip a rebuild). Written by the cloud image
// builders (cloud-image-builder.ts) over the management Transport; read by the clouds' node drivers,
// which start nodes from selectImage(): the recorded current image while it still exists, else the
// newest image tagged with the cluster and the architecture. Nothing secret: world-readable.
import type {ImageRecord} from './image-types.js'
import type {Arch} from '../shapes/types.js'
import type {Transport} from '../transport/types.js'

export const IMAGES_JSON = '/etc/citc/images.json'
export const IMAGE_STATE_VERSION = 1

export interface CurrentImage {
  name: string
  version: string
  /** The cloud's id (AMI id, image name, OCID). */
  id?: string
}

export interface CloudImageState {
  version: typeof IMAGE_STATE_VERSION
  current: Partial<Record<Arch, CurrentImage>>
  /** Image name → digest of what went into it. */
  inputs: Record<string, string>
  /**
   * Image name → the GPU driver it carries (its /etc/citc/image.json's gpu_driver), null for none.
   * An image not in it was built before citc recorded drivers. Absent from files of older citc.
   */
  gpuDrivers: Record<string, string | null>
}

const empty = (): CloudImageState => ({version: IMAGE_STATE_VERSION, current: {}, inputs: {}, gpuDrivers: {}})

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The file's text → the state; a file citc cannot read is an error naming it (never silently reset). */
export function parseImageState(text: string, file = IMAGES_JSON): CloudImageState {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (error) {
    throw new Error(`${file} is not JSON (${(error as Error).message})`)
  }
  if (!isObject(doc) || doc.version !== IMAGE_STATE_VERSION || !isObject(doc.current) || !isObject(doc.inputs)) {
    throw new Error(`${file} is not what this citc writes (version ${IMAGE_STATE_VERSION}, current, inputs)`)
  }
  const current: CloudImageState['current'] = {}
  for (const arch of ['x86_64', 'arm64'] as const) {
    const c = doc.current[arch]
    if (isObject(c) && typeof c.name === 'string' && typeof c.version === 'string') current[arch] = {name: c.name, version: c.version, ...(typeof c.id === 'string' ? {id: c.id} : {})}
  }
  const inputs: Record<string, string> = {}
  for (const [k, v] of Object.entries(doc.inputs)) if (typeof v === 'string') inputs[k] = v
  const gpuDrivers: Record<string, string | null> = {}
  for (const [k, v] of Object.entries(isObject(doc.gpuDrivers) ? doc.gpuDrivers : {})) if (typeof v === 'string' || v === null) gpuDrivers[k] = v
  return {version: IMAGE_STATE_VERSION, current, inputs, gpuDrivers}
}

export async function readImageState(t: Transport, file = IMAGES_JSON): Promise<CloudImageState> {
  const data = await t.readFile(file)
  return data === undefined ? empty() : parseImageState(data.toString('utf8'), file)
}

/** Read, change, write back atomically (Transport.writeFile renames a temporary file over it). */
export async function updateImageState(t: Transport, change: (s: CloudImageState) => void, file = IMAGES_JSON): Promise<CloudImageState> {
  const state = await readImageState(t, file)
  change(state)
  await t.check(['mkdir', '-p', '-m', '0755', file.slice(0, file.lastIndexOf('/')) || '/'], {timeoutMs: 30_000})
  await t.writeFile(file, `${JSON.stringify(state, null, 2)}\n`, {mode: 0o644})
  return state
}

/** The recorded current image of each architecture, with the GPU driver recorded for it (no cloud call). */
export function recordedCurrent(state: CloudImageState): Array<CurrentImage & {arch: Arch; gpuDriver?: string | null}> {
  return (['x86_64', 'arm64'] as const).flatMap((arch) => {
    const c = state.current[arch]
    if (!c) return []
    return [{...c, arch, ...(c.name in state.gpuDrivers ? {gpuDriver: state.gpuDrivers[c.name]} : {})}]
  })
}

/**
 * The image new nodes of `arch` start from: the recorded current one if the cloud still has it, else
 * the newest of that architecture (images are tagged with the cluster; `images` are the cloud's).
 */
export function selectImage(images: readonly ImageRecord[], state: CloudImageState, arch: Arch): ImageRecord | undefined {
  const ofArch = images.filter((i) => i.arch === arch)
  const recorded = state.current[arch]
  const pinned = recorded && ofArch.find((i) => i.name === recorded.name)
  if (pinned) return pinned
  return [...ofArch].sort((a, b) => b.version.localeCompare(a.version))[0]
}
