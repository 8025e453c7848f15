import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_BODY_BYTES } from '../../src/platform/body.ts'
import { expectProblem, sendRaw, startTestServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { LEAKY_MESSAGE, makeFixture } from './fixtures.ts'

/** Request bodies (415, 413, 400, 422 naming the field) and the error classes of CONTRACT §6. */

const fixture = makeFixture()
let server: TestServer
let owner: { id: string; key: string; keyId: string }

beforeAll(async () => {
  server = await startTestServer({
    extraRoutes: fixture.routes,
    env: { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_DAY: '1000000', ANON_RATE_LIMIT_PER_MINUTE: '100000', ANON_RATE_LIMIT_PER_DAY: '1000000' },
  })
  owner = await server.owner({ name: 'Bodies' })
})
afterAll(() => server.stop())

/** POSTs a raw body to the test route with only the headers given (plus auth and a fresh Idempotency-Key). */
function postRaw(body: RequestInit['body'], headers: Record<string, string> = {}): Promise<TestResponse> {
  return sendRaw(server.url, '/v1/test-items', {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'idempotency-key': crypto.randomUUID(), ...headers },
    body,
  })
}

const post = (body: unknown) => server.request('POST', '/v1/test-items', { key: owner.key, body })

/** A valid item body of exactly `size` bytes. */
function itemOfSize(size: number): string {
  const shell = JSON.stringify({ name: '', amount: 1 })
  return JSON.stringify({ name: 'x'.repeat(size - shell.length), amount: 1 })
}

describe('415 unsupported_media_type', () => {
  test('a body without Content-Type', async () => {
    const runs = fixture.items.runs
    const res = await postRaw(new TextEncoder().encode(JSON.stringify({ name: 'A', amount: 1 })))
    expectProblem(res, 415, 'unsupported_media_type')
    expect(fixture.items.runs).toBe(runs)
  })

  test('a body with another Content-Type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'text/json']) {
      const res = await postRaw(JSON.stringify({ name: 'A', amount: 1 }), { 'content-type': type })
      try {
        expectProblem(res, 415, 'unsupported_media_type')
      } catch (error) {
        throw new Error(`Content-Type ${type}: ${String(error)}`)
      }
    }
  })

  test('application/json with parameters and in any case is accepted', async () => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
      const res = await postRaw(JSON.stringify({ name: 'A', amount: 1 }), { 'content-type': type })
      expect({ type, status: res.status }).toEqual({ type, status: 201 })
    }
  })
})

describe('413 payload_too_large', () => {
  test('exactly 1 MiB is accepted', async () => {
    const body = itemOfSize(MAX_BODY_BYTES)
    expect(Buffer.byteLength(body)).toBe(1024 * 1024)
    const res = await postRaw(body, { 'content-type': 'application/json' })
    expect(res.status).toBe(201)
  })

  test('one byte over 1 MiB, with Content-Length', async () => {
    const runs = fixture.items.runs
    const body = itemOfSize(MAX_BODY_BYTES + 1)
    const res = await postRaw(body, { 'content-type': 'application/json' })
    const problem = expectProblem(res, 413, 'payload_too_large')
    expect(problem.detail).toContain(String(MAX_BODY_BYTES))
    expect(fixture.items.runs).toBe(runs)
  })

  test('a streamed body (no Content-Length) that grows past 1 MiB', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"'))
      },
      pull(controller) {
        if (sent >= 40) {
          controller.enqueue(new TextEncoder().encode('","amount":1}'))
          controller.close()
          return
        }
        sent += 1
        controller.enqueue(chunk)
      },
    })
    const runs = fixture.items.runs
    const res = await postRaw(stream, { 'content-type': 'application/json' })
    expectProblem(res, 413, 'payload_too_large')
    expect(fixture.items.runs).toBe(runs)
  })

  test('a 2 MiB body with Content-Length', async () => {
    const body = itemOfSize(2 * MAX_BODY_BYTES)
    expectProblem(await postRaw(body, { 'content-type': 'application/json' }), 413, 'payload_too_large')
  })
})

describe('400 malformed_json', () => {
  test('text that is not JSON', async () => {
    for (const text of [
      '{"name":"A",',
      '{"name":"A","amount":1,}',
      "{'name':'A'}",
      'undefined',
      '{"amount":NaN,"name":"A"}',
      '{"name":"A","amount":1} trailing',
    ]) {
      const res = await postRaw(text, { 'content-type': 'application/json' })
      try {
        expectProblem(res, 400, 'malformed_json')
      } catch (error) {
        throw new Error(`body ${text}: ${String(error)}`)
      }
    }
  })

  test('bytes that are not UTF-8', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"name":"'), 0xff, 0xfe, ...new TextEncoder().encode('","amount":1}')])
    expectProblem(await postRaw(bytes, { 'content-type': 'application/json' }), 400, 'malformed_json')
  })
})

describe('422 validation_failed names the field', () => {
  test('an unknown field is rejected, not stripped', async () => {
    const runs = fixture.items.runs
    const problem = expectProblem(await post({ name: 'A', amount: 1, sneaky: true }), 422, 'validation_failed')
    expect(problem.detail).toContain('sneaky')
    expect(fixture.items.runs).toBe(runs)
  })

  test('a wrong type', async () => {
    expect(expectProblem(await post({ name: 'A', amount: '12' }), 422, 'validation_failed').detail).toContain('amount')
    expect(expectProblem(await post({ name: 7, amount: 1 }), 422, 'validation_failed').detail).toContain('name')
    expect(expectProblem(await post({ name: 'A', amount: 1, tags: ['ok', 3] }), 422, 'validation_failed').detail).toContain('tags[1]')
    expect(expectProblem(await post({ name: 'A', amount: null }), 422, 'validation_failed').detail).toContain('amount')
  })

  test('a missing required field', async () => {
    expect(expectProblem(await post({ name: 'A' }), 422, 'validation_failed').detail).toContain('amount')
    expect(expectProblem(await post({ amount: 1 }), 422, 'validation_failed').detail).toContain('name')
  })

  test('a body that is not an object, or no body at all', async () => {
    for (const body of ['[]', '"text"', 'null', '42']) {
      expectProblem(await postRaw(body, { 'content-type': 'application/json' }), 422, 'validation_failed')
    }
    expectProblem(await postRaw(null, { 'content-type': 'application/json' }), 422, 'validation_failed')
  })

  test('query parameters: a bad value or an unknown parameter', async () => {
    expect((await server.request('GET', '/v1/test-query?limit=20', { key: owner.key })).json).toEqual({ limit: 20 })
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'limit=1.5', 'limit=']) {
      const problem = expectProblem(await server.request('GET', `/v1/test-query?${query}`, { key: owner.key }), 422, 'validation_failed')
      expect({ query, detail: problem.detail }).toMatchObject({ query, detail: expect.stringContaining('limit') })
    }
    expect(expectProblem(await server.request('GET', '/v1/test-query?color=red', { key: owner.key }), 422, 'validation_failed').detail).toContain('color')
  })

  test('a route that takes no query parameters refuses any, before its body is read; a bare ? is no parameter', async () => {
    for (const path of ['/v1/me?fields=name', '/v1/accounts/acct_0190000000007000800000000000dead?includeArchived=true']) {
      const problem = expectProblem(await server.request('GET', path, { key: owner.key }), 422, 'validation_failed')
      expect(problem.detail).toMatch(/^query parameter '(fields|includeArchived)' is not allowed/)
    }
    const runs = fixture.items.runs
    const write = await server.request('POST', '/v1/test-items?dryRun=true', { key: owner.key, body: { name: 'A', amount: 1 } })
    expect(expectProblem(write, 422, 'validation_failed').detail).toContain("'dryRun'")
    expect(fixture.items.runs).toBe(runs)
    expect((await server.request('GET', '/v1/me?', { key: owner.key })).status).toBe(200)
  })
})

describe('routing errors', () => {
  test('unknown routes: 404 route_not_found, before authentication', async () => {
    for (const path of ['/v1', '/v1/nothing', '/v1/me/extra', '/v2/me', '/healthz/deep']) {
      for (const key of [undefined, owner.key]) {
        const res = await server.request('GET', path, { key })
        try {
          const problem = expectProblem(res, 404, 'route_not_found')
          // The path is not echoed back (CONTRACT §6).
          expect(problem.detail).not.toContain(path.slice(1))
        } catch (error) {
          throw new Error(`GET ${path} (${key ? 'with' : 'without'} key): ${String(error)}`)
        }
      }
    }
    expectProblem(await server.request('POST', '/v1/nothing', { key: owner.key, body: {} }), 404, 'route_not_found')
  })

  test('known path, wrong method: 405 method_not_allowed with Allow, before authentication', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/v1/me', 'GET'],
      ['POST', '/v1/me', 'GET'],
      ['PUT', '/v1/test-items', 'POST'],
      ['GET', '/v1/test-items', 'POST'],
      ['DELETE', '/v1/test-items/abc', 'PATCH'],
      ['POST', '/healthz', 'GET'],
      ['DELETE', '/openapi.json', 'GET'],
    ]
    for (const [method, path, allowed] of cases) {
      for (const key of [undefined, owner.key]) {
        const res = await server.request(method, path, { key, body: method === 'GET' || method === 'DELETE' ? undefined : {} })
        try {
          expectProblem(res, 405, 'method_not_allowed')
          const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim())
          expect(allow).toContain(allowed)
          expect(allow).not.toContain(method)
        } catch (error) {
          throw new Error(`${method} ${path} (${key ? 'with' : 'without'} key): ${String(error)}`)
        }
      }
    }
  })
})

describe('500 internal_error', () => {
  test('a throwing handler: generic problem, no stack, SQL or path; the request id is quoted', async () => {
    const res = await server.request('GET', '/v1/test-boom', { key: owner.key, headers: { 'x-request-id': 'boom-1' } })
    const problem = expectProblem(res, 500, 'internal_error')
    expect(problem.request_id).toBe('boom-1')
    expect(problem.detail).toContain('boom-1')
    expect(res.text).not.toContain(LEAKY_MESSAGE)
    for (const secret of fixture.secrets) expect(res.text).not.toContain(secret)
    expect(res.text).not.toMatch(/\n\s+at /)
  })

  test('a throwing write handler: 500, no leak, the key released for a retry', async () => {
    fixture.items.failNext = 1
    const key = crypto.randomUUID()
    const res = await server.request('POST', '/v1/test-items', { key: owner.key, body: { name: 'A', amount: 1 }, idempotencyKey: key })
    expectProblem(res, 500, 'internal_error')
    for (const secret of fixture.secrets) expect(res.text).not.toContain(secret)
    expect((await server.request('POST', '/v1/test-items', { key: owner.key, body: { name: 'A', amount: 1 }, idempotencyKey: key })).status).toBe(201)
  })

  test('the server logs the error with the request id', async () => {
    const lines: string[] = []
    const log = server.platform.log
    server.platform.log = (message) => lines.push(message)
    try {
      await server.request('GET', '/v1/test-boom', { key: owner.key, headers: { 'x-request-id': 'logged-1' } })
    } finally {
      server.platform.log = log
    }
    expect(lines.some((line) => line.includes('logged-1') && line.includes(LEAKY_MESSAGE))).toBe(true)
  })
})

describe('/healthz', () => {
  test('200 {"status":"ok"} without a key', async () => {
    const res = await server.request('GET', '/healthz')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.text).toBe('{"status":"ok"}')
  })
})
