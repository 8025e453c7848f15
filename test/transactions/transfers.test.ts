import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { balances, createAccount, createTxn, getTxn, type Json, patchTxn, rawNumber, snapshot } from './helpers.ts'

/** CONTRACT §4 transfers, and PATCH/DELETE reversing and re-applying effects. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

async function setup(currencies: string[] = ['EUR', 'EUR', 'EUR']) {
  const owner = await server.owner()
  const accounts: Json[] = []
  for (const [i, currency] of currencies.entries()) accounts.push(await createAccount(server, owner.key, { name: `A${i}`, balance: 100, currency }))
  return { owner, ids: accounts.map((a) => a.id as string) }
}

describe('transfers', () => {
  test('same currency: the source loses amount, the destination gains it', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 30.05, date: '2026-01-01', isTransfer: true, transferToAccountId: b })
    expect(txn).toMatchObject({ isTransfer: true, transferToAccountId: b, destinationAmount: 30.05, exchangeRate: null, amount: 30.05 })
    expect(await balances(server, owner.key, a, b)).toEqual(['69.95', '130.05'])
  })

  test('two currencies with exchangeRate: destination gains amount × rate rounded to 8 places; the rate reads back as sent', async () => {
    const { owner, ids } = await setup(['EUR', 'USD'])
    const [a, b] = ids as [string, string]
    // 10.5 × 1.083333333 = 11.3749999965 → 11.375 (rounded, not truncated; no tie, so any rounding rule agrees)
    const res = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${a}","amount":10.5,"date":"2026-01-01","isTransfer":true,"transferToAccountId":"${b}","exchangeRate":1.083333333}`,
    })
    expect(res.status).toBe(201)
    expect(rawNumber(res.text, 'destinationAmount')).toBe('11.375')
    expect(rawNumber(res.text, 'exchangeRate')).toBe('1.083333333')
    expect(await balances(server, owner.key, a, b)).toEqual(['89.5', '111.375'])

    // a rate with more digits than a money value is kept exactly as sent
    const fine = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${a}","amount":3,"date":"2026-01-01","isTransfer":true,"transferToAccountId":"${b}","exchangeRate":0.123456789012345}`,
    })
    expect(fine.status).toBe(201)
    expect(rawNumber(fine.text, 'exchangeRate')).toBe('0.123456789012345')
    // 3 × 0.123456789012345 = 0.370370367037035 → 0.37037037
    expect(rawNumber(fine.text, 'destinationAmount')).toBe('0.37037037')
    const got = await server.request('GET', `/v1/transactions/${fine.json.data.id}`, { key: owner.key })
    expect(rawNumber(got.text, 'exchangeRate')).toBe('0.123456789012345')
    expect(await balances(server, owner.key, a, b)).toEqual(['86.5', '111.74537037'])
  })

  test('two currencies with an explicit destinationAmount (which wins over a rate)', async () => {
    const { owner, ids } = await setup(['EUR', 'BRL'])
    const [a, b] = ids as [string, string]
    const t1 = await createTxn(server, owner.key, {
      accountId: a,
      amount: 20,
      date: '2026-01-01',
      isTransfer: true,
      transferToAccountId: b,
      destinationAmount: 123.45,
    })
    expect(t1).toMatchObject({ destinationAmount: 123.45, exchangeRate: null })
    const t2 = await createTxn(server, owner.key, {
      accountId: a,
      amount: 10,
      date: '2026-01-01',
      isTransfer: true,
      transferToAccountId: b,
      destinationAmount: 60,
      exchangeRate: 6.1,
    })
    expect(t2).toMatchObject({ destinationAmount: 60, exchangeRate: 6.1 })
    expect(await balances(server, owner.key, a, b)).toEqual(['70', '283.45'])
  })

  test('same currency with a destinationAmount (a fee) credits that amount', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    await createTxn(server, owner.key, { accountId: a, amount: 50, date: '2026-01-01', isTransfer: true, transferToAccountId: b, destinationAmount: 49.5 })
    expect(await balances(server, owner.key, a, b)).toEqual(['50', '149.5'])
  })

  const rules: [string, (a: string, b: string, other: string) => Record<string, unknown>][] = [
    [
      'different currencies with neither destinationAmount nor exchangeRate',
      (a, _b, usd) => ({ accountId: a, amount: 5, isTransfer: true, transferToAccountId: usd }),
    ],
    ['isTransfer without transferToAccountId', (a) => ({ accountId: a, amount: 5, isTransfer: true })],
    ['transferToAccountId without isTransfer', (a, b) => ({ accountId: a, amount: 5, transferToAccountId: b })],
    ['transferToAccountId with isTransfer false', (a, b) => ({ accountId: a, amount: 5, isTransfer: false, transferToAccountId: b })],
    ['a transfer to the same account', (a) => ({ accountId: a, amount: 5, isTransfer: true, transferToAccountId: a })],
    ['a transfer of 0', (a, b) => ({ accountId: a, amount: 0, isTransfer: true, transferToAccountId: b })],
    ['a transfer of a negative amount', (a, b) => ({ accountId: a, amount: -5, isTransfer: true, transferToAccountId: b })],
    ['destinationAmount on a non-transfer', (a) => ({ accountId: a, amount: 5, destinationAmount: 5 })],
  ]
  for (const [what, build] of rules) {
    test(`422 rule_violation: ${what}; nothing changes`, async () => {
      const { owner, ids } = await setup(['EUR', 'EUR', 'USD'])
      const [a, b, usd] = ids as [string, string, string]
      const before = snapshot(server, owner.id)
      const res = await server.request('POST', '/v1/transactions', { key: owner.key, body: { date: '2026-01-01', ...build(a, b, usd) } })
      const problem = expectProblem(res, 422, 'rule_violation')
      expect(problem.detail.length).toBeGreaterThan(0)
      expect(snapshot(server, owner.id)).toEqual(before)
    })
  }

  test('a computed destinationAmount beyond the money range → 422 (never a 500), nothing changes', async () => {
    // amount × exchangeRate can leave ±92233720368 even when both are valid, e.g. 1,000,000 EUR at 100000 IDR/EUR.
    const { owner, ids } = await setup(['EUR', 'IDR'])
    const [a, b] = ids as [string, string]
    const transfer = await createTxn(server, owner.key, {
      accountId: a,
      amount: 10,
      date: '2026-01-01',
      isTransfer: true,
      transferToAccountId: b,
      exchangeRate: 17000,
    })
    expect(transfer.destinationAmount).toBe(170000)
    const before = snapshot(server, owner.id)
    const attempts: [string, string, string][] = [
      [
        'POST',
        '/v1/transactions',
        `{"accountId":"${a}","amount":1000000,"date":"2026-01-01","isTransfer":true,"transferToAccountId":"${b}","exchangeRate":100000}`,
      ],
      ['POST', '/v1/transactions', `{"accountId":"${a}","amount":1,"date":"2026-01-01","isTransfer":true,"transferToAccountId":"${b}","exchangeRate":1e300}`],
      ['PATCH', `/v1/transactions/${transfer.id}`, '{"exchangeRate":1e300}'],
      ['PATCH', `/v1/transactions/${transfer.id}`, '{"amount":10000000}'],
    ]
    const problems: string[] = []
    for (const [method, path, body] of attempts) {
      const res = await server.request(method, path, { key: owner.key, body })
      const code = res.json?.code
      if (res.status !== 422 || !['rule_violation', 'validation_failed'].includes(code)) problems.push(`${method} ${path} ${body} → ${res.status} ${code}`)
      else expectProblem(res, 422, code)
    }
    expect(problems).toEqual([])
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('destinationAmount must be > 0 and exact (validation_failed)', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const before = snapshot(server, owner.id)
    for (const destinationAmount of ['0', '-1', '0.123456789']) {
      const res = await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: `{"accountId":"${a}","amount":1,"date":"2026-01-01","isTransfer":true,"transferToAccountId":"${b}","destinationAmount":${destinationAmount}}`,
      })
      expectProblem(res, 422, 'validation_failed')
    }
    expect(snapshot(server, owner.id)).toEqual(before)
  })
})

describe('PATCH reverses and re-applies effects', () => {
  test('change the amount of an expense', async () => {
    const { owner, ids } = await setup()
    const [a] = ids as [string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01' })
    expect(await balances(server, owner.key, a)).toEqual(['90'])
    await patchTxn(server, owner.key, txn.id, { amount: 25.5 })
    expect(await balances(server, owner.key, a)).toEqual(['74.5'])
    await patchTxn(server, owner.key, txn.id, { amount: -4.5 })
    expect(await balances(server, owner.key, a)).toEqual(['104.5'])
    // a PATCH of other fields does not move money
    await patchTxn(server, owner.key, txn.id, { note: 'x', date: '2026-02-01' })
    expect(await balances(server, owner.key, a)).toEqual(['104.5'])
  })

  test('change the account', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01' })
    const moved = await patchTxn(server, owner.key, txn.id, { accountId: b })
    expect(moved.accountId).toBe(b)
    expect(await balances(server, owner.key, a, b)).toEqual(['100', '90'])
    await patchTxn(server, owner.key, txn.id, { accountId: a, amount: 1 })
    expect(await balances(server, owner.key, a, b)).toEqual(['99', '100'])
  })

  test('change the amount of a transfer: both sides follow', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01', isTransfer: true, transferToAccountId: b })
    const changed = await patchTxn(server, owner.key, txn.id, { amount: 40 })
    expect(changed.destinationAmount).toBe(40)
    expect(await balances(server, owner.key, a, b)).toEqual(['60', '140'])
  })

  test('change the amount of a two-currency transfer with a rate: the destination amount is recomputed', async () => {
    const { owner, ids } = await setup(['EUR', 'USD'])
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, {
      accountId: a,
      amount: 10,
      date: '2026-01-01',
      isTransfer: true,
      transferToAccountId: b,
      exchangeRate: 1.1,
    })
    expect(txn.destinationAmount).toBe(11)
    const changed = await patchTxn(server, owner.key, txn.id, { amount: 20 })
    expect(changed).toMatchObject({ destinationAmount: 22, exchangeRate: 1.1 })
    expect(await balances(server, owner.key, a, b)).toEqual(['80', '122'])
    const rate = await patchTxn(server, owner.key, txn.id, { exchangeRate: 1.25 })
    expect(rate).toMatchObject({ destinationAmount: 25, exchangeRate: 1.25 })
    expect(await balances(server, owner.key, a, b)).toEqual(['80', '125'])
    const explicit = await patchTxn(server, owner.key, txn.id, { destinationAmount: 30 })
    expect(explicit.destinationAmount).toBe(30)
    expect(await balances(server, owner.key, a, b)).toEqual(['80', '130'])
  })

  test('a PATCH that does not move money keeps an explicit destinationAmount', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, {
      accountId: a,
      amount: 50,
      date: '2026-01-01',
      isTransfer: true,
      transferToAccountId: b,
      destinationAmount: 49.5,
    })
    const changed = await patchTxn(server, owner.key, txn.id, { note: 'fee included' })
    expect(changed.destinationAmount).toBe(49.5)
    expect(await balances(server, owner.key, a, b)).toEqual(['50', '149.5'])
  })

  test('change the destination', async () => {
    const { owner, ids } = await setup()
    const [a, b, c] = ids as [string, string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01', isTransfer: true, transferToAccountId: b })
    const changed = await patchTxn(server, owner.key, txn.id, { transferToAccountId: c })
    expect(changed.transferToAccountId).toBe(c)
    expect(await balances(server, owner.key, a, b, c)).toEqual(['90', '100', '110'])
    // swap source and destination in one PATCH
    await patchTxn(server, owner.key, txn.id, { accountId: c, transferToAccountId: a })
    expect(await balances(server, owner.key, a, b, c)).toEqual(['110', '100', '90'])
  })

  test('turn a transfer off and on again', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01', isTransfer: true, transferToAccountId: b })
    const off = await patchTxn(server, owner.key, txn.id, { isTransfer: false, transferToAccountId: null })
    expect(off).toMatchObject({ isTransfer: false, transferToAccountId: null, destinationAmount: null })
    expect(await balances(server, owner.key, a, b)).toEqual(['90', '100'])
    const on = await patchTxn(server, owner.key, txn.id, { isTransfer: true, transferToAccountId: b })
    expect(on).toMatchObject({ isTransfer: true, transferToAccountId: b, destinationAmount: 10 })
    expect(await balances(server, owner.key, a, b)).toEqual(['90', '110'])
  })

  test('turn an income into a transfer needs a positive amount', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: -10, date: '2026-01-01' })
    const before = snapshot(server, owner.id)
    expectProblem(
      await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: { isTransfer: true, transferToAccountId: b } }),
      422,
      'rule_violation',
    )
    expect(snapshot(server, owner.id)).toEqual(before)
    await patchTxn(server, owner.key, txn.id, { isTransfer: true, transferToAccountId: b, amount: 10 })
    expect(await balances(server, owner.key, a, b)).toEqual(['90', '110'])
  })

  test('PATCHes that break a rule change nothing', async () => {
    const { owner, ids } = await setup(['EUR', 'EUR', 'USD'])
    const [a, b, usd] = ids as [string, string, string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01', isTransfer: true, transferToAccountId: b })
    const plain = await createTxn(server, owner.key, { accountId: a, amount: 10, date: '2026-01-01' })
    const before = snapshot(server, owner.id)
    const cases: [string, Record<string, unknown>][] = [
      [txn.id, { isTransfer: false }],
      [txn.id, { transferToAccountId: null }],
      [txn.id, { transferToAccountId: a }],
      [txn.id, { accountId: b }],
      [txn.id, { amount: 0 }],
      [txn.id, { amount: -1 }],
      [txn.id, { transferToAccountId: usd }],
      [plain.id, { isTransfer: true }],
      [plain.id, { transferToAccountId: b }],
      [plain.id, { destinationAmount: 3 }],
    ]
    for (const [id, body] of cases) {
      const res = await server.request('PATCH', `/v1/transactions/${id}`, { key: owner.key, body })
      try {
        expectProblem(res, 422, 'rule_violation')
      } catch (error) {
        throw new Error(`PATCH ${JSON.stringify(body)}: ${(error as Error).message}`)
      }
    }
    expect(snapshot(server, owner.id)).toEqual(before)
  })
})

describe('DELETE', () => {
  test('returns the transaction as it was and reverses its effect; again → 404', async () => {
    const { owner, ids } = await setup()
    const [a, b] = ids as [string, string]
    const expense = await createTxn(server, owner.key, { accountId: a, amount: 12.34, date: '2026-01-01', note: 'gone', time: '10:00', payeeName: 'Shop' })
    const transfer = await createTxn(server, owner.key, {
      accountId: a,
      amount: 20,
      date: '2026-01-02',
      isTransfer: true,
      transferToAccountId: b,
      destinationAmount: 19,
    })
    expect(await balances(server, owner.key, a, b)).toEqual(['67.66', '119'])

    const asWas = await getTxn(server, owner.key, expense.id)
    const del = await server.request('DELETE', `/v1/transactions/${expense.id}`, { key: owner.key })
    expect(del.status).toBe(200)
    expect(del.json).toEqual({ data: asWas })
    expect(await balances(server, owner.key, a, b)).toEqual(['80', '119'])

    const delTransfer = await server.request('DELETE', `/v1/transactions/${transfer.id}`, { key: owner.key })
    expect(delTransfer.status).toBe(200)
    expect(delTransfer.json.data).toEqual(transfer)
    expect(await balances(server, owner.key, a, b)).toEqual(['100', '100'])

    expectProblem(await server.request('DELETE', `/v1/transactions/${expense.id}`, { key: owner.key }), 404, 'not_found')
    expectProblem(await server.request('GET', `/v1/transactions/${expense.id}`, { key: owner.key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', `/v1/transactions/${expense.id}`, { key: owner.key, body: { note: 'x' } }), 404, 'not_found')
    expect(await balances(server, owner.key, a, b)).toEqual(['100', '100'])
  })

  test('unknown and malformed ids → 404', async () => {
    const owner = await server.owner()
    for (const id of ['txn_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', 'nope', 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b']) {
      expectProblem(await server.request('GET', `/v1/transactions/${id}`, { key: owner.key }), 404, 'not_found')
      expectProblem(await server.request('DELETE', `/v1/transactions/${id}`, { key: owner.key }), 404, 'not_found')
      expectProblem(await server.request('PATCH', `/v1/transactions/${id}`, { key: owner.key, body: {} }), 404, 'not_found')
    }
  })

  test('deleting a transaction on an archived account still reverses it', async () => {
    const { owner, ids } = await setup()
    const [a] = ids as [string]
    const txn = await createTxn(server, owner.key, { accountId: a, amount: 5, date: '2026-01-01' })
    expect((await server.request('DELETE', `/v1/accounts/${a}`, { key: owner.key })).status).toBe(200)
    expect((await server.request('DELETE', `/v1/transactions/${txn.id}`, { key: owner.key })).status).toBe(200)
    expect(await balances(server, owner.key, a)).toEqual(['100'])
  })
})
