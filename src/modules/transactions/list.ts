import type { Tenant } from '../../db/tenant/tenant.ts'
import { type CursorKey, decodeCursor, page } from '../../platform/pagination.ts'
import { categoryTypes } from '../categories/queries.ts'
import { type ListFilter, listTransactionValues, partsOfPage, type Scan, type TransactionValues, transactionOfValues, VALUES_AT } from './list-queries.ts'
import type { TransactionListInput, TransactionOut } from './model.ts'

/**
 * `GET /v1/transactions` (CONTRACT §9): newest first (date, then createdAt, then id), filtered,
 * one keyset page. One filter decides what the page walks (a tag, else a category, else a payee,
 * else an account); the others are checked on the rows it meets.
 */

const { id: ID, date: DATE, createdAt: CREATED_AT } = VALUES_AT
const sortKey = (row: TransactionValues): CursorKey => [row[DATE], Number(row[CREATED_AT]), row[ID]]
const newerFirst = (a: TransactionValues, b: TransactionValues) =>
  a[DATE] !== b[DATE] ? (a[DATE] < b[DATE] ? 1 : -1) : a[CREATED_AT] !== b[CREATED_AT] ? (a[CREATED_AT] < b[CREATED_AT] ? 1 : -1) : a[ID] < b[ID] ? 1 : -1

/** The index-ordered scans whose merge is the page: disjoint, so no row comes twice. */
function scansOf(query: TransactionListInput): Scan[] {
  if (query.tagId !== undefined) return ['tag']
  if (query.categoryId !== undefined) return ['ownCategory', 'legCategory']
  if (query.payeeId !== undefined) return ['ownPayee', 'legPayee']
  if (query.accountId !== undefined) return ['source', 'destination']
  return ['all']
}

const BY_ACCOUNT: readonly Scan[] = ['source', 'destination']
const BY_CATEGORY: readonly Scan[] = ['ownCategory', 'legCategory']
const BY_PAYEE: readonly Scan[] = ['ownPayee', 'legPayee']

export function listTransactionPage(tenant: Tenant, query: TransactionListInput) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'sns')
  const values: Record<string, string | number> = { limit: limit + 1 }
  for (const name of ['categoryId', 'payeeId', 'tagId', 'from', 'to', 'externalId', 'accountId'] as const) {
    const value = query[name]
    if (value !== undefined) values[name] = value
  }
  if (after) Object.assign(values, { date: after[0], createdAt: after[1], id: after[2] })
  const filterOf = (scan: Scan): ListFilter => ({
    scan,
    accountId: query.accountId !== undefined && !BY_ACCOUNT.includes(scan),
    categoryId: query.categoryId !== undefined && !BY_CATEGORY.includes(scan),
    payeeId: query.payeeId !== undefined && !BY_PAYEE.includes(scan),
    from: query.from !== undefined,
    to: query.to !== undefined,
    externalId: query.externalId !== undefined,
    cursor: after !== undefined,
  })
  // One snapshot for the category types, the rows (every scan of them) and their legs and tags.
  return tenant.read(() => {
    const types = categoryTypes(tenant)
    const scans = scansOf(query)
    let rows = listTransactionValues(tenant, filterOf(scans[0] as Scan), values)
    if (scans.length > 1) {
      for (const scan of scans.slice(1)) rows = rows.concat(listTransactionValues(tenant, filterOf(scan), values))
      rows = rows.sort(newerFirst).slice(0, limit + 1)
    }
    const parts = partsOfPage(tenant, rows.slice(0, limit))
    return page(rows, limit, sortKey, (row) => transactionOfValues(row, types, parts))
  })
}

/** The newest `limit` transactions, as the agent context shows them; call inside the context's `tenant.read`. */
export function newestTransactions(tenant: Tenant, limit: number): TransactionOut[] {
  const types = categoryTypes(tenant)
  const rows = listTransactionValues(tenant, { scan: 'all' }, { limit })
  const parts = partsOfPage(tenant, rows)
  return rows.map((row) => transactionOfValues(row, types, parts))
}
