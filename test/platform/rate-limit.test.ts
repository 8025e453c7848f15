import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { expectProblem, RATE_LIMIT_HEADERS, sendRaw, startTestServer, tempDir, type TestResponse, type TestServer } from '../support/harness.ts'
import { awaitFreshMinute, forgeKey, intHeader, makeFixture, openFile, sleep } from './fixtures.ts'

/** CONTRACT §7: headers on every response, counting, 429, the anonymous bucket, persistence. */

// Some tests wait for a fresh UTC minute (up to 15 s); bunfig's test timeout is not applied.
setDefaultTimeout(30_000)

function expectRateHeaders(res: TestResponse, label: string) {
  const missing = RATE_LIMIT_HEADERS.filter((name) => !res.headers.has(name))
  if (missing.length) throw new Error(`${label} (status ${res.status}) lacks ${missing.join(', ')}`)
  for (const name of RATE_LIMIT_HEADERS) intHeader(res, name)
  expect(intHeader(res, 'x-ratelimit-reset-minute')).toBeGreaterThanOrEqual(1)
  expect(intHeader(res, 'x-ratelimit-reset-minute')).toBeLessThanOrEqual(60)
  expect(intHeader(res, 'x-ratelimit-reset-day')).toBeGreaterThanOrEqual(1)
  expect(intHeader(res, 'x-ratelimit-reset-day')).toBeLessThanOrEqual(86_400)
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
}

describe('the six X-RateLimit-* headers are on every kind of response', () => {
  let server: TestServer
  let owner: { id: string; key: string; keyId: string }
  const fixture = makeFixture()
  beforeAll(async () => {
    server = await startTestServer({ extraRoutes: fixture.routes, env: { RATE_LIMIT_PER_MINUTE: '1000', ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
    owner = await server.owner()
  })
  afterAll(() => server.stop())

  test('200, 201, 401, 403, 404, 405, 422, 500, /openapi.json, /docs, /healthz', async () => {
    const cases: [string, TestResponse, number][] = [
      ['GET /v1/me', await server.request('GET', '/v1/me', { key: owner.key }), 200],
      ['POST /v1/test-items', await server.request('POST', '/v1/test-items', { key: owner.key, body: { name: 'a', amount: 1 } }), 201],
      ['no key', await server.request('GET', '/v1/me'), 401],
      ['bad key', await server.request('GET', '/v1/me', { key: forgeKey(owner.keyId) }), 401],
      ['unknown route', await server.request('GET', '/v1/nope', { key: owner.key }), 404],
      ['unknown route, anonymous', await server.request('GET', '/nope'), 404],
      ['wrong method', await server.request('DELETE', '/v1/me', { key: owner.key }), 405],
      ['validation', await server.request('POST', '/v1/test-items', { key: owner.key, body: { name: 'a' } }), 422],
      ['query validation', await server.request('GET', '/v1/test-query?limit=0', { key: owner.key }), 422],
      ['internal error', await server.request('GET', '/v1/test-boom', { key: owner.key }), 500],
      ['openapi', await server.request('GET', '/openapi.json'), 200],
      ['openapi with key', await server.request('GET', '/openapi.json', { key: owner.key }), 200],
      ['docs', await server.request('GET', '/docs'), 200],
      ['healthz', await server.request('GET', '/healthz'), 200],
      ['healthz with key', await server.request('GET', '/healthz', { key: owner.key }), 200],
    ]
    for (const [label, res, status] of cases) {
      expect({ label, status: res.status }).toEqual({ label, status })
      expectRateHeaders(res, label)
    }
  })
})

describe('per-key counting', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_PER_DAY: '1000' } })
  })
  afterAll(() => server.stop())

  test('Remaining counts the current request: 4, 3, 2, 1, 0, then 429 with 0 and Retry-After; a 429 does not count', async () => {
    const owner = await server.owner()
    await awaitFreshMinute()
    const seen: number[] = []
    for (let i = 0; i < 5; i++) {
      const res = await server.request('GET', '/v1/me', { key: owner.key })
      expect(res.status).toBe(200)
      expect(intHeader(res, 'x-ratelimit-limit-minute')).toBe(5)
      expect(intHeader(res, 'x-ratelimit-limit-day')).toBe(1000)
      expect(intHeader(res, 'x-ratelimit-remaining-day')).toBe(1000 - (i + 1))
      seen.push(intHeader(res, 'x-ratelimit-remaining-minute'))
    }
    expect(seen).toEqual([4, 3, 2, 1, 0])

    for (let i = 0; i < 3; i++) {
      const limited = await server.request('GET', '/v1/me', { key: owner.key })
      const problem = expectProblem(limited, 429, 'rate_limit_exceeded')
      expect(problem.detail.length).toBeGreaterThan(0)
      expect(intHeader(limited, 'x-ratelimit-remaining-minute')).toBe(0)
      // Not counted: the day window still shows only the five admitted requests.
      expect(intHeader(limited, 'x-ratelimit-remaining-day')).toBe(995)
      const retryAfter = intHeader(limited, 'retry-after')
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(retryAfter).toBe(intHeader(limited, 'x-ratelimit-reset-minute'))
    }
  })

  test('every outcome counts: a 403 uses up the key too', async () => {
    const owner = await server.owner({ scopes: ['accounts:read'] })
    await awaitFreshMinute()
    const forbidden = await server.request('GET', '/v1/me', { key: owner.key })
    expectProblem(forbidden, 403, 'insufficient_scope')
    expect(intHeader(forbidden, 'x-ratelimit-remaining-minute')).toBe(4)
    const again = await server.request('GET', '/v1/me', { key: owner.key })
    expect(intHeader(again, 'x-ratelimit-remaining-minute')).toBe(3)
  })

  test('a limited key does not affect another key of the same server', async () => {
    const a = await server.owner()
    const b = await server.owner()
    await awaitFreshMinute()
    for (let i = 0; i < 5; i++) await server.request('GET', '/v1/me', { key: a.key })
    expectProblem(await server.request('GET', '/v1/me', { key: a.key }), 429, 'rate_limit_exceeded')
    const other = await server.request('GET', '/v1/me', { key: b.key })
    expect(other.status).toBe(200)
    expect(intHeader(other, 'x-ratelimit-remaining-minute')).toBe(4)
  })

  test('/healthz, /openapi.json and /docs are not counted but carry the caller’s state', async () => {
    const owner = await server.owner()
    await awaitFreshMinute()
    await server.request('GET', '/v1/me', { key: owner.key })
    await server.request('GET', '/v1/me', { key: owner.key })
    for (const path of ['/healthz', '/openapi.json', '/docs', '/healthz']) {
      const res = await server.request('GET', path, { key: owner.key })
      expect(res.status).toBe(200)
      expect({ path, remaining: intHeader(res, 'x-ratelimit-remaining-minute'), limit: intHeader(res, 'x-ratelimit-limit-minute') }).toEqual({
        path,
        remaining: 3,
        limit: 5,
      })
    }
    const next = await server.request('GET', '/v1/me', { key: owner.key })
    expect(intHeader(next, 'x-ratelimit-remaining-minute')).toBe(2)
  })

  test('the day limit refuses with Retry-After up to the end of the UTC day', async () => {
    const daily = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_PER_DAY: '2' } })
    try {
      const owner = await daily.owner()
      expect(intHeader(await daily.request('GET', '/v1/me', { key: owner.key }), 'x-ratelimit-remaining-day')).toBe(1)
      expect(intHeader(await daily.request('GET', '/v1/me', { key: owner.key }), 'x-ratelimit-remaining-day')).toBe(0)
      const limited = await daily.request('GET', '/v1/me', { key: owner.key })
      expectProblem(limited, 429, 'rate_limit_exceeded')
      const secondsToMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000)
      const retryAfter = intHeader(limited, 'retry-after')
      expect(Math.abs(retryAfter - secondsToMidnight)).toBeLessThanOrEqual(2)
      expect(retryAfter).toBe(intHeader(limited, 'x-ratelimit-reset-day'))
    } finally {
      await daily.stop()
    }
  })
})

describe('anonymous requests use the IP bucket', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '3', ANON_RATE_LIMIT_PER_DAY: '500', RATE_LIMIT_PER_MINUTE: '50' } })
  })
  afterAll(() => server.stop())

  test('401s count down the anonymous bucket, then 429 replaces 401; valid keys are unaffected', async () => {
    const owner = await server.owner()
    await awaitFreshMinute()
    const first = await server.request('GET', '/v1/me')
    expectProblem(first, 401, 'unauthorized')
    expect(intHeader(first, 'x-ratelimit-limit-minute')).toBe(3)
    expect(intHeader(first, 'x-ratelimit-limit-day')).toBe(500)
    expect(intHeader(first, 'x-ratelimit-remaining-minute')).toBe(2)
    const second = await server.request('GET', '/v1/me', { key: forgeKey(owner.keyId) })
    expectProblem(second, 401, 'unauthorized')
    expect(intHeader(second, 'x-ratelimit-remaining-minute')).toBe(1)
    const third = await sendRaw(server.url, '/v1/me', { headers: { authorization: 'Bearer garbage' } })
    expectProblem(third, 401, 'unauthorized')
    expect(intHeader(third, 'x-ratelimit-remaining-minute')).toBe(0)

    for (const res of [await server.request('GET', '/v1/me'), await server.request('GET', '/v1/me', { key: forgeKey(owner.keyId) })]) {
      expectProblem(res, 429, 'rate_limit_exceeded')
      expect(intHeader(res, 'retry-after')).toBeGreaterThanOrEqual(1)
      expect(intHeader(res, 'x-ratelimit-remaining-minute')).toBe(0)
      expect(intHeader(res, 'x-ratelimit-remaining-day')).toBe(497)
    }

    const ok = await server.request('GET', '/v1/me', { key: owner.key })
    expect(ok.status).toBe(200)
    expect(intHeader(ok, 'x-ratelimit-limit-minute')).toBe(50)
    expect(intHeader(ok, 'x-ratelimit-remaining-minute')).toBe(49)

    // Uncounted routes show the anonymous caller its (empty) bucket.
    const health = await server.request('GET', '/healthz')
    expect(health.status).toBe(200)
    expect(intHeader(health, 'x-ratelimit-remaining-minute')).toBe(0)
    expect(intHeader(health, 'x-ratelimit-limit-minute')).toBe(3)
  })
})

describe('counters live in the control database', () => {
  test('counts are written behind within about a second, and survive a restart', async () => {
    const dataDir = tempDir()
    const env = { RATE_LIMIT_PER_MINUTE: '10', RATE_LIMIT_PER_DAY: '1000' }
    const first = await startTestServer({ dataDir, env })
    const owner = await first.owner()
    await awaitFreshMinute(15)
    for (let i = 0; i < 3; i++) await first.request('GET', '/v1/me', { key: owner.key })

    // Write-behind: the counts reach control.db without a shutdown.
    await sleep(1300)
    const control = openFile(dataDir, 'control.db', true)
    try {
      const rows = control
        .query<{ bucket: string; minute_count: number; day_count: number }, []>('SELECT bucket, minute_count, day_count FROM rate_limit_counters')
        .all()
        .filter((row) => row.bucket.includes(owner.keyId))
      expect(rows).toHaveLength(1)
      expect(Number(rows[0]?.day_count)).toBe(3)
    } finally {
      control.close()
    }

    await first.request('GET', '/v1/me', { key: owner.key })
    await first.stop({ remove: false })

    const second = await startTestServer({ dataDir, env })
    try {
      const res = await second.request('GET', '/v1/me', { key: owner.key })
      expect(res.status).toBe(200)
      expect(intHeader(res, 'x-ratelimit-remaining-day')).toBe(1000 - 5)
      expect(intHeader(res, 'x-ratelimit-remaining-minute')).toBe(10 - 5)
    } finally {
      await second.stop()
    }
  })
})

describe('stored counters of past days are dropped', () => {
  test('a purge forgets the rows of buckets last counted before today and keeps today’s', async () => {
    const { ControlStore } = await import('../../src/db/control/store.ts')
    const { Limits, RateLimiter } = await import('../../src/platform/rate-limit.ts')
    const control = new ControlStore(tempDir('pfin-counters-'))
    try {
      let now = Date.UTC(2026, 10, 25, 23, 59, 0)
      const limiter = new RateLimiter(control, () => now)
      const limits = new Limits(10, 100)
      for (let i = 0; i < 50; i++) limiter.consume(`ip:10.0.0.${i}`, limits, {})
      limiter.flush()
      now = Date.UTC(2026, 10, 26, 0, 1, 0)
      limiter.consume('ip:10.0.1.1', limits, {})
      limiter.flush()
      limiter.purge()
      expect(control.findCounter('ip:10.0.0.7')).toBeUndefined()
      expect(control.findCounter('ip:10.0.1.1')?.dayCount).toBe(1)
      // A bucket seen again after the purge starts the new day at zero, as it would have anyway.
      const headers: Record<string, string | number> = {}
      limiter.consume('ip:10.0.0.7', limits, headers)
      expect(headers['x-ratelimit-remaining-day']).toBe('99')
    } finally {
      control.close()
    }
  })
})
