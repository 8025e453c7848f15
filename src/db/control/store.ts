import type { Database } from 'bun:sqlite'
import { and, asc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import { join } from 'node:path'
import { migrations } from '../../../drizzle/control/manifest.ts'
import { STORED_RESPONSE_FIELDS } from '../columns.ts'
import { ExternalCommits } from '../external-commits.ts'
import { fromExcluded, placeholders } from '../statements.ts'
import { replicatedDataDir } from '../data-dir.ts'
import { foldLog, openDatabase } from '../sqlite.ts'
import { GrantStore } from './grant-store.ts'
import { OAuthStore } from './oauth-store.ts'
import { apiKeys, idempotencyRecords, owners, rateLimitCounters } from './schema.ts'

export type Owner = typeof owners.$inferSelect
export type ApiKeyRow = typeof apiKeys.$inferSelect
export type StoredResponse = Omit<typeof idempotencyRecords.$inferSelect, 'ownerId' | 'key'>
export type RateLimitRow = typeof rateLimitCounters.$inferSelect

/** The key and its owner, as authentication needs them on every request. */
export type KeyWithOwner = { key: ApiKeyRow; owner: Owner }

/**
 * control.db's page cache: 512 KiB instead of SQLite's 2 MiB. Every request reads a key that is
 * held in memory after its first check, and every write looks up and stores one idempotency record
 * by its key; a page that falls out of the cache is read again from the operating system's page
 * cache, not the disk. Measured under the rss benchmark's upsert load (docs/performance.md
 * "Memory"): 1.7 MiB less resident, the same CPU per write.
 */
const CONTROL_PRAGMAS = ['cache_size = -512']

/** `DATA_DIR/control.db`: owners, API keys, idempotency records and rate-limit counters. */
export class ControlStore {
  readonly sqlite: Database
  readonly db: BunSQLiteDatabase
  /** Changes when another process has committed here (a revoked key, an owner's new tier). */
  readonly commits: ExternalCommits
  /** Sign-in and OAuth: logins, invitations, clients, grants, codes and tokens. */
  readonly oauth: OAuthStore
  /** Households: who may act on whose ledger (CONTRACT §30). */
  readonly grants: GrantStore

  /**
   * False when Litestream replicates the folder (CONTRACT §31): this connection then never
   * checkpoints (`wal_autocheckpoint = 0`, `foldLog` does nothing), so Litestream is the only
   * checkpointer of control.db, as of every owner's file.
   */
  readonly checkpoints: boolean

  constructor(dataDir: string, checkpoints = !replicatedDataDir(dataDir)) {
    const path = join(dataDir, 'control.db')
    this.checkpoints = checkpoints
    this.sqlite = openDatabase(path, {
      synchronous: 'NORMAL',
      migrations,
      pragmas: checkpoints ? CONTROL_PRAGMAS : [...CONTROL_PRAGMAS, 'wal_autocheckpoint = 0'],
    })
    this.db = drizzle({ client: this.sqlite })
    this.commits = new ExternalCommits(this.sqlite)
    this.oauth = new OAuthStore(this.db)
    this.grants = new GrantStore(this.db, () => this.commits.changedHere())
  }

  private readonly keyWithOwner = () =>
    this.db
      .select({ key: apiKeys, owner: owners })
      .from(apiKeys)
      .innerJoin(owners, eq(owners.id, apiKeys.ownerId))
      .where(eq(apiKeys.id, sql.placeholder('id')))
      .prepare()
  private keyLookup?: ReturnType<typeof this.keyWithOwner>

  /** One indexed lookup: a key and its owner, read when a key is first verified and again after any commit. */
  findKey(id: string): KeyWithOwner | undefined {
    this.keyLookup ??= this.keyWithOwner()
    return this.keyLookup.get({ id })
  }

  createOwner(owner: Owner): void {
    this.db.insert(owners).values(owner).run()
  }

  findOwner(id: string): Owner | undefined {
    return this.db.select().from(owners).where(eq(owners.id, id)).get()
  }

  listOwners(): Owner[] {
    return this.db.select().from(owners).orderBy(asc(owners.createdAt), asc(owners.id)).all()
  }

  hasOwners(): boolean {
    return this.db.select({ id: owners.id }).from(owners).limit(1).all().length > 0
  }

  createKey(key: ApiKeyRow): void {
    this.db.insert(apiKeys).values(key).run()
  }

  listKeys(ownerId: string): ApiKeyRow[] {
    return this.db.select().from(apiKeys).where(eq(apiKeys.ownerId, ownerId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id)).all()
  }

  /** The owner's keys after (createdAt, id), oldest first; live ones only unless `all`. */
  listKeysPage(ownerId: string, after: { createdAt: number; id: string } | null, limit: number, all: boolean, now: number): ApiKeyRow[] {
    return this.db
      .select()
      .from(apiKeys)
      .where(
        and(
          eq(apiKeys.ownerId, ownerId),
          after ? or(gt(apiKeys.createdAt, after.createdAt), and(eq(apiKeys.createdAt, after.createdAt), gt(apiKeys.id, after.id))) : undefined,
          all ? undefined : and(isNull(apiKeys.revokedAt), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, now))),
        ),
      )
      .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
      .limit(limit)
      .all()
  }

  findKeyRow(id: string): ApiKeyRow | undefined {
    return this.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get()
  }

  /** Revokes a key once; a second revoke keeps the first time. Returns false for an unknown id. */
  revokeKey(id: string, at: number): boolean {
    const found = this.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, id)).get()
    if (!found) return false
    this.db
      .update(apiKeys)
      .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${at})` })
      .where(eq(apiKeys.id, id))
      .run()
    return true
  }

  updateOwner(id: string, changes: Partial<Omit<Owner, 'id' | 'createdAt'>>): void {
    if (Object.keys(changes).length > 0) this.db.update(owners).set(changes).where(eq(owners.id, id)).run()
  }

  /** Removes an owner with everything the control database holds for it, in one transaction. */
  deleteOwner(id: string): { keys: number } {
    return this.db.transaction(
      (tx) => {
        const keys = tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.ownerId, id)).all()
        const grants = this.oauth.deleteOwnerIn(tx, id)
        // Either side's deletion ends a household grant (CONTRACT §30).
        this.grants.deleteOwnerIn(tx, id)
        for (const bucket of [...keys.map((key) => key.id), ...grants])
          tx.delete(rateLimitCounters)
            .where(eq(rateLimitCounters.bucket, `key:${bucket}`))
            .run()
        tx.delete(apiKeys).where(eq(apiKeys.ownerId, id)).run()
        tx.delete(idempotencyRecords).where(eq(idempotencyRecords.ownerId, id)).run()
        tx.delete(owners).where(eq(owners.id, id)).run()
        return { keys: keys.length }
      },
      { behavior: 'immediate' },
    )
  }

  /** A key stops working at `at` (or stays at an earlier expiry it already had). */
  expireKeyBy(id: string, at: number): void {
    this.db
      .update(apiKeys)
      .set({ expiresAt: sql`min(coalesce(${apiKeys.expiresAt}, ${at}), ${at})` })
      .where(eq(apiKeys.id, id))
      .run()
  }

  setScopes(id: string, scopes: string[]): void {
    this.db.update(apiKeys).set({ scopes }).where(eq(apiKeys.id, id)).run()
  }

  /** Records that `id` was rotated: `by` is its replacement. */
  setReplacedBy(id: string, by: string): void {
    this.db.update(apiKeys).set({ replacedBy: by }).where(eq(apiKeys.id, id)).run()
  }

  /** The key that `id` replaced, if any. */
  predecessorOf(id: string): ApiKeyRow | undefined {
    return this.db.select().from(apiKeys).where(eq(apiKeys.replacedBy, id)).get()
  }

  touchKeys(lastUsed: Map<string, number>): void {
    if (lastUsed.size === 0) return
    this.db.transaction((tx) => {
      for (const [id, at] of lastUsed) tx.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run()
    })
  }

  private readonly responseQueries = () => ({
    find: this.db
      .select({
        fingerprint: idempotencyRecords.fingerprint,
        status: idempotencyRecords.status,
        body: idempotencyRecords.body,
        location: idempotencyRecords.location,
        requestId: idempotencyRecords.requestId,
        createdAt: idempotencyRecords.createdAt,
      })
      .from(idempotencyRecords)
      .where(and(eq(idempotencyRecords.ownerId, sql.placeholder('ownerId')), eq(idempotencyRecords.key, sql.placeholder('key'))))
      .prepare(),
    save: this.db
      .insert(idempotencyRecords)
      .values(placeholders(idempotencyRecords, ['ownerId', 'key', ...STORED_RESPONSE_FIELDS]))
      .onConflictDoUpdate({ target: [idempotencyRecords.ownerId, idempotencyRecords.key], set: fromExcluded(idempotencyRecords, STORED_RESPONSE_FIELDS) })
      .prepare(),
  })
  private responses?: ReturnType<typeof this.responseQueries>

  /** A stored response (one primary-key lookup, prepared once: every write asks). */
  findResponse(ownerId: string, key: string): StoredResponse | undefined {
    this.responses ??= this.responseQueries()
    return this.responses.find.get({ ownerId, key })
  }

  saveResponse(ownerId: string, key: string, response: StoredResponse): void {
    this.responses ??= this.responseQueries()
    this.responses.save.run({ ownerId, key, ...response })
  }

  /** Several responses in one transaction (one commit for the copies of many requests). */
  saveResponses(copies: { ownerId: string; key: string; response: StoredResponse }[]): void {
    this.db.transaction(() => {
      for (const { ownerId, key, response } of copies) this.saveResponse(ownerId, key, response)
    })
  }

  purgeResponses(olderThan: number): void {
    this.db.delete(idempotencyRecords).where(lt(idempotencyRecords.createdAt, olderThan)).run()
  }

  /** Forgets counters of days before `day`: a new day starts them at zero anyway. */
  purgeCounters(day: number): void {
    this.db.delete(rateLimitCounters).where(lt(rateLimitCounters.dayWindow, day)).run()
  }

  findCounter(bucket: string): RateLimitRow | undefined {
    return this.db.select().from(rateLimitCounters).where(eq(rateLimitCounters.bucket, bucket)).get()
  }

  saveCounters(rows: RateLimitRow[]): void {
    if (rows.length === 0) return
    this.db.transaction((tx) => {
      for (const row of rows) {
        tx.insert(rateLimitCounters)
          .values(row)
          .onConflictDoUpdate({
            target: rateLimitCounters.bucket,
            set: { minuteWindow: row.minuteWindow, minuteCount: row.minuteCount, dayWindow: row.dayWindow, dayCount: row.dayCount },
          })
          .run()
      }
    })
  }

  /** See `foldLog` in sqlite.ts; nothing while Litestream checkpoints this file. */
  foldLog(): boolean {
    return this.checkpoints ? foldLog(this.sqlite) : true
  }

  close(): void {
    this.commits.close()
    this.sqlite.close()
  }
}
