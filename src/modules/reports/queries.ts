import type { Statement } from 'bun:sqlite'
import { lazyStatements } from '../../db/statements.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import type { GroupBy } from './model.ts'

/**
 * The spending report's one pass (CONTRACT §26): each non-transfer transaction of the date range
 * (walked by the list index, or by the account's when one is named) once, joined to its legs when
 * it has some, so that a leg counts in its own group with its own amount; grouped in SQL.
 *
 * Sums stay exact and never overflow SQLite's 64-bit integers: each amount is summed as its
 * whole units (amount / 10⁸) and its remainder (amount % 10⁸) apart, both far from the limit,
 * and the two are put together as bigints.
 */

const KEYS: Record<GroupBy, string> = {
  category: 'CASE WHEN l.id IS NULL THEN t.category_id ELSE l.category_id END',
  // A leg without a payee counts toward the transaction's payee (CONTRACT §21).
  payee: 'CASE WHEN l.id IS NULL THEN t.payee_id ELSE coalesce(l.payee_id, t.payee_id) END',
  month: 'substr(t.date, 1, 7)',
}

function reportSql(groupBy: GroupBy, byAccount: boolean): string {
  const amount = 'CASE WHEN l.id IS NULL THEN t.amount ELSE l.amount END'
  return `SELECT key, currency,
      sum(CASE WHEN amount > 0 THEN amount / 100000000 ELSE 0 END), sum(CASE WHEN amount > 0 THEN amount % 100000000 ELSE 0 END),
      sum(CASE WHEN amount < 0 THEN amount / 100000000 ELSE 0 END), sum(CASE WHEN amount < 0 THEN amount % 100000000 ELSE 0 END),
      count(DISTINCT transaction_id)
    FROM (
      SELECT ${KEYS[groupBy]} AS key, a.currency AS currency, ${amount} AS amount, t.id AS transaction_id
      FROM transactions t
      LEFT JOIN transaction_splits l ON t.has_splits = 1 AND l.transaction_id = t.id
      JOIN accounts a ON a.id = t.account_id
      WHERE t.date >= ?1 AND t.date <= ?2 AND t.is_transfer = 0${byAccount ? ' AND t.account_id = ?3' : ''}
    )
    GROUP BY key, currency`
}

/** One group's sums as SQLite gives them: key, currency, the two halves of spent and of the negative amounts, the count. */
export type GroupRow = [key: string | null, currency: string, spentWhole: bigint, spentRest: bigint, negativeWhole: bigint, negativeRest: bigint, count: bigint]

const UNIT = 100_000_000n

/** Whole units and remainder put back together: exact at any size. */
export const joinHalves = (whole: bigint, rest: bigint): bigint => BigInt(whole) * UNIT + BigInt(rest)

const statements = lazyStatements({
  /** By group and whether an account is named, prepared on first use. */
  reports: () => new Map<string, Statement>(),
  payeeNames: (db) => db.$client.prepare('SELECT id, name FROM payees WHERE id IN (SELECT value FROM json_each(?1))'),
})

export function spendingRows(tenant: Tenant, groupBy: GroupBy, from: string, to: string, accountId?: string): GroupRow[] {
  const reports = tenant.prepared(statements).reports
  const shape = `${groupBy}:${accountId !== undefined}`
  let statement = reports.get(shape)
  if (!statement) {
    statement = tenant.sqlite.prepare(reportSql(groupBy, accountId !== undefined))
    reports.set(shape, statement)
  }
  const args = accountId === undefined ? [from, to] : [from, to, accountId]
  return statement.values(...args) as GroupRow[]
}

/** The names of the payees among `ids`. */
export function payeeNames(tenant: Tenant, ids: string[]): Map<string, string> {
  const rows = tenant.prepared(statements).payeeNames.values(JSON.stringify(ids)) as [string, string][]
  return new Map(rows)
}
