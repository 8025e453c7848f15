import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { openDatabase } from '../../src/db/sqlite.ts'
import { Tenant } from '../../src/db/tenant/tenant.ts'
import { type ListFilter, listTransactionValues, walkBoundary } from '../../src/modules/transactions/list-queries.ts'
import { tempDir } from '../support/harness.ts'

/**
 * CONTRACT §9, §26: what SQLite runs for the new list filters. A walk follows an index in list
 * order (no temporary B-tree for the order, so it stops after the page), `categoryId=none` walks
 * the partial indexes that hold exactly its rows (not the category index past every split and
 * transfer), and a text search with few matches reads them through the FTS5 index.
 */

const dir = tempDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The query plan of every statement a list call prepares, by SQLite's EXPLAIN QUERY PLAN on a real owner file. */
function plansOf(run: (tenant: Tenant) => void): string[][] {
  const db = openDatabase(join(dir, `${crypto.randomUUID()}.db`), { synchronous: 'FULL', migrations })
  const plans: string[][] = []
  const prepare = db.prepare.bind(db)
  db.prepare = ((text: string) => {
    plans.push((prepare(`EXPLAIN QUERY PLAN ${text}`).all() as { detail: string }[]).map((row) => row.detail))
    return prepare(text)
  }) as typeof db.prepare
  try {
    run(new Tenant('own_plans', db))
  } finally {
    db.close(true)
  }
  return plans
}

const VALUES = {
  limit: 51,
  q: 'cafe',
  payees: '[]',
  phrase: '"cafe"',
  minAmount: 100n,
  maxAmount: 200n,
  stopDate: '2026-01-01',
  stopCreatedAt: 1,
  stopId: 'txn_x',
  scanOffset: 9,
  date: '2026-02-01',
  createdAt: 1,
  id: 'txn_y',
  accountId: 'acct_x',
  tagId: 'tag_x',
  payeeId: 'pay_x',
}

const walks: [string, ListFilter][] = [
  ['every transaction, text and amounts tested', { scan: 'all', text: true, minAmount: true, maxAmount: true, cursor: true, stop: true }],
  ['uncategorized, own', { scan: 'ownUncategorized', accountId: true, text: true, cursor: true, stop: true }],
  ['uncategorized, legs', { scan: 'legUncategorized', accountId: true, minAmount: true, cursor: true }],
  ['an account, uncategorized tested', { scan: 'source', uncategorized: true, text: true, stop: true }],
  ['a tag, uncategorized and text tested', { scan: 'tag', uncategorized: true, text: true, cursor: true }],
  ['a payee, an account tested', { scan: 'ownPayee', accountId: true, from: true, cursor: true, stop: true }],
  ['a category, a payee tested', { scan: 'ownCategory', payeeId: true, stop: true }],
  ['a category through legs, an account tested', { scan: 'legCategory', accountId: true, stop: true }],
  ['an account, a category and a tag tested', { scan: 'source', categoryId: true, tagId: true, to: true, stop: true }],
]

describe('walks follow an index in list order', () => {
  for (const [name, filter] of walks) {
    test(name, () => {
      const [page] = plansOf((tenant) => listTransactionValues(tenant, filter, VALUES))
      expect(page?.join('\n')).not.toContain('TEMP B-TREE FOR ORDER BY')
      const [boundary] = plansOf((tenant) => walkBoundary(tenant, filter, VALUES))
      expect(boundary?.join('\n')).not.toContain('TEMP B-TREE')
    })
  }

  // Pins that finding where a bounded walk stops reads the scan's index alone (CONTRACT §9): the
  // filters tested on each row are left out of the boundary, so it never reads a table row.
  test('the boundary of a walk with a second id filter reads only its scan’s index', () => {
    for (const [filter, index] of [
      [{ scan: 'ownPayee', accountId: true, from: true, cursor: true }, 'transactions_payee_idx'],
      [{ scan: 'ownCategory', payeeId: true, tagId: true }, 'transactions_category_idx'],
      [{ scan: 'source', categoryId: true, uncategorized: false }, 'transactions_account_idx'],
    ] as [ListFilter, string][]) {
      const [boundary] = plansOf((tenant) => walkBoundary(tenant, filter, VALUES))
      expect(boundary?.join('\n')).toContain(`USING COVERING INDEX ${index}`)
      expect(boundary?.join('\n')).not.toContain('EXISTS')
    }
  })

  test('categoryId=none walks the partial indexes that hold exactly its rows', () => {
    const [own] = plansOf((tenant) => listTransactionValues(tenant, { scan: 'ownUncategorized', accountId: true }, VALUES))
    expect(own?.[0]).toContain('transactions_uncategorized_idx')
    const [legs] = plansOf((tenant) => listTransactionValues(tenant, { scan: 'legUncategorized', accountId: true }, VALUES))
    expect(legs?.[0]).toContain('transaction_splits_uncategorized_idx')
  })

  test('a search with few matches reads them through the FTS5 index, then each by its id', () => {
    const [plan] = plansOf((tenant) => listTransactionValues(tenant, { scan: 'matches', accountId: true, minAmount: true, cursor: true }, VALUES))
    const text = plan?.join('\n') ?? ''
    expect(text).toContain('SCAN transaction_search_fts VIRTUAL TABLE')
    expect(text).toContain('SEARCH transactions USING INDEX sqlite_autoindex_transactions_1 (id=?)')
    expect(text).not.toContain('SCAN transactions')
  })
})
