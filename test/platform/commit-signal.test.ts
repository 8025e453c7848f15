import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { CommitSignal } from '../../src/db/commit-signal.ts'
import { tempDir } from '../support/harness.ts'

/** CommitSignal must see every commit, from this connection or another process, and nothing else. */

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function walDatabase(): { path: string; db: Database } {
  const dir = tempDir('pfin-signal-')
  dirs.push(dir)
  const path = join(dir, 'x.db')
  const db = new Database(path, { create: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('CREATE TABLE t (v INTEGER)')
  return { path, db }
}

describe('CommitSignal', () => {
  test('reads alone do not change it; every commit on this connection does', () => {
    const { path, db } = walDatabase()
    const signal = new CommitSignal(path)
    expect(signal.watching).toBe(true)
    const start = signal.current()
    db.query('SELECT count(*) FROM t').get()
    expect(signal.current()).toBe(start)
    let last = start
    for (let i = 0; i < 5; i++) {
      db.run('INSERT INTO t VALUES (?)', [i])
      const now = signal.current()
      expect(now).not.toBe(last)
      expect(signal.current()).toBe(now)
      last = now
    }
    signal.close()
    db.close()
  })

  test('a commit by another process is seen at once, including after a checkpoint resets the WAL', async () => {
    const { path, db } = walDatabase()
    const signal = new CommitSignal(path)
    let last = signal.current()
    const commitElsewhere = async (sql: string) => {
      const code = await Bun.spawn([process.execPath, '-e', `const { Database } = require('bun:sqlite'); const d = new Database(${JSON.stringify(path)}); d.run(${JSON.stringify(sql)}); d.close()`]).exited
      expect(code).toBe(0)
    }
    for (const sql of ['INSERT INTO t VALUES (1)', 'PRAGMA wal_checkpoint(TRUNCATE)', 'INSERT INTO t VALUES (2)', 'UPDATE t SET v = v + 1']) {
      await commitElsewhere(sql)
      if (sql.startsWith('PRAGMA')) {
        last = signal.current()
        continue
      }
      const now = signal.current()
      expect(now).not.toBe(last)
      last = now
    }
    expect(signal.current()).toBe(last)
    signal.close()
    db.close()
  })

  test('without shared memory to watch it reports a possible change on every call', () => {
    const dir = tempDir('pfin-signal-')
    dirs.push(dir)
    const signal = new CommitSignal(join(dir, 'missing.db'))
    expect(signal.watching).toBe(false)
    expect(signal.current()).not.toBe(signal.current())
  })

  test('after close it no longer reads the mapping', () => {
    const { path, db } = walDatabase()
    const signal = new CommitSignal(path)
    signal.close()
    expect(signal.watching).toBe(false)
    expect(signal.current()).not.toBe(signal.current())
    db.close()
  })
})
