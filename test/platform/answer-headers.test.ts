import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sendRaw, startTestServer, type TestResponse, type TestServer } from '../support/harness.ts'

/**
 * Every /v1 and /mcp answer, success or error, says it must not be cached and must not be
 * sniffed (they carry someone's money); an unknown path is not echoed back in the problem.
 */

let server: TestServer
let key: string
beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '1000', ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
  key = (await server.owner()).key
})
afterAll(() => server.stop())

function expectPrivate(label: string, res: TestResponse) {
  expect({ label, cache: res.headers.get('cache-control'), sniff: res.headers.get('x-content-type-options') }).toEqual({
    label,
    cache: 'no-store',
    sniff: 'nosniff',
  })
}

const mcp = (body: unknown, headers: Record<string, string> = {}) =>
  sendRaw(server.url, '/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  })

describe('Cache-Control: no-store and X-Content-Type-Options: nosniff', () => {
  test('on REST answers of every kind', async () => {
    const created = await server.request('POST', '/v1/accounts', {
      key,
      idempotencyKey: 'headers-1',
      body: { name: 'Main', type: 'bank', balance: 1, currency: 'EUR' },
    })
    const answers: [string, TestResponse][] = [
      ['200', await server.request('GET', '/v1/me', { key })],
      ['201', created],
      [
        'replay',
        await server.request('POST', '/v1/accounts', { key, idempotencyKey: 'headers-1', body: { name: 'Main', type: 'bank', balance: 1, currency: 'EUR' } }),
      ],
      ['401', await server.request('GET', '/v1/accounts')],
      ['404 record', await server.request('GET', '/v1/accounts/acct_missing', { key })],
      ['404 route', await server.request('GET', '/v1/nowhere', { key })],
      ['405', await server.request('DELETE', '/v1/me', { key })],
      ['422', await server.request('POST', '/v1/accounts', { key, body: { name: '' } })],
      ['400', await server.request('POST', '/v1/accounts', { key, idempotencyKey: null, body: {} })],
    ]
    expect(answers.map(([label, res]) => `${label} ${res.status}`)).toEqual([
      '200 200',
      '201 201',
      'replay 201',
      '401 401',
      '404 record 404',
      '404 route 404',
      '405 405',
      '422 422',
      '400 400',
    ])
    for (const [label, res] of answers) expectPrivate(label, res)
  })

  test('on /mcp answers, success and error', async () => {
    const list = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    expect(list.status).toBe(200)
    expectPrivate('tools/list', list)
    const refused = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { authorization: 'Bearer nope' })
    expect(refused.status).toBe(401)
    expectPrivate('401', refused)
  })
})

describe('an unknown path', () => {
  test('is not echoed in the problem', async () => {
    const path = '/v1/%3Cscript%3Ealert(1)%3C/script%3E'
    const res = await sendRaw(server.url, path, { method: 'GET' })
    expect(res.status).toBe(404)
    expect(res.text).not.toContain('script')
    expect(res.json.detail).toBe('No route matches GET on this path; /openapi.json lists every route')
    const wrongMethod = await server.request('PUT', '/v1/accounts/%3Cb%3E', { key })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.text).not.toContain('%3Cb')
  })
})
