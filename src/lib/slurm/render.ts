// slurm.conf and gres.conf renderers. Pure and deterministic byte for byte: the same input always
// gives the same text, so a re-run of finish shows "no change" and snapshots are stable.
import {posix} from 'node:path'

import {CitcError} from '../errors.js'
import {parseConfLine, parseConfLines} from './conf-parse.js'
import {isBlockKey, isConditionalBlockKey} from './managed-keys.js'
import {nodeName, type NodeGroup, type PartitionDef, type StaticNode} from './nodes.js'
import {compressHostlist} from './hostlist.js'
import type {PowerTimings, SlurmProfile} from './profile.js'

const START_MARKER = '# STARTNODES'
const END_MARKER = '# ENDNODES'

/** Power-saving settings citc writes into the managed block. */
export interface ElasticSettings {
  programsDir: string
  /** Seconds a node stays idle before it is powered down. */
  suspendTime: number
  resumeTimeout: number
  suspendTimeout: number
  resumeRate: number
  suspendRate: number
  /**
   * citc's PrologSlurmctld (<programsDir>/prolog-slurmctld) is installed on the management node: a
   * batch job then starts as soon as its nodes are up, not on slurmctld's next 30-s pass. False for a
   * registered cluster without it (a PrologSlurmctld that does not exist would requeue every job).
   */
  launchProlog: boolean
}

/** The power-saving settings of a cluster with these timings (its provider's: SlurmProfile.power). */
export function defaultElasticSettings(power: PowerTimings, programsDir = '/usr/local/libexec/citc'): ElasticSettings {
  return {programsDir, ...power, launchProlog: true}
}

export interface BlockInput {
  /** What the cluster's provider needs of Slurm (only whether nodes register their address is read here). */
  slurm: Pick<SlurmProfile, 'nodesRegisterAddress'>
  groups: NodeGroup[]
  /** Joined machines: static lines, never suspended, configless. Empty: the block is as before they existed. */
  staticNodes?: StaticNode[]
  partitions: PartitionDef[]
  elastic: ElasticSettings
  /** User-seeded settings from limits.yaml, already checked against the managed keys. */
  settings: Record<string, string>
  /** The site's own PrologSlurmctld, run by citc's (which owns the key) with the same environment. */
  chainedPrologSlurmctld?: string
}

/** The block's record of a site's own PrologSlurmctld, read by citc's prolog script at every job. */
export const CHAINED_PROLOG_PREFIX = '#citc-chained-PrologSlurmctld='

/** srun's ports with joined machines: fixed, so a site's firewall can let them through to the management node. */
export const SRUN_PORT_RANGE = '60001-63000'


/** The managed block, between and including the START/END markers, newline-terminated. */
export function renderManagedBlock(input: BlockInput): string {
  const e = input.elastic
  const statics = input.staticNodes ?? []
  const joined = statics.length > 0
  const lines = [
    START_MARKER,
    '# Managed by citc: `citc finish` rewrites everything between STARTNODES and ENDNODES from limits.yaml.',
    '# Edits here are lost; put your own settings in limits.yaml (slurm:) or outside this block.',
    `ResumeProgram=${e.programsDir}/resume`,
    `SuspendProgram=${e.programsDir}/suspend`,
    `ResumeFailProgram=${e.programsDir}/resume-fail`,
    `SuspendTime=${e.suspendTime}`,
    `ResumeTimeout=${e.resumeTimeout}`,
    `SuspendTimeout=${e.suspendTimeout}`,
    `ResumeRate=${e.resumeRate}`,
    `SuspendRate=${e.suspendRate}`,
    // Joined machines are the site's own: never powered down (a global SuspendTime would suspend them).
    ...(joined ? [`SuspendExcNodes=${statics.map((n) => n.name).join(',')}`] : []),
    // Cloud nodes change address between power cycles: never cache one.
    'CommunicationParameters=NoAddrCache',
    // Show powered-down nodes to admins only in sinfo, as Slurm recommends for cloud nodes.
    'PrivateData=cloud',
    // idle_on_node_suspend: a suspended node is idle again at once, so a failed node returns to the pool;
    // cloud_reg_addrs: a cloud node's address is the one it registers from; enable_configless: joined
    // machines' slurmd fetch slurm.conf from slurmctld (--conf-server) instead of a shared file.
    `SlurmctldParameters=${joined ? 'enable_configless,' : ''}idle_on_node_suspend${input.slurm.nodesRegisterAddress ? ',cloud_reg_addrs' : ''}`,
    // A node that failed and came back answering is usable again without an admin.
    'ReturnToService=2',
    // Cloud nodes may not resolve each other by name: no fan-out through other nodes.
    'TreeWidth=65533',
    // srun on the management node listens for a joined machine's slurmd: on known ports, not ephemeral ones.
    ...(joined ? [`SrunPortRange=${SRUN_PORT_RANGE}`] : []),
  ]
  if (e.launchProlog) {
    // A batch job on nodes that were powered down starts when this ends, not on the next 30-s pass.
    lines.push(`PrologSlurmctld=${e.programsDir}/prolog-slurmctld`)
    if (input.chainedPrologSlurmctld) lines.push(`${CHAINED_PROLOG_PREFIX}${input.chainedPrologSlurmctld}`)
  } else if (input.chainedPrologSlurmctld) {
    lines.push(`PrologSlurmctld=${input.chainedPrologSlurmctld}`)
  }
  if (input.groups.some((g) => g.gpu)) lines.push('GresTypes=gpu')
  const userKeys = Object.keys(input.settings)
  if (userKeys.length > 0) {
    lines.push('# From limits.yaml (slurm:)')
    for (const k of userKeys) lines.push(`${k}=${input.settings[k]}`)
  }
  for (const g of input.groups) lines.push(nodeLine(g))
  for (const n of statics) lines.push(staticNodeLine(n))
  for (const p of input.partitions) lines.push(partitionLine(p))
  lines.push(END_MARKER)
  return lines.join('\n') + '\n'
}

function nodeLine(g: NodeGroup): string {
  const parts = [
    `NodeName=${g.hostlist}`,
    'State=CLOUD',
    `CPUs=${g.cpus}`,
    `SocketsPerBoard=${g.sockets}`,
    `CoresPerSocket=${g.coresPerSocket}`,
    `ThreadsPerCore=${g.threadsPerCore}`,
    `RealMemory=${g.realMemory}`,
  ]
  if (g.gpu) parts.push(`Gres=gpu:${g.gpu.model}:${g.gpu.count}`)
  parts.push(`Features="${g.features.join(',')}"`, `Weight=${g.weight}`)
  if (g.sharedAddress) {
    // The group's nodes are slurmds on one machine: one address, a port each.
    const {addr, firstPort} = g.sharedAddress
    const last = firstPort + g.count - 1
    parts.push(`NodeAddr=${addr}`, `Port=${g.count === 1 ? firstPort : `[${firstPort}-${last}]`}`)
  }
  return parts.join(' ')
}

/** A joined machine: no State=CLOUD (it is always there), its own address. */
function staticNodeLine(n: StaticNode): string {
  return [
    `NodeName=${n.name}`,
    `NodeAddr=${n.address}`,
    `CPUs=${n.cpus}`,
    `SocketsPerBoard=${n.sockets}`,
    `CoresPerSocket=${n.coresPerSocket}`,
    `ThreadsPerCore=${n.threadsPerCore}`,
    `RealMemory=${n.realMemory}`,
    `Features="${n.features.join(',')}"`,
    `Weight=${n.weight}`,
  ].join(' ')
}

function partitionLine(p: PartitionDef): string {
  const parts = [`PartitionName=${p.name}`, `Nodes=${p.nodes.length > 0 ? p.nodes.join(',') : '""'}`]
  parts.push(`Default=${p.default ? 'YES' : 'NO'}`)
  if (p.maxTime) parts.push(`MaxTime=${p.maxTime}`)
  for (const [k, v] of Object.entries(p.options)) parts.push(`${k}=${v}`)
  parts.push('State=UP')
  return parts.join(' ')
}

/**
 * gres.conf: citc owns the whole file. One line per GPU group; empty (a comment) without GPUs.
 * A cloud node has its own GPUs, so every node of a group has /dev/nvidia0… A group whose GPUs are devices
 * of one shared machine (gpu.devices, the local provider) gets one line per node instead: node k has its own
 * slice of the devices, and the local node driver reads that line back to give the node only those.
 */
export function renderGresConf(groups: NodeGroup[]): string {
  const lines = ['# Managed by citc (`citc finish`): one line per GPU node group.']
  for (const g of groups) {
    if (!g.gpu) continue
    if (g.gpu.devices) {
      for (let k = 1; k <= g.count; k++) {
        lines.push(`NodeName=${nodeName(g.prefix, k)} Name=gpu Type=${g.gpu.model} File=${nodeDevices(g, k)}`)
      }
      continue
    }
    const devices = g.gpu.count === 1 ? '/dev/nvidia0' : `/dev/nvidia[0-${g.gpu.count - 1}]`
    lines.push(`NodeName=${g.hostlist} Name=gpu Type=${g.gpu.model} File=${devices}`)
  }
  return lines.join('\n') + '\n'
}

/** Node k's (1-based) own devices of a group on shared GPUs, as one File= value (/dev/nvidia[0,2]). */
function nodeDevices(g: NodeGroup, k: number): string {
  const {count, devices = []} = g.gpu!
  const mine = devices.slice((k - 1) * count, k * count)
  // parseLimits refuses more nodes than the devices allow; reaching this is a bug, not bad input.
  if (mine.length !== count) throw new Error(`internal: ${g.shape} has ${devices.length} GPU device(s), too few for node ${k} of ${g.count}`)
  return compressHostlist(mine)
}

/** What the management playbook decided; the part of slurm.conf outside the managed block. */
export interface BaseInput {
  clusterId: string
  /** The provider's name, for the file's first comment. */
  provider: string
  /** The controller's hostname (it must match the host slurmctld runs on). */
  controllerHost: string
  controllerAddr?: string
  slurmUser: string
  /** slurmdbd on the management node records accounting. */
  accounting: boolean
  stateSaveLocation?: string
  logDir?: string
  runDir?: string
  slurmctldPort?: number
}

/** A complete slurm.conf outside the managed block, for a new cluster and for `finish --dry-run`. */
export function renderBase(b: BaseInput, slurm: Pick<SlurmProfile, 'plugins'>): string {
  const logDir = b.logDir ?? '/var/log/slurm'
  const runDir = b.runDir ?? '/run'
  const host = slurmctldHostValue(b.controllerHost, b.controllerAddr)
  const lines = [
    `# slurm.conf of citc cluster ${b.clusterId} (provider ${b.provider}).`,
    '# You may edit this part; `citc finish` only rewrites the block between STARTNODES and ENDNODES.',
    `ClusterName=${b.clusterId}`,
    `SlurmctldHost=${host}`,
    `SlurmUser=${b.slurmUser}`,
    'AuthType=auth/munge',
    `SlurmctldPort=${b.slurmctldPort ?? 6817}`,
    `StateSaveLocation=${b.stateSaveLocation ?? '/var/spool/slurmctld'}`,
    // %n: several slurmd may share one machine (SlurmProfile.sharedNodeAddress); harmless elsewhere.
    'SlurmdSpoolDir=/var/spool/slurmd/%n',
    `SlurmctldPidFile=${runDir}/slurmctld.pid`,
    `SlurmdPidFile=${runDir}/slurmd-%n.pid`,
    `SlurmctldLogFile=${logDir}/slurmctld.log`,
    `SlurmdLogFile=${logDir}/slurmd-%n.log`,
    'MpiDefault=none',
    'SwitchType=switch/none',
    `ProctrackType=${slurm.plugins.proctrack}`,
    `TaskPlugin=${slurm.plugins.task}`,
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core_Memory',
    `JobAcctGatherType=${slurm.plugins.jobacctGather}`,
    'SlurmctldTimeout=120',
    'SlurmdTimeout=300',
    'InactiveLimit=0',
    'MinJobAge=300',
    'KillWait=30',
    'Waittime=0',
  ]
  if (b.accounting) {
    lines.push('AccountingStorageType=accounting_storage/slurmdbd', `AccountingStorageHost=${b.controllerHost}`)
    // limits: accounts' limits (citc accounts apply) hold; qos: so do QOS limits. GrpTRESMins is
    // counted by the multifactor plugin only; with no decay and no reset it is a budget, used up by
    // every job until an admin raises it (PriorityCalcPeriod: usage counted each minute, not each 5).
    lines.push('AccountingStorageEnforce=associations,limits,qos')
    lines.push('PriorityType=priority/multifactor', 'PriorityDecayHalfLife=0', 'PriorityUsageResetPeriod=NONE', 'PriorityCalcPeriod=1')
    // GPUs are a TRES of every cluster's accounting (GPU-hours in `citc usage`, gres/gpu limits),
    // whether or not its shapes have any yet.
    lines.push('AccountingStorageTRES=gres/gpu')
  }
  return lines.join('\n') + '\n'
}

/** SlurmctldHost's value: `name(addr)` (nodes need not resolve the name), or the name alone. */
export function slurmctldHostValue(name: string, addr: string | undefined): string {
  return addr ? `${name}(${addr})` : name
}

const SLURMCTLD_HOST_LINE = /^(\s*)(SlurmctldHost|ControlMachine)(\s*=\s*)([^\s(#]+)(\([^)]*\))?(.*)$/i

/**
 * A slurm.conf whose first SlurmctldHost (the primary controller; later lines are backups) outside the
 * managed block gives `addr` (or no address): its name is kept, as it must be slurmctld's host name.
 * Joined machines reach the management node at an address of their own (StaticNodeSpec.controller);
 * without them it returns to the provider's (SlurmProfile.controllerAddr). A conf without such a line
 * is returned as it is (Slurm itself would refuse it).
 */
export function withSlurmctldHost(conf: string, addr: string | undefined): string {
  const block = extractManagedBlock(conf)
  const at = block ? conf.indexOf(block) : -1
  const head = at === -1 ? conf : conf.slice(0, at)
  const tail = at === -1 ? '' : conf.slice(at + block!.length)
  const rewrite = (part: string): {text: string; done: boolean} => {
    const lines = part.split('\n')
    const i = lines.findIndex((l) => SLURMCTLD_HOST_LINE.test(l))
    if (i === -1) return {text: part, done: false}
    lines[i] = lines[i].replace(SLURMCTLD_HOST_LINE, (_m, indent: string, _key: string, eq: string, name: string, _addr: string | undefined, rest: string) => `${indent}SlurmctldHost${eq}${slurmctldHostValue(name, addr)}${rest}`)
    return {text: lines.join('\n'), done: true}
  }
  const first = rewrite(head)
  if (first.done) return first.text + (block ?? '') + tail
  return head + (block ?? '') + rewrite(tail).text
}

export const DISPLACED_PREFIX = '#citc-moved-into-managed-block# '

/**
 * Put the managed block into an existing slurm.conf: replace the old block if there is one, or
 * append it. Settings outside the block that the block now owns are commented out (not deleted),
 * so nothing an admin wrote is lost.
 */
export function mergeSlurmConf(existing: string, block: string): string {
  const lines = existing.split('\n')
  if (lines.at(-1) === '') lines.pop()
  const start = lines.findIndex((l) => l.trim() === START_MARKER)
  const end = start === -1 ? -1 : lines.findIndex((l, i) => i > start && l.trim() === END_MARKER)
  if (start !== -1 && end === -1) {
    throw new CitcError('invalidInput', `slurm.conf has "${START_MARKER}" without a matching "${END_MARKER}"`, {
      hint: `put "${END_MARKER}" back after the node and partition lines of the cluster's slurm.conf, then run finish again`,
    })
  }
  const before = start === -1 ? lines : lines.slice(0, start)
  const after = start === -1 ? [] : lines.slice(end + 1)
  // A key the block writes only sometimes (SuspendExcNodes, SrunPortRange: with joined machines) is
  // the admin's while the block does not write it.
  const inBlock = new Set(parseConfLines(block).map((e) => e.key.toLowerCase()))
  const displace = (l: string) => {
    const key = /^\s*([A-Za-z]+)\s*=/.exec(l)?.[1]
    return key && isBlockKey(key) && (!isConditionalBlockKey(key) || inBlock.has(key.toLowerCase())) ? DISPLACED_PREFIX + l : l
  }
  const head = before.map(displace).join('\n')
  const tail = after.map(displace).join('\n')
  return (head ? head + '\n' : '') + block + (tail ? tail + '\n' : '')
}

/**
 * The site's own PrologSlurmctld in a slurm.conf: a PrologSlurmctld line outside the managed block,
 * live or commented out by an earlier finish (which keeps it there, so it stays chained). One that
 * came from limits.yaml lives only in the block, and goes when limits.yaml no longer names it.
 * citc's own prolog (under programsDir) is never the site's.
 */
export function sitePrologSlurmctld(conf: string | undefined, programsDir: string): string | undefined {
  if (!conf) return undefined
  const found: string[] = []
  for (const raw of outsideManagedBlock(conf).split('\n')) {
    const line = raw.startsWith(DISPLACED_PREFIX) ? raw.slice(DISPLACED_PREFIX.length) : raw
    // Slurm's own reading: quotes removed (PrologSlurmctld="/etc/slurm/x.sh").
    const value = parseConfLine(line).find(([k]) => k.toLowerCase() === 'prologslurmctld')?.[1]
    const chain = value === undefined ? undefined : chainedPrologs(value, programsDir)
    if (chain) found.push(chain)
  }
  return found.at(-1)
}

/**
 * The programs citc's prolog is to run for a PrologSlurmctld value: one path or a comma-separated
 * list (Slurm 23.02+), each normalised, citc's own prolog left out (a chain naming it would start it
 * again and again). Undefined when nothing is left.
 */
export function chainedPrologs(value: string, programsDir: string): string | undefined {
  const ours = posix.normalize(`${programsDir}/prolog-slurmctld`)
  const programs = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => (p.startsWith('/') ? posix.normalize(p) : p))
    .filter((p) => p !== ours)
  return programs.length > 0 ? programs.join(',') : undefined
}

/** A slurm.conf without its managed block: the part that is the admin's. */
export function outsideManagedBlock(conf: string): string {
  const block = extractManagedBlock(conf)
  return block ? conf.replace(block, '') : conf
}

/** The managed block of a slurm.conf, or undefined if it has none. */
export function extractManagedBlock(conf: string): string | undefined {
  const lines = conf.split('\n')
  const start = lines.findIndex((l) => l.trim() === START_MARKER)
  if (start === -1) return undefined
  const end = lines.findIndex((l, i) => i > start && l.trim() === END_MARKER)
  if (end === -1) return undefined
  return lines.slice(start, end + 1).join('\n') + '\n'
}
