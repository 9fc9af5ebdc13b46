// A vitest reporter that writes how long each test file ran, for test/file-order.ts's schedule:
//   CITC_TEST_TIMINGS=test/file-durations.json npx vitest run --reporter=default --reporter=./test/file-timings.ts
// (.ci/run passes it). A file runs from when its worker takes it (onTestModuleQueued, sent by the
// worker) to its end, hooks included — a cluster's setup is most of a locked file's time. A locked
// file's time starts when the one before it ended if it was taken earlier: the wait on the system lock
// is not its own.
import {readFileSync, writeFileSync} from 'node:fs'
import type {Reporter, TestModule} from 'vitest/node'

import {fileKey, takesSystemLock} from './file-order.js'

export interface FileRun {
  file: string
  start: number
  end: number
  locked: boolean
}

/** Seconds per file, a locked file's counted from the later of its start and the previous locked file's end. */
export function fileSeconds(runs: FileRun[]): Record<string, number> {
  const seconds: Record<string, number> = {}
  let lockFreeAt = 0
  for (const run of [...runs].sort((a, b) => a.end - b.end)) {
    const start = run.locked ? Math.max(run.start, lockFreeAt) : run.start
    if (run.locked) lockFreeAt = run.end
    seconds[run.file] = Math.round((run.end - start) / 100) / 10
  }
  return Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => (a < b ? -1 : 1)))
}

export default class FileTimings implements Reporter {
  private readonly started = new Map<string, number>()
  private readonly runs: FileRun[] = []
  private root = process.cwd()

  onInit(vitest: {config: {root: string}}) {
    this.root = vitest.config.root
  }

  onTestModuleQueued(module: TestModule) {
    this.started.set(module.moduleId, Date.now())
  }

  onTestModuleEnd(module: TestModule) {
    const start = this.started.get(module.moduleId)
    if (start === undefined) return
    this.runs.push({
      file: fileKey(this.root, module.moduleId),
      start,
      end: Date.now(),
      locked: takesSystemLock(readFileSync(module.moduleId, 'utf8')),
    })
  }

  onTestRunEnd() {
    const out = process.env.CITC_TEST_TIMINGS
    if (!out || this.runs.length === 0) return
    const first = Math.min(...this.runs.map((r) => r.start))
    const last = Math.max(...this.runs.map((r) => r.end))
    const seconds = fileSeconds(this.runs)
    const lockedChainSeconds = this.runs.filter((r) => r.locked).reduce((sum, r) => sum + seconds[r.file], 0)
    writeFileSync(
      out,
      JSON.stringify(
        {
          about: 'Seconds each test file ran in a whole run (test/file-timings.ts wrote it); test/file-order.ts orders the files by them.',
          wallSeconds: Math.round((last - first) / 1000),
          lockedChainSeconds: Math.round(lockedChainSeconds),
          seconds,
        },
        null,
        2,
      ) + '\n',
    )
  }
}
