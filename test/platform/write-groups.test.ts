import { Database } from 'bun:sqlite'
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { newId } from '../../src/db/ids.ts'
import { TenantRegistry } from '../../src/db/tenant/registry.ts'
import type { Tenant } from '../../src/db/tenant/tenant.ts'
import { ApiError } from '../../src/platform/errors.ts'
import { WriteGroups } from '../../src/platform/write-groups.ts'
import { startUnthrottledServer, tempDir } from '../support/harness.ts'

/**
 * Group commit (src/platform/write-groups.ts): the writes one owner receives in one turn of the
 * event loop share a transaction and its fsync; each settles only once that commit is done; a
 * refusal undoes its own write alone; anything else sends every write of the group through a
 * transaction of its own. Real owner files in a temporary DATA_DIR.
 */

let dataDir: string
let registry: TenantRegistry
let groups: WriteGroups
let ownerId: string

beforeEach(() => {
  dataDir = tempDir()
  registry = new TenantRegistry(dataDir, 8)
  groups = new WriteGroups(registry)
  ownerId = newId('own')
  registry.create(ownerId).sqlite.run('CREATE TABLE scratch (name TEXT NOT NULL, filler BLOB)')
})
afterEach(() => {
  registry.closeAll()
  rmSync(dataDir, { recursive: true, force: true })
})

/** A write of the kind a handler makes: one row. */
const insert =
  (name: string, filler: Uint8Array | null = null) =>
  (tenant: Tenant) => {
    tenant.sqlite.query('INSERT INTO scratch (name, filler) VALUES (?, ?)').run(name, filler)
    return name
  }

/** What another connection to the owner's file sees: only committed rows. */
function committedNames(owner = ownerId): string[] {
  const reader = new Database(registry.pathFor(owner), { readonly: true })
  try {
    return reader
      .query<{ name: string }, []>('SELECT name FROM scratch ORDER BY rowid')
      .all()
      .map((row) => row.name)
  } finally {
    reader.close()
  }
}

/** Settles every promise, keeping each outcome. */
const outcomes = (promises: Promise<unknown>[]) => Promise.allSettled(promises)

describe('one turn, one commit', () => {
  test('writes queued in one turn run after it, share one commit, and each settles only once it is committed', async () => {
    const seenAtSettle: string[][] = []
    const writes = ['a', 'b', 'c', 'd'].map((name) =>
      groups.run(ownerId, insert(name)).then((value) => {
        seenAtSettle.push(committedNames())
        return value
      }),
    )
    // Nothing has run yet: the group waits for the end of the turn.
    expect(committedNames()).toEqual([])
    expect(await Promise.all(writes)).toEqual(['a', 'b', 'c', 'd'])
    expect(groups.groupedCommits).toBe(1)
    for (const seen of seenAtSettle) expect(seen).toEqual(['a', 'b', 'c', 'd'])
  })

  test('a lone write commits in a transaction of its own', async () => {
    expect(await groups.run(ownerId, insert('alone'))).toBe('alone')
    expect(groups.groupedCommits).toBe(0)
    expect(committedNames()).toEqual(['alone'])
  })

  test("each owner's writes commit in that owner's file", async () => {
    const other = newId('own')
    registry.create(other).sqlite.run('CREATE TABLE scratch (name TEXT NOT NULL, filler BLOB)')
    await Promise.all([
      groups.run(ownerId, insert('mine-1')),
      groups.run(other, insert('theirs-1')),
      groups.run(ownerId, insert('mine-2')),
      groups.run(other, insert('theirs-2')),
    ])
    expect(committedNames(ownerId)).toEqual(['mine-1', 'mine-2'])
    expect(committedNames(other)).toEqual(['theirs-1', 'theirs-2'])
    expect(groups.groupedCommits).toBe(2)
  })
})

describe('a write that runs alone (RouteDef.alone)', () => {
  test('it commits in a transaction of its own, in its place: the writes before and after it group among themselves', async () => {
    const order = await Promise.all([
      groups.run(ownerId, insert('a')),
      groups.run(ownerId, insert('b')),
      groups.run(ownerId, insert('big'), { alone: true }),
      groups.run(ownerId, insert('c')),
      groups.run(ownerId, insert('d')),
    ])
    expect(order).toEqual(['a', 'b', 'big', 'c', 'd'])
    expect(committedNames()).toEqual(['a', 'b', 'big', 'c', 'd'])
    // a+b share a commit, c+d share another; the big one had its own (without it: one group of five).
    expect(groups.groupedCommits).toBe(2)
  })
})

describe('failures inside a group', () => {
  test('a refusal (ApiError) after some of its statements ran undoes that write alone; the others commit together', async () => {
    const refusal = new ApiError('rule_violation', 'item 2 breaks a rule')
    const results = await outcomes([
      groups.run(ownerId, insert('first')),
      groups.run(ownerId, (tenant) => {
        insert('half-done')(tenant)
        throw refusal
      }),
      groups.run(ownerId, insert('third')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason).toBe(refusal)
    expect(committedNames()).toEqual(['first', 'third'])
    expect(groups.groupedCommits).toBe(1)
  })

  test('an unexpected error rolls the group back and every write runs again on its own: the others commit once each', async () => {
    let attempts = 0
    const bug = new Error('a bug in one handler')
    const results = await outcomes([
      groups.run(ownerId, insert('first')),
      groups.run(ownerId, (tenant) => {
        attempts++
        insert('half-done')(tenant)
        throw bug
      }),
      groups.run(ownerId, insert('third')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((results[1] as PromiseRejectedResult).reason).toBe(bug)
    // Once in the group, once alone; the others' rows appear exactly once, the failing one's never.
    expect(attempts).toBe(2)
    expect(committedNames()).toEqual(['first', 'third'])
    expect(groups.groupedCommits).toBe(0)
  })

  test('a write that fills the disk (SQLITE_FULL) fails alone; the small writes around it commit', async () => {
    const tenant = registry.get(ownerId)
    const pages = Number((tenant.sqlite.query('PRAGMA page_count').get() as { page_count: number | bigint }).page_count)
    // Room for two small rows in the table's existing page, not for a 1 MiB row.
    tenant.sqlite.run(`PRAGMA max_page_count = ${pages + 2}`)
    const results = await outcomes([
      groups.run(ownerId, insert('small-1')),
      groups.run(ownerId, insert('huge', new Uint8Array(1024 * 1024))),
      groups.run(ownerId, insert('small-2')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(((results[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe('SQLITE_FULL')
    expect(committedNames()).toEqual(['small-1', 'small-2'])
  })

  test('an owner whose file cannot be opened fails its queued writes, not the other owners', async () => {
    const broken = newId('own')
    // A directory where the file should be: SQLite cannot open it.
    const { mkdirSync } = await import('node:fs')
    mkdirSync(registry.pathFor(broken))
    const results = await outcomes([groups.run(broken, insert('lost')), groups.run(ownerId, insert('kept'))])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled'])
    expect(committedNames()).toEqual(['kept'])
  })

  test('flush() runs what is queued at once (the server calls it before closing the files)', async () => {
    const write = groups.run(ownerId, insert('at-shutdown'))
    groups.flush()
    expect(committedNames()).toEqual(['at-shutdown'])
    expect(await write).toBe('at-shutdown')
  })
})

describe('over HTTP', () => {
  let server: Awaited<ReturnType<typeof startUnthrottledServer>>
  afterAll(() => server?.stop())

  test('many concurrent writes to one owner: every one answered once, balances exact, each replayable byte for byte', async () => {
    server = await startUnthrottledServer()
    const { key } = await server.owner()
    const account = await server.request('POST', '/v1/accounts', { key, body: { name: 'Main', type: 'bank', balance: 1000, currency: 'EUR' } })
    expect(account.status).toBe(201)
    const accountId = account.json.data.id as string
    const cents = Array.from({ length: 40 }, (_, i) => 101 + i * 37)
    const sent = cents.map((c, i) => ({
      idempotencyKey: `concurrent-${i}`,
      body: { externalId: `bank-${i}`, accountId, amount: c / 100, date: '2026-11-20', payeeName: `Shop ${i % 4}` },
    }))
    const answers = await Promise.all(sent.map((s) => server.request('POST', '/v1/transactions/upsert', { key, ...s })))
    expect(answers.map((a) => a.status)).toEqual(sent.map(() => 201))

    const spent = cents.reduce((sum, c) => sum + c, 0)
    const after = await server.request('GET', `/v1/accounts/${accountId}`, { key })
    expect(after.json.data.balance).toBe((100_000 - spent) / 100)
    const listed = await server.request('GET', `/v1/transactions?accountId=${accountId}&limit=200`, { key })
    expect(listed.json.data).toHaveLength(40)

    const replays = await Promise.all(sent.map((s) => server.request('POST', '/v1/transactions/upsert', { key, ...s })))
    replays.forEach((replay, i) => {
      expect(replay.status).toBe(201)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.text).toBe((answers[i] as { text: string }).text)
    })
    const unchanged = await server.request('GET', `/v1/accounts/${accountId}`, { key })
    expect(unchanged.json.data.balance).toBe((100_000 - spent) / 100)
  })
})
