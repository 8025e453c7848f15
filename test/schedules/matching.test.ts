/**
 * CONTRACT §29, §16, §24: a bank's row that stands for an auto-posted transaction adopts it. An
 * auto-posted rent and the bank's row of the same amount two days later are one transaction with
 * the bank's externalId, amount and date, the schedule's category, tags and note, and operation
 * `matched` — in a batch and in a file import; ten days later, with a window of 3, they are two,
 * and the occurrence stays posted by the first.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { balance, createAccount, type Json } from '../transactions/helpers.ts'

const TODAY = '2026-03-01'
let server: TestServer
let key: string

beforeAll(async () => {
  server = await startTestServer({ env: { PFIN_TODAY: TODAY, RATE_LIMIT_PER_MINUTE: '100000' } })
  key = (await server.owner()).key
})
afterAll(() => server.stop())

/** An account with an auto-posting rent of 950 due today (posted by the create), window 3 days, tolerance 0.5. */
async function rent(): Promise<{ account: Json; schedule: Json; posted: Json }> {
  const account = await createAccount(server, key, { balance: 2000 })
  const tag = (await server.request('POST', '/v1/tags', { key, body: { name: `rent ${account.id}` } })).json.data
  const schedule = (
    await server.request('POST', '/v1/schedules', {
      key,
      body: {
        name: 'Rent',
        accountId: account.id,
        amount: 950,
        amountTolerance: 0.5,
        matchWindowDays: 3,
        categoryId: 'cat_sys_rent',
        tagIds: [tag.id],
        note: 'flat',
        autoPost: true,
        recurrence: { freq: 'monthly', byMonthDay: [1], start: TODAY },
      },
    })
  ).json.data
  const list = await server.request('GET', `/v1/transactions?accountId=${account.id}`, { key })
  const posted = list.json.data[0]
  expect(posted.externalId).toBe(`sched:${schedule.id}:${TODAY}`)
  return { account, schedule, posted }
}

const batch = (items: Json[], dryRun = false) => server.request('POST', '/v1/transactions/batch', { key, body: { items, dryRun } })

test('batch: the bank’s row 2 days later adopts the posted transaction: one transaction, matched', async () => {
  const { account, schedule, posted } = await rent()
  const item = { externalId: 'bank-001', accountId: account.id, amount: 950.25, date: '2026-03-03', originalDescription: 'RENT MARCH' }
  const dry = await batch([item], true)
  expect(dry.json.data[0].operation).toBe('matched')
  expect(dry.json.summary.matched).toBe(1)
  const res = await batch([item])
  expect(res.status).toBe(200)
  expect(res.json.summary).toEqual({ created: 0, updated: 0, unchanged: 0, matched: 1, skippedDeleted: 0, failed: 0 })
  const data = res.json.data[0].data
  expect(data).toMatchObject({
    id: posted.id,
    externalId: 'bank-001',
    amount: 950.25,
    date: '2026-03-03',
    originalDescription: 'RENT MARCH',
    categoryId: 'cat_sys_rent',
    tagIds: posted.tagIds,
    note: 'flat',
    scheduleId: schedule.id,
  })
  const all = await server.request('GET', `/v1/transactions?accountId=${account.id}`, { key })
  expect(all.json.data.length).toBe(1)
  expect(await balance(server, key, account.id)).toBe(2000_00000000n - 950_25000000n)
  const occurrences = await server.request('GET', `/v1/schedules/${schedule.id}/occurrences?from=${TODAY}&to=${TODAY}`, { key })
  expect(occurrences.json.data).toEqual([{ date: TODAY, status: 'posted', transactionId: posted.id }])
  // The same row again is the bank's own transaction now: unchanged.
  expect((await batch([item])).json.data[0].operation).toBe('unchanged')
})

test('batch: 10 days later with a window of 3 is a second transaction; the occurrence stays posted by the first', async () => {
  const { account, schedule, posted } = await rent()
  const res = await batch([{ externalId: 'bank-late', accountId: account.id, amount: 950, date: '2026-03-11' }])
  expect(res.json.data[0].operation).toBe('created')
  const all = await server.request('GET', `/v1/transactions?accountId=${account.id}`, { key })
  expect(all.json.data.length).toBe(2)
  const occurrences = await server.request('GET', `/v1/schedules/${schedule.id}/occurrences?from=${TODAY}&to=${TODAY}`, { key })
  expect(occurrences.json.data).toEqual([{ date: TODAY, status: 'posted', transactionId: posted.id }])
})

test('batch: an amount beyond the tolerance is a second transaction', async () => {
  const { account } = await rent()
  const res = await batch([{ externalId: 'bank-more', accountId: account.id, amount: 951, date: '2026-03-02' }])
  expect(res.json.data[0].operation).toBe('created')
})

test('import: a statement row adopts the posted transaction (operation matched)', async () => {
  const { account, posted } = await rent()
  const csv = 'Date,Amount,Description\n2026-03-02,-950.00,RENT\n2026-03-05,-12.00,COFFEE\n'
  const res = await server.request('POST', `/v1/accounts/${account.id}/imports`, { key, body: csv, headers: { 'content-type': 'text/csv' } })
  expect(res.status).toBe(200)
  expect(res.json.data.items.map((item: Json) => item.operation)).toEqual(['matched', 'created'])
  expect(res.json.data.summary.matched).toBe(1)
  const stored = await server.request('GET', `/v1/transactions/${posted.id}`, { key })
  expect(stored.json.data).toMatchObject({ date: '2026-03-02', amount: 950, categoryId: 'cat_sys_rent', note: 'flat' })
  expect(stored.json.data.externalId).not.toStartWith('sched:')
})
