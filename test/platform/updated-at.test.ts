import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { serverWithOwner } from '../support/harness.ts'

/**
 * `updatedAt` (CONTRACT §25): every resource carries the time of its latest change, kept in the
 * owner's file. A new object's is its createdAt (what its creating write did, legs and tags
 * included, is its creation); a write that changes it moves it on, one that changes nothing does
 * not; a change that follows from another write (a balance, a payee's totals, a category's path
 * or type) moves it too, exactly where the change feed reports the object. Files from before
 * migration 0010 get the time of each row's latest change the feed knew, never before its
 * creation.
 */

const { server, owner } = serverWithOwner()

// biome-ignore lint/suspicious/noExplicitAny: response JSON
type Json = any

async function ok(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await server.request(method, path, { key: owner.key, body })
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${res.text}`)
  return res.json.data
}

/** A few milliseconds, so that a later write has a later time than the one before. */
const tick = () => Bun.sleep(3)

describe('new objects', () => {
  test('of every kind have updatedAt equal to createdAt, a transaction made with legs, tags and a new payee too', async () => {
    const started = Date.now()
    const account = await ok('POST', '/v1/accounts', { name: 'New', type: 'bank', balance: 0, currency: 'EUR' })
    const payee = await ok('POST', '/v1/payees', { name: 'New payee' })
    const tag = await ok('POST', '/v1/tags', { name: 'New tag' })
    const txn = await ok('POST', '/v1/transactions', {
      accountId: account.id,
      amount: 10,
      date: '2026-11-21',
      splits: [
        { amount: 4, categoryId: 'cat_sys_groceries' },
        { amount: 6, categoryId: 'cat_sys_restaurants' },
      ],
      tagNames: ['Another new tag'],
    })
    for (const made of [account, payee, tag, txn]) expect(made.updatedAt).toBe(made.createdAt)
    for (const made of [account, payee, tag, txn]) expect(made.updatedAt).toBeGreaterThanOrEqual(started)
    // As stored, not only as answered.
    expect((await ok('GET', `/v1/transactions/${txn.id}`)).updatedAt).toBe(txn.createdAt)
    const category = await ok('POST', '/v1/categories', { name: 'New category' })
    expect(category.updatedAt).toBeGreaterThanOrEqual(started)
    expect(category.updatedAt).toBeLessThanOrEqual(Date.now())
  })
})

describe('changes', () => {
  test('a write that changes the object moves updatedAt on; one that changes nothing leaves it', async () => {
    const tag = await ok('POST', '/v1/tags', { name: 'Moving' })
    await tick()
    const renamed = await ok('PATCH', `/v1/tags/${tag.id}`, { name: 'Moved' })
    expect(renamed.updatedAt).toBeGreaterThan(tag.updatedAt)
    expect(renamed.createdAt).toBe(tag.createdAt)
    await tick()
    expect((await ok('PATCH', `/v1/tags/${tag.id}`, { name: 'Moved' })).updatedAt).toBe(renamed.updatedAt)
    expect((await ok('PATCH', `/v1/tags/${tag.id}`, {})).updatedAt).toBe(renamed.updatedAt)
    expect((await ok('GET', `/v1/tags/${tag.id}`)).updatedAt).toBe(renamed.updatedAt)
  })

  test('what follows from a transaction moves the account, the payee and the tag; a batch answers each item’s stored updatedAt', async () => {
    const account = await ok('POST', '/v1/accounts', { name: 'Followed', type: 'bank', balance: 0, currency: 'EUR' })
    const payee = await ok('POST', '/v1/payees', { name: 'Followed shop' })
    const tag = await ok('POST', '/v1/tags', { name: 'Followed label' })
    await tick()
    await ok('POST', '/v1/transactions', { accountId: account.id, amount: 3, date: '2026-11-01', payeeId: payee.id, tagIds: [tag.id] })
    for (const [before, path] of [
      [account, `/v1/accounts/${account.id}`],
      [payee, `/v1/payees/${payee.id}`],
      [tag, `/v1/tags/${tag.id}`],
    ] as const) {
      expect((await ok('GET', path)).updatedAt).toBeGreaterThan(before.updatedAt)
    }
    const first = await server.request('POST', '/v1/transactions/batch', {
      key: owner.key,
      body: { items: [{ externalId: 'follow-1', accountId: account.id, amount: 1, date: '2026-11-02' }] },
    })
    await tick()
    const again = await server.request('POST', '/v1/transactions/batch', {
      key: owner.key,
      body: { items: [{ externalId: 'follow-1', accountId: account.id, amount: 2, date: '2026-11-02' }] },
    })
    const [made, updated] = [first.json.data[0].data, again.json.data[0].data]
    expect(made.updatedAt).toBe(made.createdAt)
    expect(updated.updatedAt).toBeGreaterThan(made.updatedAt)
    expect((await ok('GET', `/v1/transactions/${made.id}`)).updatedAt).toBe(updated.updatedAt)
  })

  test('a category’s path and type are its descendants’ and its transactions’ changes', async () => {
    const parent = await ok('POST', '/v1/categories', { name: 'Parent', type: 'expense' })
    const child = await ok('POST', '/v1/categories', { name: 'Child', parentId: parent.id })
    const account = await ok('POST', '/v1/accounts', { name: 'Typed', type: 'bank', balance: 0, currency: 'EUR' })
    const txn = await ok('POST', '/v1/transactions', { accountId: account.id, amount: 1, date: '2026-11-03', categoryId: parent.id })
    await tick()
    await ok('PATCH', `/v1/categories/${parent.id}`, { name: 'Renamed parent' })
    const movedChild = await ok('GET', `/v1/categories/${child.id}`)
    expect(movedChild.fullName).toBe('Renamed parent / Child')
    expect(movedChild.updatedAt).toBeGreaterThan(child.updatedAt)
    await tick()
    await ok('PATCH', `/v1/categories/${parent.id}`, { type: 'income' })
    const retyped = await ok('GET', `/v1/transactions/${txn.id}`)
    expect(retyped.categoryType).toBe('income')
    expect(retyped.updatedAt).toBeGreaterThan(txn.updatedAt)
  })
})

describe('an owner file from before migration 0010', () => {
  test('gets each row’s latest change the feed knew, its createdAt where there was none; system categories their fixed value', async () => {
    const made = await server.owner({ country: 'PT' })
    server.platform.tenants.evict(made.id)
    const path = server.platform.tenants.pathFor(made.id)
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true })
    const before = migrations.findIndex((m) => m.tag === '0010_updated_at')
    expect(before).toBeGreaterThan(0)
    const t0 = Date.now() - 86_400_000
    let changedAt = 0
    const db = new Database(path, { create: true, strict: true })
    try {
      db.run('PRAGMA journal_mode = WAL')
      db.run('CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
      db.transaction(() => {
        for (const migration of migrations.slice(0, before)) {
          for (const statement of migration.sql.split('--> statement-breakpoint')) if (statement.trim()) db.run(statement)
          db.query('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)').run(
            new Bun.CryptoHasher('sha256').update(migration.sql).digest('hex'),
            migration.when,
          )
        }
      }).immediate()
      db.query('INSERT INTO profile (id, name, created_at) VALUES (?, ?, ?)').run(made.id, 'Old', t0)
      const account = db.query(
        "INSERT INTO accounts (id, name, type, balance, currency, is_archived, is_liability, is_favourite, show_in_dashboard, is_hidden, custom_fields, created_at) VALUES (?, ?, 'bank', 0, 'EUR', 0, 0, 0, 1, 0, '[]', ?)",
      )
      account.run('acct_0190000000007000800000000000000a', 'Changed since', t0)
      account.run('acct_0190000000007000800000000000000b', 'Untouched', t0 + 5)
      // Both were made a day ago: their feed entries say so (the triggers stamped this moment).
      db.run('UPDATE change_log SET changed_at = (SELECT created_at FROM accounts WHERE id = entity_id)')
      // A later change, recorded by the feed's triggers of the time.
      db.run("UPDATE accounts SET balance = 500000000 WHERE id = 'acct_0190000000007000800000000000000a'")
      changedAt = Number(
        db.query<{ at: number | bigint }, []>("SELECT changed_at AS at FROM change_log WHERE entity_id = 'acct_0190000000007000800000000000000a'").get()?.at,
      )
    } finally {
      db.close(false)
    }
    expect(changedAt).toBeGreaterThan(t0)

    const get = async (p: string) => (await server.request('GET', p, { key: made.key })).json.data
    const changed = await get('/v1/accounts/acct_0190000000007000800000000000000a')
    expect(changed).toMatchObject({ balance: 5, createdAt: t0, updatedAt: changedAt })
    expect(await get('/v1/accounts/acct_0190000000007000800000000000000b')).toMatchObject({ createdAt: t0 + 5, updatedAt: t0 + 5 })
    const groceries = await get('/v1/categories/cat_sys_groceries')
    const storedCreatedAt = server.platform.tenants
      .get(made.id)
      .sqlite.query<{ c: number | bigint }, []>("SELECT created_at AS c FROM categories WHERE id = 'cat_sys_groceries'")
      .get()
    expect(groceries.updatedAt).toBe(Number(storedCreatedAt?.c))

    // And the file keeps it from now on like a new one.
    await tick()
    const renamed = (await server.request('PATCH', '/v1/accounts/acct_0190000000007000800000000000000b', { key: made.key, body: { name: 'Touched' } })).json
      .data
    expect(renamed.updatedAt).toBeGreaterThan(t0 + 5)
  })
})

describe('the updatedAt triggers (migration 0016)', () => {
  // Pins that a feed entry no later than a row's updatedAt does not write the row again: a batch
  // touching one account 500 times wrote it 500 times before (same result, 500× the page writes).
  test('write a row only when its updatedAt moves', async () => {
    const made = await server.owner({ country: 'PT' })
    const account = (await server.request('POST', '/v1/accounts', { key: made.key, body: { name: 'Moves', type: 'bank', balance: 0, currency: 'EUR' } })).json
      .data
    const sqlite = server.platform.tenants.get(made.id).sqlite
    const changes = () => Number(sqlite.query<{ n: number | bigint }, []>('SELECT total_changes() AS n').get()?.n)
    const forget = sqlite.query("DELETE FROM change_log WHERE resource = 'account' AND entity_id = ?")
    const record = sqlite.query('INSERT INTO change_log (resource, entity_id, op, changed_at) VALUES (?, ?, ?, ?)')
    const stored = () => Number(sqlite.query<{ u: number }, [string]>('SELECT updated_at AS u FROM accounts WHERE id = ?').get(account.id)?.u)
    for (const [resource, table] of [
      ['account', 'accounts'],
      ['rule', 'rules'],
    ] as const)
      expect(
        sqlite.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?").get(`${table}_updated_at`)?.sql,
      ).toContain(`resource = '${resource}'`)

    forget.run(account.id)
    const before = changes()
    record.run('account', account.id, 'upsert', account.updatedAt)
    // One row: the feed entry alone; the account is not written.
    expect(changes() - before).toBe(1)
    expect(stored()).toBe(account.updatedAt)

    forget.run(account.id)
    const later = changes()
    record.run('account', account.id, 'upsert', account.updatedAt + 1000)
    expect(changes() - later).toBe(2)
    expect(stored()).toBe(account.updatedAt + 1000)
  })
})
