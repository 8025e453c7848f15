import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, get, type Json, listAll, tableRows } from './helpers.ts'

/** Two owners on every account route: the other's ids are 404 or invalid_reference, never listed. */

let server: TestServer
let alice: { id: string; key: string }
let bob: { id: string; key: string }
let bobs: Json
let bobsArchived: Json

beforeAll(async () => {
  server = await startUnthrottledServer()
  alice = await server.owner({ name: 'Alice' })
  bob = await server.owner({ name: 'Bob' })
  await createAccount(server, alice.key, { name: 'Alice main', externalId: 'shared-ext' })
  bobs = await createAccount(server, bob.key, { name: 'Bob main', externalId: 'shared-ext', balance: 77 })
  bobsArchived = await createAccount(server, bob.key, { name: 'Bob old', externalId: 'bob-old' })
  await server.request('DELETE', `/v1/accounts/${bobsArchived.id}`, { key: bob.key })
})
afterAll(() => server.stop())

const bobUnchanged = async () => {
  expect(await get(server, bob.key, `/v1/accounts/${bobs.id}`)).toEqual(bobs)
  expect((await get(server, bob.key, `/v1/accounts/${bobsArchived.id}`)).isArchived).toBe(true)
}

describe('accounts of another owner', () => {
  test('GET, PATCH and DELETE → 404 not_found; Bob’s data unchanged', async () => {
    for (const id of [bobs.id, bobsArchived.id]) {
      expectProblem(await server.request('GET', `/v1/accounts/${id}`, { key: alice.key }), 404, 'not_found')
      expectProblem(await server.request('PATCH', `/v1/accounts/${id}`, { key: alice.key, body: { name: 'Hijacked', balance: 0 } }), 404, 'not_found')
      expectProblem(await server.request('DELETE', `/v1/accounts/${id}`, { key: alice.key }), 404, 'not_found')
    }
    await bobUnchanged()
    expect(tableRows(server, bob.id, 'accounts')).toHaveLength(2)
  })

  test('never in Alice’s lists, with or without includeArchived', async () => {
    for (const query of [{}, { includeArchived: 'true' }] as Record<string, string>[]) {
      const ids = (await listAll(server, alice.key, '/v1/accounts', query, 1)).map((a: Json) => a.id)
      expect(ids).not.toContain(bobs.id)
      expect(ids).not.toContain(bobsArchived.id)
    }
    const aliceRaw = await server.request('GET', '/v1/accounts?includeArchived=true&limit=200', { key: alice.key })
    expect(aliceRaw.text).not.toContain('Bob')
  })

  test('as linkedAccountId → 422 invalid_reference on create, PATCH and upsert', async () => {
    const mine = await createAccount(server, alice.key)
    const before = tableRows(server, alice.id, 'accounts')
    const bodies = [
      ['POST', '/v1/accounts', { name: 'L', type: 'bank', balance: 0, currency: 'EUR', linkedAccountId: bobs.id }],
      ['PATCH', `/v1/accounts/${mine.id}`, { linkedAccountId: bobs.id }],
      ['POST', '/v1/accounts/upsert', { externalId: 'iso-up', name: 'L', type: 'bank', balance: 0, currency: 'EUR', linkedAccountId: bobsArchived.id }],
    ] as const
    for (const [method, path, body] of bodies) {
      expect(expectProblem(await server.request(method, path, { key: alice.key, body }), 422, 'invalid_reference').detail).toContain('linkedAccountId')
    }
    expect(tableRows(server, alice.id, 'accounts')).toEqual(before)
  })

  test('as a transaction’s accountId or transfer destination → 422 invalid_reference; Bob’s balance untouched', async () => {
    const mine = await createAccount(server, alice.key, { balance: 50 })
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: alice.key, body: { accountId: bobs.id, amount: 5, date: '2025-01-01' } }),
      422,
      'invalid_reference',
    )
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: alice.key,
        body: { accountId: mine.id, amount: 5, date: '2025-01-01', isTransfer: true, transferToAccountId: bobs.id },
      }),
      422,
      'invalid_reference',
    )
    expect((await get(server, alice.key, `/v1/accounts/${mine.id}`)).balance).toBe(50)
    await bobUnchanged()
  })

  test('externalIds are per owner: the same externalId and upserts stay in their own owner’s data', async () => {
    // Alice already has 'shared-ext', like Bob: no conflict across owners. Her upsert updates hers only.
    const res = await server.request('POST', '/v1/accounts/upsert', {
      key: alice.key,
      body: { externalId: 'shared-ext', name: 'Alice synced', type: 'bank', balance: 1, currency: 'EUR' },
    })
    expect(res.status).toBe(200)
    expect(res.json.data.id).not.toBe(bobs.id)
    // An externalId only Bob has: Alice's upsert creates her own account.
    const created = await server.request('POST', '/v1/accounts/upsert', {
      key: alice.key,
      body: { externalId: 'bob-old', name: 'Alice new', type: 'bank', balance: 1, currency: 'EUR' },
    })
    expect(created.status).toBe(201)
    expect(created.json.data.id).not.toBe(bobsArchived.id)
    expect(created.json.data.isArchived).toBe(false)
    // And Alice may PATCH her account to an externalId that only Bob uses.
    const mine = await createAccount(server, alice.key)
    expect((await server.request('PATCH', `/v1/accounts/${mine.id}`, { key: alice.key, body: { externalId: 'bob-only' } })).status).toBe(200)
    await bobUnchanged()
  })
})
