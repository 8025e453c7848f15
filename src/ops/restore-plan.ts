import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Manifest, ManifestFile } from './backup.ts'

/**
 * What a restore would replace, told before it does (CONTRACT §18): for each live file, when it
 * was last written and, for an owner, how many of its transactions the backup lacks, so the
 * operator sees the writes a restore would take away. Reading never changes the data folder:
 * files are opened without `create`, and read-write so that SQLite removes the -wal and -shm
 * a read-only connection would leave behind.
 */

export interface Replacement {
  /** Relative to the data folder: `control.db` or `tenants/<ownerId>.db`. */
  path: string
  ownerId: string | null
  name: string | null
  /** Whether the data folder holds this file now; if not, the restore adds it. */
  exists: boolean
  /** The newest write time found in the live file (epoch ms); null when it has none or cannot be read. */
  lastWriteAt: number | null
  /** The live owner's transactions whose ids the backup lacks; null where it cannot tell (control.db, an unreadable file). */
  lostTransactions: number | null
  /** Why the live file could not be read, if it could not (often the damage a restore is for). */
  unreadable: string | null
}

export interface RestorePlan {
  from: string
  backupCreatedAt: number
  /** Whether control.db is restored too (a whole restore). */
  control: boolean
  /** The owners the backup brings back. */
  owners: string[]
  replacing: Replacement[]
  /** Owners of the live control.db the backup does not hold (created since): left as they are. */
  untouched: { ownerId: string; name: string | null }[]
}

function opened<T>(path: string, read: (db: Database) => T): T {
  const db = new Database(path, { readwrite: true, create: false })
  try {
    db.run('PRAGMA busy_timeout = 10000')
    return read(db)
  } finally {
    db.close(true)
  }
}

const tablesOf = (db: Database, schema = 'main') =>
  new Set(
    db
      .query<{ name: string }, []>(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table'`)
      .all()
      .map((row) => row.name),
  )

/** The newest of the given time columns, over the tables the file has (an older file may lack some). */
function newest(db: Database, columns: [table: string, column: string][]): number | null {
  const tables = tablesOf(db)
  const parts = columns.filter(([table]) => tables.has(table)).map(([table, column]) => `SELECT max(${column}) AS at FROM ${table}`)
  if (parts.length === 0) return null
  const row = db.query<{ at: number | bigint | null }, []>(`SELECT max(at) AS at FROM (${parts.join(' UNION ALL ')})`).get()
  return row?.at == null ? null : Number(row.at)
}

const OWNER_WRITES: [string, string][] = [
  ['change_log', 'changed_at'],
  ['applied_requests', 'created_at'],
  ['transactions', 'created_at'],
  ['accounts', 'created_at'],
  ['categories', 'created_at'],
  ['payees', 'created_at'],
  ['profile', 'created_at'],
]
const CONTROL_WRITES: [string, string][] = [
  ['owners', 'created_at'],
  ['api_keys', 'created_at'],
  ['api_keys', 'last_used_at'],
  ['api_keys', 'revoked_at'],
  ['idempotency_records', 'created_at'],
]

function describeFile(dataDir: string, source: string, file: ManifestFile, names: Map<string, string | null>): Replacement {
  const live = join(dataDir, file.path)
  const base = { path: file.path, ownerId: file.ownerId, name: file.ownerId === null ? null : (names.get(file.ownerId) ?? null) }
  if (!existsSync(live)) return { ...base, exists: false, lastWriteAt: null, lostTransactions: file.ownerId === null ? null : 0, unreadable: null }
  try {
    return opened(live, (db) => {
      if (file.ownerId === null) return { ...base, exists: true, lastWriteAt: newest(db, CONTROL_WRITES), lostTransactions: null, unreadable: null }
      db.run('ATTACH DATABASE ? AS backup', [join(source, file.path)])
      const lost =
        tablesOf(db).has('transactions') && tablesOf(db, 'backup').has('transactions')
          ? Number(
              db.query<{ n: number | bigint }, []>('SELECT count(*) AS n FROM main.transactions WHERE id NOT IN (SELECT id FROM backup.transactions)').get()
                ?.n ?? 0,
            )
          : 0
      return { ...base, exists: true, lastWriteAt: newest(db, OWNER_WRITES), lostTransactions: lost, unreadable: null }
    })
  } catch (error) {
    return { ...base, exists: true, lastWriteAt: null, lostTransactions: null, unreadable: error instanceof Error ? error.message : String(error) }
  }
}

/** Owner names by id from a control database, or nothing when it is missing or unreadable. */
function ownerNames(control: string): Map<string, string | null> {
  if (!existsSync(control)) return new Map()
  try {
    return opened(
      control,
      (db) =>
        new Map(
          db
            .query<{ id: string; name: string | null }, []>('SELECT id, name FROM owners')
            .all()
            .map((row) => [row.id, row.name]),
        ),
    )
  } catch {
    return new Map()
  }
}

/** The plan for restoring `manifest` (a verified backup in `source`) into `dataDir`, whole or for one owner. */
export function describeRestore(dataDir: string, source: string, manifest: Manifest, ownerId?: string): RestorePlan {
  const files = ownerId ? manifest.files.filter((file) => file.ownerId === ownerId) : manifest.files
  const live = ownerNames(join(dataDir, 'control.db'))
  const names = new Map([...ownerNames(join(source, 'control.db')), ...[...live].filter(([, name]) => name !== null)])
  const control = files.some((file) => file.ownerId === null)
  const owners = files.flatMap((file) => (file.ownerId === null ? [] : [file.ownerId]))
  return {
    from: source,
    backupCreatedAt: manifest.createdAt,
    control,
    owners,
    replacing: files.map((file) => describeFile(dataDir, source, file, names)),
    untouched: control
      ? [...live]
          .filter(([id]) => !manifest.owners.includes(id))
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([ownerId, name]) => ({ ownerId, name }))
      : [],
  }
}
