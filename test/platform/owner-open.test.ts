import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { openDatabase } from '../../src/db/sqlite.ts'
import { call, cleanup, ownerWithKey, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * Opening an owner's file only reads it: no commit, no fsync (CONTRACT §14). `PRAGMA auto_vacuum =
 * INCREMENTAL` writes the database header in a transaction of its own even when the file is set so
 * already; run on every open, it made each open of an owner (the first after a start, and every
 * reopen after the cache evicted it) a commit with its fsync, and the close a checkpoint with more:
 * about 17 ms of a 20 ms reopen on this machine, and a change to the file for Litestream to ship.
 */

afterAll(cleanup)

const walBytes = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0

test('opening a file whose schema is current writes nothing to its log', () => {
  const path = join(tempDir('pfin-open-'), 'owner.db')
  openDatabase(path, { synchronous: 'FULL', migrations }).close()
  const db = openDatabase(path, { synchronous: 'FULL', migrations, verify: true, existing: true })
  try {
    // Pins: the open committed nothing (before the fix the log held the header page: 4,152 bytes).
    expect(walBytes(path)).toBe(0)
    expect(Number(db.query<{ auto_vacuum: bigint }, []>('PRAGMA auto_vacuum').get()?.auto_vacuum)).toBe(2)
  } finally {
    db.close()
  }
})

test('a file made before incremental vacuum is still switched to it at its next VACUUM', () => {
  const path = join(tempDir('pfin-open-'), 'old.db')
  const old = new Database(path, { create: true })
  old.run('PRAGMA journal_mode = WAL')
  old.run('CREATE TABLE kept (x)')
  old.close()
  const db = openDatabase(path, { synchronous: 'FULL', migrations })
  const mode = () => Number(db.query<{ auto_vacuum: bigint }, []>('PRAGMA auto_vacuum').get()?.auto_vacuum)
  try {
    expect(mode()).toBe(0)
    db.run('VACUUM')
    expect(mode()).toBe(2)
  } finally {
    db.close()
  }
})

test('reading an evicted owner again leaves its file as it was: reopening it writes nothing', async () => {
  const dataDir = tempDir('pfin-open-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off', TENANT_CACHE_SIZE: '1' })
  const { id: reader, key: readerKey } = await ownerWithKey(env, 'Reader')
  const { key: otherKey } = await ownerWithKey(env, 'Other')
  const file = join(dataDir, 'tenants', `${reader}.db`)
  const server = await startServer(env)
  try {
    const read = async (key: string) => expect((await call(server.url, 'GET', '/v1/transactions?limit=50', { key })).status).toBe(200)
    // The first open after a start, then evicted by the other owner: from here on the file is at rest.
    await read(readerKey)
    await read(otherKey)
    const before = statSync(file, { bigint: true })
    for (let round = 0; round < 3; round++) {
      await read(readerKey) // reopened
      await read(otherKey) // and closed again
    }
    const after = statSync(file, { bigint: true })
    // Pins: a read-only reopen and close leave the file untouched (before the fix each checkpointed a header write).
    expect(after.mtimeNs).toBe(before.mtimeNs)
    expect(after.size).toBe(before.size)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
  // Four admin commands and a server start: slow on a busy machine.
}, 30_000)
