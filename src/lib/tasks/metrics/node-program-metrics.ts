// What `citc node resume|suspend|fail` tell the monitoring after they act (when the cluster has it):
// resume counts each node asked for and each failed start by shape and reason (node-events.json, under
// its lock), and all three rewrite nodes.json at once from a fresh `scontrol show node` — the rule is
// the collector's (power on and an address), so a stopping node leaves Prometheus's targets now
// instead of at the next cycle, and no second rule exists for the same file.
import type {ManagementContract} from '../../cluster/management-contract.js'
import {writeNodesFile} from '../../metrics/file-sd.js'
import {type NodeEventBatch, recordNodeEvents} from '../../metrics/node-events.js'
import type {NodeOutcome, NodeSpec} from '../../providers/types.js'
import type {NodeState} from '../../slurm/controller.js'

/** Resume's counts: every node asked for, and every failed outcome with its cloud's class or "other". Pure. */
export function resumeEvents(specs: readonly NodeSpec[], outcomes: readonly NodeOutcome[]): NodeEventBatch {
  const shapeOf = new Map(specs.map((s) => [s.name, s.shape]))
  return {
    resumeRequests: specs.map((s) => ({shape: s.shape})),
    startFailures: outcomes.filter((o) => !o.ok).map((o) => ({shape: shapeOf.get(o.name) ?? 'unknown', reason: o.failure?.class ?? 'other'})),
  }
}

/**
 * One collection now, while Slurm shows the program's nodes powering up or down: the collector's
 * timer runs every 30 s and a local node starts in seconds, so without it Prometheus would rarely see
 * a node starting. Never throws (logged); does nothing for a cluster without monitoring.
 */
export async function collectInTransition(cfg: ManagementContract, log: (message: string) => void): Promise<void> {
  if (!cfg.monitoring) return
  try {
    const {collectOnce} = await import('./collect-main.js')
    await collectOnce(cfg, cfg.monitoring, {log})
  } catch (error) {
    log(`metrics: could not collect while the nodes change (the collector's next cycle will): ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * Record and rewrite; never throws (a node program must not fail for its metrics): each problem is
 * one line of `log`. Does nothing for a cluster without monitoring.
 */
export async function nodeProgramMetrics(
  cfg: Pick<ManagementContract, 'monitoring'>,
  act: {batch?: NodeEventBatch; nodes: () => Promise<NodeState[]>},
  log: (message: string) => void,
): Promise<void> {
  const monitoring = cfg.monitoring
  if (!monitoring) return
  if (act.batch) {
    try {
      const {reset} = recordNodeEvents(monitoring.dir, act.batch)
      if (reset) log(`metrics: ${reset}; counters started afresh`)
    } catch (error) {
      log(`metrics: could not count this run's nodes: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  try {
    writeNodesFile(monitoring.dir, await act.nodes(), monitoring.computeExporterPort)
  } catch (error) {
    log(`metrics: could not rewrite nodes.json (the collector's next cycle will): ${error instanceof Error ? error.message : String(error)}`)
  }
}
