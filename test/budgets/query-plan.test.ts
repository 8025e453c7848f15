import { expect, test } from 'bun:test'
import { ACTIVITY_SQL } from '../../src/modules/budgets/queries.ts'
import { serverWithOwner } from '../support/harness.ts'
import { createAccount, createTxn } from '../transactions/helpers.ts'

/**
 * CONTRACT §27 speed: a month's spending is read in one pass over the month's rows, in the
 * order the sums group by, from indexes that hold every column they need (a leg reads its
 * transaction's row for the account): no table is scanned and nothing is sorted. The plan is
 * SQLite's own, asked of an owner file the server made, after ANALYZE (statistics of a file
 * with few rows would favour a scan, were the plan not pinned).
 */

const { server, owner } = serverWithOwner({ owner: { defaultCurrency: 'EUR' } })

test('EXPLAIN QUERY PLAN: two covering-index searches of the month, no scan, no sort', async () => {
  const account = (await createAccount(server, owner.key)).id
  await createTxn(server, owner.key, { accountId: account, amount: 5, date: '2026-03-04', categoryId: 'cat_sys_groceries' })
  await createTxn(server, owner.key, {
    accountId: account,
    amount: 5,
    date: '2026-03-04',
    splits: [
      { amount: 2, categoryId: 'cat_sys_groceries' },
      { amount: 3, categoryId: null },
    ],
  })
  const db = server.platform.tenants.get(owner.id).sqlite
  db.run('ANALYZE')
  const plan = db
    .query<{ detail: string }, [string]>(`EXPLAIN QUERY PLAN ${ACTIVITY_SQL}`)
    .all('2026-03')
    .map((row) => row.detail)
  expect(plan).toEqual([
    'COMPOUND QUERY',
    'LEFT-MOST SUBQUERY',
    'SEARCH transactions USING COVERING INDEX transactions_budget_idx (<expr>=? AND is_transfer=? AND has_splits=?)',
    'UNION ALL',
    'SEARCH s USING COVERING INDEX transaction_splits_budget_idx (<expr>=?)',
    'SEARCH t USING INDEX sqlite_autoindex_transactions_1 (id=?)',
  ])
  expect(plan.some((step) => step.startsWith('SCAN') || step.includes('TEMP B-TREE'))).toBe(false)
})
