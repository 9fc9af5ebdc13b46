// The test files' order (test/file-order.ts) and their timings (test/file-timings.ts), against a model of
// vitest's pool written here on its own: each file goes, in order, to the worker free first; a locked
// file's worker waits until the lock is free.
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {E2E, FAULTS, INTEGRATION} from '../vitest.projects.js'
import FileOrder, {fileOrder, type FileToRun, takesSystemLock} from './file-order.js'
import {fileSeconds} from './file-timings.js'

const ROOT = join(import.meta.dirname, '..')

/**
 * The pool: the span of the run and the seconds workers spent waiting on the lock, with each file taking
 * `actual(file)`; `avoidable`: the part of that wait while a file that takes no lock was still to come.
 */
function runPool(order: FileToRun[], workers: number, actual: (f: FileToRun) => number = (f) => f.seconds) {
  const freeAt = Array.from({length: workers}, () => 0)
  let lockFreeAt = 0
  let waited = 0
  let avoidable = 0
  for (const [i, file] of order.entries()) {
    const worker = freeAt.indexOf(Math.min(...freeAt))
    let start = freeAt[worker]
    if (file.locked) {
      const wait = Math.max(0, lockFreeAt - start)
      waited += wait
      if (order.slice(i + 1).some((f) => !f.locked)) avoidable += wait
      start = Math.max(start, lockFreeAt)
      lockFreeAt = start + actual(file)
    }
    freeAt[worker] = start + actual(file)
  }
  return {span: Math.max(...freeAt), waited, avoidable}
}

const file = (key: string, seconds: number, kind: 'locked' | 'unit' | 'other' = 'other'): FileToRun => ({key, seconds, locked: kind === 'locked', unit: kind === 'unit'})

/** A suite like ours: seven locked files of a few minutes, thirty others from seconds to minutes, a hundred small unit files. */
const suite: FileToRun[] = [
  ...[620, 480, 400, 300, 240, 150, 60].map((s, i) => file(`locked-${i}`, s, 'locked')),
  ...Array.from({length: 30}, (_, i) => file(`other-${i}`, 5 + ((i * 37) % 200))),
  ...Array.from({length: 100}, (_, i) => file(`unit-${i}`, 0.2 + (i % 7) * 0.3, 'unit')),
]
/** Vitest's own order on a fresh clone: the e2e project (most locked files) first. */
const lockedFirst = [...suite.filter((f) => f.locked), ...suite.filter((f) => !f.locked && !f.unit), ...suite.filter((f) => f.unit)]

describe('the test files order', () => {
  it('hands out every file once, the unit files one after another', () => {
    const order = fileOrder(suite, 2)
    expect([...order].sort((a, b) => (a.key < b.key ? -1 : 1))).toEqual([...suite].sort((a, b) => (a.key < b.key ? -1 : 1)))
    const units = order.flatMap((f, i) => (f.unit ? [i] : []))
    expect(units.at(-1)! - units[0]).toBe(units.length - 1)
  })

  it('keeps the locked files in a chain no worker waits on, and ends sooner than with them first', () => {
    const ours = runPool(fileOrder(suite, 2), 2)
    const theirs = runPool(lockedFirst, 2)
    expect(ours.waited).toBe(0)
    expect(theirs.waited).toBeGreaterThan(1000)
    expect(ours.span).toBeLessThan(theirs.span * 0.8)
  })

  it('waits little when the files take 30% more or less than their timings say', () => {
    const rand = fc.sample(fc.double({min: 0.7, max: 1.3, noNaN: true}), {numRuns: suite.length, seed: 42})
    const actual = (f: FileToRun) => f.seconds * rand[suite.indexOf(f)]
    const ours = runPool(fileOrder(suite, 2), 2, actual)
    const theirs = runPool(lockedFirst, 2, actual)
    expect(ours.waited).toBeLessThan(theirs.waited / 5)
    expect(ours.span).toBeLessThan(theirs.span)
  })

  it('never takes longer than the locked chain (and the unit files), or an even share of the work plus its longest piece', () => {
    const spec = fc.record({
      locked: fc.array(fc.integer({min: 1, max: 600}), {maxLength: 8}),
      other: fc.array(fc.integer({min: 1, max: 300}), {maxLength: 40}),
      unit: fc.array(fc.integer({min: 1, max: 5}), {maxLength: 30}),
      workers: fc.integer({min: 1, max: 4}),
    })
    fc.assert(
      fc.property(spec, ({locked, other, unit, workers}) => {
        const files = [
          ...locked.map((s, i) => file(`l${i}`, s, 'locked')),
          ...other.map((s, i) => file(`o${i}`, s)),
          ...unit.map((s, i) => file(`u${i}`, s, 'unit')),
        ]
        const {span, avoidable} = runPool(fileOrder(files, workers), workers)
        const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
        const longestPiece = Math.max(0, ...other, sum(unit), ...locked)
        // (The unit files go out in a row, so they may hold the chain up by as long as they take.)
        expect(span).toBeLessThanOrEqual(Math.max(sum(locked) + sum(unit), (sum(locked) + sum(other) + sum(unit)) / workers + longestPiece) + 1e-6)
        // With exact timings a worker waits on the lock only when nothing else is left to hand out.
        expect(avoidable).toBe(0)
      }),
      {numRuns: 300},
    )
  })

  it('orders the real files with their CI timings so that no worker waits on the lock', async () => {
    const testFiles = readdirSync(join(ROOT, 'test'), {recursive: true, encoding: 'utf8'})
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `test/${f.split('\\').join('/')}`)
    const locked = testFiles.filter((f) => takesSystemLock(readFileSync(join(ROOT, f), 'utf8')))
    // The files that build a cluster or run the management playbook on this machine (test/helpers/system-lock.ts).
    expect(locked).toEqual(expect.arrayContaining(['test/e2e/local-cluster.test.ts', 'test/e2e/joined-machines.test.ts', 'test/faults/local-cluster-faults.test.ts']))
    const inList = (list: string[], f: string) => list.some((e) => (e.endsWith('/**/*.test.ts') ? f.startsWith(e.slice(0, -'**/*.test.ts'.length)) : e === f))
    const project = (f: string) =>
      inList(E2E, f) ? 'e2e' : inList(FAULTS, f) ? 'faults' : inList(INTEGRATION, f) ? 'integration' : 'unit'
    const specs = testFiles.map((f) => ({
      moduleId: join(ROOT, f),
      project: {name: project(f), config: {isolate: project(f) !== 'unit', sequence: {groupOrder: 0}}},
    }))
    const sequencer = new FileOrder({config: {root: ROOT, maxWorkers: 2}} as never)
    const plan = sequencer.plan(specs as never)!
    expect(plan.map((f) => f.key).sort()).toEqual([...testFiles].sort())
    expect(plan.filter((f) => f.locked).map((f) => f.key).sort()).toEqual([...locked].sort())
    expect(((await sequencer.sort(specs as never)) as unknown as typeof specs).map((s) => s.moduleId)).toEqual(plan.map((f) => join(ROOT, f.key)))
    // Every file has its time (test/file-durations.json; a new one its project's median): the locked
    // ones are handed out each as the one before should end, and a worker waits on the lock only once
    // nothing else is left. The run takes the locked files' chain, give or take the unit files.
    const ours = runPool(plan, 2)
    const chain = plan.filter((f) => f.locked).reduce((sum, f) => sum + f.seconds, 0)
    const unitSeconds = plan.filter((f) => f.unit).reduce((sum, f) => sum + f.seconds, 0)
    expect(ours.avoidable).toBe(0)
    expect(ours.span).toBeLessThanOrEqual(Math.max(chain + unitSeconds, plan.reduce((sum, f) => sum + f.seconds, 0) / 2 + Math.max(...plan.map((f) => f.seconds))))
    expect(ours.span).toBeLessThan(runPool([...plan.filter((f) => f.locked), ...plan.filter((f) => !f.locked)], 2).span)
  })
})

describe('the test files timings', () => {
  it('counts a locked file from when the one before it ended, not while it waited on the lock', () => {
    const s = 1000
    const seconds = fileSeconds([
      {file: 'a', start: 0, end: 300 * s, locked: true},
      {file: 'b', start: 1 * s, end: 500 * s, locked: true}, // taken at 1 s, waited until a ended at 300 s
      {file: 'c', start: 2 * s, end: 40 * s, locked: false},
      {file: 'd', start: 600 * s, end: 700 * s, locked: true}, // taken after b ended: its own 100 s
    ])
    expect(seconds).toEqual({a: 300, b: 200, c: 38, d: 100})
  })
})
