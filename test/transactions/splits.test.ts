import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { balance, createAccount, createTxn, getTxn, type Json, lexeme, listAll, patchTxn, rawNumber, snapshot, units } from './helpers.ts'

/** CONTRACT §21: a transaction's legs, their rules, their effects on balances, payee totals, filters and the feed. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

async function setup() {
  const owner = await server.owner({ country: 'PT' })
  const account = await createAccount(server, owner.key, { balance: 100 })
  return { owner, key: owner.key, account: account.id as string }
}

async function payee(key: string, name: string, categoryId?: string): Promise<string> {
  const res = await server.request('POST', '/v1/payees', { key, body: { name, ...(categoryId ? { categoryId } : {}) } })
  expect(res.status).toBe(201)
  return res.json.data.id
}

/** A payee's totals as exact text: `count spent`. */
async function totals(key: string, id: string): Promise<string> {
  const res = await server.request('GET', `/v1/payees/${id}`, { key })
  return `${res.json.data.transactionCount} ${lexeme(units(rawNumber(res.text, 'totalSpent')))}`
}

/**
 * Commits in an owner's write-ahead log since it was last emptied: frames of the log's current
 * salt whose header gives a database size (only a transaction's last frame does). One commit is
 * one fsync of the log (synchronous=FULL).
 */
function commitFrames(walPath: string): number {
  const wal = readFileSync(walPath)
  if (wal.length < 32) return 0
  const pageSize = wal.readUInt32BE(8)
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)]
  let commits = 0
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salts[0] || wal.readUInt32BE(at + 12) !== salts[1]) break
    if (wal.readUInt32BE(at + 4) !== 0) commits++
  }
  return commits
}

const post = (key: string, body: unknown) => server.request('POST', '/v1/transactions', { key, body })
const patch = (key: string, id: string, body: unknown) => server.request('PATCH', `/v1/transactions/${id}`, { key, body })

describe('legs', () => {
  test('0.1 + 0.2 on a 0.3 parent: accepted, in the order given, and the transaction shows them', async () => {
    const { key, account } = await setup()
    const txn = await createTxn(server, key, {
      accountId: account,
      amount: 0.3,
      date: '2026-03-01',
      splits: [
        { amount: 0.1, categoryId: 'cat_sys_groceries', note: ' bread ' },
        { amount: 0.2, categoryId: 'cat_sys_salary' },
      ],
    })
    expect(txn).toMatchObject({ amount: 0.3, hasSplits: true, splitMode: 'category', categoryId: null, categoryType: null })
    expect(txn.splits).toHaveLength(2)
    for (const leg of txn.splits) {
      expect(Object.keys(leg)).toEqual(['id', 'amount', 'categoryId', 'categoryType', 'payeeId', 'note'])
      expect(leg.id).toMatch(/^spl_[0-9a-f]{32}$/)
    }
    expect(txn.splits.map((leg: Json) => [leg.amount, leg.categoryId, leg.categoryType, leg.note])).toEqual([
      [0.1, 'cat_sys_groceries', 'expense', 'bread'],
      [0.2, 'cat_sys_salary', 'income', null],
    ])
    expect(await getTxn(server, key, txn.id)).toEqual(txn)
    expect(await listAll(server, key)).toEqual([txn])
    expect(lexeme(await balance(server, key, account))).toBe('99.7')
  })

  test('legs off by 0.00000001 are refused, naming splits, and nothing is written', async () => {
    const { owner, key, account } = await setup()
    const before = snapshot(server, owner.id)
    const res = await server.request('POST', '/v1/transactions', {
      key,
      body: `{"accountId":"${account}","amount":10,"date":"2026-03-01","payeeName":"New Shop","tagNames":["fresh"],"splits":[{"amount":4.99999999},{"amount":5}]}`,
    })
    expectProblem(res, 422, 'rule_violation')
    expect(res.json.detail).toBe('splits: the legs sum to 9.99999999, not to the amount 10; they must sum exactly')
    expect(snapshot(server, owner.id)).toEqual(before)
    expect((await server.request('GET', '/v1/tags', { key })).json.data).toEqual([])
  })

  test('a leg may be 0 or of the other sign (a refund inside a purchase)', async () => {
    const { key, account } = await setup()
    const txn = await createTxn(server, key, { accountId: account, amount: 7.5, date: '2026-03-01', splits: [{ amount: 10 }, { amount: -2.5 }, { amount: 0 }] })
    expect(txn.splits.map((leg: Json) => leg.amount)).toEqual([10, -2.5, 0])
  })

  test('one leg, or 101, is validation_failed; none is a plain transaction', async () => {
    const { key, account } = await setup()
    const one = await post(key, { accountId: account, amount: 1, date: '2026-03-01', splits: [{ amount: 1 }] })
    expectProblem(one, 422, 'validation_failed')
    expect(one.json.detail).toStartWith('splits must hold 2–100 legs')
    const many = await post(key, { accountId: account, amount: 101, date: '2026-03-01', splits: Array.from({ length: 101 }, () => ({ amount: 1 })) })
    expectProblem(many, 422, 'validation_failed')
    expect(many.json.detail).toContain('splits')
    const hundred = await post(key, { accountId: account, amount: 100, date: '2026-03-01', splits: Array.from({ length: 100 }, () => ({ amount: 1 })) })
    expect(hundred.status).toBe(201)
    expect(hundred.json.data.splits).toHaveLength(100)
    const none = await createTxn(server, key, { accountId: account, amount: 1, date: '2026-03-01', splits: [] })
    expect(none).toMatchObject({ hasSplits: false, splitMode: null, splits: [] })
  })

  test('a leg’s money is read exactly: 9 decimals is validation_failed naming the leg', async () => {
    const { key, account } = await setup()
    const res = await server.request('POST', '/v1/transactions', {
      key,
      body: `{"accountId":"${account}","amount":1,"date":"2026-03-01","splits":[{"amount":0.5},{"amount":0.500000001}]}`,
    })
    expectProblem(res, 422, 'validation_failed')
    expect(res.json.detail).toBe('splits[1].amount must have at most 8 decimal places')
  })

  test('a transfer cannot be split, nor a split transaction made a transfer', async () => {
    const { key, account } = await setup()
    const other = (await createAccount(server, key, { name: 'Savings' })).id
    const transfer = await post(key, {
      accountId: account,
      amount: 3,
      date: '2026-03-01',
      isTransfer: true,
      transferToAccountId: other,
      splits: [{ amount: 1 }, { amount: 2 }],
    })
    expectProblem(transfer, 422, 'rule_violation')
    expect(transfer.json.detail).toStartWith('splits: a transfer cannot be split')
    const split = await createTxn(server, key, { accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 2 }] })
    expectProblem(await patch(key, split.id, { isTransfer: true, transferToAccountId: other }), 422, 'rule_violation')
    const unsplit = await patchTxn(server, key, split.id, { isTransfer: true, transferToAccountId: other, splits: [] })
    expect(unsplit).toMatchObject({ isTransfer: true, hasSplits: false, splits: [] })
  })

  test('categoryId with legs is refused; null is accepted; with splits: [] it unsplits and sets the category', async () => {
    const { key, account } = await setup()
    const both = await post(key, { accountId: account, amount: 3, date: '2026-03-01', categoryId: 'cat_sys_groceries', splits: [{ amount: 1 }, { amount: 2 }] })
    expectProblem(both, 422, 'rule_violation')
    expect(both.json.detail).toStartWith('categoryId: a split transaction has no category of its own')
    const split = await createTxn(server, key, { accountId: account, amount: 3, date: '2026-03-01', categoryId: null, splits: [{ amount: 1 }, { amount: 2 }] })
    expect(split.categoryId).toBeNull()
    expectProblem(await patch(key, split.id, { categoryId: 'cat_sys_groceries' }), 422, 'rule_violation')
    expect((await patchTxn(server, key, split.id, { categoryId: null })).splits).toHaveLength(2)
    const unsplit = await patchTxn(server, key, split.id, { categoryId: 'cat_sys_groceries', splits: [] })
    expect(unsplit).toMatchObject({ categoryId: 'cat_sys_groceries', categoryType: 'expense', hasSplits: false, splits: [] })
    // Splitting a transaction that had a category takes the category off it.
    const resplit = await patchTxn(server, key, split.id, { splits: [{ amount: 2, categoryId: 'cat_sys_coffee' }, { amount: 1 }] })
    expect(resplit).toMatchObject({ categoryId: null, categoryType: null, hasSplits: true })
  })

  test('PATCH amount alone on a split transaction is refused and nothing changes; with legs it changes both', async () => {
    const { owner, key, account } = await setup()
    const split = await createTxn(server, key, { accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 2 }] })
    const before = snapshot(server, owner.id)
    const alone = await patch(key, split.id, { amount: 4, note: 'more' })
    expectProblem(alone, 422, 'rule_violation')
    expect(alone.json.detail).toBe('amount: this transaction is split; send splits that sum to the new amount')
    expect(snapshot(server, owner.id)).toEqual(before)
    // The stored amount sent again is no change: the legs stay.
    const same = await patchTxn(server, key, split.id, { amount: 3, note: 'same' })
    expect(same.splits.map((leg: Json) => leg.id)).toEqual(split.splits.map((leg: Json) => leg.id))
    const both = await patchTxn(server, key, split.id, { amount: 4, splits: [{ amount: 1.5 }, { amount: 2.5 }] })
    expect(both).toMatchObject({ amount: 4 })
    expect(both.splits.map((leg: Json) => leg.amount)).toEqual([1.5, 2.5])
    expect(both.splits.map((leg: Json) => leg.id).some((id: string) => split.splits.some((leg: Json) => leg.id === id))).toBe(false)
    expect(lexeme(await balance(server, key, account))).toBe('96')
    // Upsert keeps the rule too.
    const upserted = await server.request('POST', '/v1/transactions/upsert', {
      key,
      body: { externalId: 'up-1', accountId: account, amount: 2, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 1 }] },
    })
    expect(upserted.status).toBe(201)
    const again = await server.request('POST', '/v1/transactions/upsert', {
      key,
      body: { externalId: 'up-1', accountId: account, amount: 5, date: '2026-03-01' },
    })
    expectProblem(again, 422, 'rule_violation')
  })

  test('splits: [] unsplits, and the category filter no longer finds the old legs’ categories', async () => {
    const { key, account } = await setup()
    const split = await createTxn(server, key, {
      accountId: account,
      amount: 3,
      date: '2026-03-01',
      splits: [
        { amount: 1, categoryId: 'cat_sys_coffee' },
        { amount: 2, categoryId: 'cat_sys_fuel' },
      ],
    })
    expect((await listAll(server, key, 'categoryId=cat_sys_coffee')).map((t) => t.id)).toEqual([split.id])
    expect((await listAll(server, key, 'categoryId=cat_sys_fuel')).map((t) => t.id)).toEqual([split.id])
    const unsplit = await patchTxn(server, key, split.id, { splits: [] })
    expect(unsplit).toMatchObject({ hasSplits: false, splitMode: null, splits: [], categoryId: null })
    expect(await listAll(server, key, 'categoryId=cat_sys_coffee')).toEqual([])
    expect(await listAll(server, key, 'categoryId=cat_sys_fuel')).toEqual([])
  })

  test('legs sent as stored are kept: same ids, and the write changes nothing (a batch says unchanged)', async () => {
    const { key, account } = await setup()
    const item = { externalId: 'rcpt-1', accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1, note: 'a' }, { amount: 2 }] }
    const first = await server.request('POST', '/v1/transactions/batch', { key, body: { items: [item] } })
    expect(first.json.data[0].operation).toBe('created')
    const feed = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    const second = await server.request('POST', '/v1/transactions/batch', { key, body: { items: [item] } })
    expect(second.json.data[0].operation).toBe('unchanged')
    expect(second.json.data[0].data).toEqual(first.json.data[0].data)
    expect((await server.request('GET', `/v1/changes?cursor=${feed}`, { key })).json.data).toEqual([])
    const changed = await server.request('POST', '/v1/transactions/batch', { key, body: { items: [{ ...item, splits: [{ amount: 2 }, { amount: 1 }] }] } })
    expect(changed.json.data[0].operation).toBe('updated')
  })
})

describe('legs’ categories and payees', () => {
  test('references are checked leg by leg, naming the leg', async () => {
    const { key, account } = await setup()
    const leg = (fields: Json) => ({ accountId: account, amount: 2, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 1, ...fields }] })
    const badCategory = await post(key, leg({ categoryId: 'cat_nope' }))
    expectProblem(badCategory, 422, 'invalid_reference')
    expect(badCategory.json.detail).toBe('splits[1].categoryId: "cat_nope" does not refer to one of your records')
    // Another country's system category is not the owner's to use.
    expectProblem(await post(key, leg({ categoryId: 'cat_sys_pix_fees' })), 422, 'invalid_reference')
    const badPayee = await post(key, leg({ payeeId: 'pay_nope' }))
    expectProblem(badPayee, 422, 'invalid_reference')
    expect(badPayee.json.detail).toStartWith('splits[1].payeeId:')
    const both = await post(key, leg({ payeeId: null, payeeName: 'X' }))
    expectProblem(both, 422, 'rule_violation')
    expect(both.json.detail).toBe('splits[1]: send payeeId or payeeName, not both')
  })

  test('a leg’s payeeName finds or creates the payee; a leg without categoryId takes its payee’s default, else the transaction payee’s', async () => {
    const { key, account } = await setup()
    const cafe = await payee(key, 'Café Central', 'cat_sys_coffee')
    const market = await payee(key, 'Market', 'cat_sys_groceries')
    const txn = await createTxn(server, key, {
      accountId: account,
      amount: 10,
      date: '2026-03-01',
      payeeId: market,
      splits: [
        { amount: 4, payeeName: 'cafe  CENTRAL' },
        { amount: 3 },
        { amount: 2, categoryId: null },
        { amount: 1, payeeName: 'Brand New', categoryId: 'cat_sys_fuel' },
      ],
    })
    expect(txn.categoryId).toBeNull()
    expect(txn.splits.map((leg: Json) => [leg.payeeId, leg.categoryId])).toEqual([
      [cafe, 'cat_sys_coffee'],
      [null, 'cat_sys_groceries'],
      [null, null],
      [expect.stringMatching(/^pay_/), 'cat_sys_fuel'],
    ])
    const created = txn.splits[3].payeeId
    expect((await server.request('GET', `/v1/payees/${created}`, { key })).json.data.name).toBe('Brand New')
  })

  test('payee totals: each leg counts toward its payee, else the transaction’s; exact after create, PATCH and DELETE', async () => {
    const { key, account } = await setup()
    const shop = await payee(key, 'Shop')
    const gift = await payee(key, 'Gift shop')
    const txn = await createTxn(server, key, {
      accountId: account,
      amount: 12.3,
      date: '2026-03-01',
      payeeId: shop,
      splits: [{ amount: 10.1 }, { amount: 4.2, payeeId: gift }, { amount: -2, note: 'refund' }],
    })
    // Shop: 10.1 (the refund leg does not lower totalSpent); Gift shop: 4.2; each counts the transaction once.
    expect(await totals(key, shop)).toBe('1 10.1')
    expect(await totals(key, gift)).toBe('1 4.2')
    expect(lexeme(await balance(server, key, account))).toBe('87.7')
    // Every leg to the gift shop: the shop is still the transaction's payee and counts it, with nothing spent.
    await patchTxn(server, key, txn.id, {
      splits: [
        { amount: 6.3, payeeId: gift },
        { amount: 6, payeeId: gift },
      ],
    })
    expect(await totals(key, shop)).toBe('1 0')
    expect(await totals(key, gift)).toBe('1 12.3')
    expect((await listAll(server, key, `payeeId=${shop}`)).map((t) => t.id)).toEqual([txn.id])
    expect((await listAll(server, key, `payeeId=${gift}`)).map((t) => t.id)).toEqual([txn.id])
    // A new transaction payee takes the legs without one.
    await patchTxn(server, key, txn.id, { payeeId: gift, amount: 1, splits: [{ amount: 0.4 }, { amount: 0.6, payeeId: shop }] })
    expect(await totals(key, shop)).toBe('1 0.6')
    expect(await totals(key, gift)).toBe('1 0.4')
    expect(lexeme(await balance(server, key, account))).toBe('99')
    const deleted = await server.request('DELETE', `/v1/transactions/${txn.id}`, { key })
    expect(deleted.status).toBe(200)
    expect(deleted.json.data.splits).toHaveLength(2)
    expect(await totals(key, shop)).toBe('0 0')
    expect(await totals(key, gift)).toBe('0 0')
    expect(lexeme(await balance(server, key, account))).toBe('100')
    expect(
      server.platform.tenants
        .get((await server.request('GET', '/v1/me', { key })).json.data.id)
        .sqlite.query('SELECT count(*) AS n FROM transaction_splits')
        .get(),
    ).toEqual({ n: 0n })
  })
})

describe('filters through legs', () => {
  test('categoryId and payeeId find a transaction once however many legs match', async () => {
    const { key, account } = await setup()
    const shop = await payee(key, 'Shop')
    const own = await createTxn(server, key, { accountId: account, amount: 1, date: '2026-03-02', categoryId: 'cat_sys_coffee', payeeId: shop })
    const legs = await createTxn(server, key, {
      accountId: account,
      amount: 3,
      date: '2026-03-01',
      payeeId: shop,
      splits: [
        { amount: 1, categoryId: 'cat_sys_coffee', payeeId: shop },
        { amount: 1, categoryId: 'cat_sys_coffee', payeeId: shop },
        { amount: 1, categoryId: 'cat_sys_fuel' },
      ],
    })
    expect((await listAll(server, key, 'categoryId=cat_sys_coffee')).map((t) => t.id)).toEqual([own.id, legs.id])
    expect((await listAll(server, key, `payeeId=${shop}`)).map((t) => t.id)).toEqual([own.id, legs.id])
    expect((await listAll(server, key, `categoryId=cat_sys_fuel&payeeId=${shop}`)).map((t) => t.id)).toEqual([legs.id])
    expect((await listAll(server, key, `categoryId=cat_sys_fuel&accountId=${account}&from=2026-03-01&to=2026-03-01`)).map((t) => t.id)).toEqual([legs.id])
    expect(await listAll(server, key, 'categoryId=cat_sys_fuel&from=2026-03-02')).toEqual([])
    expect(await totals(key, shop)).toBe('2 4')
  })

  test('a category reached through legs pages by keyset, every match once, while rows are written', async () => {
    const { key, account } = await setup()
    const made: Json[] = []
    for (let i = 0; i < 30; i++) {
      const date = `2026-04-${String(1 + (i % 6)).padStart(2, '0')}`
      const body =
        i % 3 === 0
          ? { accountId: account, amount: 2, date, categoryId: 'cat_sys_coffee' }
          : i % 3 === 1
            ? {
                accountId: account,
                amount: 2,
                date,
                splits: [
                  { amount: 1, categoryId: 'cat_sys_coffee' },
                  { amount: 1, categoryId: 'cat_sys_fuel' },
                ],
              }
            : { accountId: account, amount: 2, date, categoryId: 'cat_sys_fuel' }
      made.push(await createTxn(server, key, body))
    }
    const expected = made.filter((_, i) => i % 3 !== 2).map((t) => t.id)
    const seen: string[] = []
    let cursor: string | null = null
    let writes = 0
    do {
      const query: string = `categoryId=cat_sys_coffee&limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const page: Json = (await server.request('GET', `/v1/transactions?${query}`, { key })).json
      seen.push(...page.data.map((t: Json) => t.id))
      cursor = page.nextCursor
      // Rows written meanwhile: newer ones (before the cursor) and older ones the remaining pages may show.
      const date = writes % 2 === 0 ? '2026-05-01' : '2026-01-01'
      await createTxn(server, key, { accountId: account, amount: 2, date, splits: [{ amount: 1, categoryId: 'cat_sys_coffee' }, { amount: 1 }] })
      writes++
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    for (const id of expected) expect(seen).toContain(id)
    const all = (await listAll(server, key, 'categoryId=cat_sys_coffee')).map((t) => t.id)
    // Everything that came was a match, in list order.
    expect(all.filter((id) => seen.includes(id))).toEqual(seen)
  })
})

describe('what else sees the legs', () => {
  test('the change feed reports the transaction once per write, with its legs', async () => {
    const { key, account } = await setup()
    const start = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    const txn = await createTxn(server, key, { accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 2 }] })
    const page = (await server.request('GET', `/v1/changes?cursor=${start}&resources=transactions`, { key })).json.data
    expect(page).toHaveLength(1)
    expect(page[0].data).toEqual(txn)
    const next = (await server.request('GET', `/v1/changes?cursor=${start}`, { key })).json.nextCursor
    const resplit = await patchTxn(server, key, txn.id, { splits: [{ amount: 2 }, { amount: 1 }] })
    const after = (await server.request('GET', `/v1/changes?cursor=${next}`, { key })).json.data
    expect(after.map((change: Json) => `${change.resource}:${change.id}`)).toEqual([`transaction:${txn.id}`])
    expect(after[0].data).toEqual(resplit)
  })

  test('changing a category’s type is a change of the transactions with a leg in it', async () => {
    const { key, account } = await setup()
    const custom = (await server.request('POST', '/v1/categories', { key, body: { name: 'Hobby', type: 'expense' } })).json.data.id
    const txn = await createTxn(server, key, { accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1, categoryId: custom }, { amount: 2 }] })
    const cursor = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    expect((await server.request('PATCH', `/v1/categories/${custom}`, { key, body: { type: 'income' } })).status).toBe(200)
    const changes = (await server.request('GET', `/v1/changes?cursor=${cursor}&resources=transactions`, { key })).json.data
    expect(changes.map((change: Json) => change.id)).toEqual([txn.id])
    expect(changes[0].data.splits[0].categoryType).toBe('income')
  })

  test('the agent context’s recent transactions carry their legs', async () => {
    const { key, account } = await setup()
    const txn = await createTxn(server, key, { accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 2 }] })
    const context = (await server.request('GET', '/v1/agent/context', { key })).json.data
    expect(context.recentTransactions).toEqual([txn])
  })

  test('a replayed split write answers byte for byte', async () => {
    const { key, account } = await setup()
    const body = { accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1, payeeName: 'Replay Shop' }, { amount: 2 }] }
    const first = await server.request('POST', '/v1/transactions', { key, body, idempotencyKey: 'split-replay' })
    const second = await server.request('POST', '/v1/transactions', { key, body, idempotencyKey: 'split-replay' })
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(second.text).toBe(first.text)
    expect(await listAll(server, key)).toHaveLength(1)
    const refused = { ...body, amount: 4 }
    const r1 = await server.request('POST', '/v1/transactions', { key, body: refused, idempotencyKey: 'split-refused' })
    const r2 = await server.request('POST', '/v1/transactions', { key, body: refused, idempotencyKey: 'split-refused' })
    expectProblem(r1, 422, 'rule_violation')
    expect(r2.text).toBe(r1.text)
  })
})

describe('batch items with legs', () => {
  test('an item’s leg errors name the item and the leg; the dry run reports them field by field', async () => {
    const { key, account } = await setup()
    const items = [
      { externalId: 'b-0', accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1 }, { amount: 2 }] },
      { externalId: 'b-1', accountId: account, amount: 3, date: '2026-03-01', splits: [{ amount: 1, categoryId: 'cat_nope' }, { amount: 2 }] },
    ]
    const real = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
    expectProblem(real, 422, 'invalid_reference')
    expect(real.json.detail).toBe('items[1].splits[0].categoryId: "cat_nope" does not refer to one of your records')
    const dry = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: `{"dryRun":true,"items":[${JSON.stringify(items[0])},{"externalId":"b-1","accountId":"${account}","amount":3,"date":"2026-03-01","splits":[{"amount":1.000000001,"categoryId":"cat_nope"},{"amount":2}],"tagIds":["tag_nope"]}]}`,
    })
    expect(dry.status).toBe(200)
    expect(dry.json.data[0]).toMatchObject({ operation: 'created', errors: [] })
    expect(dry.json.data[1].errors).toEqual([
      { field: 'splits[0].amount', code: 'validation_failed', detail: 'must have at most 8 decimal places' },
      { field: 'splits[0].categoryId', code: 'invalid_reference', detail: '"cat_nope" does not refer to one of your records' },
      { field: 'tagIds[0]', code: 'invalid_reference', detail: '"tag_nope" does not refer to one of your records' },
    ])
    const sums = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { dryRun: true, items: [{ ...items[0], splits: [{ amount: 1 }, { amount: 1 }] }] },
    })
    expect(sums.json.data[0].errors).toEqual([
      { field: 'splits', code: 'rule_violation', detail: 'the legs sum to 2, not to the amount 3; they must sum exactly' },
    ])
  })

  test('of several failing items the first in body order is named, whatever its kind of error', async () => {
    const { owner, key, account } = await setup()
    const item = (i: number, extra: Json = {}) => ({ externalId: `o-${i}`, accountId: account, amount: 1, date: '2026-03-01', ...extra })
    const before = snapshot(server, owner.id)
    // A money-digits error in items[2] comes before a shape error in items[4].
    const digits = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: `{"items":[${JSON.stringify(item(0))},${JSON.stringify(item(1))},{"externalId":"o-2","accountId":"${account}","amount":1.123456789,"date":"2026-03-01"},${JSON.stringify(item(3))},${JSON.stringify(item(4, { date: '2026-02-30' }))}]}`,
    })
    expectProblem(digits, 422, 'validation_failed')
    expect(digits.json.detail).toBe('items[2].amount: must have at most 8 decimal places')
    // An unknown account in items[1] comes before a shape error in items[3].
    const reference = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { items: [item(0), item(1, { accountId: 'acct_nope' }), item(2), item(3, { date: 'soon' })] },
    })
    expectProblem(reference, 422, 'invalid_reference')
    expect(reference.json.detail).toStartWith('items[1].accountId:')
    // A rule of the legs in items[1] comes before a repeated externalId at items[3].
    const rule = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { items: [item(0), item(1, { splits: [{ amount: 2 }, { amount: 2 }] }), item(2), item(0)] },
    })
    expectProblem(rule, 422, 'rule_violation')
    expect(rule.json.detail).toStartWith('items[1].splits:')
    // With the first item failing on its shape, every later shape problem is listed after it.
    const shapes = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { items: [item(0), item(1, { date: 'soon' }), item(2, { splits: [{ amount: 1, category: 'x' }] })] },
    })
    expectProblem(shapes, 422, 'validation_failed')
    expect(shapes.json.detail).toStartWith('items[1].date:')
    expect(shapes.json.detail).toContain('items[2].splits[0].category')
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('500 items of 3 legs and 2 tags each commit in one transaction', async () => {
    const { owner, key, account } = await setup()
    const items = Array.from({ length: 500 }, (_, i) => ({
      externalId: `big-${i}`,
      accountId: account,
      amount: 3,
      date: '2026-03-01',
      payeeName: `Shop ${i % 7}`,
      tagNames: [`trip ${i % 3}`, 'receipts'],
      splits: [
        { amount: 1, categoryId: 'cat_sys_groceries' },
        { amount: 1.5, payeeName: `Other ${i % 5}` },
        { amount: 0.5, categoryId: 'cat_sys_coffee' },
      ],
    }))
    const tenant = server.platform.tenants.get(owner.id)
    // An empty write-ahead log first: every commit from here on ends with a commit frame in it.
    tenant.sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)')
    const res = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
    expect(res.status).toBe(200)
    expect(res.json.summary.created).toBe(500)
    expect(commitFrames(`${server.dataDir}/tenants/${owner.id}.db-wal`)).toBe(1)
    expect(res.json.data[499].data.splits).toHaveLength(3)
    expect(res.json.data[499].data.tagIds).toHaveLength(2)
    expect(lexeme(await balance(server, key, account))).toBe('-1400')
    const tags = (await server.request('GET', '/v1/tags', { key })).json.data
    expect(Object.fromEntries(tags.map((tag: Json) => [tag.name, tag.transactionCount]))).toEqual({
      'trip 0': 167,
      receipts: 500,
      'trip 1': 167,
      'trip 2': 166,
    })
  })
})
