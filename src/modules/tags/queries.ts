import { and, asc, eq, type SQL, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { tags } from '../../db/tenant/schema.ts'
import type { TagOut } from './model.ts'

export type TagRow = typeof tags.$inferSelect

const after = sql`(${tags.createdAt}, ${tags.id}) > (${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`
const liveOnly = eq(tags.isArchived, false)
/** `limit` tags matching `where`, in list order (createdAt, id); a limit of -1 is every one. */
const pageWhere = (where?: SQL) => (db: TenantDrizzle) =>
  db.select().from(tags).where(where).orderBy(asc(tags.createdAt), asc(tags.id)).limit(sql.placeholder('limit')).prepare()

const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(tags)
      .where(eq(tags.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(tags)
      .where(eq(tags.externalId, sql.placeholder('externalId')))
      .prepare(),
  byNormalizedName: (db) =>
    db
      .select()
      .from(tags)
      .where(eq(tags.normalizedName, sql.placeholder('name')))
      .prepare(),
  firstPage: pageWhere(),
  nextPage: pageWhere(after),
  firstLivePage: pageWhere(liveOnly),
  nextLivePage: pageWhere(and(liveOnly, after)),
  moveCount: (db) =>
    db
      .update(tags)
      .set({ transactionCount: sql`${tags.transactionCount} + ${sql.placeholder('delta')}` })
      .where(eq(tags.id, sql.placeholder('id')))
      .prepare(),
})

const tagQueries = (tenant: Tenant) => tenant.prepared(statements)

export const findTag = (tenant: Tenant, id: string): TagRow | undefined => tagQueries(tenant).byId.get({ id })
export const findTagByExternalId = (tenant: Tenant, externalId: string): TagRow | undefined => tagQueries(tenant).byExternalId.get({ externalId })
export const findTagByNormalizedName = (tenant: Tenant, name: string): TagRow | undefined => tagQueries(tenant).byNormalizedName.get({ name })

/** Rows after the cursor, `limit` of them (-1: all), in list order. */
export function listTagRows(tenant: Tenant, opts: { limit: number; after?: [number, string]; includeArchived: boolean }): TagRow[] {
  const q = tagQueries(tenant)
  if (opts.after) {
    const [createdAt, id] = opts.after
    return (opts.includeArchived ? q.nextPage : q.nextLivePage).all({ limit: opts.limit, createdAt, id })
  }
  return (opts.includeArchived ? q.firstPage : q.firstLivePage).all({ limit: opts.limit })
}

/** Moves a tag's `transactionCount` by the net number of transactions that took it (or dropped it). */
export function moveTagCount(tenant: Tenant, id: string, delta: number): void {
  tagQueries(tenant).moveCount.run({ id, delta })
}

export function toTag(row: TagRow): TagOut {
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    color: row.color,
    isArchived: row.isArchived,
    transactionCount: row.transactionCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}
