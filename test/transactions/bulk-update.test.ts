import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, expectReplayOf, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { balance, createAccount, createTxn, getPayee, getTxn, type Json, snapshot, units } from './helpers.ts'

/**
 * CONTRACT §26: POST /v1/transactions/bulk-update changes up to 500 transactions as their PATCHes
 * would, one shared patch or one each (laid over it), all or nothing; a dry run reports each
 * outcome and writes nothing; balances and payee totals move exactly; the feed moves only for
 * what changed.
 */

let server: TestServer
let owner: { id: string; key: string }
let account: string
let other: string

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ country: 'PT' })
  account = (await createAccount(server, owner.key, { balance: 0 })).id
  other = (await createAccount(server, owner.key, { name: 'Other', balance: 0 })).id
})
afterAll(() => server.stop())

const bulk = (body: unknown, opts: { idempotencyKey?: string; key?: string } = {}) =>
  server.request('POST', '/v1/transactions/bulk-update', { key: opts.key ?? owner.key, body, idempotencyKey: opts.idempotencyKey })

async function some(count: number, body: Record<string, unknown> = {}): Promise<Json[]> {
  const made: Json[] = []
  for (let i = 0; i < count; i++) made.push(await createTxn(server, owner.key, { accountId: account, amount: 1, date: '2026-04-01', ...body }))
  return made
}

async function feedCursor(): Promise<string> {
  let cursor = ''
  for (;;) {
    const page = await server.request('GET', `/v1/changes${cursor ? `?cursor=${cursor}` : ''}`, { key: owner.key })
    cursor = page.json.nextCursor
    if (!page.json.hasMore) return cursor
  }
}

describe('POST /v1/transactions/bulk-update', () => {
  test('one patch for all: every transaction gets it, balances stay, the answer lists each as it is now', async () => {
    const txns = await some(30)
    const before = await balance(server, owner.key, account)
    const res = await bulk({ patch: { categoryId: 'cat_sys_groceries', note: 'groceries' }, items: txns.map((t) => ({ transactionId: t.id })) })
    expect(res.status).toBe(200)
    expect(res.json.summary).toEqual({ updated: 30, unchanged: 0, failed: 0 })
    expect(res.json.data.map((r: Json) => r.transactionId)).toEqual(txns.map((t) => t.id))
    for (const [index, result] of res.json.data.entries()) {
      expect(result).toMatchObject({
        index,
        operation: 'updated',
        errors: [],
        data: { id: txns[index].id, categoryId: 'cat_sys_groceries', categoryType: 'expense', note: 'groceries' },
      })
      expect(await getTxn(server, owner.key, txns[index].id)).toEqual(result.data)
    }
    expect(await balance(server, owner.key, account)).toBe(before)
  })

  test('one patch each, laid over the shared one field by field; money exact; balances and payee totals follow', async () => {
    const payee = (await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Bulk Shop' } })).json.data.id
    const [a, b, c] = await some(3)
    const before = await balance(server, owner.key, account)
    const res = await bulk({
      patch: { payeeId: payee, note: 'shared' },
      items: [
        { transactionId: a.id, patch: { amount: 0.1 } },
        { transactionId: b.id, patch: { amount: 0.2, note: 'own' } },
        { transactionId: c.id, patch: { accountId: other, amount: 92233720367.5 } },
      ],
    })
    expect(res.status).toBe(200)
    expect(res.json.data.map((r: Json) => [r.data.note, r.data.payeeId])).toEqual([
      ['shared', payee],
      ['own', payee],
      ['shared', payee],
    ])
    expect(res.text).toContain('"amount":92233720367.5')
    // Three of 1 became 0.1 and 0.2 here, and one moved to the other account.
    expect(await balance(server, owner.key, account)).toBe(before + units(3) - units('0.3'))
    expect(await balance(server, owner.key, other)).toBe(-units('92233720367.5'))
    expect(await getPayee(server, owner.key, payee)).toMatchObject({ transactionCount: 3, totalSpent: 92233720367.8 })
  })

  test('unchanged when the patch changes nothing: nothing written, the feed does not move', async () => {
    const [t] = await some(1, { note: 'same' })
    const [u] = await some(1)
    const cursor = await feedCursor()
    const res = await bulk({ items: [{ transactionId: t.id, patch: { note: 'same' } }, { transactionId: u.id }] })
    expect(res.json.summary).toEqual({ updated: 0, unchanged: 2, failed: 0 })
    expect((await server.request('GET', `/v1/changes?cursor=${cursor}`, { key: owner.key })).json.data).toEqual([])
  })

  test('all or nothing: the first failing item is named, and nothing of the others is written', async () => {
    const txns = await some(4)
    const edge = (await createAccount(server, owner.key, { name: 'Edge', balance: 0 })).id
    const before = snapshot(server, owner.id)
    const cases: [unknown, number, string, string][] = [
      [
        {
          items: [
            { transactionId: txns[0].id, patch: { amount: 5 } },
            { transactionId: txns[1].id, patch: { categoryId: 'cat_nope' } },
          ],
        },
        422,
        'invalid_reference',
        'items[1]: categoryId',
      ],
      [
        { patch: { amount: 2 }, items: [{ transactionId: txns[0].id }, { transactionId: 'txn_gone' }] },
        422,
        'invalid_reference',
        'items[1]: transactionId: "txn_gone"',
      ],
      [{ items: [{ transactionId: txns[2].id, patch: { isTransfer: true } }] }, 422, 'rule_violation', 'items[0]: '],
      [
        { patch: { note: 'x' }, items: [{ transactionId: txns[0].id }, { transactionId: txns[1].id }, { transactionId: txns[0].id }] },
        422,
        'rule_violation',
        'items[2].transactionId',
      ],
      [
        {
          items: [
            { transactionId: txns[0].id, patch: { externalId: 'bulk-dup' } },
            { transactionId: txns[1].id, patch: { externalId: 'bulk-dup' } },
          ],
        },
        409,
        'external_id_conflict',
        'items[1]: ',
      ],
      [
        {
          items: [
            { transactionId: txns[0].id, patch: { accountId: edge, amount: -92233720368 } },
            { transactionId: txns[1].id, patch: { accountId: edge, amount: -1 } },
          ],
        },
        422,
        'rule_violation',
        'items[1]: The balance',
      ],
    ]
    for (const [body, status, code, start] of cases) {
      const problem = expectProblem(await bulk(body), status, code)
      expect({ detail: problem.detail, start: problem.detail.startsWith(start) }).toEqual({ detail: problem.detail, start: true })
      expect(snapshot(server, owner.id)).toEqual(before)
    }
  })

  test('a dry run reports each item (the transaction as it would be, or its errors) and writes nothing', async () => {
    const [a, b] = await some(2)
    const before = snapshot(server, owner.id)
    const res = await bulk({
      patch: { note: 'would be' },
      items: [
        { transactionId: a.id },
        { transactionId: b.id, patch: { categoryId: 'cat_nope' } },
        { transactionId: 'txn_gone' },
        { transactionId: `${b.id}x` },
      ],
      dryRun: true,
    })
    expect(res.status).toBe(200)
    expect(res.json.summary).toEqual({ updated: 1, unchanged: 0, failed: 3 })
    expect(res.json.data[0]).toMatchObject({ operation: 'updated', data: { id: a.id, note: 'would be' }, errors: [] })
    expect(res.json.data[1]).toMatchObject({ operation: null, data: null, errors: [{ field: 'categoryId', code: 'invalid_reference' }] })
    expect(res.json.data[2].errors).toEqual([{ field: 'transactionId', code: 'invalid_reference', detail: '"txn_gone" does not refer to one of your records' }])
    expect(snapshot(server, owner.id)).toEqual(before)
    expect((await getTxn(server, owner.key, a.id)).note).toBeNull()
  })

  test('the shape: 1–500 items, a patch of PATCH’s fields, nothing unknown', async () => {
    const [t] = await some(1)
    const items = Array.from({ length: 501 }, () => ({ transactionId: t.id }))
    for (const [body, word] of [
      [{ items: [] }, 'items'],
      [{ items }, 'items'],
      [{ patch: { amout: 1 }, items: [{ transactionId: t.id }] }, 'amout'],
      [{ items: [{ transactionId: t.id, patch: { date: 'soon' } }] }, 'date'],
      [{ items: [{ id: t.id }] }, 'transactionId'],
      [{ patch: { note: 'x' } }, 'items'],
    ] as const) {
      expect(expectProblem(await bulk(body), 422, 'validation_failed').detail).toContain(word)
    }
  })

  test('idempotent like every POST; needs transactions:write', async () => {
    const [t] = await some(1)
    const body = { items: [{ transactionId: t.id, patch: { amount: 7 } }] }
    const first = await bulk(body, { idempotencyKey: 'bulk-1' })
    expect(first.status).toBe(200)
    expectReplayOf(await bulk(body, { idempotencyKey: 'bulk-1' }), first)
    expect((await getTxn(server, owner.key, t.id)).amount).toBe(7)
    const readOnly = await server.key(owner.id, { scopes: ['transactions:read'] })
    expectProblem(await bulk(body, { key: readOnly.key }), 403, 'insufficient_scope')
  })
})
