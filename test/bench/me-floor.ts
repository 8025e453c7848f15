import { Elysia } from 'elysia'
import { entityTagOfBody } from '../../src/platform/etag.ts'
import { setFloorHeaders } from './floor-headers.ts'

/**
 * The floor of pfin's stack for the `me` benchmark (me.bench.ts): Elysia answering GET /v1/me
 * with the bytes pfin answers (BODY) and the headers every pfin answer carries (floor-headers.ts),
 * plus the ETag a single resource carries (CONTRACT §25), made once as pfin makes it once per
 * key. It reads the Authorization header and refuses a request without one, but checks no key,
 * scope or tier: pfin, which must, can come close to this server's rate, not above it.
 * Prints `floor (me) listening on http://HOST:PORT`; SIGTERM stops it.
 */
const body = process.env.BODY ?? '{}'
const etag = entityTagOfBody(body) ?? '""'

const app = new Elysia().get(
  '/v1/me',
  // Written so that Elysia calls it without an await, as pfin's routes are (pipeline.ts): no
  // `return f(` (Elysia would read the handler as async and await every answer).
  ({ request, set }) => {
    if (!request.headers.get('authorization')) {
      set.status = 401
      return 'unauthorized'
    }
    setFloorHeaders(set.headers)
    set.headers.etag = etag
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
