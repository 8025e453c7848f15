import { and, asc, eq, type SQL, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { accounts } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { AccountOut } from './model.ts'

export type AccountRow = typeof accounts.$inferSelect

const after = sql`(${accounts.createdAt}, ${accounts.id}) > (${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`
const activeOnly = eq(accounts.isArchived, false)
/** `limit` accounts matching `where`, in list order (createdAt, id). */
const pageWhere = (where?: SQL) => (db: TenantDrizzle) =>
  db.select().from(accounts).where(where).orderBy(asc(accounts.createdAt), asc(accounts.id)).limit(sql.placeholder('limit')).prepare()

/** Prepared once per open tenant file. */
const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(accounts)
      .where(eq(accounts.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(accounts)
      .where(eq(accounts.externalId, sql.placeholder('externalId')))
      .prepare(),
  firstPage: pageWhere(),
  nextPage: pageWhere(after),
  firstActivePage: pageWhere(activeOnly),
  nextActivePage: pageWhere(and(activeOnly, after)),
  setBalance: (db) =>
    db
      .update(accounts)
      .set({ balance: sql`${sql.placeholder('balance')}` })
      .where(eq(accounts.id, sql.placeholder('id')))
      .prepare(),
})

export const accountQueries = (tenant: Tenant) => tenant.prepared(statements)

export function findAccount(tenant: Tenant, id: string): AccountRow | undefined {
  return accountQueries(tenant).byId.get({ id })
}

export function findAccountByExternalId(tenant: Tenant, externalId: string): AccountRow | undefined {
  return accountQueries(tenant).byExternalId.get({ externalId })
}

/** Rows after the cursor, `limit` of them, in list order (createdAt, id). */
export function listAccountRows(tenant: Tenant, opts: { limit: number; after?: [number, string]; includeArchived: boolean }): AccountRow[] {
  const q = accountQueries(tenant)
  if (opts.after) {
    const [createdAt, id] = opts.after
    return (opts.includeArchived ? q.nextPage : q.nextActivePage).all({ limit: opts.limit, createdAt, id })
  }
  return (opts.includeArchived ? q.firstPage : q.firstActivePage).all({ limit: opts.limit })
}

/** Writes a new balance (money arithmetic happens in bigint before this). */
export function setAccountBalance(tenant: Tenant, id: string, balance: bigint): void {
  accountQueries(tenant).setBalance.run({ id, balance })
}

export function toAccount(row: AccountRow): AccountOut {
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    type: row.type,
    subtype: row.subtype,
    providerSlug: row.providerSlug,
    secondaryProviderSlug: row.secondaryProviderSlug,
    balance: moneyJson(row.balance),
    currency: row.currency,
    color: row.color,
    icon: row.icon,
    linkedAccountId: row.linkedAccountId,
    isArchived: row.isArchived,
    isLiability: row.isLiability,
    isFavourite: row.isFavourite,
    showInDashboard: row.showInDashboard,
    isHidden: row.isHidden,
    notes: row.notes,
    sortOrder: row.sortOrder,
    accountNumber: row.accountNumber,
    customFields: row.customFields,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}
