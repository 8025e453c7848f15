import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, RATE_LIMIT_HEADERS, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * Requests the property-based fuzz (fuzz.test.ts) failed on, each minimised to one plain request
 * and pinned to the answer the contract asks for: details that name the field sent, cursors from
 * another list, payee search, 422s that are not stored, long request targets. A `test.todo` is
 * one whose fix lies outside the resource modules (platform, server, Bun); its comment says where.
 */

let server: TestServer
let key: string
let accountId: string

beforeAll(async () => {
  server = await startUnthrottledServer()
  const owner = await server.owner({ country: 'PT' })
  key = owner.key
  const account = await server.request('POST', '/v1/accounts', { key, body: { name: 'Main', type: 'bank', balance: 100, currency: 'EUR' } })
  accountId = account.json.data.id
})

afterAll(() => server.stop())

describe('detail names the offending field (CONTRACT §6)', () => {
  test('POST /v1/transactions with a payeeName of combining marks only → 422 naming payeeName, not the payee’s name', async () => {
    // Was: 422 "field 'name' must contain letters or digits…": the transaction body has no `name`.
    const res = await server.request('POST', '/v1/transactions', { key, body: { accountId, amount: 1, date: '2026-01-01', payeeName: '\u0301' } })
    const problem = expectProblem(res, 422, 'validation_failed')
    expect(problem.detail).toStartWith('payeeName ')
  })

  test('the same payeeName inside a batch names the item’s field: items[0].payeeName', async () => {
    const item = { externalId: 'fz-batch-1', accountId, amount: 1, date: '2026-01-01', payeeName: '\u0301\u0301' }
    const res = await server.request('POST', '/v1/transactions/batch', { key, body: { items: [item] } })
    const problem = expectProblem(res, 422, 'validation_failed')
    expect(problem.detail).toStartWith('items[0].payeeName')
  })

  // src/platform/validation.ts `fieldName` turned every all-digit path segment into an array index,
  // also an object key, so an unknown key "0" was reported as `[0]`.
  test('POST /v1/accounts with an unknown key "0" → 422 that names the field 0, not an array index [0]', async () => {
    const res = await server.request('POST', '/v1/accounts', { key, body: { name: 'A', type: 'bank', balance: 1, currency: 'EUR', 0: true } })
    const problem = expectProblem(res, 422, 'validation_failed')
    expect(problem.detail).not.toContain('[0]')
    expect(problem.detail).toContain("'0'")
  })
})

describe('cursors (CONTRACT §9; README: a cursor from another list is 422)', () => {
  test('GET /v1/accounts with a cursor from /v1/payees → 422 naming cursor, and the other way round', async () => {
    // Both lists keyed their cursors [createdAt, id]: each accepted the other's and answered a wrong page (200).
    for (const name of ['Payee one', 'Payee two']) await server.request('POST', '/v1/payees', { key, body: { name } })
    await server.request('POST', '/v1/accounts', { key, body: { name: 'Second', type: 'card', balance: 0, currency: 'EUR' } })
    const payees = await server.request('GET', '/v1/payees?limit=1', { key })
    const accounts = await server.request('GET', '/v1/accounts?limit=1', { key })
    expect(typeof payees.json.nextCursor).toBe('string')
    expect(typeof accounts.json.nextCursor).toBe('string')
    const onAccounts = await server.request('GET', `/v1/accounts?cursor=${payees.json.nextCursor}`, { key })
    expect(expectProblem(onAccounts, 422, 'validation_failed').detail).toContain('cursor')
    const onPayees = await server.request('GET', `/v1/payees?cursor=${accounts.json.nextCursor}`, { key })
    expect(expectProblem(onPayees, 422, 'validation_failed').detail).toContain('cursor')
    // The lists' own cursors still page.
    expect((await server.request('GET', `/v1/accounts?cursor=${accounts.json.nextCursor}`, { key })).status).toBe(200)
    expect((await server.request('GET', `/v1/payees?cursor=${payees.json.nextCursor}`, { key })).status).toBe(200)
  })
})

describe('payee search (CONTRACT §13: q is a substring match on the name or an alias)', () => {
  test('GET /v1/payees?q=%00 → only payees whose name holds a NUL, not every payee', async () => {
    // SQLite's LIKE stops at a NUL: the pattern '%\0%' matched every payee, and text after a NUL was never searched.
    await server.request('POST', '/v1/payees', { key, body: { name: 'Plain grocer' } })
    const nul = await server.request('POST', '/v1/payees', { key, body: { name: 'Odd\u0000tail shop' } })
    expect(nul.status).toBe(201)
    const byNul = await server.request('GET', '/v1/payees?q=%00', { key })
    expect(byNul.status).toBe(200)
    expect(byNul.json.data.map((p: { id: string }) => p.id)).toEqual([nul.json.data.id])
    const afterNul = await server.request('GET', '/v1/payees?q=tail', { key })
    expect(afterNul.json.data.map((p: { id: string }) => p.id)).toEqual([nul.json.data.id])
  })
})

describe('Idempotency-Key (CONTRACT §8)', () => {
  // src/platform/pipeline.ts stored every ApiError below 500 that a handler threw, and the money
  // checks (readMoney, called by the services) and the payee-name check run inside the handler.
  // CONTRACT §8: a 422 validation_failed is not stored, "the client may fix or retry with the same key".
  test('a 422 validation_failed for too many decimals is not stored: the same key with the amount fixed creates the account (201)', async () => {
    const idempotencyKey = 'fz-regression-money'
    const first = await server.request('POST', '/v1/accounts', {
      key,
      idempotencyKey,
      body: { name: 'Savings', type: 'bank', balance: 1.123456789, currency: 'EUR' },
    })
    expectProblem(first, 422, 'validation_failed')
    const fixed = await server.request('POST', '/v1/accounts', {
      key,
      idempotencyKey,
      body: { name: 'Savings', type: 'bank', balance: 1.12345678, currency: 'EUR' },
    })
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
  })

  test('a 422 validation_failed for a payeeName of marks only is not stored: the same key with a real name creates the transaction (201)', async () => {
    const idempotencyKey = 'fz-regression-payee-name'
    const first = await server.request('POST', '/v1/transactions', {
      key,
      idempotencyKey,
      body: { accountId, amount: 1, date: '2026-01-01', payeeName: '\u0301' },
    })
    expectProblem(first, 422, 'validation_failed')
    const fixed = await server.request('POST', '/v1/transactions', {
      key,
      idempotencyKey,
      body: { accountId, amount: 1, date: '2026-01-01', payeeName: 'Café' },
    })
    expect(fixed.status).toBe(201)
  })
})

describe('request targets (CONTRACT §6, §7)', () => {
  // Outside the application: Bun's HTTP parser refuses a request line and headers over 16 KiB with
  // a bare 431 (no body, no X-Request-Id, no X-RateLimit-*) before Elysia sees the request.
  test.todo('GET /v1/accounts/<17 000 characters> → a problem+json 4xx with X-Request-Id and X-RateLimit-*, not a bare 431', async () => {
    const res = await server.request('GET', `/v1/accounts/acct_${'f'.repeat(17_000)}`, { key })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.headers.get('x-request-id')).toBeTruthy()
    for (const name of RATE_LIMIT_HEADERS) expect(res.headers.get(name)).toBeTruthy()
  })
})
