/**
 * CONTRACT §29 "Elsewhere" and the timer's cost: schedules in the change feed (resource
 * `schedule`, read with schedules:read), the agent context's `upcoming` (null without
 * schedules:read), MCP's list_upcoming and upsert_schedule, and an auto-posting sweep that opens
 * only the owners with something due (the control database's index), not every owner file.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { AutoPoster } from '../../src/modules/schedules/autopost.ts'
import { fixToday } from '../../src/platform/clock.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { createAccount, type Json } from '../transactions/helpers.ts'

const TODAY = '2026-05-04'
let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ env: { PFIN_TODAY: TODAY, RATE_LIMIT_PER_MINUTE: '100000' } })
})
afterAll(() => server.stop())

const rent = (accountId: string, extra: Json = {}) => ({
  name: 'Rent',
  accountId,
  amount: 700,
  recurrence: { freq: 'monthly', byMonthDay: [5], start: '2026-01-05' },
  ...extra,
})

test('the feed carries schedules, readable with schedules:read only', async () => {
  const owner = await server.owner()
  const account = await createAccount(server, owner.key)
  const made = (await server.request('POST', '/v1/schedules', { key: owner.key, body: rent(account.id) })).json.data
  const feed = await server.request('GET', '/v1/changes?resources=schedules', { key: owner.key })
  expect(feed.status).toBe(200)
  expect(feed.json.data.map((change: Json) => [change.resource, change.id, change.op])).toEqual([['schedule', made.id, 'upsert']])
  expect(feed.json.data[0].data).toEqual(made)
  const cursor = feed.json.nextCursor
  // A skip is a change of the schedule; its updatedAt moves.
  await server.request('POST', `/v1/schedules/${made.id}/skip`, { key: owner.key, body: { date: '2026-06-05' } })
  const after = await server.request('GET', `/v1/changes?resources=schedules&cursor=${cursor}`, { key: owner.key })
  expect(after.json.data.map((change: Json) => change.id)).toEqual([made.id])
  expect(after.json.data[0].data.updatedAt).toBeGreaterThanOrEqual(made.updatedAt)
  const { key: narrow } = await server.key(owner.id, { scopes: ['transactions:read'] })
  const refused = await server.request('GET', '/v1/changes?resources=schedules', { key: narrow })
  expect(refused.status).toBe(403)
  const unnamed = await server.request('GET', '/v1/changes', { key: narrow })
  expect(unnamed.json.data.some((change: Json) => change.resource === 'schedule')).toBe(false)
})

test('the agent context carries the next 30 days as upcoming; null without schedules:read', async () => {
  const owner = await server.owner()
  const account = await createAccount(server, owner.key)
  await server.request('POST', '/v1/schedules', { key: owner.key, body: rent(account.id) })
  const context = await server.request('GET', '/v1/agent/context', { key: owner.key })
  expect(context.json.data.upcoming).toEqual((await server.request('GET', '/v1/schedules/upcoming', { key: owner.key })).json.data)
  expect(context.json.data.upcoming.map((item: Json) => item.date)).toEqual(['2026-05-05'])
  const { key: five } = await server.key(owner.id, { scopes: ['me:read', 'accounts:read', 'categories:read', 'payees:read', 'transactions:read'] })
  expect((await server.request('GET', '/v1/agent/context', { key: five })).json.data.upcoming).toBeNull()
})

async function tool(key: string, name: string, args: Json): Promise<Json> {
  const res = await server.request('POST', '/mcp', {
    key,
    idempotencyKey: null,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  return res.json.result
}

test('MCP: upsert_schedule is safe to repeat, list_upcoming lists what is due', async () => {
  const owner = await server.owner()
  const account = await createAccount(server, owner.key)
  const args = { externalId: 'rent', ...rent(account.id) }
  const first = await tool(owner.key, 'upsert_schedule', args)
  expect(first.isError).toBeFalsy()
  expect(first.structuredContent.operation).toBe('created')
  const again = await tool(owner.key, 'upsert_schedule', args)
  expect(again.structuredContent.operation).toBe('updated')
  expect(again.structuredContent.data.id).toBe(first.structuredContent.data.id)
  const upcoming = await tool(owner.key, 'list_upcoming', { days: 40 })
  expect(upcoming.structuredContent.data.map((item: Json) => `${item.name} ${item.date} ${item.status}`)).toEqual([
    'Rent 2026-05-05 expected',
    'Rent 2026-06-05 expected',
  ])
})

test('a sweep opens only the owners with something due, never every owner file', async () => {
  const owners = []
  for (let i = 0; i < 6; i++) {
    const owner = await server.owner()
    const account = await createAccount(server, owner.key)
    // Two of them post daily from today; the rest have schedules without auto-posting.
    await server.request('POST', '/v1/schedules', {
      key: owner.key,
      body: { name: 'Daily', accountId: account.id, amount: 1, autoPost: i < 2, recurrence: { freq: 'daily', start: TODAY } },
    })
    owners.push(owner)
  }
  const poster = new AutoPoster(server.platform.control.sqlite, server.platform.tenants, () => {})
  // The marks of the writes above reach control.db (the timer does this every second).
  poster.syncChanged()
  server.platform.tenants.closeAll()
  // Today's dates were posted by the creates: nothing is due until tomorrow, so nothing opens.
  expect(poster.sweep()).toBe(0)
  expect(server.platform.tenants.openTenants()).toEqual([])
  const due = server.platform.control.sqlite
    .query<{ owner_id: string; next_due: string }, []>('SELECT owner_id, next_due FROM schedule_due ORDER BY owner_id')
    .all()
  expect(due.map((row) => row.owner_id).sort()).toEqual(
    owners
      .slice(0, 2)
      .map((owner) => owner.id)
      .sort(),
  )
  expect(due.every((row) => row.next_due === '2026-05-05')).toBe(true)
  // Tomorrow: exactly the two due owners are opened, and each posts its day.
  fixToday('2026-05-05')
  try {
    expect(poster.sweep()).toBe(2)
    expect(
      server.platform.tenants
        .openTenants()
        .map((tenant) => tenant.ownerId)
        .sort(),
    ).toEqual(due.map((row) => row.owner_id).sort())
  } finally {
    fixToday(TODAY)
  }
  const next = server.platform.control.sqlite.query<{ next_due: string }, []>('SELECT next_due FROM schedule_due').all()
  expect(next.map((row) => row.next_due)).toEqual(['2026-05-06', '2026-05-06'])
})
