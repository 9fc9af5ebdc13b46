// `citc destroy`'s last step: what the Terraform state does not know — compute nodes the node programs
// launched, images `citc rebuild-image` baked (and their snapshots), DNS records — found by the
// cluster's tag (`cluster=<id>`) and deleted. One small interface per cloud (aws/, google/, oracle/
// sweep.ts), each driving the cloud's own command-line tool (aws, gcloud, oci) through exec.ts with
// the credentials Terraform used: citc makes no cloud API call of its own.
//
// Tests replace the tools with test/doubles/bin/{aws,gcloud,oci} (TEST DOUBLES of the cloud APIs: these
// machines have no cloud to talk to), put first on PATH.
import {remoteError} from '../errors.js'
import {run, which} from '../tools/exec.js'

export type LeftoverKind = 'instance' | 'image' | 'snapshot' | 'dns-record'

export interface LeftoverResource {
  kind: LeftoverKind
  /** The cloud's id (AWS: i-…, ami-…, snap-…; Google: the name; Oracle: the OCID). */
  id: string
  name?: string
  /** Zone (Google instances) or region, where deleting needs it. */
  location?: string
}

export interface SweepContext {
  clusterId: string
  region: string
  zone?: string
  /** Google: the project. */
  project?: string
  /** Oracle: the compartment the search is limited to. */
  compartment?: string
  /** Oracle: a ~/.oci/config profile. */
  profile?: string
  /** Environment for the tool (the credentials Terraform used), undefined removes a variable. */
  env: Record<string, string | undefined>
  /** Every command line and its output, appended. */
  logFile?: string
  signal?: AbortSignal
}

export interface CloudSweeper {
  /** The command-line tool it needs ("aws"), for messages and `citc doctor`. */
  readonly tool: string
  /** What is still tagged with the cluster, of these kinds (default: every kind). */
  list(kinds?: readonly LeftoverKind[]): Promise<LeftoverResource[]>
  /** Delete one resource (returns when the cloud accepted the deletion). */
  delete(resource: LeftoverResource): Promise<void>
}

/** Deletion order: machines first, then the images they may use, then the images' snapshots. */
const KIND_ORDER: Record<LeftoverKind, number> = {instance: 0, 'dns-record': 1, image: 2, snapshot: 3}

/** Whether a list() call asked for this kind. */
export const wants = (kinds: readonly LeftoverKind[] | undefined, kind: LeftoverKind) => !kinds || kinds.includes(kind)

export const describeResource = (r: LeftoverResource) => `${r.kind} ${r.id}${r.name && r.name !== r.id ? ` (${r.name})` : ''}`

/** Run the sweeper's tool; a non-zero exit becomes a remote error naming the command. */
export async function runTool(ctx: SweepContext, tool: string, args: string[]): Promise<string> {
  const path = await which(tool)
  if (!path) throw remoteError(`${tool} is not installed`, {details: {tool}})
  const r = await run(path, args, {env: ctx.env, signal: ctx.signal, logFile: ctx.logFile, timeoutMs: 5 * 60_000})
  if (r.exitCode !== 0) {
    const last = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-3).join(' ')
    const firstFlag = args.findIndex((a) => a.startsWith('-'))
    const command = args.slice(0, firstFlag < 0 ? args.length : Math.max(1, firstFlag)).join(' ')
    throw remoteError(`${tool} ${command} failed (exit ${r.exitCode}): ${last}`)
  }
  return r.stdout
}

/** JSON printed by a tool (empty output is an empty list). */
export function parseToolJson(tool: string, stdout: string): unknown {
  if (stdout.trim() === '') return []
  try {
    return JSON.parse(stdout)
  } catch {
    throw remoteError(`${tool} did not print JSON: ${stdout.trim().split('\n')[0]}`)
  }
}

export interface SweepReport {
  /** The tool was not found or listing failed: nothing is known about leftovers. */
  listError?: string
  found: LeftoverResource[]
  deleted: LeftoverResource[]
  failed: Array<{resource: LeftoverResource; error: string}>
}

export interface SweepFilter {
  /** Only these kinds (default: all). */
  kinds?: LeftoverKind[]
  /** Ids or names never touched (what the Terraform state still manages). */
  keep?: ReadonlySet<string>
}

/** List, then delete in order; a failed deletion is recorded and the others still go. */
export async function sweep(sweeper: CloudSweeper, report?: (m: string) => void, filter: SweepFilter = {}): Promise<SweepReport> {
  let found: LeftoverResource[]
  try {
    found = await sweeper.list(filter.kinds)
  } catch (error) {
    return {listError: error instanceof Error ? error.message : String(error), found: [], deleted: [], failed: []}
  }
  found = found
    .filter((r) => !filter.kinds || filter.kinds.includes(r.kind))
    .filter((r) => !filter.keep?.has(r.id) && !(r.name && filter.keep?.has(r.name)))
    .sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind])
  const deleted: LeftoverResource[] = []
  const failed: SweepReport['failed'] = []
  for (const r of found) {
    report?.(`deleting ${describeResource(r)}`)
    try {
      await sweeper.delete(r)
      deleted.push(r)
    } catch (error) {
      failed.push({resource: r, error: error instanceof Error ? error.message : String(error)})
    }
  }
  return {found, deleted, failed}
}
