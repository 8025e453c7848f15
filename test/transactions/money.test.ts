import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { balance, createAccount, createTxn, lexeme, rawNumber, snapshot, units } from './helpers.ts'

/** CONTRACT §4: money is exact, balances move in the same transaction as the write. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

describe('exact money', () => {
  test('0.1 + 0.2 expenses on a balance of 100 leave exactly 99.7', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key, { balance: 100 })
    await createTxn(server, owner.key, { accountId: account.id, amount: 0.1, date: '2026-01-01' })
    await createTxn(server, owner.key, { accountId: account.id, amount: 0.2, date: '2026-01-01' })
    const res = await server.request('GET', `/v1/accounts/${account.id}`, { key: owner.key })
    expect(rawNumber(res.text, 'balance')).toBe('99.7')
    expect(res.json.data.balance).toBe(99.7)
  })

  test('income (a negative amount) raises the balance', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key, { balance: 100 })
    const txn = await createTxn(server, owner.key, { accountId: account.id, amount: -0.35, date: '2026-01-01' })
    expect(txn.amount).toBe(-0.35)
    expect(lexeme(await balance(server, owner.key, account.id))).toBe('100.35')
  })

  test('amounts keep 8 decimals exactly, in and out', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key, { balance: 0, currency: 'BTC', type: 'crypto' })
    const res = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${account.id}","amount":0.00000001,"date":"2026-01-01"}`,
    })
    expect(res.status).toBe(201)
    expect(units(rawNumber(res.text, 'amount'))).toBe(1n)
    const big = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${account.id}","amount":-92233720367.99999999,"date":"2026-01-01"}`,
    })
    expect(big.status).toBe(201)
    expect(rawNumber(big.text, 'amount')).toBe('-92233720367.99999999')
    expect(lexeme(await balance(server, owner.key, account.id))).toBe('92233720367.99999998')
    // exponent and trailing-zero spellings of the same value are accepted as that value
    const exp = await server.request('POST', '/v1/transactions', { key: owner.key, body: `{"accountId":"${account.id}","amount":1.5e-7,"date":"2026-01-01"}` })
    expect(exp.status).toBe(201)
    expect(units(rawNumber(exp.text, 'amount'))).toBe(15n)
    const zeros = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${account.id}","amount":2.50000000000,"date":"2026-01-01"}`,
    })
    expect(zeros.status).toBe(201)
    expect(rawNumber(zeros.text, 'amount')).toBe('2.5')
  })

  const invalid: [string, string][] = [
    ['9 decimals', '0.123456789'],
    ['9 decimals in exponent form', '1e-9'],
    ['just beyond +92233720368', '92233720368.00000001'],
    ['just beyond -92233720368', '-92233720368.00000001'],
    ['far beyond the range', '1e30'],
    ['a huge exponent', '1e400'],
  ]
  for (const [what, amount] of invalid) {
    test(`amount with ${what} → 422 validation_failed, nothing changes`, async () => {
      const owner = await server.owner()
      const account = await createAccount(server, owner.key)
      const before = snapshot(server, owner.id)
      const res = await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: `{"accountId":"${account.id}","amount":${amount},"date":"2026-01-01"}`,
      })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain('amount')
      const txn = await createTxn(server, owner.key, { accountId: account.id, amount: 1, date: '2026-01-01' })
      const patch = await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: `{"amount":${amount}}` })
      expectProblem(patch, 422, 'validation_failed')
      const upsert = await server.request('POST', '/v1/transactions/upsert', {
        key: owner.key,
        body: `{"externalId":"e","accountId":"${account.id}","amount":${amount},"date":"2026-01-01"}`,
      })
      expectProblem(upsert, 422, 'validation_failed')
      expect(lexeme(await balance(server, owner.key, account.id))).toBe('99')
      expect(before.transactions).toEqual([])
    })
  }

  test('the edges of the range are accepted: ±92233720368', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key, { balance: 0 })
    const a = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${account.id}","amount":92233720368,"date":"2026-01-01"}`,
    })
    expect(a.status).toBe(201)
    expect(lexeme(await balance(server, owner.key, account.id))).toBe('-92233720368')
    const b = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: `{"accountId":"${account.id}","amount":-92233720368,"date":"2026-01-01"}`,
    })
    expect(b.status).toBe(201)
    expect(lexeme(await balance(server, owner.key, account.id))).toBe('0')
  })

  test('a balance that would leave the range → 422 rule_violation and nothing changes', async () => {
    const owner = await server.owner()
    const top = await createAccount(server, owner.key, { balance: 92233720368 })
    const bottom = await createAccount(server, owner.key, { balance: -92233720368 })
    const before = snapshot(server, owner.id)
    // income on a full account
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: owner.key, body: `{"accountId":"${top.id}","amount":-0.00000001,"date":"2026-01-01"}` }),
      422,
      'rule_violation',
    )
    // expense on an empty-most account
    expectProblem(
      await server.request('POST', '/v1/transactions', { key: owner.key, body: `{"accountId":"${bottom.id}","amount":0.00000001,"date":"2026-01-01"}` }),
      422,
      'rule_violation',
    )
    // a transfer whose destination would overflow (the source side alone would be fine)
    expectProblem(
      await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: { accountId: bottom.id, amount: 1, date: '2026-01-01', isTransfer: true, transferToAccountId: top.id, destinationAmount: 1 },
      }),
      422,
      'rule_violation',
    )
    expect(snapshot(server, owner.id)).toEqual(before)

    // a PATCH that would overflow changes nothing either
    const mid = await createAccount(server, owner.key, { balance: 92233720367 })
    const txn = await createTxn(server, owner.key, { accountId: mid.id, amount: -0.5, date: '2026-01-01' })
    const beforePatch = snapshot(server, owner.id)
    expectProblem(await server.request('PATCH', `/v1/transactions/${txn.id}`, { key: owner.key, body: { amount: -1.5 } }), 422, 'rule_violation')
    expect(snapshot(server, owner.id)).toEqual(beforePatch)
    expect(lexeme(await balance(server, owner.key, mid.id))).toBe('92233720367.5')
  })

  test('200 random amounts (cents and 8-decimal, some negative) leave balance == initial − sum, exactly', async () => {
    const owner = await server.owner()
    const initial = units('1234.56')
    const account = await createAccount(server, owner.key, { balance: 1234.56 })
    let sum = 0n
    const amounts: bigint[] = []
    for (let i = 0; i < 200; i++) {
      const sign = Math.random() < 0.3 ? -1n : 1n
      // half in cents, half in 10⁻⁸ units
      const u = i % 2 === 0 ? BigInt(Math.floor(Math.random() * 100_000)) * 1_000_000n : BigInt(Math.floor(Math.random() * 1e12))
      amounts.push(sign * u)
    }
    // a few dozen at a time, as a client would
    for (let i = 0; i < amounts.length; i += 25) {
      const batch = amounts.slice(i, i + 25)
      const results = await Promise.all(
        batch.map((a) =>
          server.request('POST', '/v1/transactions', { key: owner.key, body: `{"accountId":"${account.id}","amount":${lexeme(a)},"date":"2026-01-01"}` }),
        ),
      )
      batch.forEach((a, j) => {
        const res = results[j]
        expect(res?.status).toBe(201)
        expect(units(rawNumber(res?.text ?? '', 'amount'))).toBe(a)
        sum += a
      })
    }
    expect(await balance(server, owner.key, account.id)).toBe(initial - sum)
    // the stored integer agrees
    const stored = server.platform.tenants.get(owner.id).sqlite.query('SELECT CAST(balance AS TEXT) AS b FROM accounts WHERE id = ?').get(account.id) as {
      b: string
    }
    expect(BigInt(stored.b)).toBe(initial - sum)
  })

  test('PATCH balance (reconciliation) then transactions keep adding up', async () => {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key, { balance: 10 })
    await createTxn(server, owner.key, { accountId: account.id, amount: 3.33, date: '2026-01-01' })
    const rec = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { balance: 50 } })
    expect(rec.status).toBe(200)
    await createTxn(server, owner.key, { accountId: account.id, amount: 0.01, date: '2026-01-01' })
    expect(lexeme(await balance(server, owner.key, account.id))).toBe('49.99')
  })
})
