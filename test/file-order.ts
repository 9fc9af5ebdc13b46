// The order vitest hands test files to its workers (vitest.config.ts sequence.sequencer).
// Seven files take this machine's services for their whole run (test/helpers/system-lock.ts: a whole
// cluster, the management playbook), so they run one after another. Vitest's own order (project by
// project, larger files first, with no timings on a fresh clone) starts them first, on both workers:
// one worker then waits on the lock for most of a cluster's life, and the suite takes as long as the
// locked files plus everything else. This order keeps the locked files in one chain — each handed out
// when the one before it should end — while the other worker runs the rest, longest first, the unit
// project last as the small files that even out the end.
// The timings are CI's, per file (test/file-durations.json: `npx tsx bench/test-durations.ts REPORT`
// writes it from a run's JSON report); a file without one counts as DEFAULT_SECONDS. A wrong timing
// costs a short wait, not a wrong result: the lock still keeps the locked files apart.
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

export const DEFAULT_SECONDS = 10

/**
 * The order in which `workers` workers, each taking the next file when it is free (vitest's pool), run
 * the locked files back to back on whichever worker ends the one before: a list schedule simulated with
 * the expected times. At each hand-out the worker free first takes the longest locked file when the lock
 * is free by then, else the longest other file; the unit files come last, together.
 */
export function fileOrder(files: FileToRun[], workers: number): FileToRun[] {
  const longestFirst = (a: FileToRun, b: FileToRun) => b.seconds - a.seconds || (a.key < b.key ? -1 : 1)
  const locked = files.filter((f) => f.locked).sort(longestFirst)
  const other = files.filter((f) => !f.locked && !f.unit).sort(longestFirst)
  const unit = files.filter((f) => !f.locked && f.unit).sort(longestFirst)
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
      const file = other.shift()!
      freeAt[worker] = now + file.seconds
      order.push(file)
    }
  }
  return [...order, ...unit]
}

/** test/file-durations.json: seconds by FileKey (absent or unreadable: every file DEFAULT_SECONDS). */
export function readDurations(root: string): Record<FileKey, number> {
  try {
    return JSON.parse(readFileSync(join(root, 'test/file-durations.json'), 'utf8')).seconds ?? {}
  } catch {
    return {}
  }
}

/** Whether a test file takes the system lock: it calls test/helpers/system-lock.ts's lockSystem. */
export const takesSystemLock = (source: string) => /\blockSystem\(/.test(source)

export default class FileOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const durations = readDurations(root)
    const byKey = new Map<FileKey, TestSpecification>()
    const toRun = files.map((spec): FileToRun => {
      const key = relative(root, spec.moduleId).split('\\').join('/')
      byKey.set(key, spec)
      return {
        key,
        seconds: durations[key] ?? DEFAULT_SECONDS,
        locked: takesSystemLock(readFileSync(spec.moduleId, 'utf8')),
        unit: spec.project.config.isolate === false,
      }
    })
    // Other group orders would run one group after another: the simulation assumes one pool.
    if (new Set(files.map((f) => f.project.config.sequence.groupOrder)).size > 1) return super.sort(files)
    return fileOrder(toRun, this.ctx.config.maxWorkers ?? 2).map((f) => byKey.get(f.key)!)
  }
}
