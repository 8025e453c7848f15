import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAccount, createPayee, createTransaction, get, type Json, listAll } from '../accounts/helpers.ts'
import type { Scope } from '../../src/platform/scopes.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/** GET /v1/agent/context gives an agent the owner's whole picture in one read: its shape, limits and order, rejections, isolation (SPEC §2.7, CONTRACT §9, §13). */

let server: TestServer
let owner: { id: string; key: string }
/** Payees by expected usage: busiest first. */
let payeesByUse: Json[]
let accounts: Json[]
let archivedAccount: Json
let archivedCategory: Json
/** Transactions in the order the context must list them (date desc, createdAt desc). */
let newestFirst: Json[]

const READ_SCOPES: Scope[] = ['me:read', 'accounts:read', 'categories:read', 'payees:read', 'transactions:read']

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ name: 'Agent Owner', country: 'PT', defaultCurrency: 'EUR', preferredLanguage: 'pt-PT' })
  const main = await createAccount(server, owner.key, { name: 'Main', balance: 1000 })
  const savings = await createAccount(server, owner.key, { name: 'Savings', balance: 0 })
  archivedAccount = await createAccount(server, owner.key, { name: 'Closed' })
  await server.request('DELETE', `/v1/accounts/${archivedAccount.id}`, { key: owner.key })
  const card = await createAccount(server, owner.key, { name: 'Card', type: 'card' })
  accounts = [main, savings, card]

  archivedCategory = (await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Old hobby' } })).json.data
  await server.request('DELETE', `/v1/categories/${archivedCategory.id}`, { key: owner.key })
  await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'New hobby', parentId: 'cat_sys_groceries' } })

  // Usage: busy 4, medium 2 (one a transfer), light 1, idle 0 — created in another order.
  const light = await createPayee(server, owner.key, { name: 'Light', linkedPersonId: 'person-secret' })
  const idle = await createPayee(server, owner.key, { name: 'Idle' })
  const busy = await createPayee(server, owner.key, { name: 'Busy' })
  const medium = await createPayee(server, owner.key, { name: 'Medium' })
  const plan: [Json, string, Record<string, unknown>][] = [
    [busy, '2025-01-05', { amount: 1 }],
    [medium, '2025-01-03', { amount: 2 }],
    [busy, '2025-01-07', { amount: 3 }],
    [light, '2025-01-01', { amount: -4 }],
    [busy, '2025-01-05', { amount: 5 }],
    [medium, '2025-01-09', { amount: 6, isTransfer: true, transferToAccountId: savings.id }],
    [busy, '2025-01-05', { amount: 7 }],
  ]
  const created: { txn: Json; seq: number }[] = []
  for (const [seq, [payee, date, extra]] of plan.entries()) {
    created.push({ txn: await createTransaction(server, owner.key, { accountId: main.id, payeeId: payee.id, date, ...extra }), seq })
  }
  newestFirst = created.sort((a, b) => (a.txn.date === b.txn.date ? b.seq - a.seq : a.txn.date < b.txn.date ? 1 : -1)).map((c) => c.txn)
  payeesByUse = await Promise.all([busy, medium, light, idle].map((p) => get(server, owner.key, `/v1/payees/${p.id}`)))
})
afterAll(() => server.stop())

const context = async (query = '', key = owner.key) => {
  const res = await server.request('GET', `/v1/agent/context${query}`, { key })
  if (res.status !== 200) throw new Error(`context → ${res.status}: ${res.text}`)
  return res
}

describe('shape and contents', () => {
  test('{data: {me, accounts, categories, systemCategorySummary, payees, tags, rules, importPresets, recentTransactions, budget, upcoming, serverTime}}, each as the other routes return it', async () => {
    const before = Date.now()
    const res = await context()
    const after = Date.now()
    expect(Object.keys(res.json)).toEqual(['data'])
    const data = res.json.data
    expect(Object.keys(data).sort()).toEqual([
      'accounts',
      'budget',
      'categories',
      'importPresets',
      'me',
      'payees',
      'recentTransactions',
      'rules',
      'serverTime',
      'systemCategorySummary',
      'tags',
      'upcoming',
    ])
    // By default every category is whole in `categories` (CONTRACT §26: systemCategories=full).
    expect(data.systemCategorySummary).toBeNull()

    expect(data.me).toEqual(await get(server, owner.key, '/v1/me'))
    expect(data.me).toMatchObject({
      id: owner.id,
      name: 'Agent Owner',
      country: 'PT',
      defaultCurrency: 'EUR',
      preferredLanguage: 'pt-PT',
      tier: 'pro',
      accessMode: 'self',
    })
    expect(data.accounts).toEqual(await listAll(server, owner.key, '/v1/accounts'))
    expect(data.accounts.map((a: Json) => a.id)).toEqual(accounts.map((a) => a.id))
    expect(data.categories).toEqual(await listAll(server, owner.key, '/v1/categories'))
    expect(data.payees).toEqual(payeesByUse)
    expect(data.tags).toEqual(await listAll(server, owner.key, '/v1/tags'))
    expect(data.rules).toEqual(await listAll(server, owner.key, '/v1/rules'))
    expect(data.importPresets).toEqual(await listAll(server, owner.key, '/v1/import-presets'))
    expect(data.recentTransactions).toEqual(newestFirst)
    expect(data.recentTransactions).toEqual(await listAll(server, owner.key, '/v1/transactions'))
    // The key has every scope, budgets:read among them (CONTRACT §27).
    expect(data.budget).toEqual(await get(server, owner.key, `/v1/budgets/${new Date().toISOString().slice(0, 7)}`))

    expect(Number.isInteger(data.serverTime)).toBe(true)
    expect(data.serverTime).toBeGreaterThanOrEqual(before)
    expect(data.serverTime).toBeLessThanOrEqual(after)
    expect(res.text).not.toContain('linkedPersonId')
    expect(res.text).not.toContain('person-secret')
  })

  test('systemCategories=summary: the custom categories whole, each system one as id, fullName and type', async () => {
    const full = (await context()).json.data.categories as Json[]
    const data = (await context('?systemCategories=summary')).json.data
    expect(data.categories).toEqual(full.filter((c) => !c.isSystem))
    expect(data.systemCategorySummary).toEqual(full.filter((c) => c.isSystem).map(({ id, fullName, type }) => ({ id, fullName, type })))
    expect(data.categories.length).toBeGreaterThan(0)
    const problem = await server.request('GET', '/v1/agent/context?systemCategories=some', { key: owner.key })
    expect(problem.status).toBe(422)
  })

  test('the categories are those the owner’s country sees', async () => {
    const ids = (await context()).json.data.categories.map((c: Json) => c.id)
    expect(ids).toContain('cat_sys_groceries')
    expect(ids).toContain('cat_sys_thirteenth_salary') // BR, PT
    expect(ids).not.toContain('cat_sys_kirchensteuer') // DE
    expect(ids).not.toContain('cat_sys_contribution_401k') // US
  })

  test('includeArchived adds archived accounts and categories; false is the default', async () => {
    for (const query of ['', '?includeArchived=false']) {
      const data = (await context(query)).json.data
      expect(data.accounts.map((a: Json) => a.id)).not.toContain(archivedAccount.id)
      expect(data.categories.map((c: Json) => c.id)).not.toContain(archivedCategory.id)
    }
    const data = (await context('?includeArchived=true')).json.data
    expect(data.accounts).toEqual(await listAll(server, owner.key, '/v1/accounts', { includeArchived: 'true' }))
    expect(data.accounts.find((a: Json) => a.id === archivedAccount.id)).toMatchObject({ isArchived: true, name: 'Closed' })
    expect(data.categories).toEqual(await listAll(server, owner.key, '/v1/categories', { includeArchived: 'true' }))
    expect(data.categories.find((c: Json) => c.id === archivedCategory.id)).toMatchObject({ isArchived: true })
  })

  test('payeeLimit keeps the most-used payees first', async () => {
    const ids = async (limit: number) => (await context(`?payeeLimit=${limit}`)).json.data.payees.map((p: Json) => p.name)
    expect(await ids(2)).toEqual(['Busy', 'Medium'])
    expect(await ids(3)).toEqual(['Busy', 'Medium', 'Light'])
    expect(await ids(500)).toEqual(['Busy', 'Medium', 'Light', 'Idle'])
    expect(await ids(0)).toEqual([])
    expect(payeesByUse.map((p) => p.transactionCount)).toEqual([4, 2, 1, 0])
  })

  test('usage order follows later writes', async () => {
    const o = await server.owner()
    const account = await createAccount(server, o.key)
    const a = await createPayee(server, o.key, { name: 'A' })
    const b = await createPayee(server, o.key, { name: 'B' })
    await createTransaction(server, o.key, { accountId: account.id, payeeId: a.id, amount: 1 })
    expect((await context('?payeeLimit=1', o.key)).json.data.payees.map((p: Json) => p.name)).toEqual(['A'])
    await createTransaction(server, o.key, { accountId: account.id, payeeId: b.id, amount: 1 })
    const t = await createTransaction(server, o.key, { accountId: account.id, payeeId: b.id, amount: 1 })
    expect((await context('?payeeLimit=1', o.key)).json.data.payees.map((p: Json) => p.name)).toEqual(['B'])
    await server.request('DELETE', `/v1/transactions/${t.id}`, { key: o.key })
    await createTransaction(server, o.key, { accountId: account.id, payeeId: a.id, amount: 1 })
    await createTransaction(server, o.key, { accountId: account.id, payeeId: a.id, amount: 1 })
    const payees = (await context('', o.key)).json.data.payees
    expect(payees.map((p: Json) => [p.name, p.transactionCount])).toEqual([
      ['A', 3],
      ['B', 1],
    ])
  })

  test('recentTransactionLimit keeps the newest, date desc then createdAt desc', async () => {
    for (const limit of [0, 1, 3, 7, 500]) {
      expect((await context(`?recentTransactionLimit=${limit}`)).json.data.recentTransactions).toEqual(newestFirst.slice(0, limit))
    }
  })

  test('both limits default to 50', async () => {
    const o = await server.owner()
    const account = await createAccount(server, o.key)
    for (let i = 0; i < 53; i++) {
      await createTransaction(server, o.key, {
        accountId: account.id,
        amount: 1,
        date: `2024-03-${String((i % 28) + 1).padStart(2, '0')}`,
        payeeName: `Payee ${i}`,
      })
    }
    const data = (await context('', o.key)).json.data
    expect(data.payees).toHaveLength(50)
    expect(data.recentTransactions).toHaveLength(50)
    const list = await server.request('GET', '/v1/transactions?limit=50', { key: o.key })
    expect(data.recentTransactions).toEqual(list.json.data)
    expect((await context('?payeeLimit=500&recentTransactionLimit=500', o.key)).json.data.recentTransactions).toHaveLength(53)
  })

  test('money in the context is exact JSON', async () => {
    const o = await server.owner()
    const account = await createAccount(server, o.key, { balance: 0.1 })
    await createTransaction(server, o.key, { accountId: account.id, amount: -0.2, payeeName: 'Exact' })
    const res = await context('', o.key)
    expect(res.text).toContain('"balance":0.3,')
    expect(res.text).toContain('"amount":-0.2,')
    expect(res.text).not.toContain('0.30000000000000004')
  })
})

describe('rejections', () => {
  test('out-of-range or malformed parameters → 422 naming the parameter', async () => {
    const queries: [string, string][] = [
      ['payeeLimit=-1', 'payeeLimit'],
      ['payeeLimit=501', 'payeeLimit'],
      ['payeeLimit=abc', 'payeeLimit'],
      ['payeeLimit=1.5', 'payeeLimit'],
      ['payeeLimit=', 'payeeLimit'],
      ['recentTransactionLimit=-1', 'recentTransactionLimit'],
      ['recentTransactionLimit=501', 'recentTransactionLimit'],
      ['recentTransactionLimit=ten', 'recentTransactionLimit'],
      ['recentTransactionLimit=2.5', 'recentTransactionLimit'],
      ['includeArchived=yes', 'includeArchived'],
      ['includeArchived=1', 'includeArchived'],
      ['limit=5', 'limit'],
    ]
    for (const [query, parameter] of queries) {
      const res = await server.request('GET', `/v1/agent/context?${query}`, { key: owner.key })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain(parameter)
    }
  })

  test('needs all five read scopes: any one missing → 403 insufficient_scope', async () => {
    const onlyMe = await server.key(owner.id, { scopes: ['me:read'] })
    expect(expectProblem(await server.request('GET', '/v1/agent/context', { key: onlyMe.key }), 403, 'insufficient_scope').detail).toContain('accounts:read')
    // Scope is checked before the query (CONTRACT §6 order).
    expectProblem(await server.request('GET', '/v1/agent/context?payeeLimit=abc', { key: onlyMe.key }), 403, 'insufficient_scope')
    for (const missing of READ_SCOPES) {
      const key = await server.key(owner.id, { scopes: READ_SCOPES.filter((s) => s !== missing) })
      const res = await server.request('GET', '/v1/agent/context', { key: key.key })
      expect(expectProblem(res, 403, 'insufficient_scope').detail).toContain(missing)
    }
    const writeOnly = await server.key(owner.id, { scopes: ['accounts:write', 'transactions:write', 'categories:write', 'payees:write'] })
    expectProblem(await server.request('GET', '/v1/agent/context', { key: writeOnly.key }), 403, 'insufficient_scope')

    const readOnly = await server.key(owner.id, { scopes: READ_SCOPES })
    const res = await context('', readOnly.key)
    expect([...res.json.data.me.scopes].sort()).toEqual([...READ_SCOPES].sort())
  })

  test('no key → 401', async () => {
    const res = await server.request('GET', '/v1/agent/context')
    expectProblem(res, 401, 'unauthorized')
  })
})

describe('isolation', () => {
  test('another owner’s accounts, categories, payees and transactions never appear', async () => {
    const bob = await server.owner({ country: 'DE' })
    const bobAccount = await createAccount(server, bob.key, { name: 'Bob secret account' })
    const bobArchived = await createAccount(server, bob.key, { name: 'Bob archived account' })
    await server.request('DELETE', `/v1/accounts/${bobArchived.id}`, { key: bob.key })
    const bobCategory = (await server.request('POST', '/v1/categories', { key: bob.key, body: { name: 'Bob secret category' } })).json.data
    const bobPayee = await createPayee(server, bob.key, { name: 'Bob secret payee' })
    // Many transactions, so Bob's payee would top any shared usage ranking.
    for (let i = 0; i < 6; i++)
      await createTransaction(server, bob.key, { accountId: bobAccount.id, payeeId: bobPayee.id, amount: 1, date: '2030-01-01', note: 'Bob secret' })

    const res = await context('?includeArchived=true&payeeLimit=500&recentTransactionLimit=500')
    const data = res.json.data
    expect(res.text).not.toContain('Bob secret')
    expect(res.text).not.toContain('Bob archived')
    for (const id of [bobAccount.id, bobArchived.id, bobCategory.id, bobPayee.id]) expect(res.text).not.toContain(id)
    expect(data.me.id).toBe(owner.id)
    expect(data.recentTransactions.every((t: Json) => accounts.some((a) => a.id === t.accountId))).toBe(true)

    const bobs = (await context('?includeArchived=true', bob.key)).json.data
    expect(bobs.me.id).toBe(bob.id)
    expect(bobs.accounts.map((a: Json) => a.id)).toEqual([bobAccount.id, bobArchived.id])
    expect(bobs.payees.map((p: Json) => p.id)).toEqual([bobPayee.id])
    expect(bobs.recentTransactions).toHaveLength(6)
    const bobCategoryIds = bobs.categories.map((c: Json) => c.id)
    expect(bobCategoryIds).toContain(bobCategory.id)
    expect(bobCategoryIds).toContain('cat_sys_kirchensteuer')
    expect(bobCategoryIds).not.toContain(archivedCategory.id)
  })
})
