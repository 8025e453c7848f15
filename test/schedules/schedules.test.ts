/**
 * CONTRACT §29: schedules — CRUD with ETags, the recurrence rule (month ends clamped, counts,
 * weekend adjustment), occurrences with their status (expected, posted, missed, skipped), the
 * upcoming list, skips, matching a bank's transaction to an occurrence, and scopes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startTestServer, type TestServer } from '../support/harness.ts'
import { createAccount, createTxn, type Json } from '../transactions/helpers.ts'

const TODAY = '2026-03-10'
let server: TestServer
let key: string
let account: Json

beforeAll(async () => {
  server = await startTestServer({ env: { PFIN_TODAY: TODAY, RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_DAY: '1000000' } })
  key = (await server.owner()).key
  account = await createAccount(server, key)
})
afterAll(() => server.stop())

async function schedule(body: Json): Promise<Json> {
  const res = await server.request('POST', '/v1/schedules', { key, body: { name: 'S', accountId: account.id, amount: 10, ...body } })
  if (res.status !== 201) throw new Error(`schedule create failed: ${res.status} ${res.text}`)
  return res.json.data
}

async function occurrences(id: string, from: string, to: string): Promise<Json[]> {
  const res = await server.request('GET', `/v1/schedules/${id}/occurrences?from=${from}&to=${to}`, { key })
  expect(res.status).toBe(200)
  return res.json.data
}

const dates = (list: Json[]) => list.map((occurrence) => occurrence.date)

describe('the rule', () => {
  test('monthly on the 31st falls on each month’s last day: Jan 31, Feb 28 (29 in a leap year), Mar 31', async () => {
    const plain = await schedule({ recurrence: { freq: 'monthly', byMonthDay: [31], start: '2027-01-01' } })
    expect(dates(await occurrences(plain.id, '2027-01-01', '2027-04-30'))).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30'])
    const leap = await schedule({ recurrence: { freq: 'monthly', start: '2028-01-31' } })
    expect(dates(await occurrences(leap.id, '2028-01-01', '2028-03-31'))).toEqual(['2028-01-31', '2028-02-29', '2028-03-31'])
    expect(leap.rrule).toBe('DTSTART;VALUE=DATE:20280131\nRRULE:FREQ=MONTHLY;INTERVAL=1')
  })

  test('every 2 weeks with count 3 gives three dates', async () => {
    const row = await schedule({ recurrence: { freq: 'weekly', interval: 2, count: 3, start: '2026-06-01' } })
    expect(dates(await occurrences(row.id, '2026-06-01', '2027-06-01'))).toEqual(['2026-06-01', '2026-06-15', '2026-06-29'])
    expect(row.recurrence).toEqual({
      freq: 'weekly',
      interval: 2,
      byMonthDay: null,
      byWeekday: null,
      start: '2026-06-01',
      until: null,
      count: 3,
      weekendAdjust: 'none',
    })
  })

  test('weekendAdjust before moves a Saturday to the Friday, after to the Monday', async () => {
    // 2026-08-01 is a Saturday.
    const before = await schedule({ recurrence: { freq: 'monthly', byMonthDay: [1], start: '2026-08-01', weekendAdjust: 'before' } })
    expect(dates(await occurrences(before.id, '2026-07-01', '2026-08-31'))).toEqual(['2026-07-31'])
    const after = await schedule({ recurrence: { freq: 'monthly', byMonthDay: [1], start: '2026-08-01', weekendAdjust: 'after' } })
    expect(dates(await occurrences(after.id, '2026-07-01', '2026-08-31'))).toEqual(['2026-08-03'])
  })

  test('ordinal weekdays in a monthly rule: the second Wednesday and the last Friday', async () => {
    const row = await schedule({ recurrence: { freq: 'monthly', byWeekday: ['2WE', '-1FR'], start: '2026-04-01' } })
    expect(dates(await occurrences(row.id, '2026-04-01', '2026-05-31'))).toEqual(['2026-04-08', '2026-04-24', '2026-05-13', '2026-05-29'])
    expect(row.rrule).toBe('DTSTART;VALUE=DATE:20260401\nRRULE:FREQ=MONTHLY;INTERVAL=1;BYDAY=2WE,-1FR')
  })

  test('parts that do not fit together are refused, naming the field, and nothing is written', async () => {
    const bad = async (recurrence: Json, field: string) => {
      const res = await server.request('POST', '/v1/schedules', { key, body: { name: 'x', accountId: account.id, amount: 1, recurrence } })
      expectProblem(res, 422, 'validation_failed')
      expect(res.json.detail).toContain(field)
    }
    await bad({ freq: 'weekly', byMonthDay: [1], start: '2026-01-01' }, 'recurrence.byMonthDay')
    await bad({ freq: 'weekly', byWeekday: ['2MO'], start: '2026-01-01' }, 'recurrence.byWeekday[0]')
    await bad({ freq: 'monthly', byWeekday: ['MO'], byMonthDay: [1], start: '2026-01-01' }, 'recurrence.byWeekday')
    await bad({ freq: 'daily', count: 2, until: '2026-02-01', start: '2026-01-01' }, 'recurrence.count')
    await bad({ freq: 'daily', until: '2025-02-01', start: '2026-01-01' }, 'recurrence.until')
    await bad({ freq: 'monthly', byMonthDay: [0], start: '2026-01-01' }, 'byMonthDay')
    await bad({ freq: 'monthly', byMonthDay: [32], start: '2026-01-01' }, 'byMonthDay')
    await bad({ freq: 'daily', start: '2026-02-30' }, 'start')
    await bad({ freq: 'hourly', start: '2026-01-01' }, 'freq')
  })
})

describe('resource', () => {
  test('create, read with ETag and If-None-Match, PATCH with If-Match, upsert by externalId, delete leaves a tombstone', async () => {
    const created = await server.request('POST', '/v1/schedules', {
      key,
      body: {
        name: 'Gym',
        accountId: account.id,
        amount: 29.99,
        amountTolerance: 0.5,
        payeeName: 'Gym Co',
        recurrence: { freq: 'monthly', start: '2026-04-05' },
      },
    })
    expect(created.status).toBe(201)
    const row = created.json.data
    expect(row.id).toStartWith('sch_')
    expect(created.headers.get('location')).toBe(`/v1/schedules/${row.id}`)
    expect(row.amount).toBe(29.99)
    expect(row.amountTolerance).toBe(0.5)
    expect(row.payeeId).toStartWith('pay_')
    expect(row.updatedAt).toBe(row.createdAt)
    const etag = created.headers.get('etag') as string
    const read = await server.request('GET', `/v1/schedules/${row.id}`, { key, headers: { 'if-none-match': etag } })
    expect(read.status).toBe(304)
    const stale = await server.request('PATCH', `/v1/schedules/${row.id}`, { key, body: { amount: 31 }, headers: { 'if-match': '"stale"' } })
    expectProblem(stale, 412, 'precondition_failed')
    const patched = await server.request('PATCH', `/v1/schedules/${row.id}`, { key, body: { amount: 31 }, headers: { 'if-match': etag } })
    expect(patched.status).toBe(200)
    expect(patched.json.data.amount).toBe(31)
    const upsert = async (amount: number) =>
      server.request('POST', '/v1/schedules/upsert', {
        key,
        body: { externalId: 'netflix', name: 'Netflix', accountId: account.id, amount, recurrence: { freq: 'monthly', start: '2026-04-12' } },
      })
    const first = await upsert(12)
    expect(first.status).toBe(201)
    expect(first.json.operation).toBe('created')
    const second = await upsert(13)
    expect(second.status).toBe(200)
    expect(second.json.operation).toBe('updated')
    expect(second.json.data.id).toBe(first.json.data.id)
    const deleted = await server.request('DELETE', `/v1/schedules/${row.id}`, { key })
    expect(deleted.status).toBe(200)
    expect((await server.request('GET', `/v1/schedules/${row.id}`, { key })).status).toBe(404)
    const feed = await server.request('GET', '/v1/changes?resources=schedules&limit=500', { key })
    const change = feed.json.data.find((item: Json) => item.id === row.id)
    expect(change.op).toBe('delete')
    expect(feed.json.data.find((item: Json) => item.id === first.json.data.id).data.amount).toBe(13)
  })

  test('references are checked: an unknown account is invalid_reference, a transfer without its account is rule_violation', async () => {
    const unknown = await server.request('POST', '/v1/schedules', {
      key,
      body: { name: 'x', accountId: 'acct_nope', amount: 1, recurrence: { freq: 'daily', start: '2026-01-01' } },
    })
    expectProblem(unknown, 422, 'invalid_reference')
    const transfer = await server.request('POST', '/v1/schedules', {
      key,
      body: { name: 'x', accountId: account.id, amount: 1, isTransfer: true, recurrence: { freq: 'daily', start: '2026-01-01' } },
    })
    expectProblem(transfer, 422, 'rule_violation')
  })

  test('schedules:* scopes: a key without them is refused', async () => {
    const owner = await server.owner({ scopes: ['transactions:read', 'transactions:write', 'accounts:read'] })
    expectProblem(await server.request('GET', '/v1/schedules', { key: owner.key }), 403, 'insufficient_scope')
    expectProblem(await server.request('GET', '/v1/schedules/upcoming', { key: owner.key }), 403, 'insufficient_scope')
  })
})

describe('status', () => {
  test('posted by a matching transaction within the window, missed when past it, expected ahead, skipped by skip', async () => {
    const other = await createAccount(server, key, { name: 'Status' })
    const row = await schedule({
      accountId: other.id,
      amount: 50,
      amountTolerance: 1,
      matchWindowDays: 3,
      recurrence: { freq: 'monthly', byMonthDay: [1], start: '2026-01-01' },
    })
    // January: paid 2 days late, 0.75 more: posted. February: nothing: missed. March (today 03-10): skipped. April: expected.
    const paid = await createTxn(server, key, { accountId: other.id, amount: 50.75, date: '2026-01-03' })
    await createTxn(server, key, { accountId: other.id, amount: 52, date: '2026-02-01' })
    const skip = await server.request('POST', `/v1/schedules/${row.id}/skip`, { key, body: { date: '2026-03-01' } })
    expect(skip.status).toBe(200)
    expect(skip.json.data).toEqual({ date: '2026-03-01', status: 'skipped', transactionId: null })
    const list = await occurrences(row.id, '2026-01-01', '2026-04-30')
    expect(list).toEqual([
      { date: '2026-01-01', status: 'posted', transactionId: paid.id },
      { date: '2026-02-01', status: 'missed', transactionId: null },
      { date: '2026-03-01', status: 'skipped', transactionId: null },
      { date: '2026-04-01', status: 'expected', transactionId: null },
    ])
    const notOne = await server.request('POST', `/v1/schedules/${row.id}/skip`, { key, body: { date: '2026-03-02' } })
    expectProblem(notOne, 422, 'rule_violation')
  })

  test('one transaction counts for one occurrence only', async () => {
    const other = await createAccount(server, key, { name: 'One' })
    const row = await schedule({ accountId: other.id, amount: 5, matchWindowDays: 7, recurrence: { freq: 'weekly', start: '2026-01-05' } })
    const paid = await createTxn(server, key, { accountId: other.id, amount: 5, date: '2026-01-08' })
    const list = await occurrences(row.id, '2026-01-05', '2026-01-12')
    expect(list.map((occurrence) => occurrence.transactionId)).toEqual([paid.id, null])
  })

  test('upcoming: active schedules from today for `days` days, by date; days is 1–366', async () => {
    const owner = await server.owner()
    const acct = await createAccount(server, owner.key)
    const make = (name: string, recurrence: Json, extra: Json = {}) =>
      server.request('POST', '/v1/schedules', { key: owner.key, body: { name, accountId: acct.id, amount: 1, recurrence, ...extra } })
    await make('Rent', { freq: 'monthly', byMonthDay: [15], start: '2026-01-15' })
    await make('Paper', { freq: 'weekly', start: '2026-03-11' })
    await make('Old', { freq: 'daily', start: '2026-01-01' }, { isActive: false })
    const res = await server.request('GET', '/v1/schedules/upcoming?days=10', { key: owner.key })
    expect(res.status).toBe(200)
    expect(res.json.from).toBe(TODAY)
    expect(res.json.to).toBe('2026-03-19')
    expect(res.json.data.map((item: Json) => `${item.date} ${item.name} ${item.status}`)).toEqual([
      '2026-03-11 Paper expected',
      '2026-03-15 Rent expected',
      '2026-03-18 Paper expected',
    ])
    expectProblem(await server.request('GET', '/v1/schedules/upcoming?days=367', { key: owner.key }), 422, 'validation_failed')
    expectProblem(await server.request('GET', '/v1/schedules/upcoming?days=0', { key: owner.key }), 422, 'validation_failed')
  })
})
