// Waiting in tests: poll a condition, bounded, and say what was awaited when it times out.
import {sleep} from '../../src/lib/proc.js'

export async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000, stepMs = 20): Promise<void> {
  return waitForAsync(what, async () => cond(), timeoutMs, stepMs)
}

/** waitFor with an async condition (one that runs a child process without blocking this process's servers). */
export async function waitForAsync(what: string, cond: () => Promise<boolean>, timeoutMs = 10_000, stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(stepMs)
  }
}
