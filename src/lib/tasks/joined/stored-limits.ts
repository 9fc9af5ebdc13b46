// The joined machines as the cluster keeps them: the static: section of its stored limits.yaml
// (tasks/finish/stored-limits.ts), read and edited for node add/remove, and applied through finish's
// machinery (restart, then reconfigure), the stored copy written once the cluster runs it.
import {withStaticNode, withoutStaticNode} from '../../config/limits-static-edit.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import type {StaticNodeSpec} from '../../slurm/limits-types.js'
import type {Controller} from '../../slurm/controller.js'
import type {Transport} from '../../transport/types.js'
import {applyLimitsText} from '../finish/apply-limits.js'
import {generateFromLimits, requestFor} from '../finish/generate-config.js'
import {readStoredLimits as readStored, storedLimitsPath} from '../finish/stored-limits.js'

/** The stored limits.yaml's text ('' when the cluster has none yet: a static: section alone is a valid file). */
export const readStoredLimits = (clusterDir: string): string => readStored(storedLimitsPath(clusterDir)) ?? ''

/** A stored limits text, validated as finish validates it: its joined machines and its partitions' names. */
export function storedLimits(text: string, record: ClusterRecord): {staticNodes: StaticNodeSpec[]; partitions: string[]} {
  const {limits, generated} = generateFromLimits(requestFor(record, 'limits.yaml (the cluster’s copy)', text))
  return {staticNodes: limits.staticNodes, partitions: generated.partitions.map((p) => p.name)}
}

/** The joined machines of a stored limits text. */
export const storedStaticNodes = (text: string, record: ClusterRecord): StaticNodeSpec[] => storedLimits(text, record).staticNodes

/** The text with these machines joined (added, or replaced by name). */
export const withJoined = (text: string, specs: readonly StaticNodeSpec[]): string =>
  specs.reduce((t, {where: _where, ...spec}) => withStaticNode(t, spec), text)

/** The text without these machines. */
export const withoutJoined = (text: string, names: readonly string[]): string => names.reduce((t, n) => withoutStaticNode(t, n), text)

/** Apply a new stored text to the cluster (finish's apply, unattended) and keep it as the cluster's copy. */
export async function applyStoredLimits(o: {
  ctx: {transport: Transport; controller: Controller; record: ClusterRecord; dir: string; signal: AbortSignal}
  text: string
  report: (m: string) => void
}) {
  const path = storedLimitsPath(o.ctx.dir)
  return applyLimitsText({
    transport: o.ctx.transport,
    controller: o.ctx.controller,
    record: o.ctx.record,
    limitsText: o.text,
    limitsFile: path,
    storedLimitsPath: path,
    signal: o.ctx.signal,
    report: o.report,
  })
}
