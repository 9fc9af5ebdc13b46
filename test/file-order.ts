// The order vitest hands test files to its workers (vitest.config.ts sequence.sequencer).
// A few files take this machine's services for their whole run (test/helpers/system-lock.ts: a whole
// cluster, the management playbook), so they run one after another: 2,136 s of CI's 2,559-s run (CI
// fd66bd3's timings). Vitest's own order (project by project, larger files first, with no timings on a
// fresh clone) starts two of them first, one per worker: one worker then waits on the lock for the
// other's whole cluster (10 min), and again later. This order keeps the locked files in one chain —
// each handed out when the one before it should end — while the other worker runs the rest, longest
// first, the unit project after them in one piece (its files share a worker's module cache only when
// they come one after another).
// The timings are CI's, per file (test/file-durations.json, written by the reporter test/file-timings.ts,
// which .ci/run passes); a file without one counts as its project's median file, and with no timings at
// all vitest's own order stands. A wrong timing costs a short wait, not a wrong result: the lock still
// keeps the locked files apart.
import {readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {BaseSequencer, type TestSpecification} from 'vitest/node'

/** A file's key in test/file-durations.json and in the schedule: its path from the root, with / (a file is in one project). */
export type FileKey = string

export interface FileToRun {
  key: FileKey
  /** Its expected wall time, from CI. */
  seconds: number
  /** It takes the system lock (runs alone among the locked). */
  locked: boolean
  /** Unit files share their worker's module cache (isolate: false) only when they come one after another: they stay together. */
  unit: boolean
}

/** A file with no timing of its own (new since the timings were taken) counts as its project's median file. */
export function medianByProject(durations: Record<FileKey, number>, projectOf: (key: FileKey) => string | undefined): Map<string, number> {
  const byProject = new Map<string, number[]>()
  for (const [key, seconds] of Object.entries(durations)) {
    const project = projectOf(key)
    if (project !== undefined) byProject.set(project, [...(byProject.get(project) ?? []), seconds])
  }
  return new Map([...byProject].map(([project, xs]) => [project, [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]]))
}

/**
 * The order in which `workers` workers, each taking the next file when it is free (vitest's pool), run
 * the locked files back to back on whichever worker ends the one before: a list schedule simulated with
 * the expected times. At each hand-out the worker free first takes the longest locked file when the lock
 * is free by then (or nothing else is left), else the longest other file; the unit files go after the
 * others, together, as one piece.
 */
export function fileOrder(files: FileToRun[], workers: number): FileToRun[] {
  const longestFirst = (a: FileToRun, b: FileToRun) => b.seconds - a.seconds || (a.key < b.key ? -1 : 1)
  const locked = files.filter((f) => f.locked).sort(longestFirst)
  const unit = files.filter((f) => !f.locked && f.unit).sort(longestFirst)
  const other = [...files.filter((f) => !f.locked && !f.unit).sort(longestFirst).map((f) => [f]), ...(unit.length > 0 ? [unit] : [])]
  const freeAt = Array.from({length: Math.max(1, workers)}, () => 0)
  let lockFreeAt = 0
  const order: FileToRun[] = []
  while (locked.length > 0 || other.length > 0) {
    const worker = freeAt.indexOf(Math.min(...freeAt))
    const now = freeAt[worker]
    if (locked.length > 0 && (lockFreeAt <= now || other.length === 0)) {
      const file = locked.shift()!
      lockFreeAt = Math.max(now, lockFreeAt) + file.seconds
      freeAt[worker] = lockFreeAt
      order.push(file)
    } else {
      // A piece's files go out one after another, each to the worker free first (the unit files may
      // spread over both workers, as in the pool).
      for (const f of other.shift()!) {
        const next = freeAt.indexOf(Math.min(...freeAt))
        freeAt[next] += f.seconds
        order.push(f)
      }
    }
  }
  return order
}

/** test/file-durations.json's seconds by FileKey (absent or unreadable: none, and vitest's order stands). */
export function readDurations(root: string): Record<FileKey, number> {
  try {
    return JSON.parse(readFileSync(join(root, 'test/file-durations.json'), 'utf8')).seconds ?? {}
  } catch {
    return {}
  }
}

/** Whether a test file takes the system lock: it calls test/helpers/system-lock.ts's lockSystem. */
export const takesSystemLock = (source: string) => /\blockSystem\(/.test(source)

/** A test file's FileKey, from its absolute path (a TestSpecification's or TestModule's moduleId). */
export const fileKey = (root: string, moduleId: string): FileKey => relative(root, moduleId).split('\\').join('/')

export default class FileOrder extends BaseSequencer {
  /** The files as they will be handed out, with the times and kinds the order came from; undefined: vitest's own order stands. */
  plan(files: TestSpecification[]): FileToRun[] | undefined {
    const root = this.ctx.config.root
    const durations = readDurations(root)
    // Other group orders would run one group after another: the simulation assumes one pool.
    if (Object.keys(durations).length === 0 || new Set(files.map((f) => f.project.config.sequence.groupOrder)).size > 1) return undefined
    const keyOf = (spec: TestSpecification) => fileKey(root, spec.moduleId)
    const projects = new Map(files.map((spec) => [keyOf(spec), spec.project.name]))
    const medians = medianByProject(durations, (key) => projects.get(key))
    const anyFile = medianByProject(durations, () => 'all').get('all')!
    const toRun = files.map(
      (spec): FileToRun => ({
        key: keyOf(spec),
        seconds: durations[keyOf(spec)] ?? medians.get(spec.project.name) ?? anyFile,
        locked: takesSystemLock(readFileSync(spec.moduleId, 'utf8')),
        unit: spec.project.config.isolate === false,
      }),
    )
    return fileOrder(toRun, this.ctx.config.maxWorkers ?? 2)
  }

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const plan = this.plan(files)
    if (!plan) return super.sort(files)
    const byKey = new Map(files.map((spec) => [fileKey(this.ctx.config.root, spec.moduleId), spec]))
    return plan.map((f) => byKey.get(f.key)!)
  }
}
