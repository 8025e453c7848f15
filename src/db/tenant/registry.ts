import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import { migrations } from '../../../drizzle/tenant/manifest.ts'
import { replicatedDataDir } from '../data-dir.ts'
import { isId } from '../ids.ts'
import { isDiskFull } from '../failures.ts'
import { openDatabase } from '../sqlite.ts'
import { CheckedFiles } from './checked-files.ts'
import { DEFAULT_OWNER_LIMITS, DEFAULT_TOMBSTONE_RETENTION_MS, type OwnerLimits, Tenant } from './tenant.ts'

/**
 * An owner's connection checkpoints at SQLite's default (every 1,000 pages, ~4 MiB of log), and
 * a log that a long reader (a backup) let grow past that is cut back to the same size once it is
 * folded in. A larger interval (8,000 pages) made 500-item batches a little faster, but each
 * owner then held up to 32 MiB of log: on a full disk the log could neither grow nor be folded
 * back, and freeing a few MiB did not bring writes back. At 1,000 pages the log is reused from
 * its start after each checkpoint, so a write needs new space only for the rows it adds.
 */
const TENANT_PRAGMAS = ['wal_autocheckpoint = 1000', `journal_size_limit = ${4 * 1024 * 1024}`]

/** SQLite's default page size, which pfin's files keep. */
const PAGE_SIZE = 4096

/**
 * The quota is checked before each write that adds data (`overQuota`); SQLite's own page limit
 * sits a reserve above it (5%, at least 1 MiB), so that an owner at its quota can still delete,
 * and a write that began just under it can finish.
 */
const hardPageLimit = (quotaBytes: number): number => Math.ceil(quotaBytes / PAGE_SIZE) + Math.max(256, Math.ceil(quotaBytes / PAGE_SIZE / 20))

/** An owner's database cannot be used now (damaged, unreadable, no descriptors left); other owners are unaffected. */
export class TenantUnavailableError extends Error {
  constructor(
    readonly ownerId: string,
    readonly path: string,
    readonly reason: string,
  ) {
    super(`the database of owner ${ownerId} (${path}) is unavailable: ${reason}`)
  }
}

/**
 * Opens tenant files on demand and keeps at most `capacity` open, closing the least
 * recently used. Paths are built only from ids this server generated, and checked to
 * stay inside the tenants folder.
 */
export class TenantRegistry {
  private readonly open = new Map<string, Tenant>()
  private readonly checked = new CheckedFiles()
  /** Where a clean shutdown leaves `checked` for the next server (`keepChecksAcrossRestarts`). */
  private checksList: string | undefined
  readonly dir: string
  private readonly pragmas: readonly string[]

  constructor(
    dataDir: string,
    readonly capacity: number,
    private readonly onOpen: (tenant: Tenant) => void = () => {},
    private readonly tombstoneRetentionMs = DEFAULT_TOMBSTONE_RETENTION_MS,
    readonly limits: OwnerLimits = DEFAULT_OWNER_LIMITS,
    /**
     * False when another process checkpoints the files (Litestream, CONTRACT §31): pfin then
     * never checkpoints, so two checkpointers never meet on one file.
     */
    private readonly checkpoints = !replicatedDataDir(dataDir),
  ) {
    this.dir = resolve(dataDir, 'tenants')
    const own = checkpoints ? TENANT_PRAGMAS : ['wal_autocheckpoint = 0', TENANT_PRAGMAS[1] as string]
    this.pragmas = [...own, `max_page_count = ${hardPageLimit(limits.quotaBytes)}`]
  }

  pathFor(ownerId: string): string {
    if (!isId('own', ownerId)) throw new Error('refusing a tenant path for a malformed owner id')
    const path = resolve(join(this.dir, `${ownerId}.db`))
    if (!path.startsWith(this.dir + sep)) throw new Error('tenant path escapes the tenants folder')
    return path
  }

  exists(ownerId: string): boolean {
    return existsSync(this.pathFor(ownerId))
  }

  /**
   * The owner's database, opened (and kept) on first use. The file must exist: every owner's
   * file is made with the owner (`create`), so a missing or emptied one is damage (503 for
   * that owner), never an empty ledger made in its place.
   */
  get(ownerId: string): Tenant {
    return this.opened(ownerId, true)
  }

  /** The owner's database if it is open now; never opens one. */
  peek(ownerId: string): Tenant | undefined {
    return this.open.get(ownerId)
  }

  /** Makes a new owner's file (and opens it, like `get`). */
  create(ownerId: string): Tenant {
    return this.opened(ownerId, false)
  }

  private opened(ownerId: string, existing: boolean): Tenant {
    const cached = this.open.get(ownerId)
    if (cached) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.open.delete(ownerId)
      this.open.set(ownerId, cached)
      cached.touch()
      return cached
    }
    let file: Database
    try {
      file = this.openFile(ownerId, existing)
    } catch (error) {
      // Out of descriptors (the process limit is below what the cache may hold): close the
      // least recently used half and try once more, rather than fail until a restart.
      if (!(error instanceof TenantUnavailableError) || this.open.size === 0) throw error
      this.shrinkTo(Math.floor(this.open.size / 2))
      file = this.openFile(ownerId, existing)
    }
    const tenant = new Tenant(ownerId, file, this.tombstoneRetentionMs, this.limits)
    tenant.checkpoints = this.checkpoints
    this.open.set(ownerId, tenant)
    this.onOpen(tenant)
    this.shrinkTo(this.capacity)
    return tenant
  }

  /** Closes the least recently used owners; their files were fine, so reopening them skips the check while they stay as left. */
  private shrinkTo(size: number): void {
    while (this.open.size > size) {
      const [oldestId] = this.open.keys()
      this.close(oldestId as string, true)
    }
  }

  /**
   * Opens, checks (`quick_check`) and migrates the file; the check is skipped for a file this
   * process checked and closed itself and that nothing has changed since (`CheckedFiles`). A
   * failure is not cached: the next request tries again, so the owner recovers once the cause
   * (descriptors, a restored file) is gone.
   */
  private openFile(ownerId: string, existing: boolean) {
    const path = this.pathFor(ownerId)
    try {
      if (existing && !existsSync(path)) throw new Error('the file is missing')
      const verify = !this.checked.unchangedSinceChecked(path)
      this.checked.forget(path)
      return openDatabase(path, { synchronous: 'FULL', migrations, verify, pragmas: this.pragmas, existing })
    } catch (error) {
      if (isDiskFull(error)) throw error
      throw new TenantUnavailableError(ownerId, path, error instanceof Error ? error.message : String(error))
    }
  }

  /** Closes an owner's database after a storage error, so the next request opens and checks it afresh. */
  evict(ownerId: string): void {
    this.close(ownerId, false)
  }

  private close(ownerId: string, clean: boolean): void {
    const tenant = this.open.get(ownerId)
    if (!tenant) return
    this.open.delete(ownerId)
    const path = this.pathFor(ownerId)
    try {
      tenant.close()
      if (clean) this.checked.remember(path)
    } catch {
      // A damaged connection may fail to close cleanly; it is dropped either way, and checked when next opened.
      this.checked.forget(path)
    }
  }

  /**
   * Rests every open owner no request has used for `idleMs` (once per idle spell). Returns the
   * owners whose rest failed (a full disk, a damaged file), with the error; they stay open and
   * usable, and are not tried again (nor logged again) until a request has used them.
   */
  restIdle(idleMs: number, now = Date.now()): { ownerId: string; error: unknown }[] {
    const failed: { ownerId: string; error: unknown }[] = []
    for (const tenant of this.open.values()) {
      if (tenant.resting || now - tenant.lastUsed < idleMs) continue
      try {
        tenant.rest()
      } catch (error) {
        tenant.resting = true
        failed.push({ ownerId: tenant.ownerId, error })
      }
    }
    return failed
  }

  /**
   * After a write failed for space: folds every open owner's log back into its file (see
   * `Tenant.foldLog`), which returns what the logs held beyond the newest pages. An owner in
   * the middle of a transaction, or whose fold fails, is skipped.
   */
  foldAllLogs(): void {
    for (const tenant of this.open.values()) {
      try {
        tenant.foldLog()
      } catch {
        // Still full for this one: it folds at its next idle rest.
      }
    }
  }

  openTenants(): Tenant[] {
    return [...this.open.values()]
  }

  get size(): number {
    return this.open.size
  }

  /**
   * Closes every owner, each remembered as checked when it closes cleanly; with
   * `keepChecksAcrossRestarts`, the list goes to the next server on this data folder.
   */
  closeAll(): void {
    for (const ownerId of [...this.open.keys()]) this.close(ownerId, true)
    if (this.checksList) this.checked.save(this.checksList)
  }

  /**
   * For the server (one per data folder, `DataDirLock`): files the last server checked and closed
   * in a clean shutdown, and unchanged since, are not checked again at their first open (a
   * `quick_check` reads the whole file, about 2 ms per MiB, on the thread serving everyone).
   */
  keepChecksAcrossRestarts(listPath: string): void {
    this.checksList = listPath
    this.checked.takeSaved(listPath)
  }
}
