import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { appendFileSync, closeSync, openSync, statSync, utimesSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { CheckedFiles } from '../../src/db/tenant/checked-files.ts'
import { call, cleanup, ownerWithKey, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * An evicted owner is reopened without `PRAGMA quick_check` (a read of the whole file) only
 * while its file is exactly as this process left it; any change since is checked again, so a
 * file damaged while its owner was evicted is still 503 and takes no writes (CONTRACT §14).
 */

afterAll(cleanup)

test('CheckedFiles: a file is unchanged only while its inode, size and times are as they were after the close', () => {
  const dir = tempDir('pfin-checked-')
  const path = join(dir, 'owner.db')
  const db = new Database(path, { create: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('CREATE TABLE t (x)')
  db.run('INSERT INTO t VALUES (1)')
  db.close()

  const checked = new CheckedFiles()
  expect(checked.unchangedSinceChecked(path)).toBe(false) // never checked
  checked.remember(path)
  expect(checked.unchangedSinceChecked(path)).toBe(true)

  // A write through SQLite (what an admin command or a restore does) changes the file.
  const other = new Database(path)
  other.run('INSERT INTO t VALUES (2)')
  other.close()
  expect(checked.unchangedSinceChecked(path)).toBe(false)

  // Bytes changed behind SQLite, then the modification time set back: the status-change time still moved.
  checked.remember(path)
  const before = statSync(path)
  const fd = openSync(path, 'r+')
  writeSync(fd, Buffer.from('damage'), 0, 6, 2000)
  closeSync(fd)
  utimesSync(path, before.atime, before.mtime)
  expect(checked.unchangedSinceChecked(path)).toBe(false)

  // A write-ahead log appearing beside an unchanged file is a change too.
  const fresh = join(dir, 'fresh.db')
  const f = new Database(fresh, { create: true })
  f.run('CREATE TABLE t (x)')
  f.close()
  checked.remember(fresh)
  appendFileSync(`${fresh}-wal`, '')
  expect(checked.unchangedSinceChecked(fresh)).toBe(false)

  checked.remember(fresh)
  checked.forget(fresh)
  expect(checked.unchangedSinceChecked(fresh)).toBe(false)
})

test('CheckedFiles keeps at most its capacity, dropping the oldest', () => {
  const dir = tempDir('pfin-checked-')
  const checked = new CheckedFiles(2)
  const paths = ['a', 'b', 'c'].map((name) => {
    const path = join(dir, `${name}.db`)
    new Database(path, { create: true }).close()
    checked.remember(path)
    return path
  })
  expect(paths.map((p) => checked.unchangedSinceChecked(p))).toEqual([false, true, true])
})

test('an owner file damaged while its owner was evicted is checked on reopen: 503 storage_unavailable, no write taken', async () => {
  const dataDir = tempDir('pfin-cold-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off', TENANT_CACHE_SIZE: '1' })
  const { id: damaged, key: damagedKey } = await ownerWithKey(env, 'Damaged')
  const { key: otherKey } = await ownerWithKey(env, 'Other')
  const server = await startServer(env)
  try {
    const write = (key: string) =>
      call(server.url, 'POST', '/v1/accounts', {
        key,
        body: JSON.stringify({ name: 'Main', type: 'bank', balance: 100, currency: 'EUR' }),
        idempotencyKey: crypto.randomUUID(),
      })
    expect((await write(damagedKey)).status).toBe(201)
    // A page no account read or write touches: the root of the (empty) tag assignments table.
    // Only a whole-file check finds damage there, so the answer below shows the check ran.
    const file = join(dataDir, 'tenants', `${damaged}.db`)
    const reader = new Database(file, { readonly: true })
    const root = Number(reader.query<{ rootpage: number }, []>("SELECT rootpage FROM sqlite_master WHERE name = 'transaction_tags'").get()?.rootpage)
    reader.close()
    expect(root).toBeGreaterThan(1)

    // The other owner takes the only cache slot: the first is closed cleanly (and remembered as checked).
    expect((await call(server.url, 'GET', '/v1/accounts', { key: otherKey })).status).toBe(200)
    // Unchanged since: reopening it serves it.
    expect((await call(server.url, 'GET', '/v1/accounts', { key: damagedKey })).status).toBe(200)
    expect((await call(server.url, 'GET', '/v1/accounts', { key: otherKey })).status).toBe(200)

    // Damage that page's header while the owner is evicted.
    const fd = openSync(file, 'r+')
    writeSync(fd, Buffer.alloc(16, 0xa5), 0, 16, (root - 1) * 4096)
    closeSync(fd)

    const read = await call(server.url, 'GET', '/v1/accounts', { key: damagedKey })
    expect(read.status).toBe(503)
    expect(JSON.parse(read.text).code).toBe('storage_unavailable')
    expect((await write(damagedKey)).status).toBe(503)
    // Other owners are served as before.
    expect((await call(server.url, 'GET', '/v1/accounts', { key: otherKey })).status).toBe(200)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
  // Four admin commands and a server start: slow on a busy machine.
}, 30_000)
