import type { Database } from 'bun:sqlite'
import { lt } from 'drizzle-orm'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import { existsSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import { migrations } from '../../../drizzle/tenant/manifest.ts'
import { isId } from '../../platform/ids.ts'
import { openDatabase } from '../sqlite.ts'
import * as schema from './schema.ts'

export type TenantDrizzle = BunSQLiteDatabase<typeof schema>

/** One owner's open database, with the prepared statements built for it. */
export class Tenant {
  readonly db: TenantDrizzle
  private readonly memo = new Map<object, unknown>()

  constructor(
    readonly ownerId: string,
    readonly sqlite: Database,
  ) {
    this.db = drizzle({ client: sqlite, schema })
  }

  /**
   * Runs `fn` in one IMMEDIATE transaction: the write lock is taken up front, so a
   * read-then-write never fails half way on a busy file. `fn` must be synchronous.
   */
  write<T>(fn: () => T): T {
    // Nested calls join the open transaction: any error aborts the whole write anyway.
    return this.sqlite.inTransaction ? fn() : this.sqlite.transaction(fn).immediate()
  }

  /** A consistent snapshot for multi-query reads (the agent context). */
  read<T>(fn: () => T): T {
    return this.sqlite.transaction(fn).deferred()
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

  purgeAppliedRequests(olderThan: number): void {
    this.db.delete(schema.appliedRequests).where(lt(schema.appliedRequests.createdAt, olderThan)).run()
  }

  close(): void {
    this.memo.clear()
    this.sqlite.close(false)
  }
}

/**
 * Opens tenant files on demand and keeps at most `capacity` open, closing the least
 * recently used. Paths are built only from ids this server generated, and checked to
 * stay inside the tenants folder.
 */
export class TenantRegistry {
  private readonly open = new Map<string, Tenant>()
  readonly dir: string

  constructor(
    dataDir: string,
    readonly capacity: number,
    private readonly onOpen: (tenant: Tenant) => void = () => {},
  ) {
    this.dir = resolve(dataDir, 'tenants')
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

  get(ownerId: string): Tenant {
    const cached = this.open.get(ownerId)
    if (cached) {
      // Re-insert to mark it most recently used (Map keeps insertion order).
      this.open.delete(ownerId)
      this.open.set(ownerId, cached)
      return cached
    }
    const tenant = new Tenant(ownerId, openDatabase(this.pathFor(ownerId), { synchronous: 'FULL', migrations }))
    this.open.set(ownerId, tenant)
    this.onOpen(tenant)
    while (this.open.size > this.capacity) {
      const [oldestId, oldest] = this.open.entries().next().value as [string, Tenant]
      this.open.delete(oldestId)
      oldest.close()
    }
    return tenant
  }

  openTenants(): Tenant[] {
    return [...this.open.values()]
  }

  get size(): number {
    return this.open.size
  }

  closeAll(): void {
    for (const tenant of this.open.values()) tenant.close()
    this.open.clear()
  }
}
