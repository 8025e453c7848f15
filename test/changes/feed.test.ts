import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { renewEpoch } from '../../src/db/tenant/change-log.ts'
import { expectProblem, startTestServer, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { cursorParts, drain, expectSameState, feedPath, type Json, listedState, makeCursor, newClient, pullPage } from './helpers.ts'

/**
 * GET /v1/changes (CONTRACT §15) case by case, over a real server: tombstones, writes that
 * change nothing, what a transaction write reports, retention, cursors that are not ours or too
 * old, scopes per kind, the agent context's X-Changes-Cursor, and an owner file from before the
 * feed existed.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

async function ok(key: string, method: string, path: string, body?: unknown, status?: number): Promise<Json> {
  const res = await server.request(method, path, { key, body })
  const expected = status ?? (method === 'POST' && !path.endsWith('/upsert') && !path.endsWith('/batch') ? 201 : 200)
  if (res.status !== expected) throw new Error(`${method} ${path} → ${res.status} (expected ${expected}): ${res.text}`)
  return res.json.data
}

/** Everything after `cursor`, in one call that must hold it all. */
async function changesSince(key: string, cursor: string | null, extra = ''): Promise<{ data: Json[]; nextCursor: string }> {
  const res = await server.request('GET', `${feedPath(cursor, 500)}${extra}`, { key })
  if (res.status !== 200) throw new Error(`GET /v1/changes → ${res.status}: ${res.text}`)
  expect(res.json.hasMore).toBe(false)
  return res.json
}

/** The feed's position now (after everything so far). */
async function position(key: string): Promise<string> {
  const client = newClient()
  await drain(server, key, client)
  return client.cursor as string
}

const summary = (changes: Json[]) => changes.map((c) => `${c.op} ${c.resource} ${c.id}`).sort()

describe('what the feed records', () => {
  test('a deleted transaction leaves a tombstone with its externalId (null when it had none); its upsert is gone', async () => {
    const { key } = await server.owner()
    const account = await ok(key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 10, currency: 'EUR' })
    const withExt = await ok(key, 'POST', '/v1/transactions', { accountId: account.id, amount: 1, date: '2026-01-01', externalId: 'bank-77' })
    const without = await ok(key, 'POST', '/v1/transactions', { accountId: account.id, amount: 2, date: '2026-01-01' })
    const before = await position(key)
    await ok(key, 'DELETE', `/v1/transactions/${withExt.id}`)
    await ok(key, 'DELETE', `/v1/transactions/${without.id}`)

    const { data } = await changesSince(key, before)
    const tombstones = data.filter((c: Json) => c.op === 'delete')
    expect(tombstones.map((c: Json) => ({ resource: c.resource, id: c.id, externalId: c.externalId, data: c.data }))).toEqual([
      { resource: 'transaction', id: withExt.id, externalId: 'bank-77', data: null },
      { resource: 'transaction', id: without.id, externalId: null, data: null },
    ])
    // The account's balance moved back: reported too, after the first deletion.
    expect(summary(data)).toEqual(summary([...tombstones, { op: 'upsert', resource: 'account', id: account.id }]))

    // From the beginning: the tombstones, never the transactions' upserts.
    const all = (await changesSince(key, null)).data
    expect(all.filter((c: Json) => c.resource === 'transaction').map((c: Json) => c.op)).toEqual(['delete', 'delete'])
  })

  test('writes that change nothing stored add nothing: same-value PATCHes and upserts, archiving again, an unchanged batch item, replays', async () => {
    const { key } = await server.owner({ country: 'PT' })
    const account = await ok(key, 'POST', '/v1/accounts/upsert', { externalId: 'acc-1', name: 'Main', type: 'bank', balance: 250.5, currency: 'EUR' }, 201)
    const archived = await ok(key, 'POST', '/v1/accounts', { name: 'Old', type: 'physical', balance: 0, currency: 'EUR' })
    await ok(key, 'DELETE', `/v1/accounts/${archived.id}`)
    const parent = await ok(key, 'POST', '/v1/categories/upsert', { externalId: 'cat-1', name: 'House', type: 'expense', parentId: 'cat_sys_housing' }, 201)
    const child = await ok(key, 'POST', '/v1/categories', { name: 'Garden', parentId: parent.id })
    const gone = await ok(key, 'POST', '/v1/categories', { name: 'Gone' })
    await ok(key, 'DELETE', `/v1/categories/${gone.id}`)
    const payee = await ok(key, 'POST', '/v1/payees/upsert', { externalId: 'pay-1', name: 'Pingo Doce', categoryId: 'cat_sys_groceries' }, 201)
    const txnBody = {
      externalId: 'txn-1',
      accountId: account.id,
      amount: 12.9,
      date: '2026-03-01',
      payeeName: 'Pingo Doce',
      categoryId: child.id,
      note: 'weekly',
    }
    const created = await server.request('POST', '/v1/transactions/upsert', { key, body: txnBody, idempotencyKey: 'first-write' })
    expect(created.status).toBe(201)
    const txn = created.json.data
    const before = await position(key)
    const balanceBefore = (await ok(key, 'GET', `/v1/accounts/${account.id}`)).balance

    // PATCH with the values already stored.
    await ok(key, 'PATCH', `/v1/accounts/${account.id}`, { name: 'Main', balance: balanceBefore, currency: 'EUR', isFavourite: false })
    await ok(key, 'PATCH', `/v1/categories/${child.id}`, { name: 'Garden', parentId: parent.id })
    await ok(key, 'PATCH', `/v1/categories/${parent.id}`, { name: 'House', type: 'expense' })
    await ok(key, 'PATCH', `/v1/payees/${payee.id}`, { name: 'Pingo Doce', categoryId: 'cat_sys_groceries' })
    // The same payee by another spelling of its name, the same category, amount and note.
    await ok(key, 'PATCH', `/v1/transactions/${txn.id}`, { amount: 12.9, payeeName: 'pingo  doce', categoryId: child.id, note: 'weekly' })
    await ok(key, 'PATCH', `/v1/transactions/${txn.id}`, {})
    // Upserts of identical data, of every kind.
    await ok(key, 'POST', '/v1/accounts/upsert', { externalId: 'acc-1', name: 'Main', type: 'bank', balance: balanceBefore, currency: 'EUR' })
    await ok(key, 'POST', '/v1/categories/upsert', { externalId: 'cat-1', name: 'House', type: 'expense', parentId: 'cat_sys_housing' })
    await ok(key, 'POST', '/v1/payees/upsert', { externalId: 'pay-1', name: 'Pingo Doce', categoryId: 'cat_sys_groceries' })
    await ok(key, 'POST', '/v1/transactions/upsert', txnBody)
    // Archiving what is archived.
    await ok(key, 'DELETE', `/v1/accounts/${archived.id}`)
    await ok(key, 'DELETE', `/v1/categories/${gone.id}`)
    // A batch whose item equals what is stored.
    const batch = await ok(key, 'POST', '/v1/transactions/batch', { items: [txnBody] })
    expect(batch[0].operation).toBe('unchanged')
    // An idempotent replay of the first write.
    const replay = await server.request('POST', '/v1/transactions/upsert', { key, body: txnBody, idempotencyKey: 'first-write' })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.text).toBe(created.text)

    const after = await changesSince(key, before)
    expect(after.data).toEqual([])
    expect(cursorParts(after.nextCursor).seq).toBe(cursorParts(before).seq)
  })

  test('a transaction write also reports the accounts and the payee whose balance or totals it moved, and nothing it did not move', async () => {
    const { key } = await server.owner()
    const a = await ok(key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 1000, currency: 'EUR' })
    const b = await ok(key, 'POST', '/v1/accounts', { name: 'B', type: 'bank', balance: 0, currency: 'USD' })
    const c = await ok(key, 'POST', '/v1/accounts', { name: 'C', type: 'bank', balance: 0, currency: 'EUR' })

    let cursor = await position(key)
    const since = async () => {
      const page = await changesSince(key, cursor)
      cursor = page.nextCursor
      return summary(page.data)
    }

    // A transfer with a new payee: the transaction, both accounts, the payee (made now).
    const transfer = await ok(key, 'POST', '/v1/transactions', {
      accountId: a.id,
      amount: 100,
      date: '2026-02-01',
      isTransfer: true,
      transferToAccountId: b.id,
      exchangeRate: 1.1,
      payeeName: 'Bank',
    })
    expect(await since()).toEqual(
      summary(
        [transfer, a, b].map((x) => ({ op: 'upsert', ...x, resource: resourceOf(x.id) })).concat([{ op: 'upsert', resource: 'payee', id: transfer.payeeId }]),
      ),
    )
    // Only the note: the transaction alone.
    await ok(key, 'PATCH', `/v1/transactions/${transfer.id}`, { note: 'rent' })
    expect(await since()).toEqual([`upsert transaction ${transfer.id}`])
    // A new amount of a transfer moves both balances; a transfer never counts in totalSpent and
    // its count stays: the payee did not change.
    await ok(key, 'PATCH', `/v1/transactions/${transfer.id}`, { amount: 120 })
    expect(await since()).toEqual([`upsert account ${a.id}`, `upsert account ${b.id}`, `upsert transaction ${transfer.id}`].sort())
    // Another destination: the old one and the new one move, the source does not.
    await ok(key, 'PATCH', `/v1/transactions/${transfer.id}`, { transferToAccountId: c.id, exchangeRate: 1 })
    expect(await since()).toEqual([`upsert account ${b.id}`, `upsert account ${c.id}`, `upsert transaction ${transfer.id}`].sort())

    // An expense: its account and payee; another payee: both payees, not the account.
    const expense = await ok(key, 'POST', '/v1/transactions', { accountId: a.id, amount: 9.99, date: '2026-02-02', payeeName: 'Shop' })
    expect(await since()).toEqual([`upsert account ${a.id}`, `upsert payee ${expense.payeeId}`, `upsert transaction ${expense.id}`].sort())
    const other = await ok(key, 'POST', '/v1/payees', { name: 'Other shop' })
    cursor = await position(key)
    await ok(key, 'PATCH', `/v1/transactions/${expense.id}`, { payeeId: other.id })
    expect(await since()).toEqual([`upsert payee ${expense.payeeId}`, `upsert payee ${other.id}`, `upsert transaction ${expense.id}`].sort())
    // Deleted: the tombstone, the account and the payee it leaves.
    await ok(key, 'DELETE', `/v1/transactions/${expense.id}`)
    expect(await since()).toEqual([`delete transaction ${expense.id}`, `upsert account ${a.id}`, `upsert payee ${other.id}`].sort())

    // A batch reports everything its items moved, once each.
    const batch = await ok(key, 'POST', '/v1/transactions/batch', {
      items: [
        { externalId: 'b-1', accountId: a.id, amount: 5, date: '2026-02-03', payeeName: 'Shop' },
        { externalId: 'b-2', accountId: c.id, amount: -50, date: '2026-02-03', payeeName: 'Shop' },
      ],
    })
    expect(await since()).toEqual(
      [
        `upsert account ${a.id}`,
        `upsert account ${c.id}`,
        `upsert payee ${expense.payeeId}`,
        `upsert transaction ${batch[0].data.id}`,
        `upsert transaction ${batch[1].data.id}`,
      ].sort(),
    )
  })

  test('an entity changed while a client pages comes again later in the same loop; nothing is skipped or repeated', async () => {
    const { key } = await server.owner()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await ok(key, 'POST', '/v1/accounts', { name: `A${i}`, type: 'bank', balance: i, currency: 'EUR' })).id)
    const first = await server.request('GET', feedPath(null, 2), { key })
    expect(first.json.data.map((c: Json) => c.id)).toEqual(ids.slice(0, 2))
    expect(first.json.hasMore).toBe(true)
    await ok(key, 'PATCH', `/v1/accounts/${ids[0]}`, { name: 'renamed' })
    const client = newClient()
    client.cursor = first.json.nextCursor
    const rest = await drain(server, key, client, 2)
    expect(rest.map((c: Json) => c.id)).toEqual([ids[2], ids[3], ids[4], ids[0]])
    expect(rest[3].data.name).toBe('renamed')
  })

  test('a client paging while others write concurrently ends with exactly what the lists return', async () => {
    const { key } = await server.owner()
    const accounts = await Promise.all(['A', 'B', 'C'].map((name) => ok(key, 'POST', '/v1/accounts', { name, type: 'bank', balance: 100, currency: 'EUR' })))
    let writing = true
    const writer = async (stream: number) => {
      const mine: string[] = []
      for (let n = 0; n < 40; n++) {
        const account = accounts[(stream + n) % 3].id
        if (n % 7 === 6 && mine.length) await ok(key, 'DELETE', `/v1/transactions/${mine.shift()}`)
        else if (n % 5 === 4 && mine.length) await ok(key, 'PATCH', `/v1/transactions/${mine[0]}`, { amount: n, payeeName: `P${n % 3}` })
        else {
          const res = await server.request('POST', '/v1/transactions/upsert', {
            key,
            body: { externalId: `s${stream}-${n % 25}`, accountId: account, amount: n + 0.5, date: '2026-01-01', payeeName: `P${n % 4}` },
          })
          expect([200, 201]).toContain(res.status)
          if (!mine.includes(res.json.data.id)) mine.push(res.json.data.id)
        }
      }
    }
    const client = newClient()
    const reader = (async () => {
      while (writing) await pullPage(server, key, client, 1 + (client.pages % 4))
    })()
    try {
      await Promise.all([0, 1, 2, 3].map(writer))
    } finally {
      writing = false
      await reader
    }
    await drain(server, key, client, 3)
    expectSameState(client.copy, await listedState(server, key))
    expect(client.pages).toBeGreaterThan(10)
  })

  test('query parameters are checked: limit 1–500, known resources, an absent cursor starts from the beginning', async () => {
    const { key } = await server.owner()
    for (const query of ['limit=0', 'limit=501', 'limit=x', 'resources=accounts,nope', 'resources=', 'cursor=', 'other=1']) {
      expectProblem(await server.request('GET', `/v1/changes?${query}`, { key }), 422, 'validation_failed')
    }
    const res = await server.request('GET', '/v1/changes', { key })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ data: [], nextCursor: res.json.nextCursor, hasMore: false })
  })
})

describe('cursors', () => {
  test('a tampered cursor, another owner’s, a list cursor or garbage → 422 validation_failed', async () => {
    const ana = await server.owner()
    const bea = await server.owner()
    for (const who of [ana, bea]) await ok(who.key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 1, currency: 'EUR' })
    const mine = await position(ana.key)
    const theirs = await position(bea.key)
    expect((await server.request('GET', feedPath(mine), { key: ana.key })).status).toBe(200)

    const parts = cursorParts(mine)
    const flipped = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
    const bad = {
      'a flipped character': flipped(mine, 8),
      'another character flipped': flipped(mine, mine.length - 6),
      'another seq, same signature': makeCursor({ ...parts, seq: String(Number(parts.seq) + 1) }),
      'seq 0, same signature': makeCursor({ ...parts, seq: '0' }),
      'another owner’s cursor': theirs,
      'a list cursor': (await server.request('GET', '/v1/accounts?limit=1', { key: ana.key })).json.nextCursor ?? 'missing',
      'no prefix': mine.slice(4),
      garbage: 'chg_!!!',
      'empty payload': 'chg_',
    }
    // The other owner's cursor stands at the same seq: only the binding tells it apart.
    expect(cursorParts(theirs).seq).toBe(parts.seq)
    for (const [label, cursor] of Object.entries(bad)) {
      const res = await server.request('GET', feedPath(cursor), { key: ana.key })
      const problem = expectProblem(res, 422, 'validation_failed')
      expect(`${label}: ${problem.detail}`).toContain(`${label}: cursor`)
    }
  })

  test('a new feed epoch (a restore) expires every earlier cursor: 410 cursor_expired, and a resync works', async () => {
    const { id, key } = await server.owner()
    await ok(key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 1, currency: 'EUR' })
    const old = await position(key)
    renewEpoch(server.platform.tenants.get(id))
    const problem = expectProblem(await server.request('GET', feedPath(old), { key }), 410, 'cursor_expired')
    expect(problem.detail).toContain('call without cursor')
    expect(problem.type).toBe('urn:pfin:problem:cursor_expired')
    const client = newClient()
    await drain(server, key, client)
    expectSameState(client.copy, await listedState(server, key))
  })

  test('TOMBSTONE_RETENTION_DAYS=0: a cursor from before a purged tombstone → 410; cursors after it keep working', async () => {
    const purging = await startTestServer({ env: { TOMBSTONE_RETENTION_DAYS: '0', RATE_LIMIT_PER_MINUTE: '100000' } })
    try {
      const { key } = await purging.owner()
      const get = (cursor: string | null) => purging.request('GET', feedPath(cursor, 500), { key })
      const account = (await purging.request('POST', '/v1/accounts', { key, body: { name: 'A', type: 'bank', balance: 5, currency: 'EUR' } })).json.data
      const txn = async (externalId: string) =>
        (await purging.request('POST', '/v1/transactions', { key, body: { accountId: account.id, amount: 1, date: '2026-01-01', externalId } })).json.data
      const first = await txn('first')
      const second = await txn('second')
      const beforeDelete = (await get(null)).json.nextCursor
      expect((await purging.request('DELETE', `/v1/transactions/${first.id}`, { key })).status).toBe(200)
      await Bun.sleep(5)

      const problem = expectProblem(await get(beforeDelete), 410, 'cursor_expired')
      expect(problem.detail).toContain('resync')
      expect(problem.detail).toContain('call without cursor')
      // Resync from the beginning: the tombstone is gone, everything else is there.
      const fresh = await get(null)
      expect(fresh.status).toBe(200)
      expect(fresh.json.data.map((c: Json) => `${c.op} ${c.id}`).sort()).toEqual([`upsert ${account.id}`, `upsert ${second.id}`].sort())
      const afterPurge = fresh.json.nextCursor
      expect((await get(afterPurge)).json.data).toEqual([])
      // A change after the purge reaches a cursor taken after it.
      await purging.request('PATCH', `/v1/transactions/${second.id}`, { key, body: { note: 'n' } })
      expect((await get(afterPurge)).json.data.map((c: Json) => c.id)).toEqual([second.id])
      // The next deletion that a cursor has not seen expires it in turn.
      const seenUpTo = (await get(afterPurge)).json.nextCursor
      await purging.request('DELETE', `/v1/transactions/${second.id}`, { key })
      await Bun.sleep(5)
      expectProblem(await get(seenUpTo), 410, 'cursor_expired')
    } finally {
      await purging.stop()
    }
  })

  test('the default retention keeps tombstones: an old cursor still gets the deletion', async () => {
    const { key } = await server.owner()
    const account = await ok(key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 5, currency: 'EUR' })
    const txn = await ok(key, 'POST', '/v1/transactions', { accountId: account.id, amount: 1, date: '2026-01-01' })
    const before = await position(key)
    await ok(key, 'DELETE', `/v1/transactions/${txn.id}`)
    await Bun.sleep(5)
    const { data } = await changesSince(key, before)
    expect(data.some((c: Json) => c.op === 'delete' && c.id === txn.id)).toBe(true)
  })
})

describe('scopes', () => {
  test('each kind needs its read scope; resources= naming an unreadable kind → 403; no read scope at all → 403', async () => {
    const { id, key } = await server.owner()
    const account = await ok(key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 5, currency: 'EUR' })
    const txn = await ok(key, 'POST', '/v1/transactions', { accountId: account.id, amount: 1, date: '2026-01-01', payeeName: 'Shop' })
    await ok(key, 'POST', '/v1/categories', { name: 'Mine' })

    const accountsOnly = (await server.key(id, { scopes: ['accounts:read'] })).key
    const res = await server.request('GET', '/v1/changes', { key: accountsOnly })
    expect(res.status).toBe(200)
    expect(res.json.data.map((c: Json) => `${c.resource} ${c.id}`)).toEqual([`account ${account.id}`])
    expect((await server.request('GET', '/v1/changes?resources=accounts', { key: accountsOnly })).status).toBe(200)
    const refused = expectProblem(await server.request('GET', '/v1/changes?resources=transactions', { key: accountsOnly }), 403, 'insufficient_scope')
    expect(refused.detail).toContain('transactions:read')
    expectProblem(await server.request('GET', '/v1/changes?resources=accounts,payees', { key: accountsOnly }), 403, 'insufficient_scope')

    const two = (await server.key(id, { scopes: ['transactions:read', 'payees:read'] })).key
    const both = await server.request('GET', '/v1/changes', { key: two })
    expect(both.json.data.map((c: Json) => c.resource).sort()).toEqual(['payee', 'transaction'])
    expect(both.json.data.find((c: Json) => c.resource === 'transaction').id).toBe(txn.id)

    // Regression: the feed skipped its kind filter for any key that may read as many kinds as a
    // hand-kept count said there were (6, while there are 8): accounts + categories + the four
    // kinds of transactions:read is six, and such a key was given the payees' changes too.
    const six = (await server.key(id, { scopes: ['accounts:read', 'categories:read', 'transactions:read'] })).key
    const sixKinds = await server.request('GET', '/v1/changes', { key: six })
    expect(sixKinds.status).toBe(200)
    expect([...new Set(sixKinds.json.data.map((c: Json) => c.resource))].sort()).toEqual(['account', 'category', 'transaction'])

    for (const scopes of [['me:read'], ['accounts:write', 'transactions:write']] as const) {
      const none = (await server.key(id, { scopes: [...scopes] })).key
      expectProblem(await server.request('GET', '/v1/changes', { key: none }), 403, 'insufficient_scope')
    }
  })
})

test('X-Changes-Cursor of the agent context: the feed from it returns exactly what changed after the snapshot', async () => {
  const { key } = await server.owner()
  const account = await ok(key, 'POST', '/v1/accounts', { name: 'A', type: 'bank', balance: 5, currency: 'EUR' })
  await ok(key, 'POST', '/v1/transactions', { accountId: account.id, amount: 1, date: '2026-01-01' })
  const context = await server.request('GET', '/v1/agent/context', { key })
  expect(context.status).toBe(200)
  const cursor = context.headers.get('x-changes-cursor')
  expect(cursor?.startsWith('chg_')).toBe(true)
  expect((await changesSince(key, cursor)).data).toEqual([])

  await ok(key, 'PATCH', `/v1/accounts/${account.id}`, { name: 'Renamed' })
  const { data, nextCursor } = await changesSince(key, cursor)
  expect(data.map((c: Json) => ({ op: c.op, resource: c.resource, id: c.id, name: c.data.name }))).toEqual([
    { op: 'upsert', resource: 'account', id: account.id, name: 'Renamed' },
  ])
  expect((await changesSince(key, nextCursor)).data).toEqual([])
})

describe('an owner file from before the change feed', () => {
  /** A tenant file as the first three migrations left it (the same mechanics as src/db/sqlite.ts), with rows in it. */
  function buildPreFeedFile(path: string, ownerId: string): { accounts: string[]; category: string; payee: string; txns: string[] } {
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
    const ids = {
      accounts: ['acct_0190000000007000800000000000000a', 'acct_0190000000007000800000000000000b'],
      category: 'cat_0190000000007000800000000000000c',
      payee: 'pay_0190000000007000800000000000000d',
      txns: ['txn_01900000000070008000000000000001', 'txn_01900000000070008000000000000002', 'txn_01900000000070008000000000000003'],
    }
    const db = new Database(path, { create: true, strict: true })
    try {
      db.run('PRAGMA journal_mode = WAL')
      db.run('CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
      const old = migrations.slice(0, 3)
      expect(old.map((m) => m.tag)).toEqual(['0000_init', '0001_seed_system_categories', '0002_payee_usage_order'])
      db.transaction(() => {
        for (const migration of old) {
          for (const statement of migration.sql.split('--> statement-breakpoint')) if (statement.trim()) db.run(statement)
          db.query('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)').run(
            new Bun.CryptoHasher('sha256').update(migration.sql).digest('hex'),
            migration.when,
          )
        }
      }).immediate()
      expect(db.query("SELECT name FROM sqlite_master WHERE name = 'change_log'").get()).toBeNull()

      const t0 = Date.now() - 86_400_000
      db.transaction(() => {
        db.query('INSERT INTO profile (id, name, email, country, default_currency, preferred_language, created_at) VALUES (?, ?, NULL, ?, ?, NULL, ?)').run(
          ownerId,
          'Old Owner',
          'PT',
          'EUR',
          t0,
        )
        const account = db.query(
          "INSERT INTO accounts (id, external_id, name, type, balance, currency, is_archived, is_liability, is_favourite, show_in_dashboard, is_hidden, custom_fields, created_at) VALUES (?, ?, ?, 'bank', ?, 'EUR', ?, 0, 0, 1, 0, '[]', ?)",
        )
        // 1000 − 12.50 − 30 = 957.50; 30 + 100 = 130 (units of 10⁻⁸).
        account.run(ids.accounts[0] as string, 'old-acct', 'Old checking', 95_750_000_000, 0, t0 + 1)
        account.run(ids.accounts[1] as string, null, 'Old savings', 13_000_000_000, 1, t0 + 2)
        db.query(
          "INSERT INTO categories (id, external_id, name, type, parent_id, is_archived, is_system, created_at) VALUES (?, 'old-cat', 'Old custom', 'expense', 'cat_sys_food_drinks', 0, 0, ?)",
        ).run(ids.category, t0 + 3)
        db.query(
          "INSERT INTO payees (id, external_id, name, normalized_name, aliases, search_text, category_id, is_merchant, transaction_count, total_spent, created_at) VALUES (?, NULL, 'Old Shop', 'old shop', '[]', 'old shop', ?, 0, 1, 1250000000, ?)",
        ).run(ids.payee, ids.category, t0 + 4)
        const txn = db.query(
          'INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, NULL, ?)',
        )
        txn.run(ids.txns[0] as string, 'old-1', ids.accounts[0] as string, ids.category, ids.payee, 1_250_000_000, '2025-12-01', 0, null, null, t0 + 5)
        txn.run(
          ids.txns[1] as string,
          null,
          ids.accounts[0] as string,
          null,
          null,
          3_000_000_000,
          '2025-12-02',
          1,
          ids.accounts[1] as string,
          3_000_000_000,
          t0 + 6,
        )
        txn.run(ids.txns[2] as string, 'old-3', ids.accounts[1] as string, 'cat_sys_salary', null, -10_000_000_000, '2025-12-03', 0, null, null, t0 + 7)
      }).immediate()
    } finally {
      db.close(false)
    }
    return ids
  }

  test('migrates on open: every row it holds enters the feed once, oldest first, as the lists show it; later writes follow', async () => {
    const { id, key } = await server.owner({ country: 'PT' })
    // The server made a current file for the new owner; put an old one in its place.
    server.platform.tenants.evict(id)
    const ids = buildPreFeedFile(server.platform.tenants.pathFor(id), id)

    const client = newClient()
    const changes = await drain(server, key, client, 2)
    expect(changes.map((c: Json) => c.id)).toEqual([...ids.accounts, ids.category, ids.payee, ...ids.txns])
    expect(changes.every((c: Json) => c.op === 'upsert')).toBe(true)
    // changedAt of a backfilled row is when it was made.
    expect(changes.map((c: Json) => c.changedAt)).toEqual([...changes.map((c: Json) => c.changedAt)].sort((x, y) => x - y))
    const listed = await listedState(server, key)
    expect(listed.size).toBe(7)
    expectSameState(client.copy, listed)
    expect(client.copy.get(`account:${ids.accounts[0]}`).balance).toBe(957.5)
    expect(client.copy.get(`category:${ids.category}`).fullName).toBe('Food & Drinks / Old custom')
    expect(client.copy.get(`transaction:${ids.txns[0]}`).categoryType).toBe('expense')

    // The migrated file runs the feed like a new one.
    await ok(key, 'PATCH', `/v1/transactions/${ids.txns[0]}`, { amount: 2.5 })
    const more = await drain(server, key, client, 500)
    expect(summary(more)).toEqual([`upsert account ${ids.accounts[0]}`, `upsert payee ${ids.payee}`, `upsert transaction ${ids.txns[0]}`].sort())
    expectSameState(client.copy, await listedState(server, key))
    const tenant = server.platform.tenants.get(id)
    expect(tenant.sqlite.query('SELECT count(*) AS n FROM "__drizzle_migrations"').get()).toEqual({ n: BigInt(migrations.length) })
  })
})

function resourceOf(id: string): string {
  return id.startsWith('acct_') ? 'account' : id.startsWith('txn_') ? 'transaction' : id.startsWith('pay_') ? 'payee' : 'category'
}

describe('the triggers under any statement', () => {
  test('an UPSERT or an UPDATE OR IGNORE on a resource table still records the change (the outer conflict policy reaches trigger bodies)', async () => {
    const owner = await server.owner()
    const account = await ok(owner.key, 'POST', '/v1/accounts', { name: 'Main', type: 'bank', balance: 1, currency: 'EUR' })
    const before = await position(owner.key)
    const db = server.platform.tenants.get(owner.id).sqlite
    // With INSERT OR REPLACE in the triggers, the first failed on change_log's unique index and the second skipped the feed.
    db.run('INSERT INTO accounts SELECT * FROM accounts WHERE id = ? ON CONFLICT(id) DO UPDATE SET name = ?', [account.id as string, 'Upserted'])
    expect(summary((await changesSince(owner.key, before)).data)).toEqual([`upsert account ${account.id}`])
    const middle = await position(owner.key)
    db.run('UPDATE OR IGNORE accounts SET name = ? WHERE id = ?', ['Ignored policy', account.id as string])
    const changes = (await changesSince(owner.key, middle)).data
    expect(summary(changes)).toEqual([`upsert account ${account.id}`])
    expect((changes[0]?.data as Json | undefined)?.name).toBe('Ignored policy')
  })
})
