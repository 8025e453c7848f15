import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { balances, createAccount, createTxn, getPayee, getTxn, patchTxn, rawNumber, snapshot } from './helpers.ts'

/** CONTRACT §10 payees on transactions, and invalid references (CONTRACT §6). */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

async function payeeTotals(ownerKey: string, payeeId: string) {
  const res = await server.request('GET', `/v1/payees/${payeeId}`, { key: ownerKey })
  expect(res.status).toBe(200)
  return { transactionCount: res.json.data.transactionCount as number, totalSpent: rawNumber(res.text, 'totalSpent') }
}

describe('payees on transactions', () => {
  test('payeeName creates the payee, then finds it by normalized name or alias', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const first = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2026-01-01', payeeName: '  Café  Central ' })
    const payee = await getPayee(server, owner.key, first.payeeId)
    expect(payee).toMatchObject({ name: 'Café  Central', normalizedName: 'cafe central', transactionCount: 1, totalSpent: 1 })
    const second = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2026-01-01', payeeName: 'CAFE central' })
    expect(second.payeeId).toBe(first.payeeId)

    const aliased = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Pingo Doce', aliases: ['PD Lisboa 123'] } })
    expect(aliased.status).toBe(201)
    const third = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2026-01-01', payeeName: 'pd  lisboa 123' })
    expect(third.payeeId).toBe(aliased.json.data.id)

    const list = await server.request('GET', '/v1/payees?limit=200', { key: owner.key })
    expect(list.json.data.length).toBe(2)
    // PATCH with payeeName switches the payee
    const patched = await patchTxn(server, owner.key, first.id, { payeeName: 'Pingo Doce' })
    expect(patched.payeeId).toBe(aliased.json.data.id)
  })

  test('payeeId with payeeName → 422 rule_violation, nothing changes', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const payee = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Shop' } })
    const txn = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2026-01-01' })
    const before = snapshot(server, owner.id)
    const body = { accountId: account.id, amount: 1, date: '2026-01-01', payeeId: payee.json.data.id, payeeName: 'Brand New Payee' }
    expectProblem(await server.request('POST', '/v1/transactions', { key: owner.key, body }), 422, 'rule_violation')
    expectProblem(await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { ...body, externalId: 'e1' } }), 422, 'rule_violation')
    expectProblem(
      await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: { payeeId: payee.json.data.id, payeeName: 'Brand New Payee' } }),
      422,
      'rule_violation',
    )
    expectProblem(
      await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: { payeeId: null, payeeName: 'Brand New Payee' } }),
      422,
      'rule_violation',
    )
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('a payeeName in a request that fails creates no payee', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const before = snapshot(server, owner.id)
    const failing: [Record<string, unknown>, number, string][] = [
      [{ categoryId: 'cat_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' }, 422, 'invalid_reference'],
      [{ isTransfer: true }, 422, 'rule_violation'],
      [{ isTransfer: true, transferToAccountId: 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' }, 422, 'invalid_reference'],
      [{ destinationAmount: 1 }, 422, 'rule_violation'],
    ]
    for (const [change, status, code] of failing) {
      const body = { accountId: account.id, amount: 1, date: '2026-01-01', payeeName: 'Ghost Payee', ...change }
      expectProblem(await server.request('POST', '/v1/transactions', { key: owner.key, body }), status, code)
    }
    expect(snapshot(server, owner.id)).toEqual(before)
    const list = await server.request('GET', '/v1/payees', { key: owner.key })
    expect(list.json.data).toEqual([])
  })

  test("the payee's category applies when categoryId is absent", async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    const payee = (await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Employer', categoryId: 'cat_sys_salary' } })).json.data
    const byId = await createTxn(server, owner.key, { accountId: account.id, amount: -1000, date: '2026-01-01', payeeId: payee.id })
    expect(byId).toMatchObject({ categoryId: 'cat_sys_salary', categoryType: 'income' })
    const byName = await createTxn(server, owner.key, { accountId: account.id, amount: -1000, date: '2026-01-01', payeeName: 'employer' })
    expect(byName).toMatchObject({ payeeId: payee.id, categoryId: 'cat_sys_salary', categoryType: 'income' })
    // an explicit category wins; an explicit null stays null
    const explicit = await createTxn(server, owner.key, {
      accountId: account.id,
      amount: 5,
      date: '2026-01-01',
      payeeId: payee.id,
      categoryId: 'cat_sys_groceries',
    })
    expect(explicit).toMatchObject({ categoryId: 'cat_sys_groceries', categoryType: 'expense' })
    const none = await createTxn(server, owner.key, { accountId: account.id, amount: 5, date: '2026-01-01', payeeId: payee.id, categoryId: null })
    expect(none).toMatchObject({ categoryId: null, categoryType: null })
    // a PATCH that sets the payee on a transaction without a category applies it too
    const plain = await createTxn(server, owner.key, { accountId: account.id, amount: -3, date: '2026-01-01' })
    expect(await patchTxn(server, owner.key, plain.id, { payeeId: payee.id })).toMatchObject({ categoryId: 'cat_sys_salary', categoryType: 'income' })
  })

  test('payee totals are exact after create, PATCH and DELETE', async () => {
    const owner = await server.owner()
    const [a, b] = [await createAccount(server, owner.key, { name: 'A' }), await createAccount(server, owner.key, { name: 'B' })]
    const p1 = (await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'P1' } })).json.data
    const p2 = (await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'P2' } })).json.data
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 0, totalSpent: '0' })

    const t1 = await createTxn(server, owner.key, { accountId: a.id, amount: 0.1, date: '2026-01-01', payeeId: p1.id })
    const t2 = await createTxn(server, owner.key, { accountId: a.id, amount: 0.2, date: '2026-01-01', payeeId: p1.id })
    const income = await createTxn(server, owner.key, { accountId: a.id, amount: -50, date: '2026-01-01', payeeId: p1.id })
    const transfer = await createTxn(server, owner.key, {
      accountId: a.id,
      amount: 7,
      date: '2026-01-01',
      payeeId: p1.id,
      isTransfer: true,
      transferToAccountId: b.id,
    })
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 4, totalSpent: '0.3' })

    await patchTxn(server, owner.key, t1.id, { amount: 1.15 }) // 1.15 + 0.2
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 4, totalSpent: '1.35' })
    await patchTxn(server, owner.key, income.id, { amount: 2 }) // income becomes an expense
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 4, totalSpent: '3.35' })
    await patchTxn(server, owner.key, transfer.id, { isTransfer: false, transferToAccountId: null }) // now spent
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 4, totalSpent: '10.35' })
    await patchTxn(server, owner.key, t2.id, { payeeId: p2.id }) // moves 0.2 to P2
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 3, totalSpent: '10.15' })
    expect(await payeeTotals(owner.key, p2.id)).toEqual({ transactionCount: 1, totalSpent: '0.2' })
    await patchTxn(server, owner.key, t1.id, { payeeId: null })
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 2, totalSpent: '9' })

    expect((await server.request('DELETE', `/v1/transactions/${income.id}`, { key: owner.key })).status).toBe(200)
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 1, totalSpent: '7' })
    expect((await server.request('DELETE', `/v1/transactions/${transfer.id}`, { key: owner.key })).status).toBe(200)
    expect((await server.request('DELETE', `/v1/transactions/${t2.id}`, { key: owner.key })).status).toBe(200)
    expect(await payeeTotals(owner.key, p1.id)).toEqual({ transactionCount: 0, totalSpent: '0' })
    expect(await payeeTotals(owner.key, p2.id)).toEqual({ transactionCount: 0, totalSpent: '0' })
    expect(await balances(server, owner.key, a.id, b.id)).toEqual(['98.85', '100'])
  })
})

describe('references that are not the owner’s → 422 invalid_reference, nothing changes', () => {
  let owner: { id: string; key: string }
  let other: { id: string; key: string }
  let a: string
  let b: string
  let foreign: { account: string; category: string; payee: string }
  let txnId: string
  beforeAll(async () => {
    owner = await server.owner({ country: 'US' })
    other = await server.owner({ country: 'PT' })
    a = (await createAccount(server, owner.key, { name: 'A' })).id
    b = (await createAccount(server, owner.key, { name: 'B' })).id
    foreign = {
      account: (await createAccount(server, other.key)).id,
      category: (await server.request('POST', '/v1/categories', { key: other.key, body: { name: 'Theirs' } })).json.data.id,
      payee: (await server.request('POST', '/v1/payees', { key: other.key, body: { name: 'Theirs' } })).json.data.id,
    }
    txnId = (await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01', isTransfer: true, transferToAccountId: b })).id
  })

  const missing = {
    account: 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b',
    category: 'cat_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b',
    payee: 'pay_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b',
  }
  const cases: [string, string, () => Record<string, unknown>][] = [
    ["another owner's accountId", 'accountId', () => ({ accountId: foreign.account })],
    ['a nonexistent accountId', 'accountId', () => ({ accountId: missing.account })],
    ['a malformed accountId', 'accountId', () => ({ accountId: 'not-an-id' })],
    ["another owner's transferToAccountId", 'transferToAccountId', () => ({ isTransfer: true, transferToAccountId: foreign.account })],
    ['a nonexistent transferToAccountId', 'transferToAccountId', () => ({ isTransfer: true, transferToAccountId: missing.account })],
    ["another owner's categoryId", 'categoryId', () => ({ categoryId: foreign.category })],
    ['a nonexistent categoryId', 'categoryId', () => ({ categoryId: missing.category })],
    ['a system category of another country (thirteenth salary is BR/PT only)', 'categoryId', () => ({ categoryId: 'cat_sys_thirteenth_salary' })],
    ["another owner's payeeId", 'payeeId', () => ({ payeeId: foreign.payee })],
    ['a nonexistent payeeId', 'payeeId', () => ({ payeeId: missing.payee })],
  ]
  for (const [what, field, build] of cases) {
    test(what, async () => {
      const before = snapshot(server, owner.id)
      const otherBefore = snapshot(server, other.id)
      const balancesBefore = await balances(server, owner.key, a, b)
      const body = { accountId: a, amount: 5, date: '2026-01-01', ...build() }
      const created = expectProblem(await server.request('POST', '/v1/transactions', { key: owner.key, body }), 422, 'invalid_reference')
      expect(created.detail).toContain(field)
      expectProblem(
        await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { ...body, externalId: `ref-${field}` } }),
        422,
        'invalid_reference',
      )
      const patchBody = build()
      if ('isTransfer' in patchBody) delete patchBody.isTransfer
      expectProblem(await server.request('PATCH', `/v1/transactions/${txnId}`, { key: owner.key, body: patchBody }), 422, 'invalid_reference')
      expect(snapshot(server, owner.id)).toEqual(before)
      expect(snapshot(server, other.id)).toEqual(otherBefore)
      expect(await balances(server, owner.key, a, b)).toEqual(balancesBefore)
      expect((await getTxn(server, owner.key, txnId)).accountId).toBe(a)
    })
  }
})
