// One row per node for `citc status` and `citc nodes`, whatever its kind (pure). Elastic nodes (started
// by the provider's driver) carry the provider's name as kind; joined machines (`citc node add`: a
// static NodeName line whose Features start with "static", never State=CLOUD) also carry what an admin
// needs to see why one is not working: its address, slurmd version against the controller's,
// configured vs registered hardware, when it was last seen, and — when Slurm's own reason says nothing
// useful — what slurmctld's log says, with what to do.
import type {LogFinding} from '../../slurm/controller-log.js'
import type {NodeState} from '../../slurm/controller.js'
import {featureValue} from '../../slurm/nodes.js'

/** The Features value that marks a joined machine (the renderer writes Features="static,…"). */
export const JOINED_FEATURE = 'static'

export interface NodeRow {
  name: string
  /** "joined" for a machine added with citc node add; otherwise the provider's name (local, aws, …). */
  kind: string
  /** Slurm's state flags joined with "+", e.g. "IDLE+CLOUD+POWERED_DOWN". */
  state: string
  power: 'up' | 'powering-up' | 'powering-down' | 'down'
  shape?: string
  /** Configured CPUs (CPUTot). */
  cpus?: number
  /** Configured memory in MiB (RealMemory). */
  realMemory?: number
  partitions?: string
  /** Slurm's Reason=, or for a joined machine with none (or only "Not responding") what slurmctld's log says. */
  reason?: string
  /** Where reason came from when it is not Slurm's own. */
  reasonFrom?: 'slurmctld log'
  // Joined machines only:
  /** NodeAddr. */
  address?: string
  /** The slurmd version it registered with (absent until it has). */
  version?: string
  /** True when that version is not the controller's. */
  versionMismatch?: boolean
  /**
   * What slurm.conf says and what the machine registered. Slurm 22.05's scontrol prints only the
   * configured counts (CPUTot, RealMemory; CPUEfctv is CPUTot less specialized cores). A machine that
   * registers with less is refused (INVALID_REG) with a reason that gives its memory, not its CPUs; one
   * that is accepted has at least the configured counts, which is all Slurm keeps. So `registered` is
   * set only where Slurm said the number, `registration` says accepted/refused/none yet, and `low`
   * names what Slurm found short.
   */
  hardware?: {
    cpus: {configured?: number; registered?: number}
    memory: {configured?: number; registered?: number}
    registration: 'none' | 'accepted' | 'refused'
    low: Array<'cpus' | 'memory'>
  }
  /**
   * When slurmctld last heard from it: "now" while it responds; else the later of SlurmdStartTime (its
   * slurmd registered) and LastBusyTime (it had work), named in `from`; "never" if neither.
   */
  lastSeen?: {at: string; from: 'responding' | 'SlurmdStartTime' | 'LastBusyTime' | 'none'}
  /** What to do about reason, or about a version mismatch. */
  hint?: string
}

export interface RowContext {
  provider: string
  cluster: string
  /** slurmctld's version (scontrol show config's SLURM_VERSION), when it was asked. */
  controllerVersion?: string
  /** What slurmctld's log says per node (findingsByNode). */
  findings?: ReadonlyMap<string, LogFinding>
}

export const isJoined = (n: Pick<NodeState, 'features' | 'state'>) =>
  !n.state.includes('CLOUD') && (n.features ?? '').split(',').includes(JOINED_FEATURE)

function powerOf(n: NodeState): NodeRow['power'] {
  if (n.state.includes('POWERING_UP')) return 'powering-up'
  if (n.state.includes('POWERING_DOWN')) return 'powering-down'
  if (n.state.includes('POWERED_DOWN')) return 'down'
  return 'up'
}

export function nodeRows(states: readonly NodeState[], ctx: RowContext): NodeRow[] {
  return states.map((n) => (isJoined(n) ? joinedRow(n, ctx) : elasticRow(n, ctx.provider)))
}

function elasticRow(n: NodeState, kind: string): NodeRow {
  const shape = featureValue(n.features, 'shape')
  return {
    name: n.name,
    kind,
    state: n.state.join('+'),
    power: powerOf(n),
    ...(shape ? {shape} : {}),
    cpus: n.cpus,
    realMemory: n.realMemory,
    partitions: n.partitions,
    ...(n.reason ? {reason: n.reason} : {}),
  }
}

/** Slurm's reasons that say nothing about why: the log may know more. */
const GENERIC_REASON = /^(not responding)?$/i

/** States in which a joined machine is not working (so the log's explanation is worth showing). */
const UNWELL = ['DOWN', 'NOT_RESPONDING', 'UNKNOWN', 'INVALID_REG', 'FAIL']

function joinedRow(n: NodeState, ctx: RowContext): NodeRow {
  const row: NodeRow = {...elasticRow(n, 'joined'), ...(n.address ? {address: n.address} : {})}
  if (n.version) {
    row.version = n.version
    if (ctx.controllerVersion) row.versionMismatch = n.version !== ctx.controllerVersion
  }
  row.hardware = hardwareOf(n)
  row.lastSeen = lastSeenOf(n)
  const where = n.address ?? n.name
  const again = `citc node add ${where} --name ${n.name} -c ${ctx.cluster}`
  const finding = ctx.findings?.get(n.name)
  const unwell = n.state.some((s) => UNWELL.includes(s))
  if (row.hardware.low.length > 0) {
    row.hint = `the machine registered less than its slurm.conf line says (${row.hardware.low.join(' and ')}; that line is from \`slurmd -C\` when it was added): run \`citc node remove ${n.name} -c ${ctx.cluster}\` then \`${again}\` to take its hardware again`
  } else if (finding && unwell && GENERIC_REASON.test(n.reason ?? '')) {
    const told = logReason(finding, where, n.port ?? 6818)
    row.reason = told.reason
    row.reasonFrom = 'slurmctld log'
    row.hint = told.hint(again)
  }
  if (row.versionMismatch) {
    row.hint = `${row.hint ? `${row.hint}; ` : ''}its slurmd is ${n.version}, the controller ${ctx.controllerVersion}: run \`${again}\` again to install the controller's version`
  }
  return row
}

function logReason(f: LogFinding, where: string, port: number): {reason: string; hint: (again: string) => string} {
  const since = f.time ? ` (last at ${f.time})` : ''
  if (f.cause === 'munge') {
    const clocks = /expired|rewound|replayed/i.test(f.munge ?? '')
    const said = `slurmctld refused ${f.request ?? 'a request'} from ${where}: munge ${f.munge ? `"${f.munge}"` : 'authentication error'}${since}`
    return clocks
      ? {reason: said, hint: () => `the machine's clock differs from the management node's by more than munge allows: set both from the same time source (NTP), then restart munge and slurmd on it`}
      : {reason: said, hint: (again) => `the machine's munge key differs from the cluster's: run \`${again}\` again (it copies the cluster's key)`}
  }
  if (f.cause === 'slurm-conf') {
    return {
      reason: `it runs with another slurm.conf than slurmctld's${since}`,
      hint: (again) => `restart slurmd on it so it fetches the controller's slurm.conf, or run \`${again}\` again`,
    }
  }
  return {
    reason: `slurmctld gets no answer from its slurmd at ${where}${since}`,
    hint: () => `check that the machine is up, that slurmd runs on it, and that its port ${port} (slurmd) is open to the management node`,
  }
}

function hardwareOf(n: NodeState): NonNullable<NodeRow['hardware']> {
  const reason = n.reason ?? ''
  const low: Array<'cpus' | 'memory'> = []
  if (/Low (socket\*core\*thread count|CPUs)/.test(reason)) low.push('cpus')
  const mem = /Low RealMemory \(reported:(\d+)/.exec(reason)
  if (/Low RealMemory/.test(reason)) low.push('memory')
  const registration = n.state.includes('INVALID_REG') || low.length > 0 ? 'refused' : n.slurmdStartTime ? 'accepted' : 'none'
  return {
    cpus: {configured: n.cpus},
    memory: {configured: n.realMemory, ...(mem ? {registered: Number(mem[1])} : {})},
    registration,
    low,
  }
}

function lastSeenOf(n: NodeState): NonNullable<NodeRow['lastSeen']> {
  const responding = Boolean(n.slurmdStartTime) && !n.state.some((s) => s === 'NOT_RESPONDING' || s === 'DOWN')
  if (responding) return {at: 'now', from: 'responding'}
  const times = [
    ...(n.slurmdStartTime ? [{at: n.slurmdStartTime, from: 'SlurmdStartTime' as const}] : []),
    ...(n.lastBusyTime ? [{at: n.lastBusyTime, from: 'LastBusyTime' as const}] : []),
  ].sort((a, b) => b.at.localeCompare(a.at))
  return times[0] ?? {at: 'never', from: 'none'}
}
