import { and, desc, eq, getTableColumns, gte, lte, type SQL, sql } from 'drizzle-orm'
import { placeholders, lazyStatements } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/registry.ts'
import { categories, transactions } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { TransactionOut } from './model.ts'

export type TransactionRow = typeof transactions.$inferSelect
/** A transaction with the type of its category, as lists and reads return it. */
export type TransactionView = { txn: TransactionRow; categoryType: 'expense' | 'income' | null }

const listOrder = [desc(transactions.date), desc(transactions.createdAt), desc(transactions.id)]
const before = sql`(${transactions.date}, ${transactions.createdAt}, ${transactions.id}) < (${sql.placeholder('date')}, ${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`

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
  /** List statements by filter shape, built on first use. */
  lists: () => new Map<string, ReturnType<typeof buildList>>(),
})

const txnQueries = (tenant: Tenant) => tenant.prepared(statements)

export const insertTransaction = (tenant: Tenant, row: TransactionRow): void => {
  txnQueries(tenant).insert.run(row)
}
/** Writes every column of the stored row `row.id`. */
export const replaceTransaction = (tenant: Tenant, row: TransactionRow): void => {
  txnQueries(tenant).update.run(row)
}
export const findTransactionView = (tenant: Tenant, id: string): TransactionView | undefined => txnQueries(tenant).byId.get({ id })
export const findTransaction = (tenant: Tenant, id: string): TransactionRow | undefined => txnQueries(tenant).rowById.get({ id })
export const findTransactionByExternalId = (tenant: Tenant, externalId: string): TransactionRow | undefined =>
  txnQueries(tenant).byExternalId.get({ externalId })

export interface ListFilter {
  /** Which column the account filter reads: the source, or the destination of transfers. */
  accountColumn?: 'source' | 'destination'
  categoryId?: boolean
  payeeId?: boolean
  from?: boolean
  to?: boolean
  externalId?: boolean
  cursor?: boolean
}

function buildList(db: TenantDrizzle, filter: ListFilter) {
  const conditions: SQL[] = []
  if (filter.accountColumn === 'source') conditions.push(eq(transactions.accountId, sql.placeholder('accountId')))
  if (filter.accountColumn === 'destination') conditions.push(eq(transactions.transferToAccountId, sql.placeholder('accountId')))
  if (filter.categoryId) conditions.push(eq(transactions.categoryId, sql.placeholder('categoryId')))
  if (filter.payeeId) conditions.push(eq(transactions.payeeId, sql.placeholder('payeeId')))
  if (filter.from) conditions.push(gte(transactions.date, sql.placeholder('from')))
  if (filter.to) conditions.push(lte(transactions.date, sql.placeholder('to')))
  if (filter.externalId) conditions.push(eq(transactions.externalId, sql.placeholder('externalId')))
  if (filter.cursor) conditions.push(before)
  return selectView(db)
    .where(conditions.length ? and(...conditions) : undefined)
    .orderBy(...listOrder)
    .limit(sql.placeholder('limit'))
    .prepare()
}

/** One page of a list, newest first, using a prepared statement per filter shape. */
export function listTransactionViews(tenant: Tenant, filter: ListFilter, values: Record<string, string | number>): TransactionView[] {
  const q = txnQueries(tenant)
  const shape = JSON.stringify(filter)
  let statement = q.lists.get(shape)
  if (!statement) {
    statement = buildList(tenant.db, filter)
    q.lists.set(shape, statement)
  }
  return statement.all(values)
}

export function toTransaction({ txn, categoryType }: TransactionView): TransactionOut {
  return {
    id: txn.id,
    externalId: txn.externalId,
    accountId: txn.accountId,
    categoryId: txn.categoryId,
    payeeId: txn.payeeId,
    amount: moneyJson(txn.amount),
    date: txn.date,
    note: txn.note,
    time: txn.time,
    isTransfer: txn.isTransfer,
    transferToAccountId: txn.transferToAccountId,
    destinationAmount: txn.destinationAmount === null ? null : moneyJson(txn.destinationAmount),
    exchangeRate: txn.exchangeRate === null ? null : (JSON.rawJSON(txn.exchangeRate) as number),
    hasSplits: false,
    splitMode: null,
    categoryType,
    createdAt: txn.createdAt,
  }
}
