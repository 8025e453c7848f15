import type { Statement } from 'bun:sqlite'
import { and, desc, eq, gte, lte, type SQL, sql } from 'drizzle-orm'
import type { AnySQLiteColumn } from 'drizzle-orm/sqlite-core'
import { lazyStatements, SharedQuery } from '../../db/statements.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { transactionSplits, transactions, transactionTags } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { CategoryTypes } from '../categories/queries.ts'
import type { TransactionOut } from './model.ts'
import { type SplitView, splitsOf, toSplit } from './split-queries.ts'
import { tagIdsOf } from './tag-queries.ts'

/**
 * The SQL of list pages (CONTRACT §9): every filter shape walks one index in list order and
 * stops after the page, so a page costs the same at any size. A filter that can match in two
 * places (an account as source or destination, a category or payee of the transaction or of a
 * leg) walks both indexes and the two are merged; a tag walks its assignments.
 */

/** What a page walks in list order: transactions (all, or by account, category or payee), a category's or payee's legs, a tag's assignments. */
export type Scan = 'all' | 'source' | 'destination' | 'ownCategory' | 'legCategory' | 'ownPayee' | 'legPayee' | 'tag'

export interface ListFilter {
  scan: Scan
  /** Filters checked on each row the scan meets (those the scan does not walk by). */
  accountId?: boolean
  categoryId?: boolean
  payeeId?: boolean
  from?: boolean
  to?: boolean
  externalId?: boolean
  cursor?: boolean
}

/**
 * A list page's columns, as `transactionOfValues` reads them. Money comes back as the
 * integer's text and the other integers as doubles (exact: flags, and epoch milliseconds far
 * below 2⁵³), so a page is read without a bigint per value.
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
  isTransfer: sql<number>`CAST(${transactions.isTransfer} AS REAL)`,
  transferToAccountId: transactions.transferToAccountId,
  destinationAmount: sql<string | null>`CAST(${transactions.destinationAmount} AS TEXT)`,
  exchangeRate: transactions.exchangeRate,
  createdAt: sql<number>`CAST(${transactions.createdAt} AS REAL)`,
  /** Which parts the row has: 1 legs, 2 tags, 3 both. */
  parts: sql<number>`CAST(${transactions.hasSplits} + 2 * ${transactions.hasTags} AS REAL)`,
  originalDescription: transactions.originalDescription,
  updatedAt: sql<number>`CAST(${transactions.updatedAt} AS REAL)`,
}

/** One transaction of a list page as SQLite hands it back. */
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
  isTransfer: number,
  transferToAccountId: string | null,
  destinationAmount: string | null,
  exchangeRate: string | null,
  createdAt: number,
  parts: number,
  originalDescription: string | null,
  updatedAt: number,
]

/** Positions in `TransactionValues` that the page order, its cursor and its parts read. */
export const VALUES_AT = { id: 0, date: 6, createdAt: 13, parts: 14 } as const
const HAS_SPLITS = 1
const HAS_TAGS = 2

/** The sort key a scan walks: the transaction's own, or the copy a leg or a tag assignment keeps of it. */
type SortColumns = [date: AnySQLiteColumn, createdAt: AnySQLiteColumn, id: AnySQLiteColumn]
const OWN: SortColumns = [transactions.date, transactions.createdAt, transactions.id]
const LEGS: SortColumns = [transactionSplits.date, transactionSplits.createdAt, transactionSplits.transactionId]
const TAGS: SortColumns = [transactionTags.date, transactionTags.createdAt, transactionTags.transactionId]

const before = ([date, createdAt, id]: SortColumns) =>
  sql`(${date}, ${createdAt}, ${id}) < (${sql.placeholder('date')}, ${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`

/**
 * A leg of this transaction with the category (or payee) in `column`: a seek on the legs' filter
 * index by its whole key, only for a transaction that has legs.
 */
const legWith = (column: 'category_id' | 'payee_id', value: string) =>
  sql`(${transactions.hasSplits} = 1 AND EXISTS (SELECT 1 FROM transaction_splits leg WHERE leg.${sql.raw(column)} = ${sql.placeholder(value)} AND leg.date = ${transactions.date} AND leg.created_at = ${transactions.createdAt} AND leg.transaction_id = ${transactions.id}))`

function conditionsOf(filter: ListFilter): SQL[] {
  const conditions: SQL[] = []
  const { scan } = filter
  if (scan === 'source') conditions.push(eq(transactions.accountId, sql.placeholder('accountId')))
  if (scan === 'destination') conditions.push(eq(transactions.transferToAccountId, sql.placeholder('accountId')))
  if (scan === 'ownCategory') conditions.push(eq(transactions.categoryId, sql.placeholder('categoryId')))
  if (scan === 'legCategory') conditions.push(eq(transactionSplits.categoryId, sql.placeholder('categoryId')))
  if (scan === 'ownPayee') conditions.push(eq(transactions.payeeId, sql.placeholder('payeeId')))
  // A transaction of this payee whose leg names it too is the own scan's: each row comes from one scan.
  if (scan === 'legPayee')
    conditions.push(eq(transactionSplits.payeeId, sql.placeholder('payeeId')), sql`${transactions.payeeId} IS NOT ${sql.placeholder('payeeId')}`)
  if (scan === 'tag') conditions.push(eq(transactionTags.tagId, sql.placeholder('tagId')))
  if (filter.accountId) {
    conditions.push(sql`(${transactions.accountId} = ${sql.placeholder('accountId')} OR ${transactions.transferToAccountId} = ${sql.placeholder('accountId')})`)
  }
  if (filter.categoryId) conditions.push(sql`(${transactions.categoryId} = ${sql.placeholder('categoryId')} OR ${legWith('category_id', 'categoryId')})`)
  if (filter.payeeId) conditions.push(sql`(${transactions.payeeId} = ${sql.placeholder('payeeId')} OR ${legWith('payee_id', 'payeeId')})`)
  if (filter.from) conditions.push(gte(transactions.date, sql.placeholder('from')))
  if (filter.to) conditions.push(lte(transactions.date, sql.placeholder('to')))
  if (filter.externalId) conditions.push(eq(transactions.externalId, sql.placeholder('externalId')))
  if (filter.cursor) conditions.push(before(sortColumnsOf(scan)))
  return conditions
}

const sortColumnsOf = (scan: Scan): SortColumns => (scan === 'legCategory' || scan === 'legPayee' ? LEGS : scan === 'tag' ? TAGS : OWN)

/** The SQL of each filter shape, the same for every owner file. */
const pageQueries = new Map<string, SharedQuery>()

function pageQuery(shape: string, filter: ListFilter): SharedQuery {
  let query = pageQueries.get(shape)
  if (!query) {
    const where = and(...conditionsOf(filter))
    const order = sortColumnsOf(filter.scan)
    const [date, createdAt, id] = order
    query = new SharedQuery((db) => {
      const limit = sql.placeholder('limit')
      if (filter.scan === 'tag') {
        return db
          .select(pageColumns)
          .from(transactionTags)
          .innerJoin(transactions, eq(transactions.id, transactionTags.transactionId))
          .where(where)
          .orderBy(desc(date), desc(createdAt), desc(id))
          .limit(limit)
      }
      if (order === LEGS) {
        // Two legs of one transaction may match: one row per transaction, grouped in index order.
        return db
          .select(pageColumns)
          .from(transactionSplits)
          .innerJoin(transactions, eq(transactions.id, transactionSplits.transactionId))
          .where(where)
          .groupBy(date, createdAt, id)
          .orderBy(desc(date), desc(createdAt), desc(id))
          .limit(limit)
      }
      return db.select(pageColumns).from(transactions).where(where).orderBy(desc(date), desc(createdAt), desc(id)).limit(limit)
    })
    pageQueries.set(shape, query)
  }
  return query
}

const statements = lazyStatements({
  /** This file's list statements by filter shape, prepared on first use. */
  pageLists: () => new Map<string, Statement>(),
})

/** One scan of a page, newest first, as bare value rows for `transactionOfValues`: no drizzle mapping. */
export function listTransactionValues(tenant: Tenant, filter: ListFilter, values: Record<string, string | number>): TransactionValues[] {
  const shape = JSON.stringify(filter)
  const query = pageQuery(shape, filter)
  const prepared = tenant.prepared(statements).pageLists
  let statement = prepared.get(shape)
  if (!statement) {
    statement = query.prepare(tenant.db)
    prepared.set(shape, statement)
  }
  return query.values(statement, values) as TransactionValues[]
}

/** The legs and tags of a page's rows: one query each, and none when no row has any. */
export interface PageParts {
  splits: Map<string, SplitView[]>
  tagIds: Map<string, string[]>
}

const NO_PARTS: PageParts = { splits: new Map(), tagIds: new Map() }

export function partsOfPage(tenant: Tenant, rows: readonly TransactionValues[]): PageParts {
  const split: string[] = []
  const tagged: string[] = []
  for (const row of rows) {
    const parts = row[VALUES_AT.parts]
    if (parts & HAS_SPLITS) split.push(row[VALUES_AT.id])
    if (parts & HAS_TAGS) tagged.push(row[VALUES_AT.id])
  }
  if (split.length === 0 && tagged.length === 0) return NO_PARTS
  return { splits: splitsOf(tenant, split), tagIds: tagIdsOf(tenant, tagged) }
}

const NONE: readonly never[] = []
/** Shared by every row without legs or tags: JSON.stringify writes it as `[]` each time, and nothing changes it. */
const EMPTY: never[] = Object.freeze([]) as never[]

/**
 * A list row as the `Transaction` object (model.ts): the same object `toTransaction` makes of a
 * stored row, built from the page's value row without drizzle's mapping or a bigint per amount,
 * with `categoryType` from `types` (read in the same snapshot as the row).
 */
export function transactionOfValues(row: TransactionValues, types: CategoryTypes, parts: PageParts): TransactionOut {
  const splits = parts.splits.get(row[0]) ?? NONE
  return {
    id: row[0],
    externalId: row[1],
    accountId: row[2],
    categoryId: row[3],
    payeeId: row[4],
    amount: moneyJson(row[5]),
    date: row[6],
    note: row[7],
    originalDescription: row[15],
    time: row[8],
    isTransfer: row[9] === 1,
    transferToAccountId: row[10],
    destinationAmount: row[11] === null ? null : moneyJson(row[11]),
    exchangeRate: row[12] === null ? null : (JSON.rawJSON(row[12]) as number),
    hasSplits: splits.length > 0,
    splitMode: splits.length > 0 ? 'category' : null,
    categoryType: row[3] === null ? null : (types.get(row[3]) ?? null),
    createdAt: row[13],
    updatedAt: row[16],
    splits: splits.length === 0 ? EMPTY : splits.map(toSplit),
    tagIds: parts.tagIds.get(row[0]) ?? EMPTY,
  }
}
