import {describe, expect, it} from 'vitest'

import {aggregateUsage, type AggregateOptions, NO_NAME, UNKNOWN_SHAPE, type UsageRow} from '../../../src/lib/usage/aggregate.js'
import type {SacctJob} from '../../../src/lib/usage/sacct.js'

const T = (iso: string) => Date.parse(iso + 'Z') / 1000
const H = 3600

const nodeShapes = new Map([
  ['c-0001', 'c5.xlarge'],
  ['c-0002', 'c5.xlarge'],
  ['c-0003', 'c5.xlarge'],
  ['g-0001', 'g4dn.xlarge'],
])

let id = 0
/** A finished 1-node job of 4 CPUs and 8 GiB on c-0001, unless told otherwise. */
function job(more: Partial<SacctJob> & {start: number}): SacctJob {
  return {
    jobId: String(++id),
    user: 'alice',
    account: 'physics',
    partition: 'compute',
    nodeList: 'c-0001',
    cpus: 4,
    gpus: 0,
    memMB: 8192,
    nodes: 1,
    elapsedSeconds: 0,
    state: 'COMPLETED',
    end: more.start + H,
    ...more,
  }
}

const since = T('2026-11-01T00:00:00')
const until = T('2026-11-08T00:00:00')
const opts = (more: Partial<AggregateOptions> = {}): AggregateOptions => ({by: 'account', since, until, now: until, nodeShapes, ...more})
const key = (rows: UsageRow[], k: string) => rows.find((r) => r.key === k)

describe('aggregateUsage', () => {
  it('has no rows and zero totals without jobs', () => {
    const r = aggregateUsage([], opts())
    expect(r.rows).toEqual([])
    expect(r.totals).toEqual({
      key: 'total',
      jobs: 0,
      running: 0,
      cpuSeconds: 0,
      cpuHours: 0,
      gpuHours: 0,
      memGBHours: 0,
      nodeHours: 0,
      shapes: {},
      cost: null,
      unpricedNodeHours: 0,
    })
    expect(r.unpricedShapes).toEqual([])
  })

  it('counts CPU-, GPU-, memory- and node-hours of a job, and its cost', () => {
    const jobs = [job({start: T('2026-11-02T10:00:00'), cpus: 4, gpus: 1, memMB: 16 * 1024, nodeList: 'g-0001', end: T('2026-11-02T12:30:00')})]
    const r = aggregateUsage(jobs, opts({prices: new Map([['g4dn.xlarge', 0.5]])}))
    expect(r.rows).toEqual([
      {
        key: 'physics',
        jobs: 1,
        running: 0,
        cpuSeconds: 4 * 2.5 * H,
        cpuHours: 10,
        gpuHours: 2.5,
        memGBHours: 40,
        nodeHours: 2.5,
        shapes: {'g4dn.xlarge': 2.5},
        cost: 1.25,
        unpricedNodeHours: 0,
      },
    ])
    expect(r.totals).toEqual({...r.rows[0], key: 'total'})
  })

  it('groups by account and by user, rows sorted by key', () => {
    const jobs = [
      job({start: T('2026-11-02T00:00:00'), account: 'physics', user: 'bob'}),
      job({start: T('2026-11-02T00:00:00'), account: 'chemistry', user: 'alice'}),
      job({start: T('2026-11-03T00:00:00'), account: 'physics', user: 'alice'}),
      job({start: T('2026-11-03T00:00:00'), account: '', user: ''}),
    ]
    const byAccount = aggregateUsage(jobs, opts())
    expect(byAccount.rows.map((r) => [r.key, r.jobs, r.cpuHours])).toEqual([
      [NO_NAME, 1, 4],
      ['chemistry', 1, 4],
      ['physics', 2, 8],
    ])
    const byUser = aggregateUsage(jobs, opts({by: 'user'}))
    expect(byUser.rows.map((r) => [r.key, r.jobs])).toEqual([
      [NO_NAME, 1],
      ['alice', 2],
      ['bob', 1],
    ])
    expect(byUser.totals.jobs).toBe(4)
    expect(byUser.totals.cpuHours).toBe(16)
  })

  it('counts only the part of a job inside the window', () => {
    const jobs = [
      // 2 h before the window, 1 h inside it.
      job({start: since - 2 * H, end: since + H}),
      // 1 h inside, 3 h after.
      job({start: until - H, end: until + 3 * H}),
      // Entirely before, ending exactly at `since`, and entirely after.
      job({start: since - 5 * H, end: since - H}),
      job({start: since - H, end: since}),
      job({start: until, end: until + H}),
    ]
    const r = aggregateUsage(jobs, opts())
    expect(r.totals.jobs).toBe(2)
    expect(r.totals.nodeHours).toBe(2)
    expect(r.totals.cpuHours).toBe(8)
  })

  it('counts a running job up to now, and says it is running', () => {
    const now = T('2026-11-05T12:00:00')
    const r = aggregateUsage([job({start: now - 3 * H, end: undefined, state: 'RUNNING'}), job({start: now - 10 * H})], opts({now}))
    expect(r.totals.running).toBe(1)
    expect(r.totals.jobs).toBe(2)
    expect(r.totals.nodeHours).toBe(4)
    // A clock behind the job's start: a job of no length, not negative hours.
    const early = aggregateUsage([job({start: now + 60, end: undefined})], opts({now}))
    expect(early.totals).toMatchObject({jobs: 1, running: 1, nodeHours: 0})
  })

  it('counts a job of no length that started in the window, with no usage', () => {
    const t = T('2026-11-03T00:00:00')
    const r = aggregateUsage([job({start: t, end: t})], opts({by: 'day'}))
    expect(r.rows.map((x) => [x.key, x.jobs, x.nodeHours])).toEqual([['2026-11-03', 1, 0]])
    expect(aggregateUsage([job({start: until, end: until})], opts()).totals.jobs).toBe(0)
    expect(aggregateUsage([job({start: since, end: since})], opts()).totals.jobs).toBe(1)
  })

  it('--by day splits a job at midnight UTC, counting it on both days', () => {
    const jobs = [job({start: T('2026-11-03T23:00:00'), end: T('2026-11-05T02:00:00'), cpus: 2})]
    const r = aggregateUsage(jobs, opts({by: 'day'}))
    expect(r.rows.map((x) => [x.key, x.jobs, x.nodeHours, x.cpuHours])).toEqual([
      ['2026-11-03', 1, 1, 2],
      ['2026-11-04', 1, 24, 48],
      ['2026-11-05', 1, 2, 4],
    ])
    expect(r.totals).toMatchObject({jobs: 1, nodeHours: 27, cpuHours: 54})
  })

  it('splits a job over several shapes by node, and attributes unknown nodes to UNKNOWN_SHAPE', () => {
    // 3 c5.xlarge nodes, 1 g4dn.xlarge, 1 node citc does not know: 5 nodes for 2 hours.
    const jobs = [job({start: T('2026-11-02T00:00:00'), end: T('2026-11-02T02:00:00'), nodeList: 'c-[0001-0003],g-0001,old-0007', nodes: 5, cpus: 10, gpus: 1, memMB: 10 * 1024})]
    const prices = new Map([
      ['c5.xlarge', 0.17],
      ['g4dn.xlarge', 0.5],
    ])
    const byShape = aggregateUsage(jobs, opts({by: 'shape', prices}))
    expect(byShape.rows.map((x) => [x.key, x.jobs, x.nodeHours, x.cpuHours, x.gpuHours, x.memGBHours, x.cost])).toEqual([
      [UNKNOWN_SHAPE, 1, 2, 4, 0.4, 4, null],
      ['c5.xlarge', 1, 6, 12, 1.2, 12, 1.02],
      ['g4dn.xlarge', 1, 2, 4, 0.4, 4, 1],
    ])
    expect(byShape.totals).toMatchObject({
      jobs: 1,
      nodeHours: 10,
      cpuHours: 20,
      gpuHours: 2,
      shapes: {[UNKNOWN_SHAPE]: 2, 'c5.xlarge': 6, 'g4dn.xlarge': 2},
      cost: 2.02,
      unpricedNodeHours: 2,
    })
    expect(byShape.unpricedShapes).toEqual([UNKNOWN_SHAPE])
    // The same job by account: one row with every shape.
    const byAccount = aggregateUsage(jobs, opts({prices}))
    expect(byAccount.rows).toEqual([{...byShape.totals, key: 'physics'}])
  })

  it('puts a job without a node list on UNKNOWN_SHAPE with its node count', () => {
    const r = aggregateUsage([job({start: T('2026-11-02T00:00:00'), nodeList: '', nodes: 3})], opts({by: 'shape'}))
    expect(r.rows.map((x) => [x.key, x.nodeHours, x.cpuHours])).toEqual([[UNKNOWN_SHAPE, 3, 4]])
  })

  it('reports cost as null where no shape has a price, and lists the unpriced shapes', () => {
    const jobs = [job({start: T('2026-11-02T00:00:00'), account: 'a'}), job({start: T('2026-11-02T00:00:00'), account: 'b', nodeList: 'g-0001'})]
    const r = aggregateUsage(jobs, opts({prices: new Map([['g4dn.xlarge', 0.5]])}))
    expect(r.rows.map((x) => [x.key, x.cost, x.unpricedNodeHours])).toEqual([
      ['a', null, 1],
      ['b', 0.5, 0],
    ])
    expect(r.totals).toMatchObject({cost: 0.5, unpricedNodeHours: 1})
    expect(r.unpricedShapes).toEqual(['c5.xlarge'])
    expect(aggregateUsage(jobs, opts()).unpricedShapes).toEqual(['c5.xlarge', 'g4dn.xlarge'])
  })

  it('gives the same report whatever the order of the jobs', () => {
    const jobs = Array.from({length: 50}, (_, i) =>
      job({start: since + i * 7919, end: since + i * 7919 + (i % 7) * 3001, account: `acct${i % 5}`, user: `u${i % 3}`, nodeList: i % 4 === 0 ? 'g-0001' : 'c-[0001-0002]', nodes: i % 4 === 0 ? 1 : 2}),
    )
    for (const by of ['account', 'user', 'shape', 'day'] as const) {
      const forward = aggregateUsage(jobs, opts({by}))
      const backward = aggregateUsage([...jobs].reverse(), opts({by}))
      expect(JSON.stringify(backward), by).toBe(JSON.stringify(forward))
    }
  })

  it('refuses an empty window', () => {
    expect(() => aggregateUsage([], opts({since: until}))).toThrow(RangeError)
  })

  it('keeps precision: 10,000 one-second jobs make 10,000 CPU-seconds exactly', () => {
    const jobs = Array.from({length: 10_000}, (_, i) => job({start: since + i, end: since + i + 1, cpus: 1}))
    const r = aggregateUsage(jobs, opts())
    expect(key(r.rows, 'physics')?.cpuSeconds).toBe(10_000)
    expect(r.totals.cpuHours).toBe(2.777778)
  })
})
