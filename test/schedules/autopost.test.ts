/**
 * CONTRACT §29: auto-posting. A schedule with `autoPost` records each due occurrence's transaction
 * on its date (externalId `sched:{id}:{date}`, `scheduleId`), from the day auto-posting is switched
 * on, never for dates before; a server stopped across three due dates posts each exactly once when
 * it starts again, and again after another restart posts nothing twice. Deleting the schedule keeps
 * what it posted.
 */
import { afterAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'
import { balance, createAccount, type Json } from '../transactions/helpers.ts'

const dataDir = tempDir()
let server: TestServer | undefined
afterAll(() => server?.stop({ remove: true }))

const start = async (today: string) => {
  await server?.stop({ remove: false })
  server = await startTestServer({ dataDir, env: { PFIN_TODAY: today } })
  return server
}

async function posted(s: TestServer, key: string, accountId: string): Promise<Json[]> {
  const res = await s.request('GET', `/v1/transactions?accountId=${accountId}&limit=200`, { key })
  return (res.json.data as Json[]).filter((txn) => txn.scheduleId !== null).sort((a, b) => (a.date < b.date ? -1 : 1))
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await Bun.sleep(20)
  }
}

test('posts on the date, catches up after downtime exactly once, and keeps its transactions when deleted', async () => {
  let s = await start('2026-01-10')
  const { key } = await s.owner()
  const account = await createAccount(s, key, { balance: 5000 })
  const tag = (await s.request('POST', '/v1/tags', { key, body: { name: 'Home' } })).json.data
  const created = await s.request('POST', '/v1/schedules', {
    key,
    body: {
      name: 'Rent',
      accountId: account.id,
      amount: 1200.5,
      payeeName: 'Landlord',
      categoryId: 'cat_sys_rent',
      tagIds: [tag.id],
      note: 'monthly rent',
      autoPost: true,
      // Started last month: December's date was before auto-posting was switched on, so it is not posted.
      recurrence: { freq: 'monthly', byMonthDay: [10], start: '2025-12-10' },
    },
  })
  expect(created.status).toBe(201)
  const id = created.json.data.id
  // Today's occurrence is posted by the create itself.
  let txns = await posted(s, key, account.id)
  expect(txns.map((txn) => [txn.date, txn.externalId, txn.scheduleId])).toEqual([['2026-01-10', `sched:${id}:2026-01-10`, id]])
  expect(txns[0]).toMatchObject({ amount: 1200.5, categoryId: 'cat_sys_rent', tagIds: [tag.id], note: 'monthly rent', payeeId: created.json.data.payeeId })
  const occurrences = await s.request('GET', `/v1/schedules/${id}/occurrences?from=2025-12-01&to=2026-02-28`, { key })
  expect(occurrences.json.data).toEqual([
    { date: '2025-12-10', status: 'missed', transactionId: null },
    { date: '2026-01-10', status: 'posted', transactionId: txns[0].id },
    { date: '2026-02-10', status: 'expected', transactionId: null },
  ])

  // Down across February, March and April's dates: the start-up sweep posts each once.
  s = await start('2026-04-20')
  txns = await until(
    () => posted(s, key, account.id),
    (list) => list.length >= 4,
  )
  expect(txns.map((txn) => txn.date)).toEqual(['2026-01-10', '2026-02-10', '2026-03-10', '2026-04-10'])
  expect(await balance(s, key, account.id)).toBe(5000_00000000n - 4n * 1200_50000000n)

  // Again on the same day, and a day later: nothing is posted twice.
  s = await start('2026-04-21')
  await Bun.sleep(300)
  expect((await posted(s, key, account.id)).length).toBe(4)

  const gone = await s.request('DELETE', `/v1/schedules/${id}`, { key })
  expect(gone.status).toBe(200)
  s = await start('2026-06-20')
  await Bun.sleep(300)
  txns = await posted(s, key, account.id)
  expect(txns.length).toBe(4)
  expect(txns.every((txn) => txn.scheduleId === id)).toBe(true)
})

test('switching autoPost on posts from that day on; a skipped date is not posted', async () => {
  let s = await start('2026-05-01')
  const { key } = await s.owner()
  const account = await createAccount(s, key)
  const row = (
    await s.request('POST', '/v1/schedules', {
      key,
      body: { name: 'Paper', accountId: account.id, amount: 3, recurrence: { freq: 'weekly', start: '2026-04-01' } },
    })
  ).json.data
  expect((await posted(s, key, account.id)).length).toBe(0)
  // 2026-04-01 is a Wednesday: the next ones are 05-06, 05-13, 05-20.
  const skip = await s.request('POST', `/v1/schedules/${row.id}/skip`, { key, body: { date: '2026-05-13' } })
  expect(skip.status).toBe(200)
  const on = await s.request('PATCH', `/v1/schedules/${row.id}`, { key, body: { autoPost: true } })
  expect(on.status).toBe(200)
  s = await start('2026-05-21')
  const txns = await until(
    () => posted(s, key, account.id),
    (list) => list.length >= 2,
  )
  expect(txns.map((txn) => txn.date)).toEqual(['2026-05-06', '2026-05-20'])
  const posting = await s.request('POST', `/v1/schedules/${row.id}/skip`, { key, body: { date: '2026-05-20' } })
  expect(posting.status).toBe(422)
})
