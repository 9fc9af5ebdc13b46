// The watchdog's planner (issue #11 "Watchdog"; src/lib/nodes/sync-plan.ts): one table row per
// rule and per "never", then runs chained through the memory the planner hands back (JSON round trip, as
// the command stores it): missing twice → down, capacity cooldown → hold → release, stuck → forced down.
import {describe, expect, it} from 'vitest'

import {
  DEFAULT_SYNC_SETTINGS, emptyMemory, holdReason, planSync, REASON_INSTANCE_GONE, REASON_START_LOST, REASON_STUCK,
  type SyncAction, type SyncInstance, type SyncMemory, type SyncNode,
} from '../../../src/lib/nodes/sync-plan.js'

const NOW = Date.UTC(2026, 10, 23, 15, 42)
const MIN = 60_000
const node = (name: string, state: string, reason?: string, shape = 'c5.xlarge', ad?: number): SyncNode =>
  ({name, state, shape, ...(reason ? {reason} : {}), ...(ad === undefined ? {} : {ad})})
const inst = (name: string, ageMs = 10 * MIN, state: SyncInstance['state'] = 'running'): SyncInstance =>
  ({name, id: `i-${name}`, launchedAt: NOW - ageMs, state})

/** One short string per action, so a row's expectation reads like the elastic log. */
function brief(a: SyncAction): string {
  switch (a.kind) {
    case 'terminate': return `terminate ${a.id}`
    case 'down-and-power-down': return `down ${a.node}: ${a.reason}`
    case 'hold': return `hold ${a.nodes.join(',')}`
    case 'release': return `release ${a.nodes.join(',')}`
    case 'keep-down': return `keep-down ${a.node}`
  }
}

const CAP = 'citc: capacity: InsufficientInstanceCapacity for c5.xlarge in eu-west-1a'
const QUOTA = 'citc: quota: VcpuLimitExceeded for c5.xlarge in eu-west-1a'

describe('planSync: one run (§5.4)', () => {
  it.each<{rule: string; nodes: SyncNode[]; instances?: SyncInstance[]; memory?: Partial<SyncMemory>; expected: string[]}>([
    // orphans: §5.4, §2.3, §1.3
    {rule: 'orphan of a powered-down node, past the grace → terminate', nodes: [node('n1', 'IDLE+CLOUD+POWERED_DOWN')], instances: [inst('n1')], expected: ['terminate i-n1']},
    {rule: 'orphan of a powering-down node → terminate', nodes: [node('n1', 'IDLE+CLOUD+POWERING_DOWN')], instances: [inst('n1')], expected: ['terminate i-n1']},
    {rule: 'instance unknown to Slurm → terminate', nodes: [], instances: [inst('stray')], expected: ['terminate i-stray']},
    {rule: 'pending orphan counts too', nodes: [], instances: [inst('stray', 10 * MIN, 'pending')], expected: ['terminate i-stray']},
    {rule: 'never: orphan younger than the grace', nodes: [node('n1', 'IDLE+CLOUD+POWERED_DOWN')], instances: [inst('n1', DEFAULT_SYNC_SETTINGS.orphanGraceMs - 1)], expected: []},
    {rule: 'never: the instance of an up node', nodes: [node('n1', 'ALLOCATED+CLOUD')], instances: [inst('n1', 99 * MIN)], expected: []},
    {rule: 'never: the instance of an up, drained node', nodes: [node('n1', 'IDLE+CLOUD+DRAIN', 'maintenance')], instances: [inst('n1', 99 * MIN)], expected: []},
    {rule: 'never: the instance of a powering-up node (even with a stale POWERED_DOWN flag)', nodes: [node('n1', 'IDLE+CLOUD+POWERED_DOWN+POWERING_UP')], instances: [inst('n1', 99 * MIN)], expected: []},
    {rule: 'stopping/terminated instances are ignored', nodes: [node('n1', 'IDLE+CLOUD+POWERED_DOWN')], instances: [inst('n1', 99 * MIN, 'stopping'), inst('x', 99 * MIN, 'terminated')], expected: []},
    // unbacked: §5.4, PC #6780
    {rule: 'never: an up node missing once (only remembered)', nodes: [node('n1', 'IDLE+CLOUD')], expected: []},
    {rule: 'up node missing the second run in a row → down and power down', nodes: [node('n1', 'MIXED+CLOUD')], memory: {missing: ['n1']}, expected: [`down n1: ${REASON_INSTANCE_GONE}`]},
    {rule: 'a stopping instance does not back its node', nodes: [node('n1', 'ALLOCATED+CLOUD')], instances: [inst('n1', MIN, 'stopping')], memory: {missing: ['n1']}, expected: [`down n1: ${REASON_INSTANCE_GONE}`]},
    {rule: 'powering-up node whose seen instance vanished twice → down', nodes: [node('n1', 'IDLE+CLOUD+POWERING_UP')], memory: {missing: ['n1']}, expected: [`down n1: ${REASON_INSTANCE_GONE}`]},
    {rule: 'never: a powering-up node whose instance was never seen (resume may still launch it)', nodes: [node('n1', 'IDLE+CLOUD+POWERING_UP')], memory: {missing: []}, expected: []},
    {rule: 'never: a powered-down node without an instance (that is normal)', nodes: [node('n1', 'IDLE+CLOUD+POWERED_DOWN')], memory: {missing: ['n1']}, expected: []},
    // quota: §2.4, §5.4
    {rule: 'a quota node: never vanished or stuck, only kept DOWN once idle~ again', nodes: [node('q1', 'DOWN+CLOUD+NOT_RESPONDING', QUOTA), node('q2', 'IDLE+CLOUD+POWERED_DOWN+NOT_RESPONDING', QUOTA)], memory: {missing: ['q1'], stuck: {q2: 0}}, expected: ['keep-down q2']},
    // stuck: §5.4, PC #7577
    {rule: 'stuck powered-down-not-responding past stuckMs → down and power down', nodes: [node('n1', 'IDLE+CLOUD+NOT_RESPONDING+POWERED_DOWN')], memory: {stuck: {n1: NOW - DEFAULT_SYNC_SETTINGS.stuckMs}}, expected: [`down n1: ${REASON_STUCK}`]},
    {rule: 'never: stuck for less than stuckMs', nodes: [node('n1', 'IDLE+CLOUD+NOT_RESPONDING+POWERED_DOWN')], memory: {stuck: {n1: NOW - MIN}}, expected: []},
    {rule: "never: an admin's drained powered-down node as stuck", nodes: [node('n1', 'IDLE+CLOUD+DRAIN+NOT_RESPONDING+POWERED_DOWN', 'disk swap')], memory: {stuck: {n1: 0}}, expected: []},
    // capacity: §5.4, §1.3, §2.4
    {rule: "capacity failure → hold the group's idle~ nodes, not other shapes/ADs, not busy or admin-drained ones", nodes: [
      node('f1', 'DOWN+CLOUD+POWERED_DOWN', CAP, 'c5.xlarge', 1),
      node('a', 'IDLE+CLOUD+POWERED_DOWN', undefined, 'c5.xlarge', 1),
      node('b', 'IDLE+CLOUD+POWERED_DOWN', undefined, 'c5.xlarge', 1),
      node('busy', 'ALLOCATED+CLOUD', undefined, 'c5.xlarge', 1),
      node('admin', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', 'maintenance', 'c5.xlarge', 1),
      node('otherAd', 'IDLE+CLOUD+POWERED_DOWN', undefined, 'c5.xlarge', 2),
      node('otherShape', 'IDLE+CLOUD+POWERED_DOWN', undefined, 'm5.large', 1),
    ], instances: [inst('busy')], expected: ['hold a,b']},
  ])('$rule', ({nodes, instances = [], memory, expected}) => {
    const plan = planSync({nodes, instances, memory: {...emptyMemory(), ...memory}, now: NOW})
    expect(plan.actions.map(brief)).toEqual(expected)
    for (const a of plan.actions) expect(a.log).toMatch(/^node sync: [^\n]+$/)
  })

  it('lists quota DOWN nodes for citc status and nothing else', () => {
    const plan = planSync({nodes: [node('q1', 'DOWN+CLOUD+POWERED_DOWN', QUOTA), node('f1', 'DOWN+CLOUD', CAP), node('a', 'IDLE+CLOUD')], instances: [inst('a')], now: NOW})
    expect(plan.adminDown).toEqual([{name: 'q1', reason: QUOTA}])
  })

  it('keeps a quota, permission or setting refusal DOWN once Slurm made it idle~ again, and leaves it alone while it powers down', () => {
    const auth = 'citc: auth: UnauthorizedOperation for c5.xlarge in eu-west-2a'
    const plan = planSync({
      nodes: [node('q1', 'IDLE+CLOUD+POWERED_DOWN', QUOTA), node('q2', 'IDLE+CLOUD+POWERING_DOWN', QUOTA), node('a1', 'IDLE+CLOUD+POWERED_DOWN', auth), node('q3', 'DOWN+CLOUD+POWERED_DOWN', QUOTA)],
      instances: [],
      now: NOW,
    })
    expect(plan.actions.map(brief)).toEqual(['keep-down q1', 'keep-down a1'])
    expect(plan.actions.map((a) => a.kind === 'keep-down' && a.reason)).toEqual([QUOTA, auth])
    expect(plan.adminDown.map((n) => n.name)).toEqual(['q1', 'q2', 'a1', 'q3'])
  })

  it('takes the state as scontrol flags split into an array too', () => {
    const plan = planSync({nodes: [{name: 'n1', state: ['IDLE', 'CLOUD', 'POWERED_DOWN'], shape: 's'}], instances: [inst('n1')], now: NOW})
    expect(plan.actions.map(brief)).toEqual(['terminate i-n1'])
  })

  it('hold reason names the release time in UTC, HH:MM', () => {
    expect(holdReason(Date.UTC(2026, 0, 1, 9, 5, 59))).toBe('citc: capacity cooldown until 09:05 UTC')
  })
})

describe('planSync: runs chained through memory', () => {
  /** Each run sees the previous run's memory as the command would: written to JSON and read back. */
  function run(memory: SyncMemory, nodes: SyncNode[], instances: SyncInstance[], now: number, settings = {}) {
    const plan = planSync({nodes, instances, memory: JSON.parse(JSON.stringify(memory)) as SyncMemory, now, settings})
    return {...plan, brief: plan.actions.map(brief)}
  }

  it('missing once is remembered, the second run acts, an instance seen again forgets it', () => {
    const up = [node('n1', 'IDLE+CLOUD'), node('n2', 'IDLE+CLOUD')]
    const r1 = run(emptyMemory(), up, [], NOW)
    expect(r1.brief).toEqual([])
    expect(r1.memory.missing).toEqual(['n1', 'n2'])
    const r2 = run(r1.memory, up, [inst('n2')], NOW + MIN) // n2 was only late in the listing
    expect(r2.brief).toEqual([`down n1: ${REASON_INSTANCE_GONE}`])
    expect(r2.memory.missing).toEqual([])
    const r3 = run(r2.memory, up, [], NOW + 2 * MIN) // n2 now gone: once is not enough again
    expect(r3.brief).toEqual([])
  })

  it('a powering-up node whose instance was seen, then gone two runs, is downed', () => {
    const booting = [node('n1', 'IDLE+CLOUD+POWERING_UP')]
    const r1 = run(emptyMemory(), booting, [inst('n1', 30_000)], NOW)
    expect(r1.memory.booting).toEqual(['n1'])
    const r2 = run(r1.memory, booting, [], NOW + MIN)
    expect(r2.brief).toEqual([])
    const r3 = run(r2.memory, booting, [], NOW + 2 * MIN)
    expect(r3.brief).toEqual([`down n1: ${REASON_INSTANCE_GONE}`])
  })

  it('a powering-up node never launched (its resume program killed) is put down once startLostMs passed; one launched meanwhile is forgotten', () => {
    const booting = [node('n1', 'ALLOCATED+CLOUD+POWERING_UP'), node('n2', 'ALLOCATED+CLOUD+POWERING_UP')]
    const r1 = run(emptyMemory(), booting, [], NOW)
    expect(r1.brief).toEqual([])
    expect(r1.memory.unlaunched).toEqual({n1: NOW, n2: NOW})
    // A resume program may still be launching them: nothing before its deadline and a minute.
    const r2 = run(r1.memory, booting, [inst('n2', 1000)], NOW + DEFAULT_SYNC_SETTINGS.startLostMs - 1)
    expect(r2.brief).toEqual([])
    expect(r2.memory.unlaunched).toEqual({n1: NOW})
    expect(r2.memory.booting).toEqual(['n2'])
    const r3 = run(r2.memory, booting, [inst('n2', MIN)], NOW + DEFAULT_SYNC_SETTINGS.startLostMs)
    expect(r3.brief).toEqual([`down n1: ${REASON_START_LOST}`])
    expect(r3.actions[0]!.log).toBe('node sync: n1 down and power down: powering up for 6 min and no instance was ever launched for it')
    expect(r3.memory.unlaunched).toEqual({})
    // A node that powered up normally meanwhile is forgotten: it starts afresh the next time.
    const r4 = run(r3.memory, [node('n1', 'IDLE+CLOUD+POWERED_DOWN')], [], NOW + 7 * MIN)
    expect(r4.memory.unlaunched).toEqual({})
  })

  it('reads the memory of a citc that had no start-lost rule (no unlaunched field)', () => {
    const {unlaunched: _, ...old} = emptyMemory()
    const r = run(old as SyncMemory, [node('n1', 'IDLE+CLOUD+POWERING_UP')], [], NOW)
    expect(r.memory.unlaunched).toEqual({n1: NOW})
  })

  it('stuck is timed from the first run that saw it', () => {
    const stuck = [node('n1', 'IDLE+CLOUD+NOT_RESPONDING+POWERED_DOWN')]
    const settings = {stuckMs: 2 * MIN}
    const r1 = run(emptyMemory(), stuck, [], NOW, settings)
    const r2 = run(r1.memory, stuck, [], NOW + MIN, settings)
    const r3 = run(r2.memory, stuck, [], NOW + 2 * MIN, settings)
    expect([r1.brief, r2.brief, r3.brief]).toEqual([[], [], [`down n1: ${REASON_STUCK}`]])
  })

  it('capacity cooldown: hold, hold newcomers, then release after cooldownMs — never the admin\'s drain', () => {
    const cooldownMs = 10 * MIN
    const r1 = run(emptyMemory(), [
      node('f1', 'DOWN+CLOUD+POWERED_DOWN', CAP),
      node('a', 'IDLE+CLOUD+POWERED_DOWN'),
      node('b', 'ALLOCATED+CLOUD'),
      node('admin', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', 'maintenance'),
    ], [inst('b')], NOW, {cooldownMs})
    const held = holdReason(NOW + cooldownMs)
    expect(r1.brief).toEqual(['hold a'])
    expect(r1.actions[0]).toMatchObject({kind: 'hold', reason: held, until: NOW + cooldownMs, shape: 'c5.xlarge'})
    expect(held).toBe('citc: capacity cooldown until 15:52 UTC')

    // b's job ended and it powered down: held too; the failure's reason is still there: no second cooldown.
    const r2 = run(r1.memory, [
      node('f1', 'DOWN+CLOUD+POWERED_DOWN', CAP),
      node('a', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', held),
      node('b', 'IDLE+CLOUD+POWERED_DOWN'),
      node('admin', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', 'maintenance'),
    ], [], NOW + 5 * MIN, {cooldownMs})
    expect(r2.brief).toEqual(['hold b'])
    expect(r2.memory.cooldowns).toHaveLength(1)

    // One minute before the end: nothing.
    const during = [
      node('f1', 'DOWN+CLOUD+POWERED_DOWN', CAP),
      node('a', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', held),
      node('b', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', 'admin took b over'), // an admin re-drained a held node
      node('admin', 'IDLE+CLOUD+DRAIN+POWERED_DOWN', 'maintenance'),
    ]
    const r3 = run(r2.memory, during, [], NOW + cooldownMs - MIN, {cooldownMs})
    expect(r3.brief).toEqual([])

    const r4 = run(r3.memory, during, [], NOW + cooldownMs, {cooldownMs})
    expect(r4.brief).toEqual(['release f1,a'])
    expect(r4.memory.cooldowns).toEqual([])
    expect(r4.actions[0]!.log).toContain('capacity cooldown for c5.xlarge over')
  })

  it('does not touch the nodes or memory it was given', () => {
    const memory = {...emptyMemory(), missing: ['n1']}
    const frozen = JSON.stringify(memory)
    planSync({nodes: [node('n1', 'IDLE+CLOUD')], instances: [], memory, now: NOW})
    expect(JSON.stringify(memory)).toBe(frozen)
  })
})
