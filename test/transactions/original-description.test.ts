import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, getTxn, type Json, listAll, snapshot } from './helpers.ts'

/**
 * CONTRACT §23 (and §3, §13): `Transaction.originalDescription`, the bank's own text — set by
 * create, upsert and batch, never by PATCH, present in every answer, the feed and the agent context.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

async function setup() {
  const owner = await server.owner()
  const account = await createAccount(server, owner.key)
  return { owner, key: owner.key, account: account.id as string }
}

describe('originalDescription', () => {
  test('create sets it (trimmed; blank is null); GET, the list and the feed carry it', async () => {
    const { key, account } = await setup()
    const raw = '  COMPRA 4411 PINGO DOCE LISBOA  PT  '
    const res = await server.request('POST', '/v1/transactions', { key, body: { accountId: account, amount: 3, date: '2026-03-01', originalDescription: raw } })
    expect(res.status).toBe(201)
    const txn = res.json.data
    expect(txn.originalDescription).toBe(raw.trim())
    expect(await getTxn(server, key, txn.id)).toEqual(txn)
    expect(await listAll(server, key)).toEqual([txn])
    const feed = (await server.request('GET', '/v1/changes?resources=transactions', { key })).json.data
    expect(feed.map((change: Json) => change.data)).toEqual([txn])
    const context = (await server.request('GET', '/v1/agent/context', { key })).json.data
    expect(context.recentTransactions).toEqual([txn])
    const blank = await server.request('POST', '/v1/transactions', {
      key,
      body: { accountId: account, amount: 3, date: '2026-03-01', originalDescription: '   ' },
    })
    expect(blank.json.data.originalDescription).toBeNull()
  })

  test('PATCH cannot change it: 422 validation_failed naming the field, nothing written', async () => {
    const { owner, key, account } = await setup()
    const txn = (
      await server.request('POST', '/v1/transactions', { key, body: { accountId: account, amount: 3, date: '2026-03-01', originalDescription: 'BANK TEXT' } })
    ).json.data
    const before = snapshot(server, owner.id)
    for (const value of ['edited', null]) {
      const res = await server.request('PATCH', `/v1/transactions/${txn.id}`, { key, body: { originalDescription: value, note: 'x' } })
      expectProblem(res, 422, 'validation_failed')
      expect(res.json.detail).toContain("'originalDescription'")
    }
    expect(snapshot(server, owner.id)).toEqual(before)
    // Other fields change and leave it as it is.
    const patched = await server.request('PATCH', `/v1/transactions/${txn.id}`, { key, body: { note: 'lunch' } })
    expect(patched.json.data).toMatchObject({ note: 'lunch', originalDescription: 'BANK TEXT' })
  })

  test('upsert sets and changes it; absent keeps it; the same text again is no change', async () => {
    const { key, account } = await setup()
    const body = { externalId: 'bank-9', accountId: account, amount: 3, date: '2026-03-01' }
    const created = await server.request('POST', '/v1/transactions/upsert', { key, body: { ...body, originalDescription: 'FIRST' } })
    expect(created.json.data.originalDescription).toBe('FIRST')
    const kept = await server.request('POST', '/v1/transactions/upsert', { key, body })
    expect(kept.json.data.originalDescription).toBe('FIRST')
    const cursor = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    await server.request('POST', '/v1/transactions/upsert', { key, body: { ...body, originalDescription: 'FIRST' } })
    expect((await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })).json.data).toEqual([])
    const changed = await server.request('POST', '/v1/transactions/upsert', { key, body: { ...body, originalDescription: 'SECOND' } })
    expect(changed.json.data.originalDescription).toBe('SECOND')
    // A change of the bank text alone is a change of the transaction in the feed (regression: the update trigger lists the column).
    const moved = (await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })).json.data
    expect(moved.map((change: Json) => [change.resource, change.data?.originalDescription])).toEqual([['transaction', 'SECOND']])
    const cleared = await server.request('POST', '/v1/transactions/upsert', { key, body: { ...body, originalDescription: null } })
    expect(cleared.json.data.originalDescription).toBeNull()
  })

  test('batch items set it; a repeated batch is unchanged; at most 2,000 characters', async () => {
    const { key, account } = await setup()
    const items = [
      { externalId: 'b-1', accountId: account, amount: 1, date: '2026-03-01', originalDescription: 'é'.repeat(2000) },
      { externalId: 'b-2', accountId: account, amount: 2, date: '2026-03-01' },
    ]
    const first = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
    expect(first.json.data.map((item: Json) => item.data.originalDescription)).toEqual(['é'.repeat(2000), null])
    const again = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
    expect(again.json.summary).toMatchObject({ unchanged: 2 })
    const tooLong = await server.request('POST', '/v1/transactions', {
      key,
      body: { accountId: account, amount: 1, date: '2026-03-01', originalDescription: 'x'.repeat(2001) },
    })
    expectProblem(tooLong, 422, 'validation_failed')
    expect(tooLong.json.detail).toContain('originalDescription')
    const batchTooLong = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { items: [{ ...items[0], originalDescription: 'x'.repeat(2001) }] },
    })
    expectProblem(batchTooLong, 422, 'validation_failed')
    expect(batchTooLong.json.detail).toStartWith('items[0].originalDescription')
  })
})
