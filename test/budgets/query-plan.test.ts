import { expect, test } from 'bun:test'
import { ACTIVITY_SQL } from '../../src/modules/budgets/queries.ts'
import { serverWithOwner } from '../support/harness.ts'
import { createAccount, createTxn } from '../transactions/helpers.ts'

/**
 * CONTRACT §27 speed: a month's spending is read in one pass over the month's rows, each found
 * through an index that holds every column the sums need (no table row is read for a whole
 * transaction; a leg reads its transaction's row for the account), and no table is scanned.
 * The plan is SQLite's own, asked of an owner file the server made.
 */

const { server, owner } = serverWithOwner({ owner: { defaultCurrency: 'EUR' } })

test('EXPLAIN QUERY PLAN: two covering-index range searches over the month, no scan', async () => {
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
    .query<{ detail: string }, [string, string]>(`EXPLAIN QUERY PLAN ${ACTIVITY_SQL}`)
    .all('2026-03-01', '2026-03-31')
    .map((row) => row.detail)
  expect(plan).toEqual([
    'COMPOUND QUERY',
    'LEFT-MOST SUBQUERY',
    'SEARCH transactions USING COVERING INDEX transactions_budget_idx (date>? AND date<?)',
    'USE TEMP B-TREE FOR GROUP BY',
    'UNION ALL',
    'SEARCH s USING COVERING INDEX transaction_splits_budget_idx (date>? AND date<?)',
    'SEARCH t USING INDEX sqlite_autoindex_transactions_1 (id=?)',
    'USE TEMP B-TREE FOR GROUP BY',
  ])
  expect(plan.some((step) => step.startsWith('SCAN'))).toBe(false)
})
