// A token bucket shared by every call one driver makes (issue #11: "bounded concurrency behind a rate
// limit"). Clouds meter mutating calls per account and region the same way (EC2: a bucket that
// refills at a fixed rate up to a burst: Amazon EC2 API Reference, "Request throttling"): asking faster only buys throttling errors. When
// the cloud throttles anyway (other callers share the account), drain() empties the bucket so every
// waiting worker slows down together, not just the one that was refused.

export interface RateLimit {
  /** Tokens added per second. */
  perSecond: number
  /** Most tokens held (the calls allowed at once after a quiet spell). */
  burst: number
}

export class TokenBucket {
  private tokens: number
  private last: number
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1)) throw new Error(`a rate limit needs perSecond > 0 and burst >= 1 (got ${limit.perSecond}/s, burst ${limit.burst})`)
    this.tokens = limit.burst
    this.last = now()
  }

  private refill() {
    const t = this.now()
    this.tokens = Math.min(this.limit.burst, this.tokens + ((t - this.last) / 1000) * this.limit.perSecond)
    this.last = t
  }

  /** Milliseconds until one token is there (0: now). */
  private wait(): number {
    this.refill()
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.limit.perSecond) * 1000)
  }

  /**
   * Wait for a token and take it; callers are served in order. Resolves false, taking nothing, when the
   * token would come after `deadline` (epoch ms): the caller gives up instead of sleeping past it.
   */
  take(deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    const turn = this.queue.then(async () => {
      for (let i = 0; i < 10_000; i++) {
        const ms = this.wait()
        if (ms === 0) {
          this.tokens -= 1
          return true
        }
        if (this.now() + ms > deadline) return false
        await this.sleep(ms)
      }
      return false
    })
    this.queue = turn.then(() => undefined)
    return turn
  }

  /** The cloud said "slow down": start again from an empty bucket. */
  drain() {
    this.refill()
    this.tokens = Math.min(this.tokens, 0)
  }
}
