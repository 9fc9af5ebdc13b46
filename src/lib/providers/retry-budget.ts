// Retrying a cloud call within a time budget (issue #11). The drivers switch the SDKs' own retries
// off (the AWS SDK's standard mode retries ICE, a 500, and gives up on throttling after 3 attempts;
// google-auth-library and the OCI SDK are told not to retry) and retry here instead: only
// throttled/transient failures, with full-jitter exponential backoff (delay = random ·
// min(cap, base · 2^n): AWS Architecture Blog, "Exponential Backoff And Jitter"), never past the
// budget (cloud-driver.ts: 120 s, well inside ResumeTimeout), so a failure still reaches Slurm long
// before ResumeTimeout. Clock, sleep and randomness are injected for tests.
import {type NodeFailure, retryable} from './node-failures.js'

export interface BackoffOptions {
  budgetMs: number
  baseMs: number
  capMs: number
  random?: () => number
  /** An upper bound on the number of delays, so a random() stuck at 0 cannot loop for ever. */
  maxRetries?: number
}

/**
 * Full-jitter exponential delays whose sum never exceeds budgetMs: the schedule ends at the first
 * delay that would not fit (sleeping into the very end of the budget only to try once more when the
 * caller's deadline has passed helps no one).
 */
export function* backoffDelays({budgetMs, baseMs, capMs, random = Math.random, maxRetries = 50}: BackoffOptions): Generator<number> {
  let spent = 0
  for (let n = 0; n < maxRetries; n++) {
    const ceiling = Math.min(capMs, baseMs * 2 ** n)
    const delay = Math.floor(Math.min(1, Math.max(0, random())) * ceiling)
    if (spent + delay > budgetMs) return
    spent += delay
    yield delay
  }
}

export interface RetryOptions extends BackoffOptions {
  sleep?: (ms: number) => Promise<void>
  now?: () => number
  /** Called before each wait, for the driver's log line (one per retry). */
  onRetry?: (failure: NodeFailure, attempt: number, delayMs: number) => void
}

export type RetryResult<T> = {ok: true; value: T; attempts: number} | {ok: false; failure: NodeFailure; attempts: number}

/**
 * Call fn until it succeeds, fails with a non-retryable class (returned at once, after one attempt),
 * or the budget is spent — time inside fn counts too (measured with now()), so slow answers use up the
 * budget as the waits do. Never throws for fn's errors: each becomes a NodeFailure through classify.
 */
export async function withRetries<T>(
  fn: (attempt: number) => Promise<T>,
  classify: (e: unknown) => NodeFailure,
  opts: RetryOptions,
): Promise<RetryResult<T>> {
  const now = opts.now ?? Date.now
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const deadline = now() + opts.budgetMs
  const delays = backoffDelays(opts)
  for (let attempt = 1; ; attempt++) {
    try {
      return {ok: true, value: await fn(attempt), attempts: attempt}
    } catch (error) {
      const failure = classify(error)
      if (!retryable(failure)) return {ok: false, failure, attempts: attempt}
      const next = delays.next()
      if (next.done || now() + next.value > deadline) return {ok: false, failure, attempts: attempt}
      opts.onRetry?.(failure, attempt, next.value)
      await sleep(next.value)
    }
  }
}
