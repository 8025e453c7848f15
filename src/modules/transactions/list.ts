import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError } from '../../platform/errors.ts'
import { unitsFromLexeme } from '../../platform/money.ts'
import { type CursorKey, decodeCursor, encodeCursor, page } from '../../platform/pagination.ts'
import { categoryTypes } from '../categories/queries.ts'
import { normalizeName } from '../payees/normalize.ts'
import {
  countTextMatches,
  type ListFilter,
  type ListValues,
  listTransactionValues,
  partsOfPage,
  payeesMatching,
  type Scan,
  type TransactionValues,
  transactionOfValues,
  VALUES_AT,
  walkBoundary,
} from './list-queries.ts'
import type { TransactionListInput, TransactionOut } from './model.ts'
import { ensureSearchText } from './search-text.ts'

/**
 * `GET /v1/transactions` (CONTRACT §9, §26): newest first (date, then createdAt, then id),
 * filtered, one keyset page. One filter decides what the page walks (a tag, else a category,
 * else a payee, else an account); the others are checked on the rows it meets. A text search
 * (`q`) whose matches are few reads just those; otherwise text and amounts are tested on the
 * rows the walk meets, at most `LIST_BOUNDS.walk` of them per scan, and a page that stops there says so
 * with `hasMore` and a cursor after the last row tested.
 */

const { id: ID, date: DATE, createdAt: CREATED_AT } = VALUES_AT
const sortKey = (row: TransactionValues): CursorKey => [row[DATE], Number(row[CREATED_AT]), row[ID]]
const newerFirst = (a: TransactionValues, b: TransactionValues) =>
  a[DATE] !== b[DATE] ? (a[DATE] < b[DATE] ? 1 : -1) : a[CREATED_AT] !== b[CREATED_AT] ? (a[CREATED_AT] < b[CREATED_AT] ? 1 : -1) : a[ID] < b[ID] ? 1 : -1

export const LIST_BOUNDS = {
  /**
   * A text search reads its matches through the FTS5 index and sorts them when there are at
   * most this many (text matches counted up to it, plus the transactions of the payees it
   * matches): a page then costs at most this many row reads, whatever the ledger's size.
   */
  textMatches: 5_000,
  /** The most rows of one scan a page tests against the filters its index does not order (text, amounts, a second id filter). */
  walk: 10_000,
}
/** Trigrams: a shorter text cannot be looked up in the index. */
const INDEXED_TEXT_LENGTH = 3

/** The index-ordered scans whose merge is the page: disjoint, so no row comes twice. */
function scansOf(query: TransactionListInput): Scan[] {
  if (query.tagId !== undefined) return ['tag']
  if (query.categoryId === 'none') return ['ownUncategorized', 'legUncategorized']
  if (query.categoryId !== undefined) return ['ownCategory', 'legCategory']
  if (query.payeeId !== undefined) return ['ownPayee', 'legPayee']
  if (query.accountId !== undefined) return ['source', 'destination']
  return ['all']
}

const BY_ACCOUNT: readonly Scan[] = ['source', 'destination']
const BY_CATEGORY: readonly Scan[] = ['ownCategory', 'legCategory', 'ownUncategorized', 'legUncategorized']
const BY_PAYEE: readonly Scan[] = ['ownPayee', 'legPayee']

/** `minAmount`/`maxAmount` as exact units: 422 naming the parameter when it is not a money value (CONTRACT §4). */
function amountOf(query: TransactionListInput, name: 'minAmount' | 'maxAmount'): bigint | undefined {
  const value = query[name]
  if (value === undefined) return undefined
  const units = unitsFromLexeme(value)
  if (typeof units === 'string') throw new ApiError('validation_failed', `query parameter '${name}' ${units}`)
  return units
}

/** `q` as searched: normalized as payee names are; one that normalizes to nothing is refused. */
function searchOf(query: TransactionListInput): string | undefined {
  if (query.q === undefined) return undefined
  const text = normalizeName(query.q)
  if (text === '') throw new ApiError('validation_failed', "query parameter 'q' has nothing to search for once case, accents and spaces are set aside")
  return text
}

/** An FTS5 phrase that matches `text` as a substring (trigram tokenizer): quoted, its quotes doubled. */
const phraseOf = (text: string) => `"${text.replaceAll('"', '""')}"`

export function listTransactionPage(tenant: Tenant, query: TransactionListInput) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'sns')
  const minAmount = amountOf(query, 'minAmount')
  const maxAmount = amountOf(query, 'maxAmount')
  const text = searchOf(query)
  // A file made before search (or before a text was added to it) is filled once, before its first search.
  if (text !== undefined) ensureSearchText(tenant)
  const values: ListValues = { limit: limit + 1 }
  for (const name of ['categoryId', 'payeeId', 'tagId', 'from', 'to', 'externalId', 'accountId'] as const) {
    const value = query[name]
    if (value !== undefined) values[name] = value
  }
  if (minAmount !== undefined) values.minAmount = minAmount
  if (maxAmount !== undefined) values.maxAmount = maxAmount
  if (after) Object.assign(values, { date: after[0], createdAt: after[1], id: after[2] })
  const uncategorized = query.categoryId === 'none'
  const filterOf = (scan: Scan, walk: { text: boolean; stop: boolean }): ListFilter => ({
    scan,
    accountId: query.accountId !== undefined && !BY_ACCOUNT.includes(scan),
    categoryId: query.categoryId !== undefined && !uncategorized && !BY_CATEGORY.includes(scan),
    uncategorized: uncategorized && !BY_CATEGORY.includes(scan),
    payeeId: query.payeeId !== undefined && !BY_PAYEE.includes(scan),
    tagId: query.tagId !== undefined && scan !== 'tag',
    from: query.from !== undefined,
    to: query.to !== undefined,
    externalId: query.externalId !== undefined,
    text: walk.text,
    minAmount: minAmount !== undefined,
    maxAmount: maxAmount !== undefined,
    cursor: after !== undefined,
    stop: walk.stop,
  })
  // One snapshot for the category types, the rows (every scan of them) and their legs and tags.
  return tenant.read(() => {
    const types = categoryTypes(tenant)
    const toItem = (row: TransactionValues, parts: ReturnType<typeof partsOfPage>) => transactionOfValues(row, types, parts)
    let scans = scansOf(query)
    let testsText = false
    if (text !== undefined) {
      const payees = payeesMatching(tenant, text)
      values.q = text
      values.payees = JSON.stringify(payees.ids)
      testsText = true
      // FTS5's query parser ends a string at a NUL: such a text is tested row by row (instr), as a short one is.
      if ([...text].length >= INDEXED_TEXT_LENGTH && !text.includes('\0')) {
        values.phrase = phraseOf(text)
        const budget = LIST_BOUNDS.textMatches - payees.transactions
        // Few matches: read exactly them (every other filter is tested on them), and sort them.
        if (budget >= 0 && countTextMatches(tenant, values.phrase, budget + 1) <= budget) {
          scans = ['matches']
          testsText = false
        }
      }
    }
    // The matches of a search are few: every other filter is tested on them without a bound. Any
    // other filter tested on each row of a walk (text, amounts, and a second id filter: an
    // account within a payee's rows, …) bounds it, so no combination reads in proportion to the
    // ledger (CONTRACT §9).
    const testsOnRows = (scan: Scan) => {
      const filter = filterOf(scan, { text: false, stop: false })
      return filter.accountId || filter.categoryId || filter.uncategorized || filter.payeeId || filter.tagId
    }
    const bounded = scans[0] !== 'matches' && (testsText || minAmount !== undefined || maxAmount !== undefined || scans.some(testsOnRows))
    // A walk that tests unindexed filters stops after `LIST_BOUNDS.walk` rows of each scan: where the
    // newest of those stops lies, every scan has been tested down to, and no further.
    let stop: Key | undefined
    if (bounded) {
      for (const scan of scans) {
        const boundary = walkBoundary(tenant, filterOf(scan, { text: false, stop: false }), { ...values, scanOffset: LIST_BOUNDS.walk - 1 })
        if (boundary && (!stop || newer(boundary, stop))) stop = boundary
      }
      if (stop) Object.assign(values, { stopDate: stop[0], stopCreatedAt: stop[1], stopId: stop[2] })
    }
    let rows: TransactionValues[] = []
    for (const scan of scans) rows = rows.concat(listTransactionValues(tenant, filterOf(scan, { text: testsText, stop: stop !== undefined }), values))
    if (scans.length > 1) rows = rows.sort(newerFirst).slice(0, limit + 1)
    if (stop && rows.length <= limit) {
      // The walk stopped before the page filled: what it found, and a cursor after the last row it tested.
      const parts = partsOfPage(tenant, rows)
      return { data: rows.map((row) => toItem(row, parts)), nextCursor: encodeCursor(stop), hasMore: true }
    }
    const parts = partsOfPage(tenant, rows.slice(0, limit))
    return page(rows, limit, sortKey, (row) => toItem(row, parts))
  })
}

type Key = [date: string, createdAt: number, id: string]
/** Whether `a` comes before `b` in list order (it is newer). */
const newer = (a: Key, b: Key) => (a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] > b[2])

/** The newest `limit` transactions, as the agent context shows them; call inside the context's `tenant.read`. */
export function newestTransactions(tenant: Tenant, limit: number): TransactionOut[] {
  const types = categoryTypes(tenant)
  const rows = listTransactionValues(tenant, { scan: 'all' }, { limit })
  const parts = partsOfPage(tenant, rows)
  return rows.map((row) => transactionOfValues(row, types, parts))
}
