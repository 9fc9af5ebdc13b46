// The step journal of a long operation (create), so `--resume` skips what is done.
//
// Stored as JSON lines in the cluster's `journal` file, one step a line:
//   {"step":"terraform-apply","at":"2026-11-21T12:01:02.000Z","data":{...}}
// Every change rewrites the file atomically (mode 0600), so a crash leaves the old or the new
// journal, never half a line. Steps keep the order they were first marked done in.
//
//   const journal = new Journal(registry.paths(name).journal)
//   if (!journal.done('terraform-apply')) { ...; journal.markDone('terraform-apply', {outputs}) }
import {readFileSync, rmSync} from 'node:fs'

import writeFileAtomic from 'write-file-atomic'

import {InvalidInputError} from '../errors.js'

export interface JournalEntry {
  step: string
  /** ISO time the step was (last) marked done. */
  at: string
  data?: unknown
}

export class Journal {
  readonly file: string
  private entries: JournalEntry[] | undefined

  constructor(file: string) {
    this.file = file
  }

  /** (Re)read the journal from disk; a missing file is an empty journal. */
  load(): this {
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      this.entries = []
      return this
    }
    const entries: JournalEntry[] = []
    const lines = text.split('\n')
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '') continue
      let v: Partial<JournalEntry> | undefined
      try {
        v = JSON.parse(line) as Partial<JournalEntry>
      } catch {
        v = undefined
      }
      if (!v || typeof v !== 'object' || typeof v.step !== 'string' || v.step === '' || typeof v.at !== 'string') {
        throw new InvalidInputError(
          [{where: `${this.file}:${i + 1}:1`, message: 'not a journal entry ({"step": ..., "at": ...})'}],
          'the journal records the steps done for --resume; delete it to start over without resuming',
        )
      }
      const entry: JournalEntry = {step: v.step, at: v.at}
      if (v.data !== undefined) entry.data = v.data
      const at = entries.findIndex((e) => e.step === entry.step)
      if (at >= 0) entries[at] = entry
      else entries.push(entry)
    }
    this.entries = entries
    return this
  }

  private list(): JournalEntry[] {
    if (!this.entries) this.load()
    return this.entries!
  }

  /** Whether `step` is done. */
  done(step: string): boolean {
    return this.list().some((e) => e.step === step)
  }

  /** The data recorded with `step`, if it is done and had any. */
  data<T = unknown>(step: string): T | undefined {
    return this.list().find((e) => e.step === step)?.data as T | undefined
  }

  /** Record `step` as done (again: its time and data are replaced, its place kept), and write the journal. */
  markDone(step: string, data?: unknown): void {
    if (!step) throw new Error('journal: a step needs a name')
    const entry: JournalEntry = {step, at: new Date().toISOString()}
    if (data !== undefined) entry.data = JSON.parse(JSON.stringify(data)) as unknown
    const entries = [...this.list()]
    const at = entries.findIndex((e) => e.step === step)
    if (at >= 0) entries[at] = entry
    else entries.push(entry)
    writeFileAtomic.sync(this.file, entries.map((e) => JSON.stringify(e) + '\n').join(''), {mode: 0o600})
    this.entries = entries
  }

  /** Forget every step (deletes the file). */
  reset(): void {
    rmSync(this.file, {force: true})
    this.entries = []
  }

  /** The steps done, in order. */
  steps(): JournalEntry[] {
    return this.list().map((e) => ({...e}))
  }
}
