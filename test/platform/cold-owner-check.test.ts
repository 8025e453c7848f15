import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { appendFileSync, closeSync, existsSync, openSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { CheckedFiles } from '../../src/db/tenant/checked-files.ts'
import { call, cleanup, ownerWithKey, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * An evicted owner is reopened without `PRAGMA quick_check` (a read of the whole file) only
 * while its file is exactly as this process left it; any change since is checked again, so a
 * file damaged while its owner was evicted is still 503 and takes no writes (CONTRACT §14).
 * A clean shutdown hands what it checked to the next server; a kill hands over nothing.
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

test('CheckedFiles across a restart: what one server saved, the next takes once; the list is gone after, and a bad list is only more checks', () => {
  const dir = tempDir('pfin-checked-')
  const list = join(dir, 'checked-files.json')
  const paths = ['a', 'b'].map((name) => {
    const path = join(dir, `${name}.db`)
    const db = new Database(path, { create: true })
    db.run('CREATE TABLE t (x)')
    db.close()
    return path
  })
  const before = new CheckedFiles()
  for (const path of paths) before.remember(path)
  before.save(list)
  // Between the two servers, one file is written to.
  const other = new Database(paths[1] as string)
  other.run('INSERT INTO t VALUES (1)')
  other.close()

  const after = new CheckedFiles()
  after.takeSaved(list)
  expect(paths.map((path) => after.unchangedSinceChecked(path))).toEqual([true, false])
  expect(existsSync(list)).toBe(false)

  writeFileSync(list, '{"files": [["x", 1], "y"')
  const third = new CheckedFiles()
  third.takeSaved(list)
  expect(paths.map((path) => third.unchangedSinceChecked(path))).toEqual([false, false])
  expect(existsSync(list)).toBe(false)
})

test('a clean restart keeps the last check of a file left as it was closed; a restart after a kill checks every file again', async () => {
  const dataDir = tempDir('pfin-restart-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  const { id: owner, key } = await ownerWithKey(env, 'Restarted')
  const file = join(dataDir, 'tenants', `${owner}.db`)
  const reader = new Database(file, { readonly: true })
  const root = Number(reader.query<{ rootpage: number }, []>("SELECT rootpage FROM sqlite_master WHERE name = 'transaction_tags'").get()?.rootpage)
  reader.close()
  expect(root).toBeGreaterThan(1)
  const accounts = async (url: string) => (await call(url, 'GET', '/v1/accounts', { key })).status

  let server = await startServer(env)
  expect(await accounts(server.url)).toBe(200)
  // Damage a page no account read touches while the server holds the file open: it cannot see
  // that, and its clean shutdown remembers the file as it leaves it. Only a check would find it.
  const fd = openSync(file, 'r+')
  writeSync(fd, Buffer.alloc(16, 0xa5), 0, 16, (root - 1) * 4096)
  closeSync(fd)
  server.proc.kill('SIGTERM')
  expect(await server.proc.exited).toBe(0)
  expect(existsSync(join(dataDir, 'checked-files.json'))).toBe(true)

  // The next server does not read the whole file again: the owner is served.
  server = await startServer(env)
  expect(existsSync(join(dataDir, 'checked-files.json'))).toBe(false)
  expect(await accounts(server.url)).toBe(200)
  server.proc.kill('SIGKILL')
  await server.proc.exited

  // After a kill there is no list: the file is checked at its first open, and the damage found.
  server = await startServer(env)
  expect(await accounts(server.url)).toBe(503)
  server.proc.kill('SIGTERM')
  await server.proc.exited
}, 30_000)
