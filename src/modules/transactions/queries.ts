import { and, desc, eq, getTableColumns, gte, lte, type SQL, sql } from 'drizzle-orm'
import type { Statement } from 'bun:sqlite'
import { lazyStatements, placeholders, SharedQuery } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { categories, transactions } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { CategoryTypes } from '../categories/queries.ts'
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
  /** This file's list statements by filter shape, prepared on first use. */
  pageLists: () => new Map<string, Statement>(),
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

/**
 * A list page's columns, as `transactionOfValues` reads them. Money comes back as the
 * integer's text, so a page is read without a bigint per amount.
 */
const pageColumns = {
  id: transactions.id,
  externalId: transactions.externalId,
  accountId: transactions.accountId,
  categoryId: transactions.categoryId,
  payeeId: transactions.payeeId,
  amount: sql<string>`CAST(${transactions.amount} AS TEXT)`,
  date: transactions.date,
  note: transactions.note,
  time: transactions.time,
  isTransfer: transactions.isTransfer,
  transferToAccountId: transactions.transferToAccountId,
  destinationAmount: sql<string | null>`CAST(${transactions.destinationAmount} AS TEXT)`,
  exchangeRate: transactions.exchangeRate,
  createdAt: transactions.createdAt,
}

/** One transaction of a list page as SQLite hands it back (integers are bigints: the database reads them safely). */
export type TransactionValues = [
  id: string,
  externalId: string | null,
  accountId: string | null,
  categoryId: string | null,
  payeeId: string | null,
  amount: string,
  date: string,
  note: string | null,
  time: string | null,
  isTransfer: bigint,
  transferToAccountId: string | null,
  destinationAmount: string | null,
  exchangeRate: string | null,
  createdAt: bigint,
]

/** Positions in `TransactionValues` that the page order and its cursor read. */
export const VALUES_AT = { id: 0, date: 6, createdAt: 13 } as const

function whereOf(filter: ListFilter): SQL | undefined {
  const conditions: SQL[] = []
  if (filter.accountColumn === 'source') conditions.push(eq(transactions.accountId, sql.placeholder('accountId')))
  if (filter.accountColumn === 'destination') conditions.push(eq(transactions.transferToAccountId, sql.placeholder('accountId')))
  if (filter.categoryId) conditions.push(eq(transactions.categoryId, sql.placeholder('categoryId')))
  if (filter.payeeId) conditions.push(eq(transactions.payeeId, sql.placeholder('payeeId')))
  if (filter.from) conditions.push(gte(transactions.date, sql.placeholder('from')))
  if (filter.to) conditions.push(lte(transactions.date, sql.placeholder('to')))
  if (filter.externalId) conditions.push(eq(transactions.externalId, sql.placeholder('externalId')))
  if (filter.cursor) conditions.push(before)
  return conditions.length ? and(...conditions) : undefined
}

/** The SQL of each filter shape, the same for every owner file. */
const pageQueries = new Map<string, SharedQuery>()

function pageQuery(shape: string, filter: ListFilter): SharedQuery {
  let query = pageQueries.get(shape)
  if (!query) {
    query = new SharedQuery((db) =>
      db
        .select(pageColumns)
        .from(transactions)
        .where(whereOf(filter))
        .orderBy(...listOrder)
        .limit(sql.placeholder('limit')),
    )
    pageQueries.set(shape, query)
  }
  return query
}

/** One page of a list, newest first, as bare value rows for `transactionOfValues`: no drizzle mapping. */
export function listTransactionValues(tenant: Tenant, filter: ListFilter, values: Record<string, string | number>): TransactionValues[] {
  const shape = JSON.stringify(filter)
  const query = pageQuery(shape, filter)
  const prepared = txnQueries(tenant).pageLists
  let statement = prepared.get(shape)
  if (!statement) {
    statement = query.prepare(tenant.db)
    prepared.set(shape, statement)
  }
  return query.values(statement, values) as TransactionValues[]
}

/**
 * A list row as the `Transaction` object (model.ts): the same object `toTransaction` makes of a
 * stored row, built from the page's value row without drizzle's mapping or a bigint per amount,
 * with `categoryType` from `types` (read in the same snapshot as the row).
 */
export function transactionOfValues(row: TransactionValues, types: CategoryTypes): TransactionOut {
  return {
    id: row[0],
    externalId: row[1],
    accountId: row[2],
    categoryId: row[3],
    payeeId: row[4],
    amount: moneyJson(row[5]),
    date: row[6],
    note: row[7],
    time: row[8],
    isTransfer: row[9] === 1n,
    transferToAccountId: row[10],
    destinationAmount: row[11] === null ? null : moneyJson(row[11]),
    exchangeRate: row[12] === null ? null : (JSON.rawJSON(row[12]) as number),
    hasSplits: false,
    splitMode: null,
    categoryType: row[3] === null ? null : (types.get(row[3]) ?? null),
    createdAt: Number(row[13]),
  }
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
