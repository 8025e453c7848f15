import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { expectProblem, listPages, startUnthrottledServer, type TestResponse, type TestServer } from '../support/harness.ts'

/**
 * The edges every request is read at: lone surrogates in request text, the limits every body is
 * read under (nesting depth, significant digits), duplicate keys, and a `#fragment` in the
 * request target.
 */

let server: TestServer
let owner: { id: string; key: string; keyId: string }

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ name: 'Edges' })
})
afterAll(() => server.stop())

const post = (path: string, body: string, idempotencyKey?: string) => server.request('POST', path, { key: owner.key, body, idempotencyKey })
const patch = (path: string, body: string) => server.request('PATCH', path, { key: owner.key, body })
const get = (path: string) => server.request('GET', path, { key: owner.key })

async function makeAccount(name = 'Main'): Promise<string> {
  const res = await post('/v1/accounts', JSON.stringify({ name, type: 'bank', currency: 'EUR', balance: 10 }))
  expect(res.status).toBe(201)
  return res.json.data.id
}

/** Every account the owner has, archived ones too, as the API lists them. */
const accounts = () => listPages(server, owner.key, '/v1/accounts', { includeArchived: 'true' })

describe('a lone surrogate in any string of a body is refused (422 validation_failed naming the field)', () => {
  test('in a field of a create: nothing is stored, and the same key then works with sound text', async () => {
    const before = await accounts()
    const key = crypto.randomUUID()
    const res = await post('/v1/accounts', '{"name":"Caf\\ud800e","type":"bank","currency":"EUR","balance":1}', key)
    const problem = expectProblem(res, 422, 'validation_failed')
    expect(problem.detail).toBe("field 'name' must be valid Unicode text (it holds a lone surrogate)")
    expect(await accounts()).toEqual(before)
    // validation_failed is not stored against the Idempotency-Key (CONTRACT §6, §8).
    const retry = await post('/v1/accounts', '{"name":"Caf\\u00e9","type":"bank","currency":"EUR","balance":1}', key)
    expect(retry.status).toBe(201)
    expect(retry.json.data.name).toBe('Café')
  })

  test('a low surrogate alone, a high one at the end, and two highs in a row', async () => {
    for (const text of ['\\udc00', 'end\\ud83d', '\\ud83d\\ud83dx', 'x\\ude00\\ud83d']) {
      const res = await post('/v1/accounts', `{"name":"${text}","type":"bank","currency":"EUR","balance":1}`)
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain("field 'name'")
    }
  })

  test('a surrogate pair (an escaped emoji) is sound text and is kept as sent', async () => {
    const res = await post('/v1/accounts', '{"name":"Savings \\ud83d\\udcb0","type":"bank","currency":"EUR","balance":1}')
    expect(res.status).toBe(201)
    expect(res.json.data.name).toBe('Savings 💰')
    const read = await get(`/v1/accounts/${res.json.data.id}`)
    expect(read.json.data.name).toBe('Savings 💰')
  })

  test('nested fields are named by their path', async () => {
    const res = await post(
      '/v1/accounts',
      '{"name":"A","type":"bank","currency":"EUR","balance":1,"customFields":[{"label":"ok","value":"v"},{"label":"x","value":"\\udfff"}]}',
    )
    expect(expectProblem(res, 422, 'validation_failed').detail).toBe("field 'customFields[1].value' must be valid Unicode text (it holds a lone surrogate)")
  })

  test('a field name with a lone surrogate is refused too', async () => {
    const res = await post('/v1/accounts', '{"name":"A","type":"bank","currency":"EUR","balance":1,"n\\ud800":1}')
    expect(expectProblem(res, 422, 'validation_failed').detail).toBe("field name 'n\uFFFD' must be valid Unicode text (it holds a lone surrogate)")
  })

  test('on PATCH, on transactions, categories and payees, nothing changes', async () => {
    const accountId = await makeAccount('Patch target')
    const before = (await get(`/v1/accounts/${accountId}`)).json.data
    expectProblem(await patch(`/v1/accounts/${accountId}`, '{"notes":"a\\ud800"}'), 422, 'validation_failed')
    expect((await get(`/v1/accounts/${accountId}`)).json.data).toEqual(before)

    const txn = await post('/v1/transactions', `{"accountId":"${accountId}","amount":1,"date":"2026-01-02","note":"\\udbff"}`)
    expect(expectProblem(txn, 422, 'validation_failed').detail).toContain("field 'note'")
    const payee = await post('/v1/transactions', `{"accountId":"${accountId}","amount":1,"date":"2026-01-02","payeeName":"Shop \\ud800"}`)
    expect(expectProblem(payee, 422, 'validation_failed').detail).toContain("field 'payeeName'")
    expect((await get(`/v1/accounts/${accountId}`)).json.data.balance).toBe(before.balance)
    expect((await get('/v1/payees?q=Shop')).json.data).toEqual([])

    expectProblem(await post('/v1/categories', '{"name":"\\ud800","type":"expense"}'), 422, 'validation_failed')
    expectProblem(await post('/v1/payees', '{"name":"P\\udc00"}'), 422, 'validation_failed')
  })

  test('an escaped backslash before "ud800" is plain text, not a surrogate', async () => {
    const res = await post('/v1/accounts', '{"name":"C:\\\\ud800","type":"bank","currency":"EUR","balance":1}')
    expect(res.status).toBe(201)
    expect(res.json.data.name).toBe('C:\\ud800')
  })

  test('a query value cannot carry one: percent-encoded surrogates decode to U+FFFD and are matched as text', async () => {
    const res = await get('/v1/payees?q=%ED%A0%80')
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual([])
  })
})

describe('limits every body is read under', () => {
  test('nesting deeper than 64 levels is 400 malformed_json, quickly, however deep', async () => {
    for (const depth of [65, 1000, 500_000]) {
      const res = await post('/v1/accounts', `{"name":"A","type":"bank","currency":"EUR","balance":${'['.repeat(depth)}${']'.repeat(depth)}}`)
      expect(expectProblem(res, 400, 'malformed_json').detail).toBe('The request body nests more than 64 levels deep')
    }
    // 64 levels are read (and this body then fails on its shape).
    const res = await post('/v1/accounts', `{"name":"A","type":"bank","currency":"EUR","balance":${'['.repeat(63)}${']'.repeat(63)}}`)
    expect(expectProblem(res, 422, 'validation_failed').detail).toBe("field 'balance' must be a number")
  })

  test('brackets inside strings do not count as nesting', async () => {
    const res = await post('/v1/accounts', JSON.stringify({ name: '['.repeat(100), type: 'bank', currency: 'EUR', balance: 1, notes: '{'.repeat(1000) }))
    expect(res.status).toBe(201)
  })

  test('a number of more than 40 significant digits is 422 naming the field; zero padding is not significant', async () => {
    const long = await post('/v1/accounts', `{"name":"A","type":"bank","currency":"EUR","balance":1.${'1'.repeat(40)}}`)
    expect(expectProblem(long, 422, 'validation_failed').detail).toBe("field 'balance' must have at most 40 significant digits")
    const rate = await post('/v1/transactions', `{"accountId":"x","amount":1,"date":"2026-01-02","exchangeRate":1.${'0'.repeat(39)}1}`)
    expect(expectProblem(rate, 422, 'validation_failed').detail).toBe("field 'exchangeRate' must have at most 40 significant digits")
    const nested = await post('/v1/accounts', `{"name":"A","type":"bank","currency":"EUR","balance":1,"x":[0,{"y":${'9'.repeat(41)}}]}`)
    expect(expectProblem(nested, 422, 'validation_failed').detail).toBe("field 'x[1].y' must have at most 40 significant digits")

    const padded = await post('/v1/accounts', `{"name":"Padded","type":"bank","currency":"EUR","balance":12.50${'0'.repeat(10_000)}}`)
    expect(padded.status).toBe(201)
    expect(padded.json.data.balance).toBe(12.5)
    const shifted = await post('/v1/accounts', `{"name":"Shifted","type":"bank","currency":"EUR","balance":125${'0'.repeat(10_000)}e-10001}`)
    expect(shifted.status).toBe(201)
    expect(shifted.text).toContain('"balance":12.5,')
  })

  test('equal numbers spelled differently are one request for idempotency; different numbers are not', async () => {
    const key = crypto.randomUUID()
    const first = await post('/v1/accounts', '{"name":"Same","type":"bank","currency":"EUR","balance":1.50}', key)
    expect(first.status).toBe(201)
    for (const spelling of ['1.5', '15e-1', '0.15E+1', `1.5${'0'.repeat(5000)}`, `15${'0'.repeat(5000)}e-5001`]) {
      const again = await post('/v1/accounts', `{"balance":${spelling},"currency":"EUR","type":"bank","name":"Same"}`, key)
      expect({ spelling: spelling.slice(0, 12), status: again.status, replayed: again.headers.get('idempotent-replayed') }).toEqual({
        spelling: spelling.slice(0, 12),
        status: 201,
        replayed: 'true',
      })
    }
    for (const spelling of ['1.51', '1.5000000000000000000000000000000000001', '-1.5', '150e-1']) {
      const other = await post('/v1/accounts', `{"name":"Same","type":"bank","currency":"EUR","balance":${spelling}}`, key)
      expectProblem(other, 409, 'idempotency_key_reused')
    }
  })
})

describe('duplicate keys: the last one wins, for the value and for its exact text', () => {
  test('a short integer after a decimal is read as the integer (money and fingerprint)', async () => {
    const key = crypto.randomUUID()
    const res = await post('/v1/accounts', '{"name":"Dup","type":"bank","currency":"EUR","balance":1.50,"balance":2}', key)
    expect(res.status).toBe(201)
    expect(res.json.data.balance).toBe(2)
    // The same request written with the single key it means replays; with the first value it does not.
    const same = await post('/v1/accounts', '{"name":"Dup","type":"bank","currency":"EUR","balance":2}', key)
    expect(same.headers.get('idempotent-replayed')).toBe('true')
    expectProblem(await post('/v1/accounts', '{"name":"Dup","type":"bank","currency":"EUR","balance":1.5}', key), 409, 'idempotency_key_reused')
  })

  test('a decimal after an integer, and inside a repeated object', async () => {
    const res = await post('/v1/accounts', '{"name":"Dup 2","type":"bank","currency":"EUR","balance":7,"balance":0.125}')
    expect(res.json.data.balance).toBe(0.125)
    const accountId = res.json.data.id
    const txn = await post('/v1/transactions', `{"accountId":"${accountId}","amount":3.5,"amount":1,"date":"2026-01-02"}`)
    expect(txn.json.data.amount).toBe(1)
    expect((await get(`/v1/accounts/${accountId}`)).json.data.balance).toBe(-0.875)
  })
})

/** Sends one raw HTTP/1.1 request over TCP (fetch would strip a `#fragment` from the target) and reads the answer. */
function rawRequest(method: string, target: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  const { hostname, port } = new URL(server.url)
  const head = [
    `${method} ${target} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    'Connection: close',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ]
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n`))
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n')
      const responseHeaders = new Headers(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]))
      // Bodies here are small and not chunked (Connection: close, Content-Length).
      const body = text.slice(split + 4)
      let json: unknown
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: responseHeaders, text: body, json })
    })
  })
}

describe('a #fragment in the request target', () => {
  const auth = () => ({ authorization: `Bearer ${owner.key}` })

  test('a route the router did not match is 404 route_not_found, not a 405 that allows the method sent', async () => {
    for (const [method, target] of [
      ['GET', '/v1/me#x'],
      ['GET', '/v1/accounts#frag'],
      ['POST', '/v1/me#x'],
      ['GET', '/nowhere#x'],
    ] as const) {
      const res = await rawRequest(method, target, auth())
      const problem = expectProblem(res, 404, 'route_not_found')
      expect(problem.detail).toBe(`No route matches ${method} on this path; /openapi.json lists every route`)
      expect(res.headers.get('allow')).toBeNull()
    }
  })

  test('the raw path still answers 405 when it is known with other methods', async () => {
    const res = await rawRequest('DELETE', '/v1/me', auth())
    expect(expectProblem(res, 405, 'method_not_allowed').detail).toBe('DELETE is not allowed on this path; allowed: GET')
    expect(res.headers.get('allow')).toBe('GET')
  })

  test('a fragment after the query is part of the query, which the router ignores', async () => {
    const res = await rawRequest('GET', '/v1/accounts?limit=1#y', auth())
    expect(res.status).toBe(200)
  })
})
