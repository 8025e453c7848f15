import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { ALLOWED_REQUEST_HEADERS, EXPOSED_HEADERS } from '../../src/platform/cors.ts'
import { expectProblem, RATE_LIMIT_HEADERS, startTestServer, type TestServer } from '../support/harness.ts'

/**
 * CORS (CONTRACT §25): with CORS_ALLOWED_ORIGINS unset no answer carries a CORS header; with it,
 * an allowed origin's preflight is answered 204 with the methods and headers the API takes, and
 * every answer to it, errors included (401, 404, 405, 422, 429), names the origin and exposes the
 * contract's headers. Another origin gets no CORS header (its preflight: 403). `/mcp` keeps its
 * own rule (MCP_ALLOWED_ORIGINS).
 */

const APP = 'https://app.example.com'
const DEV = 'http://localhost:5173'
const STRANGER = 'https://evil.example'

const corsHeaderNames = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'))
const preflightHeaders = (origin: string, method = 'PATCH') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': 'authorization, content-type, idempotency-key, if-match',
})

describe('CORS_ALLOWED_ORIGINS unset (the default)', () => {
  let server: TestServer
  let key: string
  beforeAll(async () => {
    server = await startTestServer()
    key = (await server.owner()).key
  })
  afterAll(() => server.stop())

  test('no answer carries a CORS header or Vary: Origin, and a preflight is the 405 it always was', async () => {
    const answers = [
      await server.request('GET', '/v1/me', { key, headers: { origin: APP } }),
      await server.request('GET', '/v1/me', { headers: { origin: APP } }),
      await server.request('GET', '/healthz', { headers: { origin: APP } }),
      await server.request('OPTIONS', '/v1/me', { headers: preflightHeaders(APP) }),
    ]
    expect(answers.map((res) => res.status)).toEqual([200, 401, 200, 405])
    for (const res of answers) {
      expect(corsHeaderNames(res.headers)).toEqual([])
      expect(res.headers.get('vary') ?? '').not.toContain('Origin')
    }
    expectProblem(answers[3] as never, 405, 'method_not_allowed')
  })
})

describe(`CORS_ALLOWED_ORIGINS=${APP},${DEV}/`, () => {
  let server: TestServer
  let key: string
  beforeAll(async () => {
    // The trailing slash is forgiven: an origin has no path.
    server = await startTestServer({ env: { CORS_ALLOWED_ORIGINS: ` ${APP}, ${DEV}/`, ANON_RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '1000' } })
    key = (await server.owner()).key
  })
  afterAll(() => server.stop())

  const expectCors = (res: { headers: Headers }, origin: string) => {
    expect(res.headers.get('access-control-allow-origin')).toBe(origin)
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    expect(res.headers.get('access-control-expose-headers')?.split(', ')).toEqual([...EXPOSED_HEADERS])
    expect(res.headers.get('vary')).toContain('Origin')
  }

  test('a preflight from an allowed origin: 204, the methods, the request headers, a max age, not counted', async () => {
    for (const origin of [APP, DEV]) {
      const res = await server.request('OPTIONS', '/v1/transactions/txn_00000000000000000000000000000000', { headers: preflightHeaders(origin) })
      expect(res.status).toBe(204)
      expect(res.text).toBe('')
      expect(res.headers.get('access-control-allow-origin')).toBe(origin)
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST, PATCH, DELETE')
      expect(res.headers.get('access-control-allow-headers')?.split(', ')).toEqual([...ALLOWED_REQUEST_HEADERS])
      for (const name of ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'Pfin-Subject'])
        expect(res.headers.get('access-control-allow-headers')).toContain(name)
      expect(res.headers.get('access-control-max-age')).toBe('7200')
      expect(res.headers.get('access-control-allow-credentials')).toBeNull()
      expect(res.headers.get('vary')).toBe('Origin')
      expect(res.headers.get('x-request-id')).toMatch(/^req_/)
      for (const name of RATE_LIMIT_HEADERS) expect(res.headers.has(name)).toBe(true)
    }
    // Preflights are not counted: the anonymous bucket (3 a minute) is still full.
    const after = await server.request('GET', '/v1/me', { headers: { origin: APP } })
    expect(after.headers.get('x-ratelimit-remaining-minute')).toBe('2')
  })

  test('a preflight from another origin: 403 origin_not_allowed, without CORS headers', async () => {
    const res = await server.request('OPTIONS', '/v1/me', { headers: preflightHeaders(STRANGER, 'GET') })
    expectProblem(res, 403, 'origin_not_allowed')
    expect(corsHeaderNames(res.headers)).toEqual([])
    expect(res.json.detail).toContain('CORS_ALLOWED_ORIGINS')
  })

  test('an allowed origin reads successes and every kind of error: 200, 201, 401, 404, 405, 422', async () => {
    const answers = [
      await server.request('GET', '/v1/me', { key, headers: { origin: APP } }),
      await server.request('POST', '/v1/tags', { key, body: { name: 'Trip' }, headers: { origin: APP } }),
      await server.request('GET', '/v1/me', { key: 'pfk_nonsense', headers: { origin: APP } }),
      await server.request('GET', '/v1/nowhere', { key, headers: { origin: APP } }),
      await server.request('PUT', '/v1/me', { key, headers: { origin: APP } }),
      await server.request('POST', '/v1/tags', { key, body: { name: 'Trip', colour: 'red' }, headers: { origin: APP } }),
      await server.request('GET', '/openapi.json', { headers: { origin: DEV } }),
      await server.request('GET', '/healthz', { headers: { origin: DEV } }),
    ]
    expect(answers.map((res) => res.status)).toEqual([200, 201, 401, 404, 405, 422, 200, 200])
    for (const [index, res] of answers.entries()) expectCors(res, index >= 6 ? DEV : APP)
    expect(answers[2]?.headers.get('www-authenticate')).toStartWith('Bearer')
  })

  test('a 429 carries the CORS headers too, so a page can read Retry-After', async () => {
    let res = await server.request('GET', '/v1/me', { headers: { origin: APP } })
    for (let i = 0; i < 5 && res.status !== 429; i++) res = await server.request('GET', '/v1/me', { headers: { origin: APP } })
    expectProblem(res, 429, 'rate_limit_exceeded')
    expectCors(res, APP)
    expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After')
  })

  test('another origin gets the answer without CORS headers (the browser keeps it from the page), with Vary: Origin', async () => {
    for (const origin of [STRANGER, 'null', `${APP}:8443`, 'http://app.example.com']) {
      const res = await server.request('GET', '/v1/me', { key, headers: { origin } })
      expect(res.status).toBe(200)
      expect(corsHeaderNames(res.headers)).toEqual([])
      expect(res.headers.get('vary')).toContain('Origin')
    }
  })

  test('/mcp keeps its own rule: an origin allowed for the API is refused there, and no CORS header is added', async () => {
    const mcp = await server.request('POST', '/mcp', {
      key,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { origin: APP, accept: 'application/json, text/event-stream' },
    })
    expectProblem(mcp, 403, 'origin_not_allowed')
    expect(corsHeaderNames(mcp.headers)).toEqual([])
    const preflight = await server.request('OPTIONS', '/mcp', { headers: preflightHeaders(APP, 'POST') })
    expect(preflight.status).toBe(405)
    expect(corsHeaderNames(preflight.headers)).toEqual([])
  })
})

describe('CORS_ALLOWED_ORIGINS=*', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ env: { CORS_ALLOWED_ORIGINS: '*' } })
  })
  afterAll(() => server.stop())

  test('every origin is named back (never the literal *), except the opaque origin null', async () => {
    for (const origin of [STRANGER, DEV]) {
      const res = await server.request('OPTIONS', '/v1/accounts', { headers: preflightHeaders(origin, 'POST') })
      expect(res.status).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe(origin)
    }
    const opaque = await server.request('OPTIONS', '/v1/accounts', { headers: preflightHeaders('null', 'POST') })
    expectProblem(opaque, 403, 'origin_not_allowed')
  })
})

describe('the setting', () => {
  test('origins are normalized as browsers send them; anything that is not an origin stops pfin naming it', () => {
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: 'https://App.Example.com:443, http://localhost:5173/' }).corsAllowedOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ])
    expect(loadConfig({}).corsAllowedOrigins).toEqual([])
    for (const bad of ['https://app.example.com/path', 'app.example.com', 'null', 'ftp://files.example', 'https://a.example?x=1']) {
      expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: bad })).toThrow(ConfigError)
      expect(() => loadConfig({ CORS_ALLOWED_ORIGINS: bad })).toThrow('CORS_ALLOWED_ORIGINS')
    }
  })
})
