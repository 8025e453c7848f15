/**
 * The headers every pfin answer carries (CONTRACT §6, §7, §25), made the way a plain Elysia
 * server would make them: the floors (me-floor.ts, list-floor.ts) send exactly these, so pfin is
 * compared with a server that pays for the same bytes on the wire and checks nothing.
 */
const MINUTE = 60_000
const DAY = 86_400_000
const perMinute = 1_000_000_000
const perDay = 1_000_000_000
let served = 0
/** Ids as long as pfin's and made as cheaply: 24 fixed hex digits, then a small counter printed as 8. */
const REQUEST_ID_PREFIX = `req_${'f'.repeat(24)}`

const secondsLeft = (now: number, size: number) => String(Math.max(1, Math.ceil((size - (now % size)) / 1000)))
/** The reset headers change once a second: made once a second, as pfin makes them. */
const resets = { second: Number.NaN, minute: '', day: '' }

export function setFloorHeaders(headers: Record<string, string | number>): void {
  const now = Date.now()
  served += 1
  const second = Math.floor(now / 1000)
  if (second !== resets.second) {
    resets.second = second
    resets.minute = secondsLeft(now, MINUTE)
    resets.day = secondsLeft(now, DAY)
  }
  headers['cache-control'] = 'no-store'
  headers['x-content-type-options'] = 'nosniff'
  headers['content-type'] = 'application/json'
  headers['x-request-id'] = REQUEST_ID_PREFIX + (0x1000_0000 + served).toString(16)
  headers['x-ratelimit-limit-minute'] = String(perMinute)
  headers['x-ratelimit-remaining-minute'] = String(perMinute - served)
  headers['x-ratelimit-reset-minute'] = resets.minute
  headers['x-ratelimit-limit-day'] = String(perDay)
  headers['x-ratelimit-remaining-day'] = String(perDay - served)
  headers['x-ratelimit-reset-day'] = resets.day
}
