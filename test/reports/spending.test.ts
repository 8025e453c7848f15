import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { openDatabase } from '../../src/db/sqlite.ts'
import { Tenant } from '../../src/db/tenant/tenant.ts'
import { spendingRows } from '../../src/modules/reports/queries.ts'
import { expectProblem, listPages, startUnthrottledServer, type TestServer, tempDir } from '../support/harness.ts'
import { createAccount, createTxn, type Json, lexeme, listAll, rawNumbers, units } from '../transactions/helpers.ts'

/**
 * CONTRACT §26: GET /v1/reports/spending sums exactly (to 10⁻⁸, past the 64-bit range of one
 * SQL sum), per currency, leaves transfers out, counts a split transaction by its legs (each in
 * its own category or payee, refund legs as income), and agrees with the transactions it sums,
 * read back from the list.
 */

let server: TestServer
let owner: { id: string; key: string }
let eur: string
let eur2: string
let usd: string
let cafe: string
let shop: string
let custom: string

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ country: 'PT' })
  eur = (await createAccount(server, owner.key, { name: 'EUR', currency: 'EUR' })).id
  eur2 = (await createAccount(server, owner.key, { name: 'EUR 2', currency: 'EUR' })).id
  usd = (await createAccount(server, owner.key, { name: 'USD', currency: 'USD' })).id
  cafe = (await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Café' } })).json.data.id
  shop = (await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Shop' } })).json.data.id
  const parent = (await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Home' } })).json.data.id
  custom = (await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Garden', parentId: parent } })).json.data.id
  const add = (body: Record<string, unknown>) => createTxn(server, owner.key, { accountId: eur, date: '2026-01-10', ...body })
  await add({ amount: 0.1, categoryId: 'cat_sys_groceries', payeeId: cafe })
  await add({ amount: 0.2, categoryId: 'cat_sys_groceries', payeeId: cafe, date: '2026-02-01' })
  await add({ amount: -2500, categoryId: 'cat_sys_salary', date: '2026-01-31' })
  await add({ amount: 12.34567891, payeeId: shop, date: '2026-02-15' })
  await add({ amount: 99, date: '2026-02-20' })
  // A transfer: left out of every group.
  await add({ amount: 500, isTransfer: true, transferToAccountId: eur2, date: '2026-01-15', categoryId: 'cat_sys_groceries' })
  // A split with a refund leg inside a purchase, and legs of two payees (one leg without: the transaction's).
  await add({
    amount: 45,
    payeeId: shop,
    date: '2026-02-03',
    splits: [
      { amount: 50, categoryId: custom },
      { amount: -5, categoryId: 'cat_sys_groceries', payeeId: cafe },
    ],
  })
  // Two legs in one category: the transaction counts once there.
  await add({
    amount: 30,
    date: '2026-02-04',
    splits: [
      { amount: 10, categoryId: custom },
      { amount: 20, categoryId: custom },
    ],
  })
  await createTxn(server, owner.key, { accountId: usd, amount: 7.5, categoryId: 'cat_sys_groceries', date: '2026-01-20' })
  // Outside the range.
  await add({ amount: 1000, categoryId: 'cat_sys_groceries', date: '2025-12-31' })
  await add({ amount: 1000, categoryId: 'cat_sys_groceries', date: '2026-03-01' })
})
afterAll(() => server.stop())

async function report(query: string): Promise<Json> {
  const res = await server.request('GET', `/v1/reports/spending?${query}`, { key: owner.key })
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`)
  // Every sum is written exactly (never a double's approximation).
  for (const field of ['spent', 'received', 'net']) for (const text of rawNumbers(res.text, field)) expect(text).toMatch(/^-?\d+(\.\d{1,8})?$/)
  return res.json.data
}

/** What the report should say, worked out from the transactions the list returns. */
async function expected(groupBy: 'category' | 'payee' | 'month', from: string, to: string, accountId?: string) {
  const query = `from=${from}&to=${to}${accountId ? `&accountId=${accountId}` : ''}`
  const txns = (await listAll(server, owner.key, query)).filter((t: Json) => !t.isTransfer && (!accountId || t.accountId === accountId))
  const accounts = new Map((await listPages(server, owner.key, '/v1/accounts')).map((a: Json) => [a.id, a.currency]))
  const groups = new Map<string, { key: string | null; currency: string; spent: bigint; received: bigint; ids: Set<string> }>()
  for (const t of txns) {
    const atoms = t.hasSplits
      ? t.splits.map((leg: Json) => ({ amount: units(leg.amount), category: leg.categoryId, payee: leg.payeeId ?? t.payeeId }))
      : [{ amount: units(t.amount), category: t.categoryId, payee: t.payeeId }]
    for (const atom of atoms) {
      const key = groupBy === 'month' ? t.date.slice(0, 7) : groupBy === 'category' ? atom.category : atom.payee
      const currency = accounts.get(t.accountId) as string
      const id = `${key}|${currency}`
      const group = groups.get(id) ?? { key, currency, spent: 0n, received: 0n, ids: new Set<string>() }
      if (atom.amount > 0n) group.spent += atom.amount
      else group.received -= atom.amount
      group.ids.add(t.id)
      groups.set(id, group)
    }
  }
  return [...groups.values()].map((g) => ({
    key: g.key,
    currency: g.currency,
    spent: lexeme(g.spent),
    received: lexeme(g.received),
    net: lexeme(g.spent - g.received),
    transactionCount: g.ids.size,
  }))
}

const comparable = (groups: Json[]) =>
  groups
    .map((g) => ({
      key: g.key,
      currency: g.currency,
      spent: lexeme(units(g.spent)),
      received: lexeme(units(g.received)),
      net: lexeme(units(g.net)),
      transactionCount: g.transactionCount,
    }))
    .sort((a, b) => `${a.currency}|${a.key}`.localeCompare(`${b.currency}|${b.key}`))

describe('GET /v1/reports/spending', () => {
  for (const groupBy of ['category', 'payee', 'month'] as const) {
    test(`by ${groupBy}: the sums of the listed transactions, legs in their own groups, transfers left out, per currency`, async () => {
      const data = await report(`groupBy=${groupBy}&from=2026-01-01&to=2026-02-28`)
      expect(data).toMatchObject({ groupBy, from: '2026-01-01', to: '2026-02-28', accountId: null, omittedGroups: 0 })
      expect(comparable(data.groups)).toEqual(comparable(await expected(groupBy, '2026-01-01', '2026-02-28')))
      const scoped = await report(`groupBy=${groupBy}&from=2026-01-01&to=2026-02-28&accountId=${usd}`)
      expect(comparable(scoped.groups)).toEqual(comparable(await expected(groupBy, '2026-01-01', '2026-02-28', usd)))
    })
  }

  test('exact: 0.1 + 0.2 is 0.3; a refund leg is income of its category; names and order', async () => {
    const data = await report('groupBy=category&from=2026-01-01&to=2026-02-28')
    const eurGroups = data.groups.filter((g: Json) => g.currency === 'EUR')
    expect(eurGroups.map((g: Json) => g.key)).toEqual([null, custom, 'cat_sys_groceries', 'cat_sys_salary'])
    const groceries = eurGroups.find((g: Json) => g.key === 'cat_sys_groceries')
    expect(groceries).toMatchObject({ spent: 0.3, received: 5, net: -4.7, transactionCount: 3 })
    expect(eurGroups[1]).toMatchObject({ name: 'Home / Garden', spent: 80, received: 0, net: 80, transactionCount: 2 })
    expect(eurGroups.find((g: Json) => g.key === null)).toMatchObject({ name: null, spent: 111.34567891 })
    expect(eurGroups.find((g: Json) => g.key === 'cat_sys_salary')).toMatchObject({ spent: 0, received: 2500, net: -2500 })
    // Currencies apart, never added together: USD after EUR.
    expect(data.groups.at(-1)).toMatchObject({ key: 'cat_sys_groceries', currency: 'USD', spent: 7.5 })
    const months = await report('groupBy=month&from=2026-01-01&to=2026-02-28')
    expect(months.groups.map((g: Json) => `${g.currency} ${g.key}`)).toEqual(['EUR 2026-01', 'EUR 2026-02', 'USD 2026-01'])
    expect(months.groups[0].name).toBeNull()
    const payees = await report('groupBy=payee&from=2026-01-01&to=2026-02-28')
    expect(payees.groups.find((g: Json) => g.key === cafe)).toMatchObject({ name: 'Café', spent: 0.3, received: 5, transactionCount: 3 })
  })

  test('sums past the range of one 64-bit SQL sum stay exact', async () => {
    // Each account holds at most the money range; the report adds across accounts of one currency.
    const account = async () => (await createAccount(server, owner.key, { name: 'Gold', currency: 'XAU', balance: 0 })).id
    for (const amount of [92233720368, 92233720368, 0.99999999, -92233720368]) {
      await createTxn(server, owner.key, { accountId: await account(), amount, date: '2027-01-01' })
    }
    const res = await server.request('GET', '/v1/reports/spending?groupBy=month&from=2027-01-01&to=2027-01-31', { key: owner.key })
    expect(rawNumbers(res.text, 'spent')).toEqual(['184467440736.99999999'])
    expect(rawNumbers(res.text, 'received')).toEqual(['92233720368'])
    expect(rawNumbers(res.text, 'net')).toEqual(['92233720368.99999999'])
  })

  test('limit keeps the first groups and counts the rest', async () => {
    const data = await report('groupBy=category&from=2026-01-01&to=2026-02-28&limit=2')
    const all = await report('groupBy=category&from=2026-01-01&to=2026-02-28')
    expect(data.groups).toEqual(all.groups.slice(0, 2))
    expect(data.omittedGroups).toBe(all.groups.length - 2)
  })

  test('an empty range, an account that is not the owner’s: no groups', async () => {
    expect((await report('groupBy=payee&from=2030-01-01&to=2030-12-31')).groups).toEqual([])
    expect((await report('groupBy=payee&from=2026-02-01&to=2026-01-01')).groups).toEqual([])
    expect((await report('groupBy=payee&from=2026-01-01&to=2026-12-31&accountId=acct_nope')).groups).toEqual([])
  })

  test('refused: a missing or unknown groupBy, a bad date, a bad limit, an unknown parameter', async () => {
    for (const [query, word] of [
      ['from=2026-01-01&to=2026-01-31', 'groupBy'],
      ['groupBy=tag&from=2026-01-01&to=2026-01-31', 'groupBy'],
      ['groupBy=month&to=2026-01-31', 'from'],
      ['groupBy=month&from=2026-02-30&to=2026-03-01', 'from'],
      ['groupBy=month&from=2026-01-01&to=2026-01-31&limit=0', 'limit'],
      ['groupBy=month&from=2026-01-01&to=2026-01-31&currency=EUR', 'currency'],
    ] as const) {
      expect(expectProblem(await server.request('GET', `/v1/reports/spending?${query}`, { key: owner.key }), 422, 'validation_failed').detail).toContain(word)
    }
  })

  test('needs transactions:read', async () => {
    const key = await server.key(owner.id, { scopes: ['accounts:read', 'categories:read', 'payees:read'] })
    expectProblem(await server.request('GET', '/v1/reports/spending?groupBy=month&from=2026-01-01&to=2026-01-31', { key: key.key }), 403, 'insufficient_scope')
  })
})

describe('one indexed pass', () => {
  test('the range is walked by the list index, or by the account’s; legs are looked up by their transaction', () => {
    const dir = tempDir()
    try {
      const db = openDatabase(join(dir, 'plan.db'), { synchronous: 'FULL', migrations })
      const plans: string[] = []
      const prepare = db.prepare.bind(db)
      db.prepare = ((text: string) => {
        plans.push((prepare(`EXPLAIN QUERY PLAN ${text}`).all() as { detail: string }[]).map((row) => row.detail).join('\n'))
        return prepare(text)
      }) as typeof db.prepare
      const tenant = new Tenant('own_plan', db)
      spendingRows(tenant, 'category', '2026-01-01', '2026-01-31')
      spendingRows(tenant, 'payee', '2026-01-01', '2026-01-31', 'acct_x')
      db.close(true)
      expect(plans[0]).toContain('SEARCH t USING INDEX transactions_list_idx (date>? AND date<?)')
      expect(plans[1]).toContain('SEARCH t USING INDEX transactions_account_idx (account_id=? AND date>? AND date<?)')
      for (const plan of plans) {
        expect(plan).toContain('SEARCH l USING INDEX transaction_splits_order_idx (transaction_id=?)')
        expect(plan).not.toMatch(/SCAN (t|l)\b/)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
