import type { Database, Statement } from 'bun:sqlite'
import { lt } from 'drizzle-orm'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import { foldLog, giveBackFreePages, pageCounts } from '../sqlite.ts'
import * as schema from './schema.ts'

/** No relational schema: pfin uses no `db.query.*`, and building one costs ~0.15 ms at every owner's first request. */
export type TenantDrizzle = BunSQLiteDatabase & { $client: Database }

/** How long deleted transactions' tombstones stay in the change feed, unless configured. */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 400 * 86_400_000

/** What one owner may hold (CONTRACT §19): the file's size, and the counts that a loop of requests could blow up. */
export interface OwnerLimits {
  quotaBytes: number
  accounts: number
  categories: number
  payees: number
  tags: number
  rules: number
}

export const DEFAULT_OWNER_LIMITS: OwnerLimits = { quotaBytes: 1024 * 1024 * 1024, accounts: 1_000, categories: 1_000, payees: 20_000, tags: 5_000, rules: 200 }

/** SQLite's default page cache (2 MiB), and an importing owner's until it goes idle (8 MiB). */
const PAGE_CACHE = { usual: -2000, importing: -8192 }

/** One owner's open database, with the prepared statements built for it. */
export class Tenant {
  readonly db: TenantDrizzle
  private readonly memo = new Map<object, unknown>()
  /** `unchanged`'s values, with the file's state they were read in. */
  private readonly derived = new Map<object, { value: unknown; version: number | bigint; writes: number }>()
  /** Bumped as each write transaction of this connection starts and ends. */
  private writes = 0
  private dataVersion?: Statement<{ data_version: number | bigint }, []>
  private isClosed = false
  /** When a request last used this owner (ms since the epoch), and whether it has rested since. */
  lastUsed = Date.now()
  resting = false
  /**
   * Who the write under way acts for (CONTRACT §30 `createdBy`/`updatedBy`): set by each request's
   * handler input as it opens the file (handlers run synchronously, one at a time); the owner
   * itself for anything else (the CLI's import).
   */
  actor: string
  private cacheWidened = false
  private quotaPages?: number
  private pagesInUse?: Statement<{ n: number | bigint }, []>

  constructor(
    readonly ownerId: string,
    readonly sqlite: Database,
    /** How long deleted transactions' tombstones stay in the change feed. */
    readonly tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS,
    readonly limits: OwnerLimits = DEFAULT_OWNER_LIMITS,
  ) {
    this.db = drizzle({ client: sqlite })
    this.actor = ownerId
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction: the write lock is taken up front, so a
   * read-then-write never fails half way on a busy file. `fn` must be synchronous.
   */
  write<T>(fn: () => T): T {
    // Nested calls join the open transaction: any error aborts the whole write anyway.
    if (this.sqlite.inTransaction) return fn()
    // Counted before and after: a value derived inside the write is not kept past it.
    this.writes++
    try {
      return this.sqlite.transaction(fn).immediate()
    } finally {
      this.writes++
    }
  }

  /** Runs `fn` in a savepoint of the open write transaction: an error undoes `fn`'s work alone. */
  savepoint<T>(fn: () => T): T {
    // bun:sqlite makes a transaction started inside another a SAVEPOINT.
    return this.sqlite.transaction(fn)()
  }

  /** A consistent snapshot for multi-query reads (the agent context). */
  read<T>(fn: () => T): T {
    return this.sqlite.transaction(fn).deferred()
  }

  /**
   * A value read from the file (`load`), kept while the file is unchanged: until this
   * connection starts a write, or another connection (an admin command) commits, which
   * `PRAGMA data_version` tells. Call it inside `read`: the pragma starts the snapshot, so the
   * value and every other query of that read see the same file. Whatever `load` reads must be
   * changed through `write` only.
   */
  unchanged<T>(load: (tenant: Tenant) => T): T {
    this.dataVersion ??= this.sqlite.prepare<{ data_version: number | bigint }, []>('PRAGMA data_version')
    const version = this.dataVersion.get()?.data_version ?? 0
    const kept = this.derived.get(load)
    if (kept && kept.version === version && kept.writes === this.writes) return kept.value as T
    const value = load(this)
    this.derived.set(load, { value, version, writes: this.writes })
    return value
  }

  /** Per-file prepared statements: `build` runs once per open handle. */
  prepared<T>(build: (db: TenantDrizzle) => T): T {
    let value = this.memo.get(build) as T | undefined
    if (value === undefined) {
      value = build(this.db)
      this.memo.set(build, value)
    }
    return value
  }

  /** Marks the owner as in use: it is not idle, and will rest again once it is. */
  touch(now = Date.now()): void {
    this.lastUsed = now
    this.resting = false
  }

  /**
   * A batch import reads and dirties leaves all over the date-ordered indexes; in SQLite's 2 MiB
   * cache the next batch into a file of a few thousand transactions re-reads most of them. The
   * importing owner keeps an 8 MiB cache until it goes idle; everyone else keeps the default.
   */
  widenCacheForImport(): void {
    if (this.cacheWidened) return
    this.sqlite.run(`PRAGMA cache_size = ${PAGE_CACHE.importing}`)
    this.cacheWidened = true
  }

  /**
   * For an owner gone idle: folds the write-ahead log into the file (and empties the log) and
   * gives the page cache back. Never waits: while a reader (a backup) holds an older snapshot,
   * the checkpoint copies what it can, and the owner is not yet resting, so the next round
   * tries again.
   */
  rest(): void {
    if (this.sqlite.inTransaction) return
    const folded = this.foldLog()
    if (this.cacheWidened) this.sqlite.run(`PRAGMA cache_size = ${PAGE_CACHE.usual}`)
    this.cacheWidened = false
    this.sqlite.run('PRAGMA shrink_memory')
    this.resting = folded
  }

  /** False while Litestream checkpoints this file (CONTRACT §31): then pfin never does. */
  checkpoints = true

  /** See `foldLog` in sqlite.ts: on a full disk, this is what gives space back. */
  foldLog(): boolean {
    if (!this.checkpoints) return true
    return foldLog(this.sqlite)
  }

  /** Bytes the file may still grow by before SQLite refuses a write (the quota and its reserve). */
  quotaHeadroomBytes(): number {
    const size = pageCounts(this.sqlite)
    return Math.max(0, size.max - size.used) * size.pageSize
  }

  /**
   * The owner's data fills its quota (CONTRACT §19): writes that add data are refused, deletions
   * still run. Asked before every write, so it is one prepared query (pages in use), against the
   * quota in pages worked out once per open file.
   */
  overQuota(): boolean {
    this.quotaPages ??= Math.ceil(this.limits.quotaBytes / pageCounts(this.sqlite).pageSize)
    this.pagesInUse ??= this.sqlite.prepare<{ n: number | bigint }, []>(
      'SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count()) AS n',
    )
    return Number(this.pagesInUse.get()?.n ?? 0) >= this.quotaPages
  }

  /** See `giveBackFreePages` in sqlite.ts. */
  giveBackFreePages(): number {
    return giveBackFreePages(this.sqlite)
  }

  purgeAppliedRequests(olderThan: number): void {
    this.db.delete(schema.appliedRequests).where(lt(schema.appliedRequests.createdAt, olderThan)).run()
  }

  /**
   * Closes the connection at once: `close(true)` finalizes every prepared statement first.
   * Without it SQLite keeps the connection, and its three file descriptors, alive as a zombie
   * until the garbage collector happens to free the statements.
   */
  close(): void {
    this.isClosed = true
    this.memo.clear()
    this.derived.clear()
    this.dataVersion = undefined
    this.pagesInUse = undefined
    this.sqlite.close(true)
  }

  get closed(): boolean {
    return this.isClosed
  }
}
