// node-events.json: the node programs' counters, their lock across real processes (node children
// loading node-events.ts with tsx, as lock.test.ts does), and the two families the collector renders.
import {spawn} from 'node:child_process'
import {mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, describe, expect, it} from 'vitest'

import {addNodeEvents, emptyNodeEvents, NODE_EVENTS_FILE, nodeEventLines, readNodeEvents, recordNodeEvents} from '../../../src/lib/metrics/node-events.js'

const NODE_EVENTS_TS = fileURLToPath(new URL('../../../src/lib/metrics/node-events.ts', import.meta.url))
const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'citc-node-events-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

describe('the counters', () => {
  it('add requests by shape and failures by shape and reason', () => {
    const a = addNodeEvents(emptyNodeEvents(), {resumeRequests: [{shape: 's'}, {shape: 's'}, {shape: 'b'}], startFailures: [{shape: 's', reason: 'capacity'}]})
    const b = addNodeEvents(a, {startFailures: [{shape: 's', reason: 'capacity'}, {shape: 's', reason: 'other'}]})
    expect(b).toEqual({version: 1, resumeRequests: {s: 2, b: 1}, startFailures: {s: {capacity: 2, other: 1}}})
    // The input is not changed.
    expect(a.startFailures.s).toEqual({capacity: 1})
  })

  it('render as two counter families with shape and reason labels', () => {
    const lines = nodeEventLines({version: 1, resumeRequests: {'c5.xlarge': 3}, startFailures: {'c5.xlarge': {quota: 1}}})
    expect(Object.fromEntries(lines)).toEqual({
      citc_node_resume_requests_total: ['citc_node_resume_requests_total{shape="c5.xlarge"} 3'],
      citc_node_start_failures_total: ['citc_node_start_failures_total{shape="c5.xlarge",reason="quota"} 1'],
    })
  })
})

describe('recordNodeEvents', () => {
  it('keeps the counts across runs in node-events.json, and leaves no lock or temporary file', () => {
    const dir = tempDir()
    expect(readNodeEvents(dir)).toEqual(emptyNodeEvents())
    recordNodeEvents(dir, {resumeRequests: [{shape: 's'}]})
    recordNodeEvents(dir, {resumeRequests: [{shape: 's'}], startFailures: [{shape: 's', reason: 'auth'}]})
    expect(readNodeEvents(dir)).toEqual({version: 1, resumeRequests: {s: 2}, startFailures: {s: {auth: 1}}})
    expect(readdirSync(dir)).toEqual([NODE_EVENTS_FILE])
    expect(statSync(join(dir, NODE_EVENTS_FILE)).mode & 0o777).toBe(0o644)
  })

  it('starts a damaged file afresh and says so; the collector is told it is damaged', () => {
    const dir = tempDir()
    writeFileSync(join(dir, NODE_EVENTS_FILE), '{"version":1,"resumeRequests":{"s":')
    expect(() => readNodeEvents(dir)).toThrow(/node-events\.json is damaged.*remove it/)
    expect(recordNodeEvents(dir, {resumeRequests: [{shape: 's'}]}).reset).toMatch(/damaged/)
    expect(readNodeEvents(dir).resumeRequests).toEqual({s: 1})
  })

  it('takes over a lock whose program died', () => {
    const dir = tempDir()
    // A pid that cannot be running (above pid_max on Linux).
    writeFileSync(join(dir, `${NODE_EVENTS_FILE}.lock`), '99999999 1 x\n')
    recordNodeEvents(dir, {resumeRequests: [{shape: 's'}]}, {waitMs: 1000})
    expect(readNodeEvents(dir).resumeRequests).toEqual({s: 1})
    expect(readdirSync(dir)).toEqual([NODE_EVENTS_FILE])
  })

  it('takes over a lock older than staleMs even if its pid runs (a reused pid, a hung program)', () => {
    const dir = tempDir()
    const lock = join(dir, `${NODE_EVENTS_FILE}.lock`)
    writeFileSync(lock, `${process.pid} 1 x\n`)
    const old = new Date(Date.now() - 120_000)
    utimesSync(lock, old, old)
    recordNodeEvents(dir, {resumeRequests: [{shape: 's'}]}, {waitMs: 1000})
    expect(readNodeEvents(dir).resumeRequests).toEqual({s: 1})
  })

  it('waits a bounded time for a live holder, then says who holds it', () => {
    const dir = tempDir()
    writeFileSync(join(dir, `${NODE_EVENTS_FILE}.lock`), `${process.pid} 1 x\n`)
    const started = Date.now()
    expect(() => recordNodeEvents(dir, {resumeRequests: [{shape: 's'}]}, {waitMs: 300})).toThrow(new RegExp(`held by pid ${process.pid} for more than 300 ms: counts of this run are lost`))
    // The 300-ms option bounded the wait, not the 5-s default: anything under 5 s proves it, and leaves
    // a loaded machine 4.7 s of slack.
    expect(Date.now() - started).toBeLessThan(5000)
    expect(readNodeEvents(dir)).toEqual(emptyNodeEvents())
  })

  it('loses no count when programs record at the same time (real processes)', async () => {
    const dir = tempDir()
    const programs = 4
    const each = 50
    const script = `import {recordNodeEvents} from ${JSON.stringify(NODE_EVENTS_TS)}
for (let i = 0; i < ${each}; i++) recordNodeEvents(process.argv[1], {resumeRequests: [{shape: 's'}], startFailures: i % 2 ? [{shape: 's', reason: 'capacity'}] : []})`
    const codes = await Promise.all(
      Array.from({length: programs}, () =>
        new Promise<number | null>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], {stdio: ['ignore', 'ignore', 'inherit']})
          const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
          child.on('error', reject)
          child.on('exit', (code) => {
            clearTimeout(timer)
            resolve(code)
          })
        }),
      ),
    )
    expect(codes).toEqual(Array(programs).fill(0))
    expect(readNodeEvents(dir)).toEqual({version: 1, resumeRequests: {s: programs * each}, startFailures: {s: {capacity: (programs * each) / 2}}})
    expect(readdirSync(dir)).toEqual([NODE_EVENTS_FILE])
  }, 90_000)
})
