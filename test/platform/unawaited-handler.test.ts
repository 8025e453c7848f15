import { afterAll, beforeAll, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config.ts'
import { closePlatform, createApp, createPlatform } from '../../src/server.ts'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * Pins that Elysia calls every /v1 route's pipeline without awaiting it, and that a failure
 * after the pipeline went asynchronous is still pfin's problem answer.
 *
 * Elysia decides from a handler's source text whether to await what it returns; pfin's handler
 * read as async, so every request paid an await (0.5–1 µs on GET /v1/me in process). The route is now
 * mounted as a bound function, which Elysia calls directly; its error hook then sees only what
 * the handler throws, so a Promise that fails (a key's first use, a write's body) is answered by
 * the pipeline with the same problem answer. Without that, Bun answered it with a 500 HTML page.
 * A bound function also hides which parts of the context it uses: Elysia sends what the pipeline
 * put in `set` only because the app's hooks use `set` too, which the first answer here pins.
 */

let server: TestServer
let owner: { id: string; key: string; keyId: string }
beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '1000', ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
  owner = await server.owner()
})
afterAll(() => server.stop())

test("Elysia's composed handler awaits no /v1 route's pipeline", () => {
  const platform = createPlatform(loadConfig({ DATA_DIR: tempDir(), PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'off' }), () => {})
  try {
    const app = createApp(platform) as unknown as { routes: { method: string; path: string; compile(): unknown }[] }
    const v1 = app.routes.filter((route) => route.path.startsWith('/v1/'))
    expect(v1.length).toBeGreaterThan(50)
    const awaited = v1.filter((route) => String(route.compile()).includes('await handler(')).map((route) => `${route.method} ${route.path}`)
    expect(awaited).toEqual([])
  } finally {
    closePlatform(platform)
  }
})

test('a read answered synchronously carries the headers the pipeline set', async () => {
  const res = await server.request('GET', '/v1/me', { key: owner.key })
  expect({
    status: res.status,
    id: res.headers.get('x-request-id')?.startsWith('req_'),
    cache: res.headers.get('cache-control'),
    limit: res.headers.get('x-ratelimit-limit-minute'),
    etag: res.headers.get('etag')?.startsWith('"'),
  }).toEqual({ status: 200, id: true, cache: 'no-store', limit: '1000', etag: true })
})

test("a wrong secret for a real key id, checked by argon2 off the request's turn, is a 401 problem", async () => {
  const res = await server.request('GET', '/v1/me', { key: `pfk_${owner.keyId}_${'A'.repeat(43)}` })
  expect({ status: res.status, type: res.headers.get('content-type'), code: res.json?.type, id: res.headers.get('x-request-id')?.startsWith('req_') }).toEqual({
    status: 401,
    type: 'application/problem+json',
    code: 'urn:pfin:problem:unauthorized',
    id: true,
  })
})

test('a write whose body fails validation, read after the pipeline went asynchronous, is a 422 problem that changes nothing', async () => {
  const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: '' } })
  expect({ status: res.status, type: res.headers.get('content-type'), code: res.json?.type, cache: res.headers.get('cache-control') }).toEqual({
    status: 422,
    type: 'application/problem+json',
    code: 'urn:pfin:problem:validation_failed',
    cache: 'no-store',
  })
  expect((await server.request('GET', '/v1/accounts', { key: owner.key })).json.data).toEqual([])
})
