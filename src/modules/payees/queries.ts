import { and, asc, desc, eq, type SQL, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { payeeAliases, payees } from '../../db/tenant/schema.ts'
import { addUnits, moneyJson } from '../../platform/money.ts'
import type { PayeeOut } from './model.ts'

export type PayeeRow = typeof payees.$inferSelect

const after = sql`(${payees.createdAt}, ${payees.id}) > (${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`
// instr, not LIKE: LIKE stops at a NUL, so '%\0%' matched every payee. Both sides are normalized (lower case).
const matches = sql`instr(${payees.searchText}, ${sql.placeholder('q')}) > 0`
const listOrder = [asc(payees.createdAt), asc(payees.id)]
/** `limit` payees matching `where`, in list order. */
const pageWhere = (where?: SQL) => (db: TenantDrizzle) =>
  db
    .select()
    .from(payees)
    .where(where)
    .orderBy(...listOrder)
    .limit(sql.placeholder('limit'))
    .prepare()

const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(payees)
      .where(eq(payees.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(payees)
      .where(eq(payees.externalId, sql.placeholder('externalId')))
      .prepare(),
  byNormalizedName: (db) =>
    db
      .select()
      .from(payees)
      .where(eq(payees.normalizedName, sql.placeholder('name')))
      .prepare(),
  everyAlias: (db) =>
    db
      .select({ alias: payeeAliases.normalizedAlias, name: payees.name })
      .from(payeeAliases)
      .innerJoin(payees, eq(payees.id, payeeAliases.payeeId))
      .orderBy(asc(payees.createdAt), asc(payees.id))
      .prepare(),
  byAlias: (db) =>
    db
      .select({ payee: payees })
      .from(payeeAliases)
      .innerJoin(payees, eq(payees.id, payeeAliases.payeeId))
      .where(eq(payeeAliases.normalizedAlias, sql.placeholder('alias')))
      .orderBy(asc(payees.createdAt), asc(payees.id))
      .limit(1)
      .prepare(),
  firstPage: pageWhere(),
  nextPage: pageWhere(after),
  firstMatchPage: pageWhere(matches),
  nextMatchPage: pageWhere(and(matches, after)),
  mostUsed: (db) =>
    db.select().from(payees).orderBy(desc(payees.transactionCount), asc(payees.createdAt), asc(payees.id)).limit(sql.placeholder('limit')).prepare(),
  setStats: (db) =>
    db
      .update(payees)
      .set({ transactionCount: sql`${sql.placeholder('count')}`, totalSpent: sql`${sql.placeholder('spent')}` })
      .where(eq(payees.id, sql.placeholder('id')))
      .prepare(),
})

export const payeeQueries = (tenant: Tenant) => tenant.prepared(statements)

export const findPayee = (tenant: Tenant, id: string) => payeeQueries(tenant).byId.get({ id })
export const findPayeeByExternalId = (tenant: Tenant, externalId: string) => payeeQueries(tenant).byExternalId.get({ externalId })
export const findPayeeByNormalizedName = (tenant: Tenant, name: string) => payeeQueries(tenant).byNormalizedName.get({ name })
/** Every alias with its payee's name, oldest payee first: what an import matches bank text against (CONTRACT §24). */
export const everyPayeeAlias = (tenant: Tenant): { alias: string; name: string }[] => payeeQueries(tenant).everyAlias.all()
export const findPayeeByAlias = (tenant: Tenant, alias: string) => payeeQueries(tenant).byAlias.get({ alias })?.payee

export function listPayeeRows(tenant: Tenant, opts: { limit: number; after?: [number, string]; q?: string }): PayeeRow[] {
  const q = payeeQueries(tenant)
  const position = opts.after ? { createdAt: opts.after[0], id: opts.after[1] } : undefined
  if (opts.q !== undefined) {
    return position ? q.nextMatchPage.all({ limit: opts.limit, q: opts.q, ...position }) : q.firstMatchPage.all({ limit: opts.limit, q: opts.q })
  }
  return position ? q.nextPage.all({ limit: opts.limit, ...position }) : q.firstPage.all({ limit: opts.limit })
}

export const mostUsedPayees = (tenant: Tenant, limit: number) => payeeQueries(tenant).mostUsed.all({ limit })

/**
 * Moves a payee's aggregates by one transaction's effect: `count` ±1 and the amount it adds
 * to totalSpent (positive, non-transfer amounts only; the caller decides).
 */
export function adjustPayeeStats(tenant: Tenant, payeeId: string, count: number, spent: bigint): void {
  const row = findPayee(tenant, payeeId)
  if (!row) return
  payeeQueries(tenant).setStats.run({
    id: payeeId,
    count: row.transactionCount + count,
    spent: addUnits(row.totalSpent, spent, `totalSpent of payee ${payeeId}`),
  })
}

export function toPayee(row: PayeeRow): PayeeOut {
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    normalizedName: row.normalizedName,
    aliases: row.aliases,
    categoryId: row.categoryId,
    isMerchant: row.isMerchant,
    transactionCount: row.transactionCount,
    totalSpent: moneyJson(row.totalSpent),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}
