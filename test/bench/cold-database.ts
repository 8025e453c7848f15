import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * What the cold-start servers without pfin's code (cold-baseline.ts, cold-floor.ts) do with the
 * disk before they listen: one SQLite file in DATA_DIR, opened with the pragmas a pfin database
 * gets (WAL, synchronous=FULL, foreign keys), and one table.
 */
export function openColdDatabase(): Database {
  const dataDir = process.env.DATA_DIR ?? '.'
  mkdirSync(dataDir, { recursive: true })
  const db = new Database(join(dataDir, 'control.db'), { create: true, strict: true })
  db.run('PRAGMA busy_timeout = 5000')
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = FULL')
  db.run('PRAGMA foreign_keys = ON')
  db.run('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
  return db
}
