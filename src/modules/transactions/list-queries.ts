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
 * leg) walks both indexes and the two are merged; a tag walks its assignments. A text search
 * whose matches are few reads exactly them (`matches`, through the FTS5 index) and sorts them;
 * the filters no index orders (text, amounts) are otherwise tested on the rows a scan meets,
 * up to a bound (CONTRACT §26).
 */

/**
 * What a page walks in list order: transactions (all, or by account, category or payee, or the
 * uncategorized ones), a category's or payee's legs (or the legs without a category), a tag's
 * assignments; or `matches`: the few transactions a text search finds, in no order, sorted.
 */
export type Scan =
  | 'all'
  | 'source'
  | 'destination'
  | 'ownCategory'
  | 'legCategory'
  | 'ownUncategorized'
  | 'legUncategorized'
  | 'ownPayee'
  | 'legPayee'
  | 'tag'
  | 'matches'

export interface ListFilter {
  scan: Scan
  /** Filters checked on each row the scan meets (those the scan does not walk by). */
  accountId?: boolean
  categoryId?: boolean
  /** `categoryId=none`, checked on each row. */
  uncategorized?: boolean
  payeeId?: boolean
  tagId?: boolean
  from?: boolean
  to?: boolean
  externalId?: boolean
  /** `q`, checked on each row (the text and the payees it matches: placeholders `q` and `payees`). */
  text?: boolean
  minAmount?: boolean
  maxAmount?: boolean
  cursor?: boolean
  /** Only rows at or after (in list order: not older than) the point a bounded walk stopped at (`stopDate`, `stopCreatedAt`, `stopId`). */
  stop?: boolean
  /** The sort key of the row `scanOffset` rows into the walk (its index's own filters: the scan, dates, the cursor), instead of the rows. */
  boundary?: boolean
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
  createdBy: transactions.createdBy,
  updatedBy: transactions.updatedBy,
  scheduleId: transactions.scheduleId,
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
  createdBy: string | null,
  updatedBy: string | null,
  scheduleId: string | null,
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
  if (scan === 'ownUncategorized') conditions.push(UNCATEGORIZED_OWN)
  if (scan === 'legUncategorized') conditions.push(sql`${transactionSplits.categoryId} IS NULL`, eq(transactions.id, transactionSplits.transactionId))
  if (scan === 'matches') conditions.push(sql`${transactions.id} = matched.id`)
  // A boundary counts the rows of the walk itself: what is tested on each row is left out (CONTRACT §9).
  const onRow = !filter.boundary
  if (filter.accountId && onRow) {
    conditions.push(sql`(${transactions.accountId} = ${sql.placeholder('accountId')} OR ${transactions.transferToAccountId} = ${sql.placeholder('accountId')})`)
  }
  if (filter.categoryId && onRow)
    conditions.push(sql`(${transactions.categoryId} = ${sql.placeholder('categoryId')} OR ${legWith('category_id', 'categoryId')})`)
  if (filter.uncategorized && onRow) {
    conditions.push(
      sql`(${UNCATEGORIZED_OWN} OR (${transactions.hasSplits} = 1 AND EXISTS (SELECT 1 FROM transaction_splits leg WHERE leg.transaction_id = ${transactions.id} AND leg.category_id IS NULL)))`,
    )
  }
  if (filter.payeeId && onRow) conditions.push(sql`(${transactions.payeeId} = ${sql.placeholder('payeeId')} OR ${legWith('payee_id', 'payeeId')})`)
  if (filter.tagId && onRow) {
    conditions.push(
      sql`(${transactions.hasTags} = 1 AND EXISTS (SELECT 1 FROM transaction_tags tt WHERE tt.transaction_id = ${transactions.id} AND tt.tag_id = ${sql.placeholder('tagId')}))`,
    )
  }
  if (filter.from) conditions.push(gte(transactions.date, sql.placeholder('from')))
  if (filter.to) conditions.push(lte(transactions.date, sql.placeholder('to')))
  if (filter.externalId) conditions.push(eq(transactions.externalId, sql.placeholder('externalId')))
  // Tested on the row: instr, not LIKE (LIKE stops at a NUL); both sides are normalized.
  if (filter.text && onRow) {
    conditions.push(sql`(EXISTS (SELECT 1 FROM transaction_search s WHERE s.transaction_id = ${transactions.id} AND instr(s.text, ${sql.placeholder('q')}) > 0)
      OR ${transactions.payeeId} IN ${matchedPayees}
      OR (${transactions.hasSplits} = 1 AND EXISTS (SELECT 1 FROM transaction_splits leg WHERE leg.transaction_id = ${transactions.id} AND leg.payee_id IN ${matchedPayees})))`)
  }
  if (filter.minAmount && onRow) conditions.push(gte(transactions.amount, sql.placeholder('minAmount')))
  if (filter.maxAmount && onRow) conditions.push(lte(transactions.amount, sql.placeholder('maxAmount')))
  if (filter.cursor) conditions.push(before(sortColumnsOf(scan)))
  if (filter.stop) conditions.push(notOlderThan(sortColumnsOf(scan)))
  return conditions
}

const notOlderThan = ([date, createdAt, id]: SortColumns) =>
  sql`(${date}, ${createdAt}, ${id}) >= (${sql.placeholder('stopDate')}, ${sql.placeholder('stopCreatedAt')}, ${sql.placeholder('stopId')})`

/** The payees `q` matches by name or alias, as a JSON array of ids (placeholder `payees`). */
const matchedPayees = sql`(SELECT value FROM json_each(${sql.placeholder('payees')}))`

/** An unsplit, non-transfer transaction without a category, or a split one with a leg without one (`categoryId=none`). */
const UNCATEGORIZED_OWN = sql`(${transactions.categoryId} IS NULL AND ${transactions.hasSplits} = 0 AND ${transactions.isTransfer} = 0)`

/**
 * The transactions `q` finds, in no order (the `matches` scan, used only when they are few):
 * those whose text the FTS5 trigram index holds the phrase in, and those of a matching payee,
 * as their own or a leg's.
 */
const TEXT_MATCHES = sql`(
  SELECT s.transaction_id AS id FROM transaction_search_fts JOIN transaction_search s ON s.id = transaction_search_fts.rowid WHERE transaction_search_fts MATCH ${sql.placeholder('phrase')}
  UNION SELECT p.id FROM transactions p WHERE p.payee_id IN ${matchedPayees}
  UNION SELECT l.transaction_id FROM transaction_splits l WHERE l.payee_id IN ${matchedPayees}
) AS matched`

const sortColumnsOf = (scan: Scan): SortColumns =>
  scan === 'legCategory' || scan === 'legPayee' || scan === 'legUncategorized' ? LEGS : scan === 'tag' ? TAGS : OWN

/** `query` with `INDEXED BY index` after the one `from "table"` of its SQL. */
function indexedBy(query: { toSQL(): { sql: string; params: unknown[] } }, table: string, index: string) {
  return {
    toSQL() {
      const built = query.toSQL()
      const parts = built.sql.split(`from "${table}"`)
      if (parts.length !== 2) throw new Error(`expected one "from ${table}" in ${built.sql}`)
      return { sql: parts.join(`from "${table}" INDEXED BY ${index}`), params: built.params }
    },
  }
}

/** The SQL of each filter shape, the same for every owner file. */
const pageQueries = new Map<string, SharedQuery>()

function pageQuery(shape: string, filter: ListFilter): SharedQuery {
  let query = pageQueries.get(shape)
  if (!query) {
    const where = and(...conditionsOf(filter))
    const order = sortColumnsOf(filter.scan)
    const [date, createdAt, id] = order
    query = new SharedQuery((db) => {
      // A boundary reads only the sort key of one row, `scanOffset` rows into the walk.
      const select = db.select(filter.boundary ? { date, createdAt: sql<number>`CAST(${createdAt} AS REAL)`, id } : pageColumns)
      const from = (() => {
        switch (filter.scan) {
          // The matches first, each then read by its id: CROSS JOIN keeps SQLite from walking the list index instead.
          case 'matches':
            return select.from(TEXT_MATCHES).crossJoin(transactions)
          case 'tag':
            return select.from(transactionTags).innerJoin(transactions, eq(transactions.id, transactionTags.transactionId))
          case 'legUncategorized':
            return select.from(transactionSplits).crossJoin(transactions)
          default:
            return order === LEGS
              ? select.from(transactionSplits).innerJoin(transactions, eq(transactions.id, transactionSplits.transactionId))
              : select.from(transactions)
        }
      })()
      const filtered = from.$dynamic().where(where)
      // Two legs of one transaction may match: one row per transaction, grouped in index order.
      const grouped = order === LEGS ? filtered.groupBy(date, createdAt, id) : filtered
      const ordered = grouped.orderBy(desc(date), desc(createdAt), desc(id))
      const built = filter.boundary ? ordered.limit(sql.placeholder('one')).offset(sql.placeholder('scanOffset')) : ordered.limit(sql.placeholder('limit'))
      // The partial indexes hold exactly the rows these scans want, but no equality names them,
      // so SQLite would rather walk the category index past every split and transfer, or an
      // account filter's index in no order: INDEXED BY says which to walk (drizzle cannot).
      if (filter.scan === 'ownUncategorized') return indexedBy(built, 'transactions', 'transactions_uncategorized_idx')
      if (filter.scan === 'legUncategorized') return indexedBy(built, 'transaction_splits', 'transaction_splits_uncategorized_idx')
      return built
    })
    pageQueries.set(shape, query)
  }
  return query
}

const statements = lazyStatements({
  /** This file's list statements by filter shape, prepared on first use. */
  pageLists: () => new Map<string, Statement>(),
  countText: (db) =>
    db.$client.prepare<{ n: number | bigint }, [string, number]>(
      'SELECT count(*) AS n FROM (SELECT 1 FROM transaction_search_fts WHERE transaction_search_fts MATCH ?1 LIMIT ?2)',
    ),
  // instr, not LIKE: LIKE stops at a NUL (as the payees' own q does).
  payeesMatching: (db) => db.$client.prepare<unknown, [string]>('SELECT id, transaction_count FROM payees WHERE instr(search_text, ?1) > 0'),
})

export type ListValues = Record<string, string | number | bigint>

function run(tenant: Tenant, filter: ListFilter, values: ListValues): unknown[][] {
  const shape = JSON.stringify(filter)
  const query = pageQuery(shape, filter)
  const prepared = tenant.prepared(statements).pageLists
  let statement = prepared.get(shape)
  if (!statement) {
    statement = query.prepare(tenant.db)
    prepared.set(shape, statement)
  }
  return query.values(statement, values)
}

/** One scan of a page, newest first, as bare value rows for `transactionOfValues`: no drizzle mapping. */
export function listTransactionValues(tenant: Tenant, filter: ListFilter, values: ListValues): TransactionValues[] {
  return run(tenant, { ...filter, boundary: undefined }, values) as TransactionValues[]
}

/**
 * Where a walk of `filter`'s scan stops when it may test at most `scanOffset + 1` rows: the
 * sort key of that last row, or undefined when the scan holds fewer (it then runs to its end).
 * Counted on the rows of the index walk itself (the scan, `from`/`to`, the cursor): the filters
 * tested on each row are not, so finding the boundary reads index entries only.
 */
export function walkBoundary(tenant: Tenant, filter: ListFilter, values: ListValues): [date: string, createdAt: number, id: string] | undefined {
  const row = run(tenant, { ...filter, boundary: true, stop: undefined }, { ...values, one: 1 })[0]
  return row as [string, number, string] | undefined
}

/** How many transactions' texts hold `phrase` (an FTS5 phrase), counting at most `cap`. */
export function countTextMatches(tenant: Tenant, phrase: string, cap: number): number {
  const row = tenant.prepared(statements).countText.get(phrase, cap)
  return Number(row?.n ?? 0)
}

/** The payees whose normalized name or an alias holds `q`, and how many transactions name them (their own or a leg's). */
export function payeesMatching(tenant: Tenant, q: string): { ids: string[]; transactions: number } {
  const ids: string[] = []
  let count = 0
  for (const [id, transactionCount] of tenant.prepared(statements).payeesMatching.values(q) as [string, number | bigint][]) {
    ids.push(id)
    count += Number(transactionCount)
  }
  return { ids, transactions: count }
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
    createdBy: row[17],
    updatedBy: row[18],
    splits: splits.length === 0 ? EMPTY : splits.map(toSplit),
    tagIds: parts.tagIds.get(row[0]) ?? EMPTY,
    scheduleId: row[19],
  }
}
