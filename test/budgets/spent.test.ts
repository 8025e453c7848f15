import { beforeAll, describe, expect, test } from 'bun:test'
import { serverWithOwner } from '../support/harness.ts'
import { listAll } from '../accounts/helpers.ts'
import { createAccount, createTxn, type Json, rawNumbers } from '../transactions/helpers.ts'
import { figures, getBudget, line, planCategory, planMonth } from './helpers.ts'

/**
 * CONTRACT §27 "Spent": a fixture month whose every figure is a hand-computed table, and one
 * test for each rule the table rests on (refunds, transfers, legs, other currencies, roll-up,
 * exact decimals), each against a fresh owner so nothing else moves the figures.
 */

const { server, owner } = serverWithOwner({ owner: { defaultCurrency: 'EUR', country: 'PT' } })

const MONTH = '2026-03'
const FOOD = 'cat_sys_food_drinks'
const GROCERIES = 'cat_sys_groceries'
const RESTAURANTS = 'cat_sys_restaurants'
const GIFTS = 'cat_sys_gifts_donations'
const EDUCATION = 'cat_sys_education'
const INCOME = 'cat_sys_income'
const SALARY = 'cat_sys_salary'

describe('the fixture month', () => {
  let market: string
  let eur: string
  let card: string
  let savings: string
  let usd: string

  beforeAll(async () => {
    const key = owner.key
    eur = (await createAccount(server, key, { name: 'Checking' })).id
    card = (await createAccount(server, key, { name: 'Card', type: 'card' })).id
    savings = (await createAccount(server, key, { name: 'Savings' })).id
    usd = (await createAccount(server, key, { name: 'Dollars', currency: 'USD' })).id
    // A custom category two levels down (Food & Drinks / Groceries / Weekly market).
    const res = await server.request('POST', '/v1/categories', { key, body: { name: 'Weekly market', type: 'expense', parentId: GROCERIES } })
    market = res.json.data.id
    const txn = (body: Json) => createTxn(server, key, { date: '2026-03-10', ...body })
    await txn({ accountId: eur, amount: 0.1, categoryId: GROCERIES, date: '2026-03-01' }) // t1, the month's first day
    await txn({ accountId: card, amount: 0.2, categoryId: GROCERIES, date: '2026-03-31' }) // t2, its last
    await txn({ accountId: eur, amount: 25.55, categoryId: market }) // t3
    await txn({ accountId: eur, amount: -10, categoryId: GROCERIES }) // t4, a refund
    await txn({ accountId: eur, amount: 42.3, categoryId: RESTAURANTS }) // t5
    await txn({
      accountId: eur,
      amount: 100,
      splits: [
        { amount: 70, categoryId: GROCERIES },
        { amount: 30, categoryId: GIFTS },
      ],
    }) // t6
    await txn({ accountId: eur, amount: 500, isTransfer: true, transferToAccountId: savings, categoryId: GROCERIES }) // t7, a transfer
    await txn({ accountId: usd, amount: 15, categoryId: RESTAURANTS }) // t8, dollars
    await txn({ accountId: eur, amount: -2500, categoryId: SALARY }) // t9, income
    await txn({ accountId: eur, amount: 7.77 }) // t10, no category
    await txn({ accountId: usd, amount: 3 }) // t11, no category, dollars
    await txn({ accountId: eur, amount: 9.99, categoryId: GROCERIES, date: '2026-02-28' }) // t12, the month before
    await txn({ accountId: eur, amount: 9.99, categoryId: GROCERIES, date: '2026-04-01' }) // t12', the month after
    await txn({
      accountId: card,
      amount: 25,
      splits: [
        { amount: 20, categoryId: GROCERIES },
        { amount: 5, categoryId: RESTAURANTS },
      ],
    }) // t13
    await planMonth(server, key, MONTH, {
      categories: [
        { categoryId: FOOD, planned: 600 },
        { categoryId: GROCERIES, planned: 200, note: 'includes the market' },
        { categoryId: GIFTS, planned: 50 },
        { categoryId: SALARY, planned: -2400 },
        { categoryId: EDUCATION, planned: 100 },
      ],
    })
  })

  /**
   * By hand, in euros (dollars apart):
   *   groceries own   0.1 + 0.2 − 10 + 70 (t6 leg) + 20 (t13 leg) = 80.3    t1 t2 t4 t6 t13
   *   weekly market   25.55                                                  t3
   *   restaurants     42.3 + 5 (t13 leg) = 47.3;  USD 15                      t5 t13; t8
   *   gifts           30 (t6 leg)                                            t6
   *   salary          −2500                                                  t9
   *   groceries rolled up: 80.3 + 25.55 = 105.85, 6 transactions
   *   food & drinks rolled up: 105.85 + 47.3 = 153.15, 7 transactions (t13 once), USD 15
   *   t7 (a transfer, even with a category), t12 and t12' (other months): nowhere.
   */
  const TABLE: Record<string, Json> = {
    [FOOD]: { planned: 600, spent: 153.15, remaining: 446.85, transactionCount: 7, otherCurrencies: [{ currency: 'USD', spent: 15 }] },
    [GROCERIES]: { planned: 200, spent: 105.85, remaining: 94.15, transactionCount: 6, otherCurrencies: [] },
    [GIFTS]: { planned: 50, spent: 30, remaining: 20, transactionCount: 1, otherCurrencies: [] },
    [SALARY]: { planned: -2400, spent: -2500, remaining: 100, transactionCount: 1, otherCurrencies: [] },
    [EDUCATION]: { planned: 100, spent: 0, remaining: 100, transactionCount: 0, otherCurrencies: [] },
  }
  const UNPLANNED: Record<string, Json> = {
    [RESTAURANTS]: { planned: 0, spent: 47.3, remaining: -47.3, transactionCount: 2, otherCurrencies: [{ currency: 'USD', spent: 15 }] },
    [INCOME]: { planned: 0, spent: -2500, remaining: 2500, transactionCount: 1, otherCurrencies: [] },
  }

  test('every figure equals the table', async () => {
    const budget = await getBudget(server, owner.key, MONTH)
    expect(Object.keys(budget)).toEqual(['month', 'currency', 'categories', 'totals', 'uncategorized'])
    expect(budget.month).toBe(MONTH)
    expect(budget.currency).toBe('EUR')
    // The planned categories, in category list order.
    const order = (await listAll(server, owner.key, '/v1/categories')).map((c: Json) => c.id)
    const planned = Object.keys(TABLE).sort((a, b) => order.indexOf(a) - order.indexOf(b))
    expect(budget.categories.map((c: Json) => c.categoryId)).toEqual(planned)
    for (const [id, expected] of Object.entries(TABLE)) expect([id, figures(line(budget, id))]).toEqual([id, expected])
    expect(Object.keys(budget.categories[0])).toEqual([
      'categoryId',
      'categoryType',
      'parentId',
      'planned',
      'spent',
      'remaining',
      'transactionCount',
      'otherCurrencies',
      'note',
    ])
    expect(line(budget, GROCERIES)).toMatchObject({ categoryType: 'expense', parentId: FOOD, note: 'includes the market' })
    expect(line(budget, SALARY)).toMatchObject({ categoryType: 'income', parentId: INCOME, note: null })
    // Totals: food's plan holds groceries' (counted once); each transaction or leg once in what was spent.
    expect(budget.totals).toEqual({ plannedExpense: 750, spentExpense: 183.15, plannedIncome: -2400, receivedIncome: -2500 })
    expect(budget.uncategorized).toEqual({ spent: 7.77, transactionCount: 1, otherCurrencies: [{ currency: 'USD', spent: 3 }] })
  })

  test('includeUnplanned adds every category with activity and no plan, and only those', async () => {
    const budget = await getBudget(server, owner.key, MONTH, '?includeUnplanned=true')
    const ids = budget.categories.map((c: Json) => c.categoryId)
    expect(new Set(ids)).toEqual(new Set([...Object.keys(TABLE), ...Object.keys(UNPLANNED), market]))
    for (const [id, expected] of Object.entries({ ...TABLE, ...UNPLANNED })) expect([id, figures(line(budget, id))]).toEqual([id, expected])
    expect(figures(line(budget, market))).toEqual({ planned: 0, spent: 25.55, remaining: -25.55, transactionCount: 1, otherCurrencies: [] })
    const order = (await listAll(server, owner.key, '/v1/categories')).map((c: Json) => c.id)
    expect(ids).toEqual([...ids].sort((a, b) => order.indexOf(a) - order.indexOf(b)))
    expect(budget.totals).toEqual((await getBudget(server, owner.key, MONTH)).totals)
  })

  test('the summaries carry the same totals, month by month', async () => {
    const res = await server.request('GET', '/v1/budgets?from=2026-02&to=2026-04', { key: owner.key })
    expect(res.status).toBe(200)
    expect(res.json.data.map((s: Json) => s.month)).toEqual(['2026-02', '2026-03', '2026-04'])
    const march = await getBudget(server, owner.key, MONTH)
    expect(res.json.data[1]).toEqual({ month: MONTH, currency: 'EUR', totals: march.totals, uncategorized: march.uncategorized })
    // The neighbours hold only the 9.99 each, and no plan.
    for (const summary of [res.json.data[0], res.json.data[2]]) {
      expect(summary.totals).toEqual({ plannedExpense: 0, spentExpense: 9.99, plannedIncome: 0, receivedIncome: 0 })
    }
  })
})

/** A fresh owner with one euro account, for the tests of one rule each. */
async function fresh(currency = 'EUR') {
  const made = await server.owner({ defaultCurrency: currency, country: 'PT' })
  const account = (await createAccount(server, made.key, { currency })).id as string
  return { key: made.key, account }
}

describe('one rule at a time', () => {
  test('0.1 + 0.2: planned and spent are exactly 0.3', async () => {
    const { key, account } = await fresh()
    await planCategory(server, key, MONTH, EDUCATION, { planned: 0.1 })
    await planCategory(server, key, MONTH, GIFTS, { planned: 0.2 })
    await createTxn(server, key, { accountId: account, amount: 0.1, date: '2026-03-05', categoryId: GROCERIES })
    await createTxn(server, key, { accountId: account, amount: 0.2, date: '2026-03-06', categoryId: GROCERIES })
    await planCategory(server, key, MONTH, GROCERIES, { planned: 0.3 })
    const res = await server.request('GET', `/v1/budgets/${MONTH}`, { key })
    // The text itself: no double's 0.30000000000000004 anywhere.
    expect(rawNumbers(res.text, 'spent')).toContain('0.3')
    expect(res.text).not.toContain('0.30000000000000004')
    expect(figures(line(res.json.data, GROCERIES))).toEqual({ planned: 0.3, spent: 0.3, remaining: 0, transactionCount: 2, otherCurrencies: [] })
    expect(rawNumbers(res.text, 'plannedExpense')).toEqual(['0.6'])
    expect(rawNumbers(res.text, 'spentExpense')).toEqual(['0.3'])
  })

  test('a refund reduces spent', async () => {
    const { key, account } = await fresh()
    await planCategory(server, key, MONTH, GROCERIES, { planned: 100 })
    await createTxn(server, key, { accountId: account, amount: 60, date: '2026-03-05', categoryId: GROCERIES })
    expect(line(await getBudget(server, key, MONTH), GROCERIES).spent).toBe(60)
    await createTxn(server, key, { accountId: account, amount: -12.5, date: '2026-03-09', categoryId: GROCERIES })
    expect(figures(line(await getBudget(server, key, MONTH), GROCERIES))).toMatchObject({ spent: 47.5, remaining: 52.5, transactionCount: 2 })
  })

  test('a transfer never counts, whatever its category', async () => {
    const { key, account } = await fresh()
    const other = (await createAccount(server, key, { name: 'Savings' })).id
    await planCategory(server, key, MONTH, GROCERIES, { planned: 100 })
    await createTxn(server, key, { accountId: account, amount: 80, date: '2026-03-05', isTransfer: true, transferToAccountId: other, categoryId: GROCERIES })
    const budget = await getBudget(server, key, MONTH, '?includeUnplanned=true')
    expect(figures(line(budget, GROCERIES))).toMatchObject({ spent: 0, transactionCount: 0 })
    expect(budget.uncategorized).toEqual({ spent: 0, transactionCount: 0, otherCurrencies: [] })
    expect(budget.categories.map((c: Json) => c.categoryId)).toEqual([GROCERIES])
  })

  test('a 70/30 split counts by leg, in each leg’s category', async () => {
    const { key, account } = await fresh()
    await planMonth(server, key, MONTH, {
      categories: [
        { categoryId: GROCERIES, planned: 100 },
        { categoryId: GIFTS, planned: 100 },
      ],
    })
    await createTxn(server, key, {
      accountId: account,
      amount: 100,
      date: '2026-03-05',
      splits: [
        { amount: 70, categoryId: GROCERIES },
        { amount: 30, categoryId: GIFTS },
      ],
    })
    const budget = await getBudget(server, key, MONTH)
    expect(figures(line(budget, GROCERIES))).toMatchObject({ spent: 70, remaining: 30, transactionCount: 1 })
    expect(figures(line(budget, GIFTS))).toMatchObject({ spent: 30, remaining: 70, transactionCount: 1 })
    expect(budget.totals.spentExpense).toBe(100)
  })

  test('a USD account shows only in otherCurrencies, never converted', async () => {
    const { key, account } = await fresh()
    const dollars = (await createAccount(server, key, { currency: 'USD' })).id
    await planCategory(server, key, MONTH, RESTAURANTS, { planned: 50 })
    await createTxn(server, key, { accountId: dollars, amount: 19.99, date: '2026-03-05', categoryId: RESTAURANTS })
    await createTxn(server, key, { accountId: dollars, amount: 0.01, date: '2026-03-06', categoryId: RESTAURANTS })
    await createTxn(server, key, { accountId: account, amount: 5, date: '2026-03-06', categoryId: RESTAURANTS })
    const budget = await getBudget(server, key, MONTH)
    expect(figures(line(budget, RESTAURANTS))).toEqual({
      planned: 50,
      spent: 5,
      remaining: 45,
      transactionCount: 1,
      otherCurrencies: [{ currency: 'USD', spent: 20 }],
    })
    expect(budget.totals.spentExpense).toBe(5)
  })

  test('a child rolls up into its parent, and a split reaching both is counted once', async () => {
    const { key, account } = await fresh()
    await planCategory(server, key, MONTH, FOOD, { planned: 300 })
    await createTxn(server, key, { accountId: account, amount: 40, date: '2026-03-05', categoryId: GROCERIES })
    await createTxn(server, key, { accountId: account, amount: 10, date: '2026-03-05', categoryId: FOOD })
    await createTxn(server, key, {
      accountId: account,
      amount: 30,
      date: '2026-03-07',
      splits: [
        { amount: 20, categoryId: RESTAURANTS },
        { amount: 10, categoryId: GROCERIES },
      ],
    })
    const budget = await getBudget(server, key, MONTH, '?includeUnplanned=true')
    expect(figures(line(budget, FOOD))).toMatchObject({ spent: 80, remaining: 220, transactionCount: 3 })
    expect(figures(line(budget, GROCERIES))).toMatchObject({ planned: 0, spent: 50, transactionCount: 2 })
    expect(figures(line(budget, RESTAURANTS))).toMatchObject({ planned: 0, spent: 20, transactionCount: 1 })
    // Spent by the totals once, not once per level.
    expect(budget.totals).toEqual({ plannedExpense: 300, spentExpense: 80, plannedIncome: 0, receivedIncome: 0 })
  })

  test('sums beyond the range of one amount stay exact (no 64-bit overflow)', async () => {
    const { key, account } = await fresh()
    // Three of the largest amounts, from three accounts that can each pay one: their sum is past
    // 2^63 units, where a plain SQLite sum() fails with an integer overflow.
    for (const day of ['05', '06', '07']) {
      const rich = (await createAccount(server, key, { balance: 92233720368 })).id
      await createTxn(server, key, { accountId: rich, amount: 92233720368, date: `2026-03-${day}`, categoryId: GROCERIES })
    }
    await createTxn(server, key, { accountId: account, amount: 0.00000001, date: '2026-03-08', categoryId: GROCERIES })
    const res = await server.request('GET', `/v1/budgets/${MONTH}?includeUnplanned=true`, { key })
    expect(res.status).toBe(200)
    expect(rawNumbers(res.text, 'spent')).toContain('276701161104.00000001')
    expect(rawNumbers(res.text, 'spentExpense')).toEqual(['276701161104.00000001'])
  })

  test('a month without a plan and without activity is all zeros, in the owner’s currency', async () => {
    const { key } = await fresh('CHF')
    expect(await getBudget(server, key, '1999-12')).toEqual({
      month: '1999-12',
      currency: 'CHF',
      categories: [],
      totals: { plannedExpense: 0, spentExpense: 0, plannedIncome: 0, receivedIncome: 0 },
      uncategorized: { spent: 0, transactionCount: 0, otherCurrencies: [] },
    })
  })

  test('a change to a transaction shows at the next read: nothing is cached past a write', async () => {
    const { key, account } = await fresh()
    await planCategory(server, key, MONTH, GROCERIES, { planned: 100 })
    const txn = await createTxn(server, key, { accountId: account, amount: 10, date: '2026-03-05', categoryId: GROCERIES })
    expect(line(await getBudget(server, key, MONTH), GROCERIES).spent).toBe(10)
    await server.request('PATCH', `/v1/transactions/${txn.id}`, { key, body: { date: '2026-04-01' } })
    expect(line(await getBudget(server, key, MONTH), GROCERIES).spent).toBe(0)
    expect(line(await getBudget(server, key, '2026-04', '?includeUnplanned=true'), GROCERIES).spent).toBe(10)
    // An account moved to another currency moves its rows with it.
    await server.request('PATCH', `/v1/transactions/${txn.id}`, { key, body: { date: '2026-03-05' } })
    expect((await server.request('PATCH', `/v1/accounts/${account}`, { key, body: { currency: 'GBP' } })).status).toBe(200)
    expect(figures(line(await getBudget(server, key, MONTH), GROCERIES))).toMatchObject({ spent: 0, otherCurrencies: [{ currency: 'GBP', spent: 10 }] })
  })
})

describe('months and ranges', () => {
  test('a month is checked strictly: 422 validation_failed, nothing echoed beyond the parameter', async () => {
    for (const bad of ['2026-13', '2026-00', '2026-3', '26-03', '2026-03-01', '2026_03', 'march', '%20', '2026-03%20']) {
      const res = await server.request('GET', `/v1/budgets/${bad}`, { key: owner.key })
      expect([bad, res.status, res.json?.code]).toEqual([bad, 422, 'validation_failed'])
      expect(res.json.detail).toContain("path parameter 'month'")
    }
  })

  test('from and to: required, each a month, from ≤ to, at most 24 months', async () => {
    const get = (query: string) => server.request('GET', `/v1/budgets${query}`, { key: owner.key })
    expect((await get('?from=2025-01&to=2026-12')).json.data).toHaveLength(24)
    expect((await get('?from=2026-12&to=2026-12')).json.data.map((s: Json) => s.month)).toEqual(['2026-12'])
    expect((await get('?from=2025-11&to=2026-02')).json.data.map((s: Json) => s.month)).toEqual(['2025-11', '2025-12', '2026-01', '2026-02'])
    for (const [query, words] of [
      ['?from=2025-01&to=2027-01', 'at most 24'],
      ['?from=2026-05&to=2026-04', "'to' must not be before"],
      ['?from=2026-01', "'to'"],
      ['', "'from'"],
      ['?from=2026-1&to=2026-02', "'from'"],
      ['?from=2026-01&to=2026-02&limit=5', "'limit'"],
    ]) {
      const res = await get(query as string)
      expect([query, res.status, res.json.code]).toEqual([query, 422, 'validation_failed'])
      expect(res.json.detail).toContain(words)
    }
  })
})
