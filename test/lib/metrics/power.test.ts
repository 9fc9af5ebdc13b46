import {describe, expect, it} from 'vitest'

import {baseState, isDrained, isResponding, powerOf} from '../../../src/lib/metrics/power.js'
import {parseNodeStates} from '../../../src/lib/slurm/controller.js'
import {nodeLine, scontrolNodes} from './fixtures.js'

const nodes = parseNodeStates(scontrolNodes)
const byName = (name: string) => nodes.find((n) => n.name === name)!

describe("a node's power, from Slurm's flags (22.05)", () => {
  it('names every node of the capture', () => {
    expect(Object.fromEntries(nodes.map((n) => [n.name, powerOf(n)]))).toEqual({
      // ALLOCATED+CLOUD+DRAIN+POWER_DOWN+NOT_RESPONDING+POWERING_UP: still booting, the stop comes after its job.
      'tst-big-0001': 'starting',
      'tst-big-0002': 'off',
      'tst-joined': 'on',
      'tst-small-0001': 'starting',
      // IDLE+CLOUD+POWER_UP+POWERING_DOWN
      'tst-small-0002': 'stopping',
      'tst-small-0003': 'stopping',
      // IDLE+CLOUD+DRAIN+POWERED_DOWN and DOWN+CLOUD+POWERED_DOWN
      'tst-small-0004': 'off',
      'tst-small-0005': 'off',
      'tst-small-0006': 'off',
    })
  })

  it('counts a powered-down idle node as off, not as idle capacity that is on (idle~)', () => {
    const n = byName('tst-small-0006')
    expect([baseState(n), powerOf(n)]).toEqual(['idle', 'off'])
  })

  it('says stop_pending for an up node with a power-down asked for (POWER_DOWN, sinfo\'s "!")', () => {
    const [n] = parseNodeStates(nodeLine('tst-big-0001').replace('State=ALLOCATED+CLOUD+DRAIN+POWER_DOWN+NOT_RESPONDING+POWERING_UP', 'State=ALLOCATED+CLOUD+DRAIN+POWER_DOWN'))
    expect(powerOf(n)).toBe('stop_pending')
  })

  it('says on for an elastic node that has registered', () => {
    const [n] = parseNodeStates(nodeLine('tst-small-0001').replace('State=IDLE+CLOUD+NOT_RESPONDING+POWERING_UP', 'State=IDLE+CLOUD'))
    expect(powerOf(n)).toBe('on')
  })

  it('keeps a joined machine on whatever power flags it carries, off only when Slurm holds it down', () => {
    const joined = nodeLine('tst-joined')
    expect(powerOf(parseNodeStates(joined.replace('State=MIXED', 'State=IDLE+POWERED_DOWN'))[0])).toBe('on')
    expect(powerOf(parseNodeStates(joined.replace('State=MIXED', 'State=DOWN+NOT_RESPONDING'))[0])).toBe('off')
    // The same flags on a CLOUD node are its power state.
    expect(powerOf(parseNodeStates(joined.replace('State=MIXED', 'State=IDLE+CLOUD+POWERED_DOWN'))[0])).toBe('off')
  })
})

describe('state, drain and responding', () => {
  it('come from the base state and the flags', () => {
    expect(baseState(byName('tst-big-0001'))).toBe('alloc')
    expect(baseState(byName('tst-joined'))).toBe('mixed')
    expect(baseState(byName('tst-small-0005'))).toBe('down')
    expect(isDrained(byName('tst-small-0004'))).toBe(true)
    expect(isDrained(byName('tst-small-0006'))).toBe(false)
    expect(isResponding(byName('tst-small-0001'))).toBe(false)
    expect(isResponding(byName('tst-joined'))).toBe(true)
  })
})
