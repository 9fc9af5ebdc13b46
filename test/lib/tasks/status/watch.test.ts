// `citc status --watch` without a terminal or a cluster: the redraw on a fake terminal stream, the
// loop on a fake clock, the session kept between refreshes (a memory node counts the connections).
import {describe, expect, it} from 'vitest'

import type {ClusterRecord} from '../../../../src/lib/cluster/schema.js'
import type {StatusDocument} from '../../../../src/lib/tasks/status/cluster-status.js'
import {type Refresh, refreshJson, refreshShower, statusSource, watchLoop} from '../../../../src/lib/tasks/status/watch.js'
import {ANSI, fitToTerminal, plainScreen, type ScreenStream, terminalScreen} from '../../../../src/lib/tasks/status/watch-screen.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

/** A terminal that records what is written, with a size and a resize event. */
function fakeTerminal(columns = 80, rows = 24) {
  const writes: string[] = []
  const listeners = new Set<() => void>()
  const stream: ScreenStream & {resize(c: number, r: number): void} = {
    isTTY: true,
    columns,
    rows,
    write: (s: string) => writes.push(s),
    on: (_e, l) => listeners.add(l),
    off: (_e, l) => listeners.delete(l),
    resize(c, r) {
      this.columns = c
      this.rows = r
      for (const l of listeners) l()
    },
  }
  return {stream, writes, listeners}
}

const hasEscape = (s: string) => s.includes('\u001B')

describe('fitToTerminal', () => {
  it('cuts lines to the width and the frame to the height, saying how many lines were left out', () => {
    expect(fitToTerminal(['a'.repeat(30), 'short'], 21, 10)).toEqual([`${'a'.repeat(19)}…`, 'short'])
    const lines = Array.from({length: 30}, (_, i) => `line ${i}`)
    const fit = fitToTerminal(lines, 80, 10)
    expect(fit).toHaveLength(9)
    expect(fit.slice(0, 8)).toEqual(lines.slice(0, 8))
    expect(fit[8]).toBe('… 22 more lines: make the terminal taller (citc status prints them all)')
  })
})

describe('terminalScreen', () => {
  it('draws the first frame with the cursor hidden, then goes back up over it and overwrites each line', () => {
    const {stream, writes} = fakeTerminal()
    const screen = terminalScreen(stream)
    screen.show('head 1', 'a\nb\nc')
    expect(writes).toHaveLength(1)
    expect(writes[0]).toBe(`${ANSI.beginSync}${ANSI.hideCursor}head 1${ANSI.eraseLineEnd}\na${ANSI.eraseLineEnd}\nb${ANSI.eraseLineEnd}\nc${ANSI.eraseLineEnd}\n${ANSI.eraseDown}${ANSI.endSync}`)
    // No full clear (it flickers): up over the 4 lines drawn, overwrite, erase what a longer frame left.
    screen.show('head 2', 'x')
    expect(writes[1]).toBe(`${ANSI.beginSync}\r${ANSI.up(4)}head 2${ANSI.eraseLineEnd}\nx${ANSI.eraseLineEnd}\n${ANSI.eraseDown}${ANSI.endSync}`)
    expect(writes[1]).not.toContain(ANSI.clearScreen)
    screen.show('head 3', 'y\nz')
    expect(writes[2].startsWith(`${ANSI.beginSync}\r${ANSI.up(2)}head 3`)).toBe(true)
    screen.end()
    expect(writes[3]).toBe(`\r${ANSI.eraseLineEnd}${ANSI.showCursor}`)
  })

  it('never climbs more lines than the terminal has, and clears once after a resize', () => {
    const {stream, writes, listeners} = fakeTerminal(40, 6)
    const screen = terminalScreen(stream)
    screen.show('head', Array.from({length: 50}, (_, i) => `row ${i}`).join('\n'))
    expect(writes[0].split('\n')).toHaveLength(6) // 5 lines (rows - 1), then the erase after the last newline
    screen.show('head', 'one')
    expect(writes[1]).toContain(ANSI.up(5))
    stream.resize(100, 30)
    screen.show('head', 'two')
    expect(writes[2].startsWith(`${ANSI.beginSync}${ANSI.clearScreen}head`)).toBe(true)
    screen.show('head', 'three')
    expect(writes[3]).toContain(ANSI.up(2))
    screen.end()
    expect(listeners.size).toBe(0)
  })
})

describe('plainScreen', () => {
  it('prints one refresh after another under its header, without escape codes', () => {
    const writes: string[] = []
    const screen = plainScreen({write: (s: string) => writes.push(s)})
    screen.show('T1', 'a\nb')
    screen.show('T2', 'c')
    screen.end()
    expect(writes.join('')).toBe('=== T1 ===\na\nb\n\n=== T2 ===\nc\n')
  })
})

const doc = (cluster: string): StatusDocument => ({
  cluster,
  provider: 'local',
  origin: 'created',
  managementNode: 'this machine',
  controller: {up: true, confPath: '/etc/slurm.conf'},
  nodes: [],
  summary: {up: 0, 'powering-up': 0, 'powering-down': 0, down: 0},
  waitingJobs: [],
  needsAdmin: [],
})

describe('watchLoop on a fake clock', () => {
  it('refreshes every interval, shows a failed refresh in place of the figures and goes on, until aborted', async () => {
    let t = Date.UTC(2026, 10, 26, 4, 0, 0)
    const sleeps: number[] = []
    const abort = new AbortController()
    const answers: Array<() => Promise<StatusDocument>> = [async () => doc('one'), async () => Promise.reject(new Error('cannot reach the node')), async () => doc('three')]
    const shown: Array<{r: Refresh; at: string}> = []
    const n = await watchLoop({
      source: {refresh: () => answers.shift()!()},
      show: (r, at) => shown.push({r, at: at.toISOString()}),
      intervalMs: 10_000,
      signal: abort.signal,
      now: () => new Date(t),
      sleep: async (ms) => {
        sleeps.push(ms)
        t += ms
        if (answers.length === 0) abort.abort()
      },
    })
    expect(n).toBe(3)
    expect(sleeps).toEqual([10_000, 10_000, 10_000])
    expect(shown.map((s) => s.at)).toEqual(['2026-11-26T04:00:00.000Z', '2026-11-26T04:00:10.000Z', '2026-11-26T04:00:20.000Z'])
    expect(shown.map((s) => (s.r.ok ? s.r.doc.cluster : s.r.error.message))).toEqual(['one', 'cannot reach the node', 'three'])
  })

  it('ends at once when aborted in the middle of a refresh that never answers', async () => {
    const abort = new AbortController()
    const shown: Refresh[] = []
    const n = watchLoop({source: {refresh: () => new Promise(() => {})}, show: (r) => shown.push(r), intervalMs: 5000, signal: abort.signal})
    setTimeout(() => abort.abort(), 20)
    expect(await n).toBe(0)
    expect(shown).toEqual([])
  })

  it('shows an error with what to do on a terminal, and as one JSON line with --json', () => {
    const {stream, writes} = fakeTerminal()
    const at = new Date(Date.UTC(2026, 10, 26, 4, 0, 7))
    const shower = refreshShower({json: false, out: stream, what: 'citc status -c lab', intervalS: 10})
    shower.show({ok: false, error: new Error('slurmctld does not answer')}, at)
    expect(writes[0]).toContain('Every 10 s: citc status -c lab — 04:00:07 UTC (Ctrl-C to stop)')
    expect(writes[0]).toContain('Refresh failed: slurmctld does not answer')
    const json = JSON.parse(refreshJson({ok: true, doc: doc('lab')}, at))
    expect(json).toMatchObject({refreshedAt: '2026-11-26T04:00:07Z', cluster: 'lab', controller: {up: true}})
    expect(JSON.parse(refreshJson({ok: false, error: new Error('gone')}, at))).toMatchObject({refreshedAt: '2026-11-26T04:00:07Z', error: {message: 'gone', kind: 'unexpected'}})
    const lines: string[] = []
    const plain = refreshShower({json: false, out: {write: (s: string) => lines.push(s)}, what: 'citc status -c lab', intervalS: 10})
    plain.show({ok: true, doc: doc('lab')}, at)
    expect(lines[0].startsWith('=== 2026-11-26T04:00:07Z citc status -c lab (every 10 s) ===\nCluster lab (local, created)')).toBe(true)
    expect(hasEscape(lines.join(''))).toBe(false)
  })
})

describe('statusSource', () => {
  const record = {name: 'lab', provider: 'local', origin: 'created', createdAt: '2026-11-26T00:00:00Z', mgmt: {host: 'localhost', port: 22, user: 'root'}, slurm: {confPath: '/etc/slurm.conf', programsDir: '/usr/local/libexec/citc'}} as ClusterRecord

  it('keeps one session between refreshes, and connects again after a refresh that failed', async () => {
    const node = new MemoryTransport()
    let closed = 0
    node.close = async () => void closed++
    let connects = 0
    const source = statusSource(record, async () => {
      connects++
      return node
    })
    node.on(/scontrol ping/, {exitCode: 1, stdout: 'Slurmctld(primary) at vm is DOWN\n'})
    const signal = new AbortController().signal
    expect((await source.refresh(signal)).controller.up).toBe(false)
    expect((await source.refresh(signal)).controller.up).toBe(false)
    expect([connects, closed]).toEqual([1, 0])
    node.once(/scontrol ping/, () => Promise.reject(new Error('the connection is closed')))
    await expect(source.refresh(signal)).rejects.toThrow('the connection is closed')
    expect([connects, closed]).toEqual([1, 1])
    await source.refresh(signal)
    expect(connects).toBe(2)
    await source.close()
    expect(closed).toBe(2)
  })

  it('a session that opens after Ctrl-C is closed at once, not kept', async () => {
    const node = new MemoryTransport()
    let closed = 0
    node.close = async () => void closed++
    const abort = new AbortController()
    const source = statusSource(record, async () => {
      abort.abort()
      return node
    })
    await expect(source.refresh(abort.signal)).rejects.toThrow('interrupted')
    expect(closed).toBe(1)
    await source.close()
    expect(closed).toBe(1)
  })
})
