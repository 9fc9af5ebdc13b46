// A node's state as the metrics name it, from Slurm's flags (State=IDLE+CLOUD+POWERED_DOWN), never
// from sinfo's suffixes or prefixes: `idle~` is not idle capacity (monitoring-notes, complaint 1). Pure.
import type {NodeState} from '../slurm/controller.js'

export type Power = 'on' | 'starting' | 'stopping' | 'stop_pending' | 'off'

/** Features of a joined machine (limits.yaml's static:, slurm/nodes.ts's StaticNode). */
const JOINED_FEATURE = 'static'

/** A machine the user owns, joined with `citc node add`: static, never CLOUD, never powered by Slurm. */
export const isJoinedMachine = (n: Pick<NodeState, 'features' | 'state'>) =>
  !n.state.includes('CLOUD') && (n.features ?? '').split(',').includes(JOINED_FEATURE)

/** Slurm's base state (the first word of State=), in the names sinfo uses: idle, alloc, mixed, down, … */
export function baseState(n: Pick<NodeState, 'state'>): string {
  const base = (n.state[0] ?? 'unknown').toLowerCase()
  return base === 'allocated' ? 'alloc' : base
}

/**
 * Where the machine is in its power cycle. A transition under way wins over a request waiting
 * (22.05 shows ALLOCATED+…+POWER_DOWN+POWERING_UP for a booting node asked to stop after its job:
 * it is still starting). Joined machines are not powered by Slurm: on, unless Slurm holds them down.
 */
export function powerOf(n: Pick<NodeState, 'features' | 'state'>): Power {
  if (isJoinedMachine(n)) return baseState(n) === 'down' ? 'off' : 'on'
  const has = (flag: string) => n.state.includes(flag)
  if (has('POWERING_DOWN')) return 'stopping'
  if (has('POWERED_DOWN')) return 'off'
  if (has('POWERING_UP')) return 'starting'
  if (has('POWER_DOWN')) return 'stop_pending'
  return 'on'
}

export const isDrained = (n: Pick<NodeState, 'state'>) => n.state.includes('DRAIN')
export const isResponding = (n: Pick<NodeState, 'state'>) => !n.state.includes('NOT_RESPONDING')
/** Work on it: its CPUs are not idle, whatever LastBusyTime says. */
export const hasWork = (n: Pick<NodeState, 'state'>) => ['ALLOCATED', 'MIXED', 'COMPLETING'].some((s) => n.state.includes(s))
