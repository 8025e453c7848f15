import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { copyDatabase } from '../db/sqlite.ts'

/**
 * What a restore replaces is kept, not lost: before the first file is replaced, each database
 * about to be replaced is copied into `DATA_DIR/replaced-<UTC time>/` (same relative paths), where
 * it stays until the operator removes it. A readable file is copied by SQLite (`VACUUM INTO`:
 * one consistent file, whatever its -wal holds, never bytes copied behind a connection's back);
 * one that fails `quick_check` (the damage a restore is often for) is moved as it is, with its
 * -wal and -shm, for whoever wants to look at it. The folder has its final name from the start:
 * a restore cut short while filling it has replaced nothing yet, and a file moved there stays in
 * sight rather than in a hidden partial folder.
 */

const stamp = (at: Date) =>
  at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')

const SUFFIXES = ['', '-wal', '-shm']

function intact(path: string): boolean {
  try {
    const db = new Database(path, { readwrite: true, create: false })
    try {
      db.run('PRAGMA busy_timeout = 10000')
      const rows = db.query<{ quick_check: string }, []>('PRAGMA quick_check').all()
      return rows.length === 1 && rows[0]?.quick_check === 'ok'
    } finally {
      db.close(true)
    }
  } catch {
    return false
  }
}

/** The folder's name for a restore at `at`: `replaced-<UTC time>`, with `-2`, `-3` … if one is taken. */
export function replacedFolder(dataDir: string, at: Date): string {
  const base = join(dataDir, `replaced-${stamp(at)}`)
  let dir = base
  for (let n = 2; existsSync(dir); n++) dir = `${base}-${n}`
  return dir
}

/** Keeps the live files at `paths` (relative to `dataDir`) in a new replaced-… folder; null when none exists. */
export function keepReplaced(dataDir: string, paths: string[], at = new Date()): string | null {
  const present = paths.filter((path) => existsSync(join(dataDir, path)))
  if (present.length === 0) return null
  const dir = replacedFolder(dataDir, at)
  for (const path of present) {
    const live = join(dataDir, path)
    const kept = join(dir, path)
    mkdirSync(dirname(kept), { recursive: true, mode: 0o700 })
    if (intact(live)) copyDatabase(live, kept, { readwrite: true })
    else for (const suffix of SUFFIXES) if (existsSync(live + suffix)) renameSync(live + suffix, kept + suffix)
  }
  return dir
}
