// The semantic difference between the slurm.conf a cluster runs and the one finish would write:
// what a Slurm admin wants to read before saying yes. Pure.
import {createTwoFilesPatch} from 'diff'

import {parseConfLines} from './conf-parse.js'
import {compressHostlist, expandHostlist} from './hostlist.js'
import {featureValue} from './nodes.js'
import {CHAINED_PROLOG_PREFIX, DISPLACED_PREFIX, extractManagedBlock, outsideManagedBlock} from './render.js'

export interface ShapeChange {
  shape: string
  ad?: number
  before: number
  after: number
}

export interface SettingChange {
  key: string
  before?: string
  after?: string
}

export interface FinishPlan {
  changed: boolean
  /** Node count per shape (and AD) where it differs. */
  shapes: ShapeChange[]
  /** Hostlists of the elastic (State=CLOUD) nodes that appear and disappear; joined machines are in `staticNodes`. */
  addedNodes: string
  removedNodes: string
  removedNodeCount: number
  /** Hostlists of NodeName lines whose definition (CPUs, memory, features, GPUs…) changed. */
  redefinedNodes: string[]
  /**
   * Joined machines (static lines, no State=CLOUD) by name. They are never powered down: one that leaves
   * is only dropped (citc node remove drains it first), one that changes needs only the restart.
   */
  staticNodes: {added: string[]; removed: string[]; changed: string[]}
  partitions: {added: string[]; removed: string[]; changed: string[]}
  gpus: Array<{shape: string; before?: string; after?: string}>
  settings: SettingChange[]
  /**
   * Slurm 22.05 takes node changes (and PrologSlurmctld) only on a slurmctld restart; other settings need
   * only reconfigure. A reconfigure after a NodeName line is added kills slurmctld 22.05.8: never alone.
   */
  needsRestart: boolean
  /** The part of slurm.conf outside the managed block changed too (a moved key commented out, SlurmctldHost's address). */
  outsideBlockChanged: boolean
  /** citc commented out settings outside the block that the block now writes. */
  displacedSettings: boolean
  gresChanged: boolean
  unifiedDiff: string
}

interface NodeLineInfo {
  hostlist: string
  shape: string
  ad?: number
  gres?: string
  line: string
}

function readBlock(block: string | undefined) {
  const nodes: NodeLineInfo[] = []
  /** Joined machines: name → line. */
  const statics = new Map<string, string>()
  const partitions = new Map<string, string>()
  const settings = new Map<string, {key: string; value: string}>()
  for (const entry of parseConfLines(block ?? '')) {
    const k = entry.key.toLowerCase()
    if (k === 'nodename' && entry.pairs.get('state')?.toUpperCase() !== 'CLOUD') {
      statics.set(entry.value, entry.line)
    } else if (k === 'nodename') {
      const features = entry.pairs.get('features')
      const ad = featureValue(features, 'ad')
      nodes.push({
        hostlist: entry.value,
        shape: featureValue(features, 'shape') ?? entry.value.replace(/-?\[.*$|-\d+$/, ''),
        ad: ad ? Number(ad) : undefined,
        gres: entry.pairs.get('gres'),
        line: entry.line,
      })
    } else if (k === 'partitionname') {
      partitions.set(entry.value, entry.line)
    } else {
      settings.set(k, {key: entry.key, value: entry.value})
    }
  }
  return {nodes, statics, partitions, settings}
}

const groupKey = (n: {shape: string; ad?: number}) => (n.ad === undefined ? n.shape : `${n.shape} (AD ${n.ad})`)

export function planFinish(input: {
  currentConf: string | undefined
  newConf: string
  currentGres: string | undefined
  newGres: string
  confPath: string
}): FinishPlan {
  const blockBefore = input.currentConf ? extractManagedBlock(input.currentConf) : undefined
  const blockAfter = extractManagedBlock(input.newConf)
  const before = readBlock(blockBefore)
  const after = readBlock(blockAfter)

  // Node counts per shape/AD.
  const counts = new Map<string, ShapeChange>()
  const namesBefore = new Set<string>()
  const namesAfter = new Set<string>()
  for (const [side, info, names] of [
    ['before', before, namesBefore],
    ['after', after, namesAfter],
  ] as const) {
    for (const n of info.nodes) {
      const expanded = expandHostlist(n.hostlist)
      for (const name of expanded) names.add(name)
      const key = groupKey(n)
      const c = counts.get(key) ?? {shape: n.shape, ad: n.ad, before: 0, after: 0}
      c[side] += expanded.length
      counts.set(key, c)
    }
  }
  const shapes = [...counts.values()].filter((c) => c.before !== c.after)
  const added = [...namesAfter].filter((n) => !namesBefore.has(n))
  const removed = [...namesBefore].filter((n) => !namesAfter.has(n))

  // Nodes on both sides whose group's definition changed (CPUs, memory, features…): compared by
  // shape/AD without NodeName and Port, which follow the count.
  const definition = (line: string) => line.replace(/^NodeName=\S+\s*/, '').replace(/(^|\s)Port=\S+/, '$1').trim()
  const groupBefore = new Map(before.nodes.map((n) => [groupKey(n), n]))
  const redefinedNodes = after.nodes.flatMap((n) => {
    const b = groupBefore.get(groupKey(n))
    if (!b || definition(b.line) === definition(n.line)) return []
    const staying = expandHostlist(b.hostlist).filter((name) => namesAfter.has(name))
    return staying.length > 0 ? [compressHostlist(staying)] : []
  })

  const gresBefore = new Map(before.nodes.map((n) => [groupKey(n), n.gres]))
  const gresAfter = new Map(after.nodes.map((n) => [groupKey(n), n.gres]))
  const gpus: FinishPlan['gpus'] = []
  for (const key of new Set([...gresBefore.keys(), ...gresAfter.keys()])) {
    const b = gresBefore.get(key)
    const a = gresAfter.get(key)
    if (b !== a && (b || a)) gpus.push({shape: key, before: b, after: a})
  }

  const staticNodes = {
    added: [...after.statics.keys()].filter((n) => !before.statics.has(n)),
    removed: [...before.statics.keys()].filter((n) => !after.statics.has(n)),
    changed: [...after.statics.keys()].filter((n) => before.statics.has(n) && before.statics.get(n) !== after.statics.get(n)),
  }
  const staticChanged = staticNodes.added.length + staticNodes.removed.length + staticNodes.changed.length > 0

  const partitions = {
    added: [...after.partitions.keys()].filter((p) => !before.partitions.has(p)),
    removed: [...before.partitions.keys()].filter((p) => !after.partitions.has(p)),
    changed: [...after.partitions.keys()].filter((p) => before.partitions.has(p) && before.partitions.get(p) !== after.partitions.get(p)),
  }

  const settings: SettingChange[] = []
  for (const k of new Set([...before.settings.keys(), ...after.settings.keys()])) {
    const b = before.settings.get(k)
    const a = after.settings.get(k)
    if (b?.value !== a?.value) settings.push({key: (a ?? b)!.key, before: b?.value, after: a?.value})
  }

  // The site's PrologSlurmctld that citc's runs: a comment line to Slurm, a setting to the admin.
  const chained = (block: string | undefined) =>
    (block ?? '').split('\n').find((l) => l.startsWith(CHAINED_PROLOG_PREFIX))?.slice(CHAINED_PROLOG_PREFIX.length)
  const chainedBefore = chained(blockBefore)
  const chainedAfter = chained(blockAfter)
  if (chainedBefore !== chainedAfter) settings.push({key: 'PrologSlurmctld (site program citc runs)', before: chainedBefore, after: chainedAfter})
  // slurmctld reads PrologSlurmctld only when it starts (prep/script's init), not on reconfigure.
  const prologChanged = settings.some((c) => c.key.toLowerCase() === 'prologslurmctld')

  const outsideBefore = outsideManagedBlock(input.currentConf ?? '')
  const outsideAfter = outsideManagedBlock(input.newConf)
  const outsideBlockChanged = input.currentConf !== undefined && outsideBefore !== outsideAfter
  // Joined machines move SlurmctldHost's address (render.ts withSlurmctldHost): a setting to the admin.
  const hostBefore = slurmctldHost(outsideBefore)
  const hostAfter = slurmctldHost(outsideAfter)
  if (input.currentConf !== undefined && hostBefore !== hostAfter) settings.push({key: 'SlurmctldHost', before: hostBefore, after: hostAfter})
  const displaced = (text: string) => text.split('\n').filter((l) => l.startsWith(DISPLACED_PREFIX)).length
  const displacedSettings = input.currentConf !== undefined && displaced(outsideAfter) > displaced(outsideBefore)
  const gresChanged = (input.currentGres ?? '') !== input.newGres
  const changed = input.currentConf !== input.newConf || gresChanged

  const unifiedDiff =
    createTwoFilesPatch(input.confPath, input.confPath, input.currentConf ?? '', input.newConf, 'running', 'new', {context: 3}) +
    (gresChanged
      ? createTwoFilesPatch(gresPath(input.confPath), gresPath(input.confPath), input.currentGres ?? '', input.newGres, 'running', 'new', {context: 3})
      : '')

  return {
    changed,
    shapes,
    addedNodes: added.length > 0 ? compressHostlist(added) : '',
    removedNodes: removed.length > 0 ? compressHostlist(removed) : '',
    removedNodeCount: removed.length,
    redefinedNodes,
    staticNodes,
    partitions,
    gpus,
    settings,
    needsRestart:
      input.currentConf === undefined ||
      added.length > 0 ||
      removed.length > 0 ||
      redefinedNodes.length > 0 ||
      staticChanged ||
      gresChanged ||
      outsideBlockChanged ||
      prologChanged,
    outsideBlockChanged,
    displacedSettings,
    gresChanged,
    unifiedDiff,
  }
}

/** The first SlurmctldHost (or ControlMachine) value of a slurm.conf part. */
function slurmctldHost(text: string): string | undefined {
  return parseConfLines(text).find((e) => /^(slurmctldhost|controlmachine)$/i.test(e.key))?.value
}

export const gresPath = (confPath: string) => confPath.replace(/[^/]*$/, 'gres.conf')

/** The plan as lines a person reads (the semantic part; the unified diff is shown separately). */
export function describePlan(plan: FinishPlan): string[] {
  if (!plan.changed) return ['No change: the cluster already runs this configuration.']
  const out: string[] = []
  for (const s of plan.shapes) {
    const label = s.ad === undefined ? s.shape : `${s.shape} AD ${s.ad}`
    const delta = s.after - s.before
    out.push(`${delta > 0 ? '+' : '-'} ${label}: ${s.before} → ${s.after} nodes (${delta > 0 ? '+' : ''}${delta})`)
  }
  if (plan.removedNodes) out.push(`  nodes removed: ${plan.removedNodes} (drained and powered down first if running)`)
  for (const h of plan.redefinedNodes) out.push(`~ node definition changed: ${h}`)
  for (const n of plan.staticNodes.added) out.push(`+ joined machine ${n}`)
  for (const n of plan.staticNodes.removed) out.push(`- joined machine ${n} leaves the configuration (never powered down: citc node remove drains it and cleans the machine)`)
  for (const n of plan.staticNodes.changed) out.push(`~ joined machine ${n}: definition changed`)
  for (const g of plan.gpus) out.push(`~ GPUs of ${g.shape}: ${g.before ?? 'none'} → ${g.after ?? 'none'}`)
  for (const p of plan.partitions.added) out.push(`+ partition ${p}`)
  for (const p of plan.partitions.removed) out.push(`- partition ${p}`)
  for (const p of plan.partitions.changed) out.push(`~ partition ${p}`)
  for (const s of plan.settings) out.push(`~ ${s.key}: ${s.before ?? '(unset)'} → ${s.after ?? '(unset)'}`)
  if (plan.displacedSettings) out.push('~ settings outside the managed block that citc now manages are commented out')
  out.push(plan.needsRestart ? 'slurmctld will be restarted (node and PrologSlurmctld changes need a restart).' : 'slurmctld will be reconfigured (no restart).')
  return out
}
