// A DriverContext on a fake clock for the node-driver tests: sleep(ms) records ms and moves the clock on
// at once, so retries and backoff run without real waiting and their schedule can be asserted.
import type {DriverContext} from '../../src/lib/providers/types.js'

export function fakeDriverContext(budgetMs = 300_000, start = Date.UTC(2026, 10, 23, 12)) {
  let t = start
  const sleeps: number[] = []
  const logs: string[] = []
  const ctx: DriverContext = {
    log: (m) => void logs.push(m),
    now: () => t,
    sleep: async (ms) => {
      sleeps.push(ms)
      t += ms
    },
    deadline: t + budgetMs,
  }
  return {ctx, sleeps, logs}
}
