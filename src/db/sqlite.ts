import { Database } from 'bun:sqlite'
import { dirname } from 'node:path'
import { makeDatabasePrivate, prepareDir } from './data-dir.ts'
import { isBusy } from './failures.ts'

export interface Migration {
  tag: string
  when: number
  sql: string
}

/**
 * Opens a database file with the pragmas every pfin database needs and brings its schema
 * up to date. `safeIntegers` makes SQLite hand back INTEGERs as bigint, so money is exact.
 */
export function openDatabase(
  path: string,
  options: {
    synchronous: 'FULL' | 'NORMAL'
    migrations: Migration[]
    verify?: boolean
    pragmas?: readonly string[]
    /** The file must already hold a database: a missing or empty one is not made anew. */
    existing?: boolean
  },
): Database {
  prepareDir(dirname(path))
  makeDatabasePrivate(path)
  const db = new Database(path, { readwrite: true, create: !options.existing, strict: true, safeIntegers: true })
  try {
    // Admin commands and the server share these files: wait for a lock rather than fail.
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    if (options.existing) assertNotEmpty(db)
    if (options.verify) assertIntact(db)
    // Space that deletions and purges free can be given back (`PRAGMA incremental_vacuum`): this
    // takes effect in a file made now, and at the next VACUUM of an older one. Set only where it
    // is not yet: setting it writes the header in a commit of its own, even to the same value,
    // which made every open of an owner a commit and an fsync (and its close a checkpoint).
    if (pragmaNumber(db, 'auto_vacuum') !== INCREMENTAL) db.run('PRAGMA auto_vacuum = INCREMENTAL')
    db.run('PRAGMA journal_mode = WAL')
    db.run(`PRAGMA synchronous = ${options.synchronous}`)
    db.run('PRAGMA foreign_keys = ON')
    // A statement that fires triggers (the change feed's) keeps a statement journal to undo
    // itself on error; on disk that is a temporary file per statement, five times the cost.
    db.run('PRAGMA temp_store = MEMORY')
    for (const pragma of options.pragmas ?? []) db.run(`PRAGMA ${pragma}`)
    migrate(db, options.migrations)
  } catch (error) {
    db.close(true)
    throw error
  }
  return db
}

export const BUSY_TIMEOUT_MS = 10_000

/** The file is damaged: SQLite's quick check found problems, or it is not a database at all. */
export class DamagedDatabaseError extends Error {}

/**
 * A file of zero bytes (or one holding no tables) is a valid empty database to SQLite, and would
 * pass `quick_check`: where a database must already exist, it is as damaged as a missing one.
 */
function assertNotEmpty(db: Database): void {
  if (holdsNoDatabase(db)) throw new DamagedDatabaseError('the file holds no database (it is empty)')
}

/** A file with no table at all: what SQLite makes of a zero-byte (emptied) file. */
export function holdsNoDatabase(db: Database): boolean {
  const tables = db.query<{ n: number | bigint }, []>('SELECT count(*) AS n FROM sqlite_master').get()
  return Number(tables?.n ?? 0) === 0
}

/**
 * `PRAGMA quick_check` before anything writes to the file: a damaged database must not take
 * new writes on top of the damage (CONTRACT §6, 503 `storage_unavailable`).
 */
function assertIntact(db: Database): void {
  const rows = db.query<{ quick_check: string }, []>('PRAGMA quick_check').all()
  if (rows.length !== 1 || rows[0]?.quick_check !== 'ok') {
    throw new DamagedDatabaseError(
      `quick_check failed: ${rows
        .slice(0, 3)
        .map((row) => row.quick_check)
        .join('; ')}`,
    )
  }
}

/**
 * Applies pending migrations, recorded in drizzle's own `__drizzle_migrations` table so
 * drizzle-kit sees the same history. Unlike drizzle's migrator it reads the history inside
 * an IMMEDIATE transaction, so a server and an admin command opening the same file at
 * once cannot both apply a migration.
 */
function migrate(db: Database, migrations: Migration[]): void {
  db.run('CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)')
  const latest = db.query<{ at: bigint | number | null }, []>('SELECT max(created_at) AS at FROM "__drizzle_migrations"')
  const record = db.query('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)')
  const pending = () => {
    const at = Number(latest.get()?.at ?? 0)
    return migrations.filter((m) => m.when > at)
  }
  if (pending().length === 0) return
  db.transaction(() => {
    for (const migration of pending()) {
      for (const statement of migration.sql.split('--> statement-breakpoint')) {
        if (statement.trim()) db.run(statement)
      }
      record.run(new Bun.CryptoHasher('sha256').update(migration.sql).digest('hex'), migration.when)
    }
  }).immediate()
}

/**
 * Runs `write` on `db` without waiting for a lock another process holds (an admin command's
 * transaction): false at once when the database is busy, instead of blocking the thread that
 * serves every request for up to the busy timeout. For background writes that can wait for their
 * next round (counters, last-use times, copies of answers); never inside a transaction.
 */
export function tryWithoutWaiting(db: Database, write: () => void): boolean {
  try {
    withoutWaiting(db, write)
    return true
  } catch (error) {
    if (isBusy(error)) return false
    throw error
  }
}

/** Runs `work` with the busy timeout at 0 (another connection's lock refuses at once), then puts the timeout back. */
function withoutWaiting<T>(db: Database, work: () => T): T {
  db.run('PRAGMA busy_timeout = 0')
  try {
    return work()
  } finally {
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  }
}

/**
 * Copies the write-ahead log into the file and truncates the log, without waiting for readers;
 * true when all of it was folded (a reader holding an older snapshot, such as a backup, keeps
 * the rest). On a full disk this is what gives space back: the log holds every version of the
 * pages written since the last checkpoint, the file only the newest, so folding shrinks the
 * pair, and fails harmlessly when the file would have to grow by more than the log frees.
 */
export function foldLog(db: Database): boolean {
  if (db.inTransaction) return false
  return withoutWaiting(db, () => Number(db.query<{ busy: number | bigint }, []>('PRAGMA wal_checkpoint(TRUNCATE)').get()?.busy) === 0)
}

const pragmaNumber = (db: Database, name: string): number => Number(db.query<Record<string, number | bigint>, []>(`PRAGMA ${name}`).get()?.[name] ?? 0)

/** The file's pages: in use (the free ones are reusable), the most it may have, and their size. */
export function pageCounts(db: Database): { used: number; free: number; max: number; pageSize: number } {
  const free = pragmaNumber(db, 'freelist_count')
  return { used: pragmaNumber(db, 'page_count') - free, free, max: pragmaNumber(db, 'max_page_count'), pageSize: pragmaNumber(db, 'page_size') }
}

/**
 * Free pages given back per call: each moves a page in the file, so a call is bounded (8 MiB,
 * a few ms) and the rest waits for the next housekeeping round.
 */
const FREE_PAGES_PER_CALL = 2048
/** A file made before pfin used incremental vacuum is rebuilt once to gain it, if no larger than this. */
const REBUILD_MAX_BYTES = 32 * 1024 * 1024
/** `PRAGMA auto_vacuum`'s value for incremental. */
const INCREMENTAL = 2

/**
 * Gives pages that deletions and purges freed back to the filesystem, a bounded number per
 * call; returns how many. A file from before incremental vacuum is rebuilt (VACUUM) to gain
 * it, only while small enough for that to take a moment: the server waits while it runs.
 */
export function giveBackFreePages(db: Database): number {
  if (db.inTransaction) return 0
  const { used, free, pageSize } = pageCounts(db)
  if (free === 0) return 0
  if (pragmaNumber(db, 'auto_vacuum') === INCREMENTAL) {
    db.run(`PRAGMA incremental_vacuum(${Math.min(free, FREE_PAGES_PER_CALL)})`)
    return free - pragmaNumber(db, 'freelist_count')
  }
  if ((used + free) * pageSize > REBUILD_MAX_BYTES) return 0
  // openDatabase asked for incremental vacuum; VACUUM is what applies it to an existing file.
  db.run('VACUUM')
  return free
}

/**
 * A consistent copy of a database into `target`, made by SQLite itself (`VACUUM INTO`): safe
 * while another connection writes, one file whatever the source's log holds, and never bytes
 * copied behind a connection's back. `readwrite` opens the source so SQLite may recover a log
 * left by a crash (a file no server holds open).
 */
export function copyDatabase(source: string, target: string, options: { readwrite?: boolean } = {}): void {
  const db = options.readwrite ? new Database(source, { readwrite: true, create: false }) : new Database(source, { readonly: true })
  try {
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    db.run('VACUUM INTO ?', [target])
  } finally {
    db.close(true)
  }
  makeDatabasePrivate(target)
}
