import type { ControlStore, RateLimitRow } from '../db/control/store.ts'

/**
 * Fixed-window rate limits (CONTRACT §7): the UTC minute and the UTC day, per bucket
 * (`key:<id>` or `ip:<address>`). Counted in memory and written behind to the control
 * database, so counts survive a restart without a durable commit per request.
 */

/** A pair of limits, with the header text of each made once rather than per response. */
export class Limits {
  readonly perMinuteText: string
  readonly perDayText: string
  constructor(
    readonly perMinute: number,
    readonly perDay: number,
  ) {
    this.perMinuteText = String(perMinute)
    this.perDayText = String(perDay)
  }
}

/** Where the X-RateLimit-* headers go: Elysia's `set.headers`, or a plain record. */
export type HeaderSink = Record<string, string | number>

const MINUTE = 60_000
const DAY = 86_400_000
/** Idle buckets are dropped from memory past this many (their counts stay in the database). */
const MAX_BUCKETS = 100_000

export class RateLimiter {
  private readonly counters = new Map<string, RateLimitRow>()
  private readonly dirty = new Set<string>()

  constructor(
    private readonly control: ControlStore,
    private readonly now: () => number = Date.now,
  ) {}

  private counter(bucket: string, now: number): RateLimitRow {
    let row = this.counters.get(bucket)
    if (!row) {
      row = this.control.findCounter(bucket) ?? { bucket, minuteWindow: 0, minuteCount: 0, dayWindow: 0, dayCount: 0 }
      this.counters.set(bucket, row)
    }
    const minute = Math.floor(now / MINUTE)
    const day = Math.floor(now / DAY)
    if (row.minuteWindow !== minute) {
      row.minuteWindow = minute
      row.minuteCount = 0
    }
    if (row.dayWindow !== day) {
      row.dayWindow = day
      row.dayCount = 0
    }
    return row
  }

  /**
   * Counts one request, unless a window is already full: then it is refused and not counted.
   * Writes the six X-RateLimit-* headers (and Retry-After on a refusal) into `headers`.
   * Returns 0 when allowed, otherwise the seconds until the full window resets.
   */
  consume(bucket: string, limits: Limits, headers: HeaderSink, count = 1): number {
    const now = this.now()
    const row = this.counter(bucket, now)
    // `count` requests at once (the rest of a JSON-RPC batch) are counted all or none.
    const minuteFull = row.minuteCount + count > limits.perMinute
    const dayFull = row.dayCount + count > limits.perDay
    if (!minuteFull && !dayFull) {
      row.minuteCount += count
      row.dayCount += count
      this.dirty.add(bucket)
    }
    writeHeaders(headers, row, limits, now)
    if (!minuteFull && !dayFull) return 0
    const retryAfter = dayFull ? secondsLeft(now, DAY) : secondsLeft(now, MINUTE)
    headers['retry-after'] = String(retryAfter)
    return retryAfter
  }

  /** Writes the bucket's headers without counting (for uncounted routes and unknown paths). */
  peek(bucket: string, limits: Limits, headers: HeaderSink): void {
    const now = this.now()
    writeHeaders(headers, this.counter(bucket, now), limits, now)
  }

  /**
   * Drops the stored counters of past days: without it every client address ever seen kept a
   * row in control.db (about 75 bytes each; an IPv6 client has addresses without end).
   */
  purge(): void {
    this.control.purgeCounters(Math.floor(this.now() / DAY))
  }

  flush(): void {
    if (this.dirty.size > 0) {
      const rows = [...this.dirty].map((bucket) => ({ ...(this.counters.get(bucket) as RateLimitRow) }))
      this.control.saveCounters(rows)
      // Only once written: a write refused (control.db busy) is made again at the next flush.
      this.dirty.clear()
    }
    if (this.counters.size > MAX_BUCKETS) {
      const today = Math.floor(this.now() / DAY)
      for (const [bucket, row] of this.counters) {
        if (this.counters.size <= MAX_BUCKETS / 2) break
        if (!this.dirty.has(bucket) && row.dayWindow <= today) this.counters.delete(bucket)
      }
    }
  }
}

/** Whole seconds until the current window of `size` ms ends (at least 1). */
function secondsLeft(now: number, size: number): number {
  return Math.max(1, Math.ceil((size - (now % size)) / 1000))
}

/** The two reset headers' text, the same for every request of one second: made once a second. */
const resets = { second: Number.NaN, minute: '', day: '' }

function writeHeaders(headers: HeaderSink, row: RateLimitRow, limits: Limits, now: number): void {
  const second = Math.floor(now / 1000)
  if (second !== resets.second) {
    resets.second = second
    resets.minute = String(secondsLeft(now, MINUTE))
    resets.day = String(secondsLeft(now, DAY))
  }
  headers['x-ratelimit-limit-minute'] = limits.perMinuteText
  headers['x-ratelimit-remaining-minute'] = String(Math.max(0, limits.perMinute - row.minuteCount))
  headers['x-ratelimit-reset-minute'] = resets.minute
  headers['x-ratelimit-limit-day'] = limits.perDayText
  headers['x-ratelimit-remaining-day'] = String(Math.max(0, limits.perDay - row.dayCount))
  headers['x-ratelimit-reset-day'] = resets.day
}
