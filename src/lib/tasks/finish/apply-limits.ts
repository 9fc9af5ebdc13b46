// Applying a cluster's new limits text without asking, through finish's own machinery: what
// `citc node add/remove` call once they have edited the stored copy's static: section
// (config/limits-static-edit.ts). Generate, plan, upload, validate, back up, swap, restart — then
// `scontrol reconfigure` when joined machines changed, so their configless slurmd fetch the new file
// (apply-config.ts's activate) — and, once that worked, the stored copy is the new text.
import type {ClusterRecord} from '../../cluster/schema.js'
import type {Controller} from '../../slurm/controller.js'
import type {FinishPlan} from '../../slurm/plan.js'
import type {Transport} from '../../transport/types.js'
import {type ApplyResult, finishUnattended} from './apply-config.js'
import {generateFromLimits, requestFor} from './generate-config.js'
import {writeStoredLimits} from './stored-limits.js'

export interface ApplyLimitsOptions {
  transport: Transport
  controller: Controller
  record: ClusterRecord
  /** The whole limits.yaml to apply (the stored copy with its static: section edited). */
  limitsText: string
  /** Its label in messages, e.g. the stored copy's path. */
  limitsFile: string
  /** Written atomically (mode 0600) with `limitsText` once the cluster runs it; undefined: not written. */
  storedLimitsPath?: string
  signal?: AbortSignal
  report?: (message: string) => void
}

/**
 * Validate (InvalidInputError, exit 3, before anything is touched), then apply unattended. Call it
 * under the cluster's lock (clusterWorkflow), as finish does: it reads and writes the stored copy's state. A joined
 * machine that leaves is only dropped from slurm.conf (never powered down: drain it first). Resolves
 * with finish's plan and, when something changed, the apply's result.
 */
export async function applyLimitsText(o: ApplyLimitsOptions): Promise<{plan: FinishPlan; result?: ApplyResult}> {
  const request = requestFor(o.record, o.limitsFile, o.limitsText)
  generateFromLimits(request)
  const out = await finishUnattended({transport: o.transport, controller: o.controller, request, signal: o.signal, report: o.report})
  if (o.storedLimitsPath !== undefined) writeStoredLimits(o.storedLimitsPath, o.limitsText)
  return out
}
