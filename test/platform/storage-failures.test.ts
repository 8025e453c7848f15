import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, writeFileSync } from 'node:fs'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * CONTRACT §6, §14 and §19 when a database cannot grow and when a file is damaged. A file that
 * cannot grow is made without root by `PRAGMA max_page_count` on the server's own connection,
 * which is how the owner's quota works: SQLite fails as it does on ENOSPC (SQLITE_FULL, the
 * statement rolled back). A really full filesystem is test/reliability/full-disk.test.ts.
 */

let server: TestServer
const logs: string[] = []
beforeAll(async () => {
  server = await startUnthrottledServer()
  server.platform.log = (message) => logs.push(message)
})
afterAll(() => server.stop())

const account = (name: string, balance = 100) => ({ name, type: 'bank', balance, currency: 'EUR' })

/** Caps a connection at its current size: the next page it needs is refused. */
function fillUp(db: Database): () => void {
  const pages = Number(db.query<{ page_count: number | bigint }, []>('PRAGMA page_count').get()?.page_count)
  db.run(`PRAGMA max_page_count = ${pages}`)
  return () => db.run('PRAGMA max_page_count = 1073741823')
}

async function accountsOf(key: string): Promise<{ id: string; name: string; balance: number }[]> {
  const res = await server.request('GET', '/v1/accounts?limit=200', { key })
  expect(res.status).toBe(200)
  return res.json.data
}

describe('a database that cannot grow', () => {
  test('a write refused for space is 507 insufficient_storage, changes nothing, and succeeds with the same key once space returns', async () => {
    const owner = await server.owner()
    const other = await server.owner()
    const acct = (await server.request('POST', '/v1/accounts', { key: owner.key, body: account('Main') })).json.data
    const tenant = server.platform.tenants.get(owner.id).sqlite
    const release = fillUp(tenant)
    let refused = 0
    const keys: string[] = []
    try {
      // Enough rows to need a new page: every one is either written whole or refused whole.
      for (let i = 0; i < 60; i++) {
        const key = `fill-${i}`
        const res = await server.request('POST', '/v1/transactions', {
          key: owner.key,
          idempotencyKey: key,
          body: { accountId: acct.id, amount: 1.25, date: '2026-11-20', note: 'x'.repeat(1500), payeeName: `Shop ${i}` },
        })
        if (res.status === 507) {
          expectProblem(res, 507, 'insufficient_storage')
          expect(res.json.detail).toContain("owner's storage quota")
          refused++
          keys.push(key)
        } else {
          expect(res.status).toBe(201)
        }
      }
      expect(refused).toBeGreaterThan(0)
      // Other owners are not affected.
      expect((await server.request('POST', '/v1/accounts', { key: other.key, body: account('Elsewhere') })).status).toBe(201)
    } finally {
      release()
    }
    // Nothing of a refused write is there: the balance moved only for the written ones.
    const written = 60 - refused
    const [main] = await accountsOf(owner.key)
    expect(main?.balance).toBe(100 - 1.25 * written)
    const listed = await server.request('GET', '/v1/transactions?limit=200', { key: owner.key })
    expect(listed.json.data).toHaveLength(written)
    // Space is back: the same Idempotency-Key runs the write now (a 507 is not stored).
    const retry = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      idempotencyKey: keys[0],
      body: { accountId: acct.id, amount: 1.25, date: '2026-11-20', note: 'x'.repeat(1500), payeeName: `Shop ${keys[0]?.slice(5)}` },
    })
    expect(retry.status).toBe(201)
    // The owner's file, not the filesystem, was out of room: the operator is told it is the quota.
    expect(logs.some((line) => line.includes(`owner ${owner.id} reached its storage quota`))).toBe(true)
  }, 30_000)

  test('a write whose owner transaction committed is answered as committed when the control copy fails, and a retry replays it', async () => {
    const owner = await server.owner()
    const acct = (await server.request('POST', '/v1/accounts', { key: owner.key, body: account('Main', 0) })).json.data
    const release = fillUp(server.platform.control.sqlite)
    const answers: { key: string; status: number; text: string }[] = []
    logs.length = 0
    try {
      for (let i = 0; i < 40; i++) {
        const key = `committed-${i}`
        const res = await server.request('POST', '/v1/transactions', {
          key: owner.key,
          idempotencyKey: key,
          body: { accountId: acct.id, amount: 2, date: '2026-11-21', note: 'y'.repeat(1500) },
        })
        // The owner's file had room: every write committed and must be told so.
        expect(res.status).toBe(201)
        answers.push({ key, status: res.status, text: res.text })
      }
      expect(logs.some((line) => line.includes('not copied to control.db'))).toBe(true)
      // Retries while the control database is still full replay from the owner's file.
      for (const answer of answers.slice(-5)) {
        const again = await server.request('POST', '/v1/transactions', {
          key: owner.key,
          idempotencyKey: answer.key,
          body: { accountId: acct.id, amount: 2, date: '2026-11-21', note: 'y'.repeat(1500) },
        })
        expect(again.status).toBe(201)
        expect(again.headers.get('idempotent-replayed')).toBe('true')
        expect(again.text).toBe(answer.text)
      }
    } finally {
      release()
    }
    const [main] = await accountsOf(owner.key)
    expect(main?.balance).toBe(-80)
    const listed = await server.request('GET', '/v1/transactions?limit=200', { key: owner.key })
    expect(listed.json.data).toHaveLength(40)
  }, 30_000)
})

describe('a damaged owner file', () => {
  test('is 503 storage_unavailable for that owner only, takes no writes, is named in the log, and recovers when the file is restored', async () => {
    const victim = await server.owner()
    const bystander = await server.owner()
    for (let i = 0; i < 30; i++) {
      expect((await server.request('POST', '/v1/accounts', { key: victim.key, body: account(`Account ${i}`) })).status).toBe(201)
    }
    const path = server.platform.tenants.pathFor(victim.id)
    // Close the server's handle (as the LRU would) and keep a good copy to restore later.
    server.platform.tenants.evict(victim.id)
    const good = `${path}.good`
    const checkpoint = new Database(path)
    checkpoint.run('PRAGMA wal_checkpoint(TRUNCATE)')
    checkpoint.close()
    copyFileSync(path, good)
    // Damage the b-tree pages past the header (what a bad disk or a careless copy does).
    const bytes = await Bun.file(path).bytes()
    for (let offset = 4096 * 3; offset < bytes.length; offset += 97) bytes[offset] = (bytes[offset] as number) ^ 0x5a
    writeFileSync(path, bytes)
    logs.length = 0

    expectProblem(await server.request('GET', '/v1/accounts', { key: victim.key }), 503, 'storage_unavailable')
    expectProblem(await server.request('POST', '/v1/accounts', { key: victim.key, body: account('More') }), 503, 'storage_unavailable')
    expect(logs.some((line) => line.includes(path))).toBe(true)
    expect((await server.request('GET', '/v1/accounts', { key: bystander.key })).status).toBe(200)
    expect((await server.request('POST', '/v1/accounts', { key: bystander.key, body: account('Fine') })).status).toBe(201)
    // Nothing was written into the damaged file.
    expect(Buffer.compare(await Bun.file(path).bytes(), bytes)).toBe(0)

    copyFileSync(good, path)
    const res = await server.request('GET', '/v1/accounts?limit=200', { key: victim.key })
    expect(res.status).toBe(200)
    expect(res.json.data).toHaveLength(30)
  }, 30_000)

  test('a file that is not a database at all is 503, not 500', async () => {
    const victim = await server.owner()
    const path = server.platform.tenants.pathFor(victim.id)
    server.platform.tenants.evict(victim.id)
    writeFileSync(path, 'this is not a database, it is a shopping list\n'.repeat(200))
    for (const suffix of ['-wal', '-shm']) writeFileSync(`${path}${suffix}`, '')
    expectProblem(await server.request('GET', '/v1/accounts', { key: victim.key }), 503, 'storage_unavailable')
    expectProblem(await server.request('POST', '/v1/accounts', { key: victim.key, body: account('More') }), 503, 'storage_unavailable')
  })
})
