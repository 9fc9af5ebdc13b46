// The watchdog's brain: `citc node sync` (issue #11, "Watchdog") runs every 60 s on the management node, one at a time, and keeps the cloud and Slurm agreeing.
// This file is the pure part: Slurm's nodes + the cloud's instances + what the previous run remembered +
// the time → the actions to take and what to remember for the next run. No I/O, no clock, no SDK: the
// command reads `scontrol show node` and the driver's list(), runs the actions, stores `memory` as JSON.

/** Slurm's view of one node. `state` is scontrol's flags, e.g. "IDLE+CLOUD+POWERED_DOWN" (or split). */
export interface SyncNode {
  name: string
  state: string | readonly string[]
  reason?: string
  shape: string
  ad?: number
  arch?: string
}

/** One compute instance of the cluster as the cloud lists it (local: a running slurmd node). */
export interface SyncInstance {
  name: string
  id: string
  /** Epoch ms. */
  launchedAt: number
  state: 'pending' | 'running' | 'stopping' | 'terminated'
}

/** A shape/AD held back after a capacity failure (§5.4 "capacity cooldown"). */
export interface Cooldown {
  shape: string
  ad?: number
  /** Epoch ms: release at or after this. */
  until: number
  /** Nodes this cooldown set DRAIN, so a later run holds only newcomers. */
  held: string[]
}

/** What one run hands to the next (stored as JSON by the command). */
export interface SyncMemory {
  /** Nodes seen without an instance once, while Slurm thinks they are up: acted on at the second run. */
  missing: string[]
  /** Powering-up nodes that had a live instance last run: if it is gone now, it vanished. */
  booting: string[]
  /** Nodes seen stuck powered-down-not-responding, with when they were first seen so (epoch ms). */
  stuck: Record<string, number>
  /**
   * Powering-up nodes never seen with an instance, with when they were first seen so (epoch ms). Absent
   * in the memory of a citc before this field: read as empty.
   */
  unlaunched?: Record<string, number>
  cooldowns: Cooldown[]
}

export interface SyncSettings {
  /** An orphan must be at least this old (§5.4: PC 300 s, slurm-gcp 90 s; issue: 120 s). */
  orphanGraceMs: number
  /** How long a shape/AD is held after a capacity failure (§1.3 PC insufficient_capacity_timeout 600 s). */
  cooldownMs: number
  /** How long a node may stay powered-down-not-responding before it is forced down (§5.4 "stuck"). */
  stuckMs: number
  /**
   * How long a node may stay powering up without ever having an instance before its start is taken for
   * lost (its resume program killed: issue #23, fault 4) and it is put down and powered down.
   */
  startLostMs: number
}

export const DEFAULT_SYNC_SETTINGS: SyncSettings = {
  orphanGraceMs: 120_000,
  cooldownMs: 600_000,
  // Longer than Slurm's default SuspendTimeout (120 s, §5.3), during which a node just powered down may
  // still be flagged NOT_RESPONDING without being stuck.
  stuckMs: 300_000,
  // The resume program has every node's outcome by its deadline (node-programs.ts PROGRAM_BUDGET_MS.resume,
  // 300 s: a launch, or DOWN with a reason); a minute more for its start and its scontrol calls. Past
  // that, nothing is launching the node any more, and Slurm would wait ResumeTimeout (600 s) for it.
  startLostMs: 360_000,
}

export type SyncAction =
  | {kind: 'terminate'; id: string; name: string; why: 'orphan'; log: string}
  /** `scontrol update State=DOWN Reason=…` then `State=POWER_DOWN_FORCE` (back to idle~). */
  | {kind: 'down-and-power-down'; node: string; reason: string; log: string}
  /**
   * `scontrol update NodeName=<node> State=DOWN Reason=<reason>`: a start refused for a quota, permission or
   * setting stays out of scheduling until an admin resumes it. Slurm made it idle~ again once it powered
   * down (idle_on_node_suspend), and every job would be refused the same way.
   */
  | {kind: 'keep-down'; node: string; reason: string; log: string}
  /** `scontrol update NodeName=<nodes> State=DRAIN Reason=<reason>`. */
  | {kind: 'hold'; nodes: string[]; shape: string; ad?: number; until: number; reason: string; log: string}
  /** Back in service, reason cleared, powered down again → idle~ (node-sync.ts says how, with scontrol). */
  | {kind: 'release'; nodes: string[]; shape: string; ad?: number; log: string}

export interface SyncPlan {
  actions: SyncAction[]
  memory: SyncMemory
  /** Nodes a quota, permission or setting refusal left DOWN: only the admin acts on them; `citc status` shows them. */
  adminDown: Array<{name: string; reason: string}>
}

export const REASON_INSTANCE_GONE = 'citc: instance gone'
export const REASON_STUCK = 'citc: stuck powered down, not responding'
export const REASON_START_LOST = 'citc: start lost: no instance was launched'
/** Both a capacity failure (`citc: capacity: …`, node-failures.ts) and a hold start with this. */
const CAPACITY_PREFIX = 'citc: capacity'
const CAPACITY_FAILED = 'citc: capacity:'
/** Refusals only an admin can fix (a new limit, a permission, a setting): the same as citc status's needsAdmin. */
const ADMIN_FAILED = /^citc: (quota|auth|config): /

export function emptyMemory(): SyncMemory {
  return {missing: [], booting: [], stuck: {}, unlaunched: {}, cooldowns: []}
}

/** `citc: capacity cooldown until 15:52 UTC` — time is given, not read. */
export function holdReason(until: number): string {
  return `citc: capacity cooldown until ${new Date(until).toISOString().slice(11, 16)} UTC`
}

export function planSync(input: {
  nodes: readonly SyncNode[]
  instances: readonly SyncInstance[]
  memory?: SyncMemory
  now: number
  settings?: Partial<SyncSettings>
}): SyncPlan {
  const {now} = input
  const settings = {...DEFAULT_SYNC_SETTINGS, ...input.settings}
  const memory = input.memory ?? emptyMemory()
  const nodes = input.nodes.map((n) => ({...n, flags: flagsOf(n.state), reason: n.reason ?? ''}))
  const byName = new Map(nodes.map((n) => [n.name, n]))
  // Stopping/terminated instances are going away: they neither back a node nor count as orphans.
  const alive = input.instances.filter((i) => i.state === 'pending' || i.state === 'running')
  const aliveNames = new Set(alive.map((i) => i.name))
  const actions: SyncAction[] = []
  const next: SyncMemory = {missing: [], booting: [], stuck: {}, unlaunched: {}, cooldowns: []}

  // Quota (and permission, setting) failures need an admin, not a retry loop (§2.4, Toolkit #3225): kept
  // DOWN once powered down, otherwise left alone.
  const adminDown = nodes.filter((n) => ADMIN_FAILED.test(n.reason)).map((n) => ({name: n.name, reason: n.reason}))
  const untouchable = new Set(adminDown.map((q) => q.name))
  for (const n of nodes.filter((x) => untouchable.has(x.name))) {
    if (n.flags.has('DOWN') || !n.flags.has('POWERED_DOWN') || n.flags.has('POWERING_UP') || n.flags.has('POWERING_DOWN')) continue
    actions.push({kind: 'keep-down', node: n.name, reason: n.reason, log: `node sync: ${n.name} kept DOWN for an admin: ${n.reason}`})
  }

  // Orphans (§5.4, §2.3 last row, §1.3 orphaned_instance_timeout): alive, its node powered down, powering
  // down or unknown to Slurm, older than the grace (a resume may just have launched it). A node up or
  // powering up owns its instance, whatever else its flags say.
  for (const i of alive) {
    const n = byName.get(i.name)
    if (n && (n.flags.has('POWERING_UP') || !(n.flags.has('POWERED_DOWN') || n.flags.has('POWERING_DOWN')))) continue
    const age = now - i.launchedAt
    if (age < settings.orphanGraceMs) continue
    const slurm = n ? n.flags.has('POWERING_DOWN') ? 'powering down' : 'powered down' : 'unknown to Slurm'
    actions.push({kind: 'terminate', id: i.id, name: i.name, why: 'orphan', log: `node sync: terminate ${i.id} (${i.name}): orphan, node ${slurm}, launched ${minutes(age)} ago`})
  }

  for (const n of nodes) {
    if (untouchable.has(n.name)) continue
    const poweringUp = n.flags.has('POWERING_UP')
    if (poweringUp && aliveNames.has(n.name)) next.booting.push(n.name)

    // Unbacked (§5.4, PC #6780 ec2_instance_missing_max_count): lists are eventually consistent, so a
    // node missing once is only remembered; the second run in a row acts. A powering-up node counts
    // only once its instance was seen (before that, resume may still be launching it: ResumeTimeout's job).
    const vanished = !aliveNames.has(n.name) && (isUp(n.flags) || (poweringUp && (memory.booting.includes(n.name) || memory.missing.includes(n.name))))
    if (vanished) {
      if (memory.missing.includes(n.name)) {
        actions.push({kind: 'down-and-power-down', node: n.name, reason: REASON_INSTANCE_GONE, log: `node sync: ${n.name} down and power down: instance gone two runs in a row (Slurm: ${[...n.flags].join('+')})`})
      } else {
        next.missing.push(n.name)
      }
    }

    // Start lost: powering up, never seen with an instance, long after any resume program would have
    // launched it or reported it failed — the program was killed (with slurmctld, by systemd's cgroup).
    // Put down and powered down as a failed start is: its jobs are requeued, and start it again.
    if (poweringUp && !aliveNames.has(n.name) && !memory.booting.includes(n.name) && !memory.missing.includes(n.name)) {
      const since = memory.unlaunched?.[n.name] ?? now
      if (now - since >= settings.startLostMs) {
        actions.push({kind: 'down-and-power-down', node: n.name, reason: REASON_START_LOST, log: `node sync: ${n.name} down and power down: powering up for ${minutes(now - since)} and no instance was ever launched for it`})
      } else {
        next.unlaunched![n.name] = since
      }
    }

    // Stuck (§5.4, PC #7577): IDLE+CLOUD+POWERED_DOWN+NOT_RESPONDING never powers up again by itself.
    // DOWN/DRAIN nodes are left out: nothing is scheduled on them, and their reason is someone's.
    if (isStuck(n.flags)) {
      const since = memory.stuck[n.name] ?? now
      if (now - since >= settings.stuckMs) {
        actions.push({kind: 'down-and-power-down', node: n.name, reason: REASON_STUCK, log: `node sync: ${n.name} down and power down: powered down and not responding for ${minutes(now - since)}`})
      } else {
        next.stuck[n.name] = since
      }
    }
  }

  // Capacity cooldowns (§5.4, §1.3 PC ICE fail-over, §2.4 Toolkit capacity circuit): jobs go to other
  // shapes/ADs instead of looping on one that has no capacity; released after cooldownMs. Only citc's
  // own reasons are released: a node an admin drained keeps its reason and its state.
  const groupOf = (n: {shape: string; ad?: number}) => `${n.shape}\u0000${n.ad ?? ''}`
  const releasing = new Set<string>()
  for (const c of memory.cooldowns) {
    const members = nodes.filter((n) => groupOf(n) === groupOf(c) && !untouchable.has(n.name))
    if (now >= c.until) {
      // By reason, not by `held`: citc's reasons mark exactly its own nodes (held or failed), and a held
      // node an admin re-drained since carries the admin's reason now, so it stays drained.
      const release = members.filter((n) => n.reason.startsWith(CAPACITY_PREFIX)).map((n) => n.name)
      for (const name of release) releasing.add(name)
      if (release.length > 0) actions.push({kind: 'release', nodes: release, shape: c.shape, ...adOf(c), log: `node sync: release ${release.join(',')}: capacity cooldown for ${where(c)} over`})
      continue
    }
    // Still cooling: hold the group's nodes that became schedulable since (a job ended, a node powered down).
    const more = members.filter((n) => holdable(n.flags) && !c.held.includes(n.name)).map((n) => n.name)
    if (more.length > 0) actions.push(holdAction(more, c, `more of ${where(c)} powered down during its cooldown`))
    next.cooldowns.push({...c, held: [...c.held, ...more]})
  }
  for (const failed of nodes.filter((n) => n.reason.startsWith(CAPACITY_FAILED) && !releasing.has(n.name))) {
    if (next.cooldowns.some((c) => groupOf(c) === groupOf(failed))) continue
    const c: Cooldown = {shape: failed.shape, ...adOf(failed), until: now + settings.cooldownMs, held: []}
    c.held = nodes.filter((n) => groupOf(n) === groupOf(c) && holdable(n.flags) && !untouchable.has(n.name)).map((n) => n.name)
    if (c.held.length > 0) actions.push(holdAction(c.held, c, `after ${failed.name}: ${failed.reason}`))
    next.cooldowns.push(c)
  }

  return {actions, memory: next, adminDown}
}

function holdAction(nodes: string[], c: Cooldown, why: string): SyncAction {
  const reason = holdReason(c.until)
  return {kind: 'hold', nodes, shape: c.shape, ...adOf(c), until: c.until, reason, log: `node sync: hold ${nodes.join(',')} (${where(c)}) DRAIN "${reason}": ${why}`}
}

function flagsOf(state: string | readonly string[]): Set<string> {
  const parts = typeof state === 'string' ? state.split('+') : state
  return new Set(parts.map((s) => s.trim().toUpperCase()).filter(Boolean))
}

/** Slurm believes a machine is there: not DOWN or FUTURE, no power-saving flag (no `~`, `#`, `%`). */
function isUp(f: Set<string>): boolean {
  return !['DOWN', 'FUTURE', 'POWERED_DOWN', 'POWERING_DOWN', 'POWERING_UP'].some((s) => f.has(s))
}

function isStuck(f: Set<string>): boolean {
  return f.has('POWERED_DOWN') && f.has('NOT_RESPONDING') && !f.has('POWERING_UP') && !f.has('DOWN') && !f.has('DRAIN')
}

/** Schedulable only because it can be powered up: idle~ with no DOWN/DRAIN (an admin's or anyone's). */
function holdable(f: Set<string>): boolean {
  return f.has('POWERED_DOWN') && f.has('IDLE') && !['DOWN', 'DRAIN', 'POWERING_UP', 'POWERING_DOWN'].some((s) => f.has(s))
}

function adOf(x: {ad?: number}): {ad?: number} {
  return x.ad === undefined ? {} : {ad: x.ad}
}

function where(c: {shape: string; ad?: number}): string {
  return c.ad === undefined ? c.shape : `${c.shape} AD ${c.ad}`
}

function minutes(ms: number): string {
  return ms < 120_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`
}
