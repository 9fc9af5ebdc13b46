// How `citc node sync` runs (nodes/sync-service.ts): the service's loop (one run every N, a failing run
// not fatal, stopped between runs by SIGTERM/SIGINT — real listeners, fired with process.emit), the
// flags' seconds as the planner's milliseconds, and the one-line summary.
import {describe, expect, it, vi} from 'vitest'

import {syncLoop, syncService, syncSettings, syncSummary} from '../../../src/lib/nodes/sync-service.js'

describe('syncLoop', () => {
  it('runs again every period until stopped; a failing run does not end it; a run is not cut short', async () => {
    const stop = new AbortController()
    const runs: number[] = []
    let finished = 0
    const result = await syncLoop(
      20,
      async () => {
        runs.push(Date.now())
        if (runs.length === 2) throw new Error('slurmctld down')
        if (runs.length === 4) stop.abort() // asked to stop during a run: the run ends, no other starts
        await new Promise((r) => setTimeout(r, 5))
        finished++
      },
      stop.signal,
    )
    expect(result).toEqual({stopped: true})
    expect(runs).toHaveLength(4)
    expect(finished).toBe(3)
    for (let i = 1; i < runs.length; i++) expect(runs[i] - runs[i - 1]).toBeGreaterThanOrEqual(18)
  })

  it('stops during the wait between runs, without waiting the period out', async () => {
    // On vitest's fake clock: the loop looks at the signal every 0.5 s of its wait, so it must end
    // once the clock moved that far, whatever the machine's speed (a bound on real time did not).
    vi.useFakeTimers()
    try {
      const stop = new AbortController()
      let runs = 0
      let ended = false
      const loop = syncLoop(60_000, async () => void runs++, stop.signal).then(() => void (ended = true))
      await vi.advanceTimersByTimeAsync(50)
      expect(ended).toBe(false) // waiting for the next run
      stop.abort()
      await vi.advanceTimersByTimeAsync(500)
      expect(ended).toBe(true)
      await loop
      expect(runs).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('syncService', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s stops it; its handlers are gone afterwards', async (sig) => {
    let runs = 0
    const before = {SIGTERM: process.listenerCount('SIGTERM'), SIGINT: process.listenerCount('SIGINT')}
    setTimeout(() => process.emit(sig), 30)
    expect(await syncService(10, async () => void runs++)).toEqual({stopped: true})
    expect(runs).toBeGreaterThanOrEqual(1)
    expect({SIGTERM: process.listenerCount('SIGTERM'), SIGINT: process.listenerCount('SIGINT')}).toEqual(before)
  })

  it('a run stuck after the first signal leaves the second to Node’s default (its handler is gone at once)', async () => {
    const before = process.listenerCount('SIGTERM')
    let release!: () => void
    let countAfterSignal = -1
    const stuck = new Promise<void>((resolve) => (release = resolve))
    const service = syncService(10, async () => {
      process.emit('SIGTERM')
      countAfterSignal = process.listenerCount('SIGTERM')
      await stuck
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(countAfterSignal).toBe(before)
    release()
    expect(await service).toEqual({stopped: true})
  })
})

describe('syncSettings and syncSummary', () => {
  it('seconds to milliseconds, absent ones left out (the planner’s defaults)', () => {
    expect(syncSettings({orphanGrace: 30, stuck: 600})).toEqual({orphanGraceMs: 30_000, stuckMs: 600_000})
    expect(syncSettings({startLost: 400})).toEqual({startLostMs: 400_000})
    expect(syncSettings({})).toEqual({})
  })

  it('one line: counts, failures, nodes kept down for an admin', () => {
    expect(syncSummary({actions: [], adminDown: [], instances: 2, nodes: 4})).toBe('node sync: 4 node(s), 2 instance(s), 0 action(s)')
    expect(syncSummary({actions: [{ok: true}, {ok: false}], adminDown: [{name: 'c-1', reason: 'citc: quota: x'}], instances: 1, nodes: 3})).toBe(
      'node sync: 3 node(s), 1 instance(s), 2 action(s), 1 FAILED; DOWN for an admin (quota, permission or setting): c-1',
    )
  })
})
