import { Elysia } from 'elysia'

/**
 * The floor of pfin's stack for the `me` benchmark (me.bench.ts): Elysia answering GET /v1/me
 * with the bytes pfin answers (BODY) and the headers CONTRACT §6 and §7 make pfin send on every
 * response: content-type, X-Request-Id and the six X-RateLimit-* headers, counted and timed
 * like pfin's. It reads the Authorization header and refuses a request without one, but checks
 * no key, scope or tier: pfin, which must, can come close to this server's rate, not above it.
 * Prints `floor (me) listening on http://HOST:PORT`; SIGTERM stops it.
 */
const body = process.env.BODY ?? '{}'
const MINUTE = 60_000
const DAY = 86_400_000
const perMinute = 1_000_000_000
const perDay = 1_000_000_000
let served = 0
/** Ids as long as pfin's: 18 fixed hex digits, then a counter printed as 14. */
const REQUEST_ID_PREFIX = `req_${'f'.repeat(18)}`

const secondsLeft = (now: number, size: number) => String(Math.max(1, Math.ceil((size - (now % size)) / 1000)))

const app = new Elysia().get(
  '/v1/me',
  ({ request, set, status }) => {
    if (!request.headers.get('authorization')) return status(401, 'unauthorized')
    const now = Date.now()
    served += 1
    set.headers['content-type'] = 'application/json'
    set.headers['x-request-id'] = REQUEST_ID_PREFIX + (2 ** 52 + served).toString(16)
    set.headers['x-ratelimit-limit-minute'] = String(perMinute)
    set.headers['x-ratelimit-remaining-minute'] = String(perMinute - served)
    set.headers['x-ratelimit-reset-minute'] = secondsLeft(now, MINUTE)
    set.headers['x-ratelimit-limit-day'] = String(perDay)
    set.headers['x-ratelimit-remaining-day'] = String(perDay - served)
    set.headers['x-ratelimit-reset-day'] = secondsLeft(now, DAY)
    return body
  },
  // Like pfin's routes: nothing is parsed before the handler runs.
  { parse: 'none' },
)
app.listen({ hostname: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0) })
console.log(`floor (me) listening on http://${app.server?.hostname}:${app.server?.port}`)
process.once('SIGTERM', async () => {
  await app.stop()
  process.exit(0)
})
