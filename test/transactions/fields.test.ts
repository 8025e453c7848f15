import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, createTxn, getTxn, listAll, snapshot, TXN_FIELDS } from './helpers.ts'

/** SPEC §2.6 / CONTRACT §3: every field of a transaction round-trips; formats are checked. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

describe('transaction fields', () => {
  test('every field round-trips through create, get and list (expense category)', async () => {
    const owner = await server.owner({ country: 'PT' })
    const account = await createAccount(server, owner.key)
    const res = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: {
        accountId: account.id,
        amount: 12.9,
        date: '2026-11-21',
        time: '14:30',
        note: '  weekly shop ',
        externalId: ' bank-1 ',
        categoryId: 'cat_sys_groceries',
        payeeName: 'Pingo Doce',
      },
    })
    expect(res.status).toBe(201)
    // rulesApplied is null: the write did not ask for rules (CONTRACT §23).
    expect(res.json.rulesApplied).toBeNull()
    expect(Object.keys(res.json)).toEqual(['data', 'rulesApplied'])
    const txn = res.json.data
    expect(Object.keys(txn).sort()).toEqual([...TXN_FIELDS].sort())
    expect(txn.id).toMatch(/^txn_/)
    expect(res.headers.get('location')).toBe(`/v1/transactions/${txn.id}`)
    expect(txn.payeeId).toMatch(/^pay_/)
    expect(typeof txn.createdAt).toBe('number')
    expect(Number.isInteger(txn.createdAt)).toBe(true)
    expect(Math.abs(txn.createdAt - Date.now())).toBeLessThan(60_000)
    expect(txn).toEqual({
      id: txn.id,
      externalId: 'bank-1',
      accountId: account.id,
      categoryId: 'cat_sys_groceries',
      payeeId: txn.payeeId,
      amount: 12.9,
      date: '2026-11-21',
      note: 'weekly shop',
      originalDescription: null,
      time: '14:30',
      isTransfer: false,
      transferToAccountId: null,
      destinationAmount: null,
      exchangeRate: null,
      hasSplits: false,
      splitMode: null,
      categoryType: 'expense',
      createdAt: txn.createdAt,
      // A new object has not changed since it was made (CONTRACT §25).
      updatedAt: txn.createdAt,
      // The owner's own write carries its own id (CONTRACT §30).
      createdBy: owner.id,
      updatedBy: owner.id,
      splits: [],
      tagIds: [],
      scheduleId: null,
    })
    expect(await getTxn(server, owner.key, txn.id)).toEqual(txn)
    expect(await listAll(server, owner.key)).toEqual([txn])
    // the payee named in the request exists
    const payee = await server.request('GET', `/v1/payees/${txn.payeeId}`, { key: owner.key })
    expect(payee.json.data.name).toBe('Pingo Doce')
  })

  test('time reads back as sent with seconds; an income category gives categoryType income', async () => {
    const owner = await server.owner({ country: 'US' })
    const account = await createAccount(server, owner.key)
    const incomes = await server.request('GET', '/v1/categories?type=income&limit=200', { key: owner.key })
    expect(incomes.status).toBe(200)
    const income = incomes.json.data.find((c: { type: string; isSystem: boolean }) => c.type === 'income' && c.isSystem)
    expect(income).toBeDefined()
    const txn = await createTxn(server, owner.key, { accountId: account.id, amount: -2500, date: '2026-01-31', time: '14:30:05', categoryId: income.id })
    expect(txn).toMatchObject({ time: '14:30:05', categoryId: income.id, categoryType: 'income', amount: -2500, note: null, externalId: null, payeeId: null })
    expect((await getTxn(server, owner.key, txn.id)).time).toBe('14:30:05')
  })

  test('minimal body: defaults are null/false', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const txn = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2024-02-29' })
    expect(txn).toEqual({
      id: txn.id,
      externalId: null,
      accountId: account.id,
      categoryId: null,
      payeeId: null,
      amount: 1,
      date: '2024-02-29',
      note: null,
      originalDescription: null,
      time: null,
      isTransfer: false,
      transferToAccountId: null,
      destinationAmount: null,
      exchangeRate: null,
      hasSplits: false,
      splitMode: null,
      categoryType: null,
      createdAt: txn.createdAt,
      updatedAt: txn.createdAt,
      // The owner's own write carries its own id (CONTRACT §30).
      createdBy: owner.id,
      updatedBy: owner.id,
      splits: [],
      tagIds: [],
      scheduleId: null,
    })
  })

  test('a note that is only whitespace reads back as null (trimmed, empty reads as absent)', async () => {
    // src/platform/schemas.ts documents `trimmed`: "empty after trimming reads as absent for optional fields".
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const txn = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2026-01-01', note: '   ' })
    expect(txn.note).toBeNull()
    const patched = await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: { note: ' \t ' } })
    expect(patched.json.data.note).toBeNull()
  })

  test('a custom category gives its own type; an untyped one gives categoryType null', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const typed = await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Side gigs', type: 'income' } })
    const untyped = await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Misc' } })
    const a = await createTxn(server, owner.key, { accountId: account.id, amount: -10, date: '2026-03-01', categoryId: typed.json.data.id })
    const b = await createTxn(server, owner.key, { accountId: account.id, amount: 10, date: '2026-03-01', categoryId: untyped.json.data.id })
    expect(a.categoryType).toBe('income')
    expect(b.categoryType).toBeNull()
  })

  test('PATCH sets and clears the nullable fields; categoryType follows the category', async () => {
    const owner = await server.owner({ country: 'US' })
    const account = await createAccount(server, owner.key)
    const txn = await createTxn(server, owner.key, {
      accountId: account.id,
      amount: 5,
      date: '2026-03-01',
      note: 'n',
      time: '08:00',
      externalId: 'x1',
      categoryId: 'cat_sys_groceries',
      payeeName: 'Cafe',
    })
    const res = await server.request('PATCH', `/v1/transactions/${txn.id}`, {
      key: owner.key,
      body: { note: null, time: null, externalId: null, categoryId: null, payeeId: null, date: '2026-03-02' },
    })
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual({
      ...txn,
      note: null,
      time: null,
      externalId: null,
      categoryId: null,
      categoryType: null,
      payeeId: null,
      date: '2026-03-02',
      updatedAt: res.json.data.updatedAt,
    })
    const back = await server.request('PATCH', `/v1/transactions/${txn.id}`, {
      key: owner.key,
      body: { note: 'again', time: '23:59:59', externalId: 'x2', categoryId: 'cat_sys_salary' },
    })
    expect(back.status).toBe(200)
    expect(back.json.data).toMatchObject({ note: 'again', time: '23:59:59', externalId: 'x2', categoryId: 'cat_sys_salary', categoryType: 'income' })
    expect(await getTxn(server, owner.key, txn.id)).toEqual(back.json.data)
    // an empty PATCH changes nothing
    const empty = await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: {} })
    expect(empty.status).toBe(200)
    expect(empty.json.data).toEqual(back.json.data)
  })
})

describe('transaction formats', () => {
  let owner: { id: string; key: string }
  let accountId: string
  beforeAll(async () => {
    owner = await server.owner()
    accountId = (await createAccount(server, owner.key)).id
  })

  const bad: [string, Record<string, unknown>][] = [
    ['a date that is not on the calendar', { date: '2026-02-30' }],
    ['February 29 of a common year', { date: '2025-02-29' }],
    ['month 13', { date: '2026-13-01' }],
    ['day 00', { date: '2026-01-00' }],
    ['a date with a time', { date: '2026-01-01T00:00:00Z' }],
    ['a date without padding', { date: '2026-1-1' }],
    ['hour 25', { time: '25:00' }],
    ['hour 24', { time: '24:00' }],
    ['minute 60', { time: '12:60' }],
    ['second 60', { time: '12:00:60' }],
    ['a time without padding', { time: '9:30' }],
    ['a time with a zone', { time: '14:30Z' }],
    ['a number as amount text', { amount: '12.50' }],
    ['a missing amount', { amount: undefined }],
    ['a missing date', { date: undefined }],
    ['a missing accountId', { accountId: undefined }],
    ['an unknown field', { payee: 'x' }],
    ['hasSplits (response-only)', { hasSplits: false }],
    ['splitMode (response-only)', { splitMode: null }],
    ['an empty externalId', { externalId: '' }],
    ['a whitespace externalId', { externalId: '   ' }],
    ['a note over 2000 characters', { note: 'x'.repeat(2001) }],
    ['an empty payeeName', { payeeName: '' }],
    ['isTransfer as a string', { isTransfer: 'true' }],
    ['exchangeRate 0', { exchangeRate: 0 }],
    ['a negative exchangeRate', { exchangeRate: -1.1 }],
    ['amount null', { amount: null }],
    ['date null', { date: null }],
  ]
  for (const [what, change] of bad) {
    test(`422 validation_failed: ${what}; nothing changes`, async () => {
      const before = snapshot(server, owner.id)
      const body: Record<string, unknown> = { accountId, amount: 1, date: '2026-01-01', ...change }
      for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k]
      const res = await server.request('POST', '/v1/transactions', { key: owner.key, body })
      expectProblem(res, 422, 'validation_failed')
      expect(snapshot(server, owner.id)).toEqual(before)
    })
  }

  test('the same bad formats are rejected on PATCH and upsert', async () => {
    const txn = await createTxn(server, owner.key, { accountId, amount: 1, date: '2026-01-01' })
    const before = snapshot(server, owner.id)
    for (const change of [{ date: '2026-02-30' }, { time: '25:00' }, { amount: null }, { accountId: null }, { date: null }, { hasSplits: true }]) {
      expectProblem(await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: change }), 422, 'validation_failed')
      expectProblem(
        await server.request('POST', '/v1/transactions/upsert', {
          key: owner.key,
          body: { externalId: 'u', accountId, amount: 1, date: '2026-01-01', ...change },
        }),
        422,
        'validation_failed',
      )
    }
    expectProblem(
      await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { accountId, amount: 1, date: '2026-01-01' } }),
      422,
      'validation_failed',
    )
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('the detail names the offending field', async () => {
    const res = await server.request('POST', '/v1/transactions', { key: owner.key, body: { accountId, amount: 1, date: '2026-02-30' } })
    expect(expectProblem(res, 422, 'validation_failed').detail).toContain('date')
    const t = await server.request('POST', '/v1/transactions', { key: owner.key, body: { accountId, amount: 1, date: '2026-02-03', time: '25:00' } })
    expect(expectProblem(t, 422, 'validation_failed').detail).toContain('time')
  })
})
