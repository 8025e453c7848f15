import { afterAll, beforeAll, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * In a batch, the item that would take a balance or a payee total out of the money range is
 * named in the 422 rule_violation (`items[2]: …`), as its dry run names it.
 *
 * CONTRACT §16: "the first failing item gives the usual problem+json whose detail starts with its
 * path, e.g. items[17].amount: …" (the range is §4's). A detail of "items: The balance of account
 * … would exceed the supported range" alone leaves the client to search 500 items for the one to
 * fix. A balance that leaves the range on the way to a valid sum is no failure.
 */

let server: TestServer
let key: string
let accountId: string
beforeAll(async () => {
  server = await startUnthrottledServer()
  key = (await server.owner()).key
  const account = await server.request('POST', '/v1/accounts', { key, body: { name: 'Near the top', type: 'bank', balance: 92233720368, currency: 'EUR' } })
  accountId = account.json.data.id
})
afterAll(() => server.stop())

test('a batch whose third item overflows the balance names items[2] in its detail, as its dry run does', async () => {
  const items = [
    { externalId: 'ok-0', accountId, amount: 5, date: '2026-01-01' },
    { externalId: 'ok-1', accountId, amount: -1, date: '2026-01-01' },
    { externalId: 'overflow-2', accountId, amount: -10, date: '2026-01-01' },
  ]
  const dry = await server.request('POST', '/v1/transactions/batch', { key, body: { items, dryRun: true } })
  expect(dry.status).toBe(200)
  expect(dry.json.data.map((d: { errors: unknown[] }) => d.errors.length)).toEqual([0, 0, 1])

  const res = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
  const problem = expectProblem(res, 422, 'rule_violation')
  // The failure this catches: "items: The balance of account acct_… would exceed the supported range of ±92233720368".
  expect(problem.detail).toBe(`items[2]: ${dry.json.data[2].errors[0].detail}`)
})

test('the item named is the one its dry run names: a transfer into a full account, and a payee total, too', async () => {
  const other = await server.request('POST', '/v1/accounts', { key, body: { name: 'Source', type: 'bank', balance: 0, currency: 'EUR' } })
  const transfer = {
    externalId: 'transfer-1',
    accountId: other.json.data.id,
    amount: 20,
    date: '2026-01-02',
    isTransfer: true,
    transferToAccountId: accountId,
    destinationAmount: 20,
  }
  const items = [
    { externalId: 'fine-0', accountId, amount: 1, date: '2026-01-02' },
    transfer,
    { externalId: 'fine-2', accountId, amount: 2, date: '2026-01-02' },
  ]
  const dry = await server.request('POST', '/v1/transactions/batch', { key, body: { items, dryRun: true } })
  expect(dry.json.data.map((d: { errors: unknown[] }) => d.errors.length)).toEqual([0, 1, 0])
  const res = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
  expect(expectProblem(res, 422, 'rule_violation').detail).toBe(`items[1]: ${dry.json.data[1].errors[0].detail}`)

  const spender = await server.request('POST', '/v1/accounts', { key, body: { name: 'Spender', type: 'bank', balance: 90_000_000_000, currency: 'EUR' } })
  const spend = (n: number, amount: number) => ({
    externalId: `spend-${n}`,
    accountId: spender.json.data.id,
    amount,
    date: '2026-01-03',
    payeeName: 'Big Shop',
  })
  const payeeItems = [spend(0, 50_000_000_000), spend(1, 1), spend(2, 50_000_000_000)]
  const payeeDry = await server.request('POST', '/v1/transactions/batch', { key, body: { items: payeeItems, dryRun: true } })
  const failing = payeeDry.json.data.findIndex((d: { errors: unknown[] }) => d.errors.length > 0)
  expect(failing).toBe(2)
  expect(payeeDry.json.data[2].errors[0].detail).toContain('totalSpent of payee')
  const payeeRes = await server.request('POST', '/v1/transactions/batch', { key, body: { items: payeeItems } })
  // A new payee gets a new id in each run (the dry run's is rolled back).
  const anyPayee = (text: string) => text.replace(/pay_[0-9a-f]+/, 'pay_…')
  expect(anyPayee(expectProblem(payeeRes, 422, 'rule_violation').detail)).toBe(anyPayee(`items[${failing}]: ${payeeDry.json.data[failing].errors[0].detail}`))
})

test('a balance that leaves the range on the way to a valid sum is no failure: the batch is written', async () => {
  const items = [
    { externalId: 'up-0', accountId, amount: -10, date: '2026-01-04' },
    { externalId: 'down-1', accountId, amount: 10, date: '2026-01-04' },
  ]
  const res = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
  expect(res.status).toBe(200)
  expect(res.json.summary.created).toBe(2)
})
