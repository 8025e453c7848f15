import type { SQLQueryBindings, Statement } from 'bun:sqlite'
import { lazyStatements } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'

/** The SQL of budgets (CONTRACT §27): a month's plan, and its activity summed in one pass. */

export interface PlanLine {
  categoryId: string
  planned: bigint
  note: string | null
}

/** One group of a month's activity: the sum of one account's rows in one category (null: none). */
export interface ActivityRow {
  accountId: string
  categoryId: string | null
  /** The split transaction whose legs these are; null for rows summed over whole transactions. */
  splitOf: string | null
  amount: bigint
  /** Transactions (legs, for a split one) summed. */
  count: number
}

/** The list order of categories (CONTRACT §9): system first, then custom, each by createdAt and id. */
const CATEGORY_ORDER = '(1 - c.is_system), c.created_at, c.id'

/**
 * A month's activity, in one statement that reads the month's rows once, in order, from two
 * indexes holding every column it needs (migration 0012_budgets; EXPLAIN QUERY PLAN in
 * test/budgets/query-plan.test.ts): transactions that are neither transfers nor split, summed
 * by account and category; and the legs of split ones, by their own category, kept apart per
 * transaction so that a transaction is counted once however many of its legs share a parent.
 * Both indexes start with the month and go on in the order the sums group by, so SQLite
 * neither scans nor sorts; the indexes and the join order are named (INDEXED BY, CROSS JOIN),
 * so no statistics of a file can turn the plan into a scan.
 *
 * Sums are exact at any size: each amount is summed as its high and low 32 bits, which cannot
 * overflow SQLite's 64-bit integers (as a plain sum of large amounts could) and are put back
 * together as a bigint.
 */
const ACTIVITY = `
  SELECT account_id, category_id, NULL AS split_of, sum(amount >> 32) AS high, sum(amount & 4294967295) AS low, count(*) AS n
  FROM transactions INDEXED BY transactions_budget_idx
  WHERE substr(date, 1, 7) = ?1 AND is_transfer = 0 AND has_splits = 0
  GROUP BY account_id, category_id
  UNION ALL
  SELECT t.account_id, s.category_id, s.transaction_id, sum(s.amount >> 32), sum(s.amount & 4294967295), count(*)
  FROM transaction_splits AS s INDEXED BY transaction_splits_budget_idx
  CROSS JOIN transactions AS t INDEXED BY sqlite_autoindex_transactions_1 ON t.id = s.transaction_id
  WHERE substr(s.date, 1, 7) = ?1 AND t.is_transfer = 0
  GROUP BY s.transaction_id, s.category_id`

type RawActivity = [string, string | null, string | null, bigint, bigint, bigint]

const statements = lazyStatements({
  month: (db) => prepare<{ currency: string }, [string]>(db, 'SELECT currency FROM budgets WHERE month = ?'),
  lines: (db) =>
    prepare<{ category_id: string; planned: bigint; note: string | null }, [string]>(
      db,
      `SELECT l.category_id, l.planned, l.note FROM budget_lines AS l JOIN categories AS c ON c.id = l.category_id WHERE l.month = ? ORDER BY ${CATEGORY_ORDER}`,
    ),
  addMonth: (db) => prepare<unknown, [string, string]>(db, 'INSERT INTO budgets (month, currency) VALUES (?, ?)'),
  setCurrency: (db) => prepare<unknown, [string, string]>(db, 'UPDATE budgets SET currency = ?2 WHERE month = ?1'),
  putLine: (db) =>
    prepare<unknown, [string, string, bigint, string | null]>(
      db,
      'INSERT INTO budget_lines (month, category_id, planned, note) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (month, category_id) DO UPDATE SET planned = excluded.planned, note = excluded.note',
    ),
  dropLine: (db) => prepare<unknown, [string, string]>(db, 'DELETE FROM budget_lines WHERE month = ? AND category_id = ?'),
  activity: (db) => db.$client.prepare<RawActivity, [string]>(ACTIVITY),
  currencies: (db) => prepare<{ id: string; currency: string }, []>(db, 'SELECT id, currency FROM accounts'),
  categories: (db) =>
    prepare<{ id: string; parent_id: string | null; type: 'expense' | 'income' | null; is_archived: bigint }, []>(
      db,
      `SELECT c.id, c.parent_id, c.type, c.is_archived FROM categories AS c ORDER BY ${CATEGORY_ORDER}`,
    ),
})

function prepare<R, P extends SQLQueryBindings[]>(db: TenantDrizzle, text: string): Statement<R, P> {
  return db.$client.prepare<R, P>(text) as Statement<R, P>
}

const budgetQueries = (tenant: Tenant) => tenant.prepared(statements)

/** The SQL of the activity statement, for the plan test. */
export const ACTIVITY_SQL = ACTIVITY

export const monthCurrency = (tenant: Tenant, month: string): string | undefined => budgetQueries(tenant).month.get(month)?.currency

export const planLines = (tenant: Tenant, month: string): PlanLine[] =>
  budgetQueries(tenant)
    .lines.all(month)
    .map((row) => ({ categoryId: row.category_id, planned: row.planned, note: row.note }))

export function setMonthCurrency(tenant: Tenant, month: string, currency: string, exists: boolean): void {
  const q = budgetQueries(tenant)
  if (exists) q.setCurrency.run(month, currency)
  else q.addMonth.run(month, currency)
}

export const putLine = (tenant: Tenant, month: string, line: PlanLine): void => {
  budgetQueries(tenant).putLine.run(month, line.categoryId, line.planned, line.note)
}

export const dropLine = (tenant: Tenant, month: string, categoryId: string): void => {
  budgetQueries(tenant).dropLine.run(month, categoryId)
}

/** Every group of the month's activity (`YYYY-MM`). */
export function monthActivity(tenant: Tenant, month: string): ActivityRow[] {
  const rows = budgetQueries(tenant).activity.values(month) as unknown as RawActivity[]
  return rows.map(([accountId, categoryId, splitOf, high, low, n]) => ({
    accountId,
    categoryId,
    splitOf,
    amount: high * 4294967296n + low,
    count: Number(n),
  }))
}

/** Each account's currency, kept until the file changes: a month's rows are summed by account. */
const readCurrencies = (tenant: Tenant): ReadonlyMap<string, string> =>
  new Map(
    budgetQueries(tenant)
      .currencies.all()
      .map((row) => [row.id, row.currency]),
  )
export const accountCurrencies = (tenant: Tenant) => tenant.unchanged(readCurrencies)

export interface CategoryNode {
  id: string
  parentId: string | null
  type: 'expense' | 'income' | null
  isArchived: boolean
  /** Its place in the category list order. */
  rank: number
}

/** Every category of the file (visible or not), in list order, kept until the file changes. */
const readCategories = (tenant: Tenant): ReadonlyMap<string, CategoryNode> =>
  new Map(
    budgetQueries(tenant)
      .categories.all()
      .map((row, rank) => [row.id, { id: row.id, parentId: row.parent_id, type: row.type, isArchived: Number(row.is_archived) === 1, rank }]),
  )
export const categoryNodes = (tenant: Tenant) => tenant.unchanged(readCategories)
