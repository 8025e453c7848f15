import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAccount, createPayee, createTransaction, get, type Json, listAll, tableRows } from '../accounts/helpers.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/** Two owners on every payee route: the other's ids are 404 or invalid_reference, never listed or searched. */

let server: TestServer
let alice: { id: string; key: string }
let bob: { id: string; key: string }
let bobsPayee: Json
let bobsCategory: Json
let alicesAccount: Json

beforeAll(async () => {
  server = await startUnthrottledServer()
  alice = await server.owner({ name: 'Alice', country: 'PT' })
  bob = await server.owner({ name: 'Bob', country: 'PT' })
  bobsCategory = (await server.request('POST', '/v1/categories', { key: bob.key, body: { name: 'Bob only' } })).json.data
  bobsPayee = await createPayee(server, bob.key, { name: 'Bobs Bistro', externalId: 'bob-payee', aliases: ['BB Secret'], categoryId: bobsCategory.id })
  const bobsAccount = await createAccount(server, bob.key, { balance: 100 })
  await createTransaction(server, bob.key, { accountId: bobsAccount.id, payeeId: bobsPayee.id, amount: 9 })
  bobsPayee = await get(server, bob.key, `/v1/payees/${bobsPayee.id}`)
  alicesAccount = await createAccount(server, alice.key, { balance: 100 })
})
afterAll(() => server.stop())

const bobUnchanged = async () => expect(await get(server, bob.key, `/v1/payees/${bobsPayee.id}`)).toEqual(bobsPayee)

describe('payees of another owner', () => {
  test('GET and PATCH → 404 not_found', async () => {
    expectProblem(await server.request('GET', `/v1/payees/${bobsPayee.id}`, { key: alice.key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', `/v1/payees/${bobsPayee.id}`, { key: alice.key, body: { name: 'Mine now' } }), 404, 'not_found')
    await bobUnchanged()
  })

  test('never in Alice’s list, nor found by q on name or alias', async () => {
    await createPayee(server, alice.key, { name: 'Alices Cafe' })
    const all = await listAll(server, alice.key, '/v1/payees', {}, 1)
    expect(all.map((p: Json) => p.id)).not.toContain(bobsPayee.id)
    for (const q of ['bistro', 'bb secret', 'bob']) expect(await listAll(server, alice.key, '/v1/payees', { q })).toEqual([])
  })

  test('the same name in both owners is no payee_exists; upserts stay in their owner’s data', async () => {
    const mine = await createPayee(server, alice.key, { name: 'BOBS BISTRO' })
    expect(mine.id).not.toBe(bobsPayee.id)
    const up = await server.request('POST', '/v1/payees/upsert', { key: alice.key, body: { externalId: 'bob-payee', name: 'Alice upsert' } })
    expect(up.status).toBe(201)
    expect(up.json.data.id).not.toBe(bobsPayee.id)
    await bobUnchanged()
  })

  test('as a transaction’s payeeId → 422 invalid_reference; payeeName never resolves to Bob’s payee or alias', async () => {
    const before = tableRows(server, alice.id, 'transactions')
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: alice.key,
        body: { accountId: alicesAccount.id, amount: 1, date: '2025-01-01', payeeId: bobsPayee.id },
      }),
      422,
      'invalid_reference',
    )
    expect(tableRows(server, alice.id, 'transactions')).toEqual(before)
    const t = await createTransaction(server, alice.key, { accountId: alicesAccount.id, amount: 1, payeeName: 'BB Secret' })
    expect(t.payeeId).not.toBe(bobsPayee.id)
    expectProblem(await server.request('PATCH', `/v1/transactions/${t.id}`, { key: alice.key, body: { payeeId: bobsPayee.id } }), 422, 'invalid_reference')
    await bobUnchanged()
  })

  test('Bob’s custom category as a payee’s categoryId → 422 invalid_reference', async () => {
    const mine = await createPayee(server, alice.key, { name: 'Alice cat target' })
    const before = tableRows(server, alice.id, 'payees')
    expectProblem(await server.request('POST', '/v1/payees', { key: alice.key, body: { name: 'X', categoryId: bobsCategory.id } }), 422, 'invalid_reference')
    expectProblem(await server.request('PATCH', `/v1/payees/${mine.id}`, { key: alice.key, body: { categoryId: bobsCategory.id } }), 422, 'invalid_reference')
    expectProblem(
      await server.request('POST', '/v1/payees/upsert', { key: alice.key, body: { externalId: 'x-cat', name: 'X', categoryId: bobsCategory.id } }),
      422,
      'invalid_reference',
    )
    expect(tableRows(server, alice.id, 'payees')).toEqual(before)
  })
})
