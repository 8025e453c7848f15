import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAccount, createPayee, createTransaction, get, type Json, listAll, patch, tableRows } from '../accounts/helpers.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * Payee aggregates (CONTRACT §10, §13): transactionCount counts all of the payee's
 * transactions, totalSpent sums the positive amounts of non-transfer ones; both exact and
 * current after every transaction create, PATCH and DELETE. And `payeeName` resolution.
 */

let server: TestServer
let owner: { id: string; key: string }
let eur: Json
let eur2: Json
beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ country: 'PT' })
  eur = await createAccount(server, owner.key, { name: 'EUR main', balance: 1000 })
  eur2 = await createAccount(server, owner.key, { name: 'EUR savings', balance: 0 })
})
afterAll(() => server.stop())

/** Exact decimal arithmetic for the expected values: units of 10⁻⁸ as bigint. */
const units = (value: number) => {
  const [whole = '0', fraction = ''] = Math.abs(value).toFixed(8).split('.')
  const u = BigInt(whole) * 100000000n + BigInt(fraction)
  return value < 0 ? -u : u
}

/**
 * Checks the payee's totals three ways: the expected numbers, the payee's own transactions
 * (listed with ?payeeId=) summed exactly, and the same payee in the list and the agent context.
 */
async function expectTotals(payeeId: string, transactionCount: number, totalSpent: number) {
  const res = await server.request('GET', `/v1/payees/${payeeId}`, { key: owner.key })
  expect(res.status).toBe(200)
  expect({ transactionCount: res.json.data.transactionCount, totalSpent: res.json.data.totalSpent }).toEqual({ transactionCount, totalSpent })
  expect(res.text).toContain(`"totalSpent":${totalSpent}`)

  const txns = await listAll(server, owner.key, '/v1/transactions', { payeeId })
  expect(txns.length).toBe(transactionCount)
  const spent = txns.filter((t: Json) => !t.isTransfer && t.amount > 0).reduce((sum: bigint, t: Json) => sum + units(t.amount), 0n)
  expect(spent).toBe(units(totalSpent))

  const listed = (await listAll(server, owner.key, '/v1/payees')).find((p: Json) => p.id === payeeId)
  expect(listed).toEqual(res.json.data)
  const context = await get(server, owner.key, '/v1/agent/context?payeeLimit=500&recentTransactionLimit=0')
  expect(context.payees.find((p: Json) => p.id === payeeId)).toEqual(res.json.data)
}

describe('totals follow every transaction write', () => {
  test('create: expenses add, income and transfers only count; sums exact', async () => {
    const p = await createPayee(server, owner.key, { name: 'Totals create' })
    await expectTotals(p.id, 0, 0)
    await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 10.1 })
    await expectTotals(p.id, 1, 10.1)
    await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 0.2 })
    await expectTotals(p.id, 2, 10.3) // not 10.299999999999999
    await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: -50 })
    await expectTotals(p.id, 3, 10.3)
    await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 100, isTransfer: true, transferToAccountId: eur2.id })
    await expectTotals(p.id, 4, 10.3)
    await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 0 })
    await expectTotals(p.id, 5, 10.3)
    await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 0.00000001 })
    await expectTotals(p.id, 6, 10.30000001)
  })

  test('PATCH: amount changes, expense ↔ income, payee changes, transfer on and off, payee removed', async () => {
    const p = await createPayee(server, owner.key, { name: 'Totals patch P' })
    const q = await createPayee(server, owner.key, { name: 'Totals patch Q' })
    const t1 = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 10.1 })
    const t2 = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 0.2 })
    const t3 = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: -50 })
    await expectTotals(p.id, 3, 10.3)

    await patch(server, owner.key, `/v1/transactions/${t1.id}`, { amount: 20.1 })
    await expectTotals(p.id, 3, 20.3)
    await patch(server, owner.key, `/v1/transactions/${t2.id}`, { payeeId: q.id })
    await expectTotals(p.id, 2, 20.1)
    await expectTotals(q.id, 1, 0.2)
    await patch(server, owner.key, `/v1/transactions/${t1.id}`, { isTransfer: true, transferToAccountId: eur2.id })
    await expectTotals(p.id, 2, 0)
    await patch(server, owner.key, `/v1/transactions/${t1.id}`, { amount: 30 })
    await expectTotals(p.id, 2, 0)
    await patch(server, owner.key, `/v1/transactions/${t1.id}`, { isTransfer: false, transferToAccountId: null })
    await expectTotals(p.id, 2, 30)
    await patch(server, owner.key, `/v1/transactions/${t3.id}`, { amount: 5.55 })
    await expectTotals(p.id, 2, 35.55)
    await patch(server, owner.key, `/v1/transactions/${t1.id}`, { amount: -30 })
    await expectTotals(p.id, 2, 5.55)
    await patch(server, owner.key, `/v1/transactions/${t3.id}`, { payeeId: null })
    await expectTotals(p.id, 1, 0)
    await patch(server, owner.key, `/v1/transactions/${t3.id}`, { payeeName: 'Totals patch Q' })
    await expectTotals(q.id, 2, 5.75)
    // A PATCH that changes nothing about the payee leaves the totals alone.
    await patch(server, owner.key, `/v1/transactions/${t2.id}`, { note: 'just a note', date: '2025-04-01' })
    await expectTotals(q.id, 2, 5.75)
  })

  test('a rejected transaction write leaves the totals unchanged', async () => {
    const p = await createPayee(server, owner.key, { name: 'Totals rejected' })
    const t = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 4 })
    expectProblem(await server.request('PATCH', `/v1/transactions/${t.id}`, { key: owner.key, body: { amount: 9, isTransfer: true } }), 422, 'rule_violation')
    expectProblem(
      await server.request('PATCH', `/v1/transactions/${t.id}`, { key: owner.key, body: { amount: 9, categoryId: 'cat_nope' } }),
      422,
      'invalid_reference',
    )
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: { accountId: eur.id, payeeId: p.id, amount: 3, date: '2025-01-01', transferToAccountId: eur2.id },
      }),
      422,
      'rule_violation',
    )
    await expectTotals(p.id, 1, 4)
  })

  test('DELETE reverses the transaction’s effect', async () => {
    const p = await createPayee(server, owner.key, { name: 'Totals delete' })
    const a = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 12.34 })
    const b = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: -3 })
    const c = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 7, isTransfer: true, transferToAccountId: eur2.id })
    const d = await createTransaction(server, owner.key, { accountId: eur.id, payeeId: p.id, amount: 0.66 })
    await expectTotals(p.id, 4, 13)
    expect((await server.request('DELETE', `/v1/transactions/${a.id}`, { key: owner.key })).status).toBe(200)
    await expectTotals(p.id, 3, 0.66)
    await server.request('DELETE', `/v1/transactions/${c.id}`, { key: owner.key })
    await expectTotals(p.id, 2, 0.66)
    await server.request('DELETE', `/v1/transactions/${b.id}`, { key: owner.key })
    await expectTotals(p.id, 1, 0.66)
    await server.request('DELETE', `/v1/transactions/${d.id}`, { key: owner.key })
    await expectTotals(p.id, 0, 0)
  })

  test('transaction upserts (create and update) move the totals too', async () => {
    const p = await createPayee(server, owner.key, { name: 'Totals upsert' })
    const body = { externalId: 'agg-up-1', accountId: eur.id, payeeId: p.id, amount: 8, date: '2025-02-02' }
    expect((await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body })).status).toBe(201)
    await expectTotals(p.id, 1, 8)
    expect((await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { ...body, amount: 2.5 } })).status).toBe(200)
    await expectTotals(p.id, 1, 2.5)
  })
})

describe('payeeName on a transaction', () => {
  test('finds an existing payee by normalized name', async () => {
    const p = await createPayee(server, owner.key, { name: 'Pingo Doce' })
    const before = tableRows(server, owner.id, 'payees').length
    for (const payeeName of ['Pingo Doce', '  pingo   DOCE ', 'Píngo Doçe']) {
      const t = await createTransaction(server, owner.key, { accountId: eur.id, amount: 1, payeeName })
      expect(t.payeeId).toBe(p.id)
      expect('payeeName' in t).toBe(false)
    }
    expect(tableRows(server, owner.id, 'payees').length).toBe(before)
    await expectTotals(p.id, 3, 3)
  })

  test('finds an existing payee by alias, also after the aliases change', async () => {
    const p = await createPayee(server, owner.key, { name: 'Continente', aliases: ['MC Sonae Lisboa'] })
    const t = await createTransaction(server, owner.key, { accountId: eur.id, amount: 2, payeeName: 'mc sonae  LISBOA' })
    expect(t.payeeId).toBe(p.id)
    await patch(server, owner.key, `/v1/payees/${p.id}`, { aliases: ['Continente Bom Dia'] })
    expect((await createTransaction(server, owner.key, { accountId: eur.id, amount: 2, payeeName: 'CONTINENTE BOM DIA' })).payeeId).toBe(p.id)
    // The removed alias no longer leads to this payee: a new payee is made for it.
    const old = await createTransaction(server, owner.key, { accountId: eur.id, amount: 2, payeeName: 'MC Sonae Lisboa' })
    expect(old.payeeId).not.toBe(p.id)
    await expectTotals(p.id, 2, 4)
    expect((await get(server, owner.key, `/v1/payees/${old.payeeId}`)).name).toBe('MC Sonae Lisboa')
  })

  test('creates a new payee when neither name nor alias matches', async () => {
    const t = await createTransaction(server, owner.key, { accountId: eur.id, amount: 6.5, payeeName: '  Brand New Shop ' })
    expect(t.payeeId).toMatch(/^pay_/)
    const payee = await get(server, owner.key, `/v1/payees/${t.payeeId}`)
    expect(payee).toMatchObject({
      name: 'Brand New Shop',
      normalizedName: 'brand new shop',
      aliases: [],
      categoryId: null,
      transactionCount: 1,
      totalSpent: 6.5,
    })
    expect((await listAll(server, owner.key, '/v1/payees', { q: 'brand new' })).map((p: Json) => p.id)).toEqual([t.payeeId])
    // The next transaction with that name uses it.
    expect((await createTransaction(server, owner.key, { accountId: eur.id, amount: 1, payeeName: 'BRAND NEW SHOP' })).payeeId).toBe(t.payeeId)
    await expectTotals(t.payeeId, 2, 7.5)
  })

  test('the payee’s category fills an absent categoryId, never an explicit one', async () => {
    const p = await createPayee(server, owner.key, { name: 'Groceries R Us', categoryId: 'cat_sys_groceries' })
    expect((await createTransaction(server, owner.key, { accountId: eur.id, amount: 1, payeeName: 'groceries r us' })).categoryId).toBe('cat_sys_groceries')
    expect((await createTransaction(server, owner.key, { accountId: eur.id, amount: 1, payeeId: p.id })).categoryId).toBe('cat_sys_groceries')
    expect((await createTransaction(server, owner.key, { accountId: eur.id, amount: 1, payeeId: p.id, categoryId: 'cat_sys_coffee' })).categoryId).toBe(
      'cat_sys_coffee',
    )
    expect((await createTransaction(server, owner.key, { accountId: eur.id, amount: 1, payeeId: p.id, categoryId: null })).categoryId).toBeNull()
  })

  test('payeeId with payeeName → 422 rule_violation; a failing write creates no payee', async () => {
    const p = await createPayee(server, owner.key, { name: 'Both' })
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: { accountId: eur.id, amount: 1, date: '2025-01-01', payeeId: p.id, payeeName: 'Both' },
      }),
      422,
      'rule_violation',
    )
    const before = tableRows(server, owner.id, 'payees')
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: { accountId: eur.id, amount: 1, date: '2025-01-01', payeeName: 'Ghost Payee', categoryId: 'cat_sys_nope' },
      }),
      422,
      'invalid_reference',
    )
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: { accountId: eur.id, amount: -1, date: '2025-01-01', payeeName: 'Ghost Payee', isTransfer: true, transferToAccountId: eur2.id },
      }),
      422,
      'rule_violation',
    )
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    expect(await listAll(server, owner.key, '/v1/payees', { q: 'ghost' })).toEqual([])
    await expectTotals(p.id, 0, 0)
  })
})
