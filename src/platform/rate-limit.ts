import type { ControlStore, RateLimitRow } from '../db/control/store.ts'

/**
 * Fixed-window rate limits (CONTRACT §7): the UTC minute and the UTC day, per bucket
 * (`key:<id>` or `ip:<address>`). Counted in memory and written behind to the control
 * database, so counts survive a restart without a durable commit per request.
 */
export interface Limits {
  perMinute: number
  perDay: number
}

export interface RateState {
  limits: Limits
  minuteCount: number
  dayCount: number
  resetMinute: number
  resetDay: number
  /** Seconds until the exhausted window resets, on a refusal. */
  retryAfter?: number
}

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

  private state(row: RateLimitRow, limits: Limits, now: number): RateState {
    return {
      limits,
      minuteCount: row.minuteCount,
      dayCount: row.dayCount,
      resetMinute: Math.max(1, Math.ceil((MINUTE - (now % MINUTE)) / 1000)),
      resetDay: Math.max(1, Math.ceil((DAY - (now % DAY)) / 1000)),
    }
  }

  /** Counts one request, unless a window is already full: then it is refused and not counted. */
  consume(bucket: string, limits: Limits): { allowed: boolean; state: RateState } {
    const now = this.now()
    const row = this.counter(bucket, now)
    const minuteFull = row.minuteCount >= limits.perMinute
    const dayFull = row.dayCount >= limits.perDay
    if (minuteFull || dayFull) {
      const state = this.state(row, limits, now)
      state.retryAfter = dayFull ? state.resetDay : state.resetMinute
      return { allowed: false, state }
    }
    row.minuteCount += 1
    row.dayCount += 1
    this.dirty.add(bucket)
    return { allowed: true, state: this.state(row, limits, now) }
  }

  /** The bucket's state without counting (for uncounted routes). */
  peek(bucket: string, limits: Limits): RateState {
    const now = this.now()
    return this.state(this.counter(bucket, now), limits, now)
  }

  flush(): void {
    if (this.dirty.size > 0) {
      const rows = [...this.dirty].map((bucket) => ({ ...(this.counters.get(bucket) as RateLimitRow) }))
      this.dirty.clear()
      this.control.saveCounters(rows)
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

export function rateLimitHeaders(state: RateState): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit-minute': String(state.limits.perMinute),
    'x-ratelimit-remaining-minute': String(Math.max(0, state.limits.perMinute - state.minuteCount)),
    'x-ratelimit-reset-minute': String(state.resetMinute),
    'x-ratelimit-limit-day': String(state.limits.perDay),
    'x-ratelimit-remaining-day': String(Math.max(0, state.limits.perDay - state.dayCount)),
    'x-ratelimit-reset-day': String(state.resetDay),
  }
  if (state.retryAfter !== undefined) headers['retry-after'] = String(state.retryAfter)
  return headers
}
