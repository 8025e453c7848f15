import type { Statement } from 'bun:sqlite'
import { and, between, desc, eq, getTableColumns, sql } from 'drizzle-orm'
import { lazyStatements, placeholders } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { categories, transactions } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { TransactionOut } from './model.ts'
import { type SplitView, splitsOf, toSplit } from './split-queries.ts'
import { tagIdsOf } from './tag-queries.ts'

export type TransactionRow = typeof transactions.$inferSelect
/** A transaction's row before it is stored: what a write resolves its body into. */
export type Draft = Omit<TransactionRow, 'id' | 'createdAt' | 'updatedAt' | 'createdBy' | 'updatedBy'>
/** A transaction with the type of its category, its legs and its tags, as reads return it. */
export type TransactionView = { txn: TransactionRow; categoryType: 'expense' | 'income' | null; splits: readonly SplitView[]; tagIds: readonly string[] }

const selectView = (db: TenantDrizzle) =>
  db.select({ txn: transactions, categoryType: categories.type }).from(transactions).leftJoin(categories, eq(categories.id, transactions.categoryId))

/** Every column of a transaction row, for the prepared full-row insert and update. */
const ROW_FIELDS = Object.keys(getTableColumns(transactions)) as (keyof TransactionRow & string)[]
const CHANGEABLE_FIELDS = ROW_FIELDS.filter((field) => field !== 'id')

const statements = lazyStatements({
  insert: (db) => db.insert(transactions).values(placeholders(transactions, ROW_FIELDS)).prepare(),
  update: (db) =>
    db
      .update(transactions)
      // drizzle binds placeholders in SET (with each column's encoding) though its types omit them.
      .set(placeholders(transactions, CHANGEABLE_FIELDS) as unknown as Partial<TransactionRow>)
      .where(eq(transactions.id, sql.placeholder('id')))
      .prepare(),
  byId: (db) =>
    selectView(db)
      .where(eq(transactions.id, sql.placeholder('id')))
      .prepare(),
  rowById: (db) =>
    db
      .select()
      .from(transactions)
      .where(eq(transactions.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(transactions)
      .where(eq(transactions.externalId, sql.placeholder('externalId')))
      .prepare(),
  inRange: (db) =>
    db
      .select()
      .from(transactions)
      .where(between(transactions.date, sql.placeholder('from'), sql.placeholder('to')))
      .orderBy(desc(transactions.date), desc(transactions.createdAt), desc(transactions.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
  inRangeOfAccount: (db) =>
    db
      .select()
      .from(transactions)
      .where(and(eq(transactions.accountId, sql.placeholder('accountId')), between(transactions.date, sql.placeholder('from'), sql.placeholder('to'))))
      .orderBy(desc(transactions.date), desc(transactions.createdAt), desc(transactions.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
})

const txnQueries = (tenant: Tenant) => tenant.prepared(statements)

export const insertTransaction = (tenant: Tenant, row: TransactionRow): void => {
  txnQueries(tenant).insert.run(row)
}
/** Writes every column of the stored row `row.id`. */
export const replaceTransaction = (tenant: Tenant, row: TransactionRow): void => {
  txnQueries(tenant).update.run(row)
}
/** The stored transaction with its parts; its legs and tags are read only when it has some. */
export function findTransactionView(tenant: Tenant, id: string): TransactionView | undefined {
  const found = txnQueries(tenant).byId.get({ id })
  if (!found) return undefined
  const splits = found.txn.hasSplits ? (splitsOf(tenant, [id]).get(id) ?? []) : []
  const tagIds = found.txn.hasTags ? (tagIdsOf(tenant, [id]).get(id) ?? []) : []
  return { ...found, splits, tagIds }
}
/** The stored `updatedAt` of a transaction a write has just made or changed (the feed's trigger sets it, CONTRACT §25). */
export const storedUpdatedAt = (tenant: Tenant, id: string): number =>
  Number(tenant.sqlite.query<{ at: number | bigint }, [string]>('SELECT updated_at AS at FROM transactions WHERE id = ?').get(id)?.at ?? 0)
export const findTransaction = (tenant: Tenant, id: string): TransactionRow | undefined => txnQueries(tenant).rowById.get({ id })
export const findTransactionByExternalId = (tenant: Tenant, externalId: string): TransactionRow | undefined =>
  txnQueries(tenant).byExternalId.get({ externalId })

/** Up to `limit` stored rows dated `from`–`to` (of one source account when given), in list order: one walk of the date or account index. */
export function transactionsInRange(tenant: Tenant, range: { from: string; to: string; accountId?: string; limit: number }): TransactionRow[] {
  const q = txnQueries(tenant)
  if (range.accountId === undefined) return q.inRange.all({ from: range.from, to: range.to, limit: range.limit })
  return q.inRangeOfAccount.all({ accountId: range.accountId, from: range.from, to: range.to, limit: range.limit })
}

export function toTransaction({ txn, categoryType, splits, tagIds }: TransactionView): TransactionOut {
  return {
    id: txn.id,
    externalId: txn.externalId,
    accountId: txn.accountId,
    categoryId: txn.categoryId,
    payeeId: txn.payeeId,
    amount: moneyJson(txn.amount),
    date: txn.date,
    note: txn.note,
    originalDescription: txn.originalDescription,
    time: txn.time,
    isTransfer: txn.isTransfer,
    transferToAccountId: txn.transferToAccountId,
    destinationAmount: txn.destinationAmount === null ? null : moneyJson(txn.destinationAmount),
    exchangeRate: txn.exchangeRate === null ? null : (JSON.rawJSON(txn.exchangeRate) as number),
    hasSplits: splits.length > 0,
    splitMode: splits.length > 0 ? 'category' : null,
    categoryType,
    createdAt: txn.createdAt,
    updatedAt: txn.updatedAt,
    createdBy: txn.createdBy,
    updatedBy: txn.updatedBy,
    splits: splits.map(toSplit),
    tagIds: [...tagIds],
    scheduleId: txn.scheduleId,
  }
}

/** Auto-posted transactions that have adopted no bank row yet (they still hold their `sched:` externalId). */
const PENDING = "t.schedule_id IS NOT NULL AND t.external_id LIKE 'sched:%'"
const adoptionStatements = new WeakMap<Tenant, { any: Statement; find: Statement }>()

function adoptionQueries(tenant: Tenant): { any: Statement; find: Statement } {
  let made = adoptionStatements.get(tenant)
  if (!made) {
    made = {
      any: tenant.sqlite.prepare(`SELECT 1 FROM transactions t INDEXED BY transactions_schedule_idx WHERE ${PENDING} LIMIT 1`),
      find: tenant.sqlite.prepare(
        `SELECT t.id AS id FROM transactions t INDEXED BY transactions_schedule_idx JOIN schedules s ON s.id = t.schedule_id
         WHERE ${PENDING} AND t.account_id = ?1 AND t.date BETWEEN date(?2, '-31 days') AND date(?2, '+31 days')
           AND t.is_transfer = 0 AND t.has_splits = 0
           AND abs(julianday(t.date) - julianday(?2)) <= s.match_window_days
           AND abs(t.amount - ?3) <= s.amount_tolerance
         ORDER BY abs(julianday(t.date) - julianday(?2)), t.created_at, t.id LIMIT 1`,
      ),
    }
    adoptionStatements.set(tenant, made)
  }
  return made
}

/** Whether any auto-posted transaction waits for a bank row: a batch asks once, and looks no further when none does. */
export const hasAdoptable = (tenant: Tenant): boolean => adoptionQueries(tenant).any.get() !== null

/**
 * The auto-posted transaction a bank's row of `accountId`, `amount` and `date` stands for
 * (CONTRACT §29), if any: one a schedule posted that still holds its posting externalId
 * (`sched:…`, so it has adopted no bank row yet), in the same account, whose amount is within its
 * schedule's `amountTolerance` of the row's and whose date is within its `matchWindowDays`; the
 * nearest in date, then the earliest recorded. A seek of the partial index of those
 * transactions, over the widest window a schedule may have.
 */
export function findAdoptable(tenant: Tenant, accountId: string, amount: bigint, date: string): TransactionRow | undefined {
  const found = adoptionQueries(tenant).find.get(accountId, date, amount) as { id: string } | null
  return found === null ? undefined : findTransaction(tenant, found.id)
}
