import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { balances, createAccount, createTxn, getTxn, listAll, snapshot } from './helpers.ts'

/** Upsert by externalId, externalId conflicts, idempotent replay (CONTRACT §8), owner isolation. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

describe('upsert', () => {
  test('created (201, Location) then updated (200) by externalId; the balance reflects only the latest version', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key, { name: 'A' })
    const b = await createAccount(server, owner.key, { name: 'B' })
    const body = { externalId: 'bank-tx-1', accountId: a.id, amount: 10, date: '2026-01-01', note: 'first' }
    const created = await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body })
    expect(created.status).toBe(201)
    expect(Object.keys(created.json).sort()).toEqual(['data', 'operation', 'rulesApplied'])
    expect(created.json.operation).toBe('created')
    expect(created.headers.get('location')).toBe(`/v1/transactions/${created.json.data.id}`)
    expect(created.json.data).toMatchObject({ externalId: 'bank-tx-1', amount: 10, note: 'first' })
    expect(await balances(server, owner.key, a.id, b.id)).toEqual(['90', '100'])

    const updated = await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { ...body, amount: 12.5, note: 'second' } })
    expect(updated.status).toBe(200)
    expect(updated.json.operation).toBe('updated')
    expect(updated.json.data).toEqual({ ...created.json.data, amount: 12.5, note: 'second', updatedAt: updated.json.data.updatedAt })
    expect(await balances(server, owner.key, a.id, b.id)).toEqual(['87.5', '100'])

    // the same external id, now on another account and as income, trimmed
    const moved = await server.request('POST', '/v1/transactions/upsert', {
      key: owner.key,
      body: { ...body, externalId: '  bank-tx-1 ', accountId: b.id, amount: -3 },
    })
    expect(moved.status).toBe(200)
    expect(moved.json.data.id).toBe(created.json.data.id)
    expect(await balances(server, owner.key, a.id, b.id)).toEqual(['100', '103'])
    // the same version again: updated, no change in money
    const again = await server.request('POST', '/v1/transactions/upsert', {
      key: owner.key,
      body: { externalId: 'bank-tx-1', accountId: b.id, amount: -3, date: '2026-01-01' },
    })
    expect(again.status).toBe(200)
    expect(await balances(server, owner.key, a.id, b.id)).toEqual(['100', '103'])
    expect((await listAll(server, owner.key)).length).toBe(1)
    // an upsert that omits an optional field keeps its value (CONTRACT §13)
    expect(again.json.data.note).toBe('first')
    expect(again.json.data).toEqual(moved.json.data)
  })

  test('the list can be filtered by the externalId', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key)
    const one = await server.request('POST', '/v1/transactions/upsert', {
      key: owner.key,
      body: { externalId: 'x-1', accountId: a.id, amount: 1, date: '2026-01-01' },
    })
    await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { externalId: 'x-2', accountId: a.id, amount: 1, date: '2026-01-01' } })
    expect(await listAll(server, owner.key, 'externalId=x-1')).toEqual([one.json.data])
  })

  test('a duplicate externalId on create or PATCH → 409 external_id_conflict, nothing changes', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key)
    const first = await createTxn(server, owner.key, { accountId: a.id, amount: 1, date: '2026-01-01', externalId: 'dup' })
    const second = await createTxn(server, owner.key, { accountId: a.id, amount: 2, date: '2026-01-01', externalId: 'other' })
    const before = snapshot(server, owner.id)
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: owner.key, body: { accountId: a.id, amount: 5, date: '2026-01-01', externalId: 'dup' } }),
      409,
      'external_id_conflict',
    )
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: owner.key, body: { accountId: a.id, amount: 5, date: '2026-01-01', externalId: ' dup ' } }),
      409,
      'external_id_conflict',
    )
    expectProblem(
      await server.request('PATCH', `/v1/transactions/${second.id}`, { key: owner.key, body: { externalId: 'dup', amount: 50 } }),
      409,
      'external_id_conflict',
    )
    expect(snapshot(server, owner.id)).toEqual(before)
    // setting its own externalId again is fine; freeing one lets another take it
    expect((await server.request('PATCH', `/v1/transactions/${first.id}`, { key: owner.key, body: { externalId: 'dup' } })).status).toBe(200)
    expect((await server.request('PATCH', `/v1/transactions/${first.id}`, { key: owner.key, body: { externalId: null } })).status).toBe(200)
    expect((await server.request('PATCH', `/v1/transactions/${second.id}`, { key: owner.key, body: { externalId: 'dup' } })).status).toBe(200)
    // another owner may use the same externalId
    const other = await server.owner()
    const oa = await createAccount(server, other.key)
    expect(
      (await server.request('POST', '/v1/transactions', { key: other.key, body: { accountId: oa.id, amount: 1, date: '2026-01-01', externalId: 'dup' } }))
        .status,
    ).toBe(201)
  })
})

describe('replay', () => {
  function expectReplay(first: TestResponse, replay: TestResponse) {
    expect(replay.status).toBe(first.status)
    expect(replay.text).toBe(first.text)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    expect(replay.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'))
    expect(replay.headers.get('location')).toBe(first.headers.get('location'))
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'))
  }

  test('every POST and PATCH replays its stored response and moves the balance once', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key, { name: 'A' })
    const b = await createAccount(server, owner.key, { name: 'B' })

    const send = async (method: string, path: string, body: unknown, expectedStatus: number, after: string[]) => {
      const key = crypto.randomUUID()
      const first = await server.request(method, path, { key: owner.key, body, idempotencyKey: key })
      expect(first.status).toBe(expectedStatus)
      expect(await balances(server, owner.key, a.id, b.id)).toEqual(after)
      for (let i = 0; i < 3; i++) {
        const replay = await server.request(method, path, { key: owner.key, body, idempotencyKey: key })
        expectReplay(first, replay)
      }
      expect(await balances(server, owner.key, a.id, b.id)).toEqual(after)
      return first
    }

    const created = await send('POST', '/v1/transactions', { accountId: a.id, amount: 10, date: '2026-01-01', payeeName: 'Replay Shop' }, 201, ['90', '100'])
    const txnId = created.json.data.id
    await send('PATCH', `/v1/transactions/${txnId}`, { amount: 15 }, 200, ['85', '100'])
    await send('PATCH', `/v1/transactions/${txnId}`, { isTransfer: true, transferToAccountId: b.id }, 200, ['85', '115'])
    await send('POST', '/v1/transactions/upsert', { externalId: 'r-1', accountId: a.id, amount: 5, date: '2026-01-01' }, 201, ['80', '115'])
    await send('POST', '/v1/transactions/upsert', { externalId: 'r-1', accountId: a.id, amount: 7, date: '2026-01-01' }, 200, ['78', '115'])
    const transfer = await send(
      'POST',
      '/v1/transactions',
      { accountId: b.id, amount: 1.5, date: '2026-01-02', isTransfer: true, transferToAccountId: a.id },
      201,
      ['79.5', '113.5'],
    )
    expect(transfer.headers.get('location')).toBe(`/v1/transactions/${transfer.json.data.id}`)
    expect((await listAll(server, owner.key)).length).toBe(3)
    const payees = await server.request('GET', '/v1/payees', { key: owner.key })
    expect(payees.json.data.length).toBe(1)
    expect(payees.json.data[0].transactionCount).toBe(1)

    // the same key with another body → 409 idempotency_key_reused, nothing changes
    const key = crypto.randomUUID()
    expect(
      (await server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: key, body: { accountId: a.id, amount: 1, date: '2026-01-01' } }))
        .status,
    ).toBe(201)
    const before = snapshot(server, owner.id)
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: key, body: { accountId: a.id, amount: 2, date: '2026-01-01' } }),
      409,
      'idempotency_key_reused',
    )
    expectProblem(
      await server.request('PATCH', `/v1/transactions/${txnId}`, { key: owner.key, idempotencyKey: key, body: { amount: 1 } }),
      409,
      'idempotency_key_reused',
    )
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('a 422 invalid_reference and a 422 rule_violation from the handler are stored and replayed', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key)
    const missing = 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'
    for (const [body, code] of [
      [{ accountId: missing, amount: 1, date: '2026-01-01' }, 'invalid_reference'],
      [{ accountId: a.id, amount: 1, date: '2026-01-01', isTransfer: true }, 'rule_violation'],
      [{ accountId: a.id, amount: 1, date: '2026-01-01', categoryId: 'cat_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' }, 'invalid_reference'],
    ] as const) {
      const key = crypto.randomUUID()
      const first = await server.request('POST', '/v1/transactions', { key: owner.key, body, idempotencyKey: key })
      expectProblem(first, 422, code)
      const replay = await server.request('POST', '/v1/transactions', { key: owner.key, body, idempotencyKey: key })
      expectProblem(replay, 422, code)
      expectReplay(first, replay)
    }
    const txn = await createTxn(server, owner.key, { accountId: a.id, amount: 1, date: '2026-01-01' })
    const key = crypto.randomUUID()
    const first = await server.request('PATCH', `/v1/transactions/${txn.id}`, {
      key: owner.key,
      body: { payeeId: 'pay_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' },
      idempotencyKey: key,
    })
    expectProblem(first, 422, 'invalid_reference')
    expectReplay(
      first,
      await server.request('PATCH', `/v1/transactions/${txn.id}`, {
        key: owner.key,
        body: { payeeId: 'pay_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' },
        idempotencyKey: key,
      }),
    )
    expect(await balances(server, owner.key, a.id)).toEqual(['99'])
  })

  test('the same body spelled differently (key order, number form) is the same request: replayed', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key)
    const key = crypto.randomUUID()
    const first = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      idempotencyKey: key,
      body: `{"accountId":"${a.id}","amount":10,"date":"2026-01-01"}`,
    })
    expect(first.status).toBe(201)
    for (const spelling of [`{"date":"2026-01-01","amount":10.00,"accountId":"${a.id}"}`, `{ "amount" : 1e1 , "accountId":"${a.id}","date":"2026-01-01"}`]) {
      const again = await server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: key, body: spelling })
      expectReplay(first, again)
    }
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: owner.key,
        idempotencyKey: key,
        body: `{"accountId":"${a.id}","amount":10.00000001,"date":"2026-01-01"}`,
      }),
      409,
      'idempotency_key_reused',
    )
    expect(await balances(server, owner.key, a.id)).toEqual(['90'])
  })

  test('a 422 validation_failed is not stored: the same key works once the body is fixed', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key)
    const key = crypto.randomUUID()
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: key, body: { accountId: a.id, amount: 1, date: '2026-02-30' } }),
      422,
      'validation_failed',
    )
    const fixed = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      idempotencyKey: key,
      body: { accountId: a.id, amount: 1, date: '2026-02-28' },
    })
    expect(fixed.status).toBe(201)
    expect(fixed.headers.get('idempotent-replayed')).toBeNull()
  })

  test('concurrent duplicates: one write, the rest are replays or 409 in progress', async () => {
    const owner = await server.owner()
    const a = await createAccount(server, owner.key)
    const key = crypto.randomUUID()
    const body = { accountId: a.id, amount: 2.5, date: '2026-01-01' }
    const results = await Promise.all(
      Array.from({ length: 20 }, () => server.request('POST', '/v1/transactions', { key: owner.key, body, idempotencyKey: key })),
    )
    const created = results.filter((r) => r.status === 201)
    for (const r of results) {
      if (r.status === 409) expectProblem(r, 409, 'idempotency_key_in_progress')
      else expect(r.status).toBe(201)
    }
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(new Set(created.map((r) => r.text)).size).toBe(1)
    expect(created.filter((r) => r.headers.get('idempotent-replayed') !== 'true').length).toBe(1)
    expect(await balances(server, owner.key, a.id)).toEqual(['97.5'])
    expect((await listAll(server, owner.key)).length).toBe(1)
  })
})

describe('isolation', () => {
  test("another owner's transactions → 404 on every route, never in lists", async () => {
    const alice = await server.owner()
    const bob = await server.owner()
    const aliceAccount = await createAccount(server, alice.key)
    const bobAccount = await createAccount(server, bob.key)
    const txn = await createTxn(server, alice.key, {
      accountId: aliceAccount.id,
      amount: 3,
      date: '2026-01-01',
      externalId: 'shared-ext',
      payeeName: 'Alice Shop',
    })
    const bobTxn = await createTxn(server, bob.key, { accountId: bobAccount.id, amount: 4, date: '2026-01-01' })
    const aliceBefore = snapshot(server, alice.id)

    expectProblem(await server.request('GET', `/v1/transactions/${txn.id}`, { key: bob.key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: bob.key, body: { note: 'mine now' } }), 404, 'not_found')
    expectProblem(await server.request('DELETE', `/v1/transactions/${txn.id}`, { key: bob.key }), 404, 'not_found')
    expect(snapshot(server, alice.id)).toEqual(aliceBefore)

    expect(await listAll(server, bob.key)).toEqual([bobTxn])
    for (const query of [`accountId=${aliceAccount.id}`, 'externalId=shared-ext', `payeeId=${txn.payeeId}`]) {
      const res = await server.request('GET', `/v1/transactions?${query}`, { key: bob.key })
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ data: [], nextCursor: null, hasMore: false })
    }
    // bob's upsert with alice's externalId creates bob's own
    const up = await server.request('POST', '/v1/transactions/upsert', {
      key: bob.key,
      body: { externalId: 'shared-ext', accountId: bobAccount.id, amount: 1, date: '2026-01-01' },
    })
    expect(up.status).toBe(201)
    expect(up.json.data.id).not.toBe(txn.id)
    // the agent context shows only one's own transactions
    const ctx = await server.request('GET', '/v1/agent/context', { key: bob.key })
    expect(ctx.status).toBe(200)
    const ids = ctx.json.data.recentTransactions.map((t: { id: string }) => t.id)
    expect(ids).not.toContain(txn.id)
    expect(snapshot(server, alice.id)).toEqual(aliceBefore)
    expect(await getTxn(server, alice.key, txn.id)).toEqual(txn)
  })

  test('an idempotency key used by one owner is independent for another', async () => {
    const alice = await server.owner()
    const bob = await server.owner()
    const aa = await createAccount(server, alice.key)
    const ba = await createAccount(server, bob.key)
    const key = 'shared-idempotency-key'
    const r1 = await server.request('POST', '/v1/transactions', {
      key: alice.key,
      idempotencyKey: key,
      body: { accountId: aa.id, amount: 1, date: '2026-01-01' },
    })
    const r2 = await server.request('POST', '/v1/transactions', {
      key: bob.key,
      idempotencyKey: key,
      body: { accountId: ba.id, amount: 1, date: '2026-01-01' },
    })
    expect(r1.status).toBe(201)
    expect(r2.status).toBe(201)
    expect(r2.headers.get('idempotent-replayed')).toBeNull()
  })
})
