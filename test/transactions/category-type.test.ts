import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createCategory } from '../categories/helpers.ts'
import { createAccount, createTxn } from './helpers.ts'

/**
 * A transaction's `categoryType` is its category's type now. Lists and the agent context read
 * the owner's category types once and keep them until the file changes (`Tenant.unchanged`):
 * every change made through the API, and every commit by another process, must show in the
 * very next read.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

type Owner = { id: string; key: string }

/** `categoryType` of transaction `id` as every read route shows it. */
async function categoryTypes(owner: Owner, id: string, accountId: string): Promise<unknown[]> {
  const list = await server.request('GET', '/v1/transactions?limit=5', { key: owner.key })
  const byAccount = await server.request('GET', `/v1/transactions?limit=5&accountId=${accountId}`, { key: owner.key })
  const one = await server.request('GET', `/v1/transactions/${id}`, { key: owner.key })
  const context = await server.request('GET', '/v1/agent/context', { key: owner.key })
  for (const res of [list, byAccount, one, context]) expect(res.status).toBe(200)
  const find = (items: { id: string; categoryType: unknown }[]) => items.find((item) => item.id === id)?.categoryType
  return [find(list.json.data), find(byAccount.json.data), one.json.data.categoryType, find(context.json.data.recentTransactions)]
}

/** Another connection to the owner's file, as an admin command in another process would have. */
function otherConnection(owner: Owner, change: (db: Database) => void): void {
  const db = new Database(join(server.dataDir, 'tenants', `${owner.id}.db`))
  try {
    db.run('PRAGMA busy_timeout = 5000')
    db.transaction(() => change(db)).immediate()
  } finally {
    db.close()
  }
}

/** An owner with an account, a custom expense category and one transaction in it. */
async function categorisedTransaction(): Promise<{ owner: Owner; account: string; category: string; txn: string }> {
  const owner = await server.owner()
  const account = (await createAccount(server, owner.key)).id
  const category = (await createCategory(server, owner.key, { name: 'Side costs', type: 'expense' })).id
  const txn = (await createTxn(server, owner.key, { accountId: account, amount: 12.5, date: '2026-03-01', categoryId: category })).id
  expect(await categoryTypes(owner, txn, account)).toEqual(['expense', 'expense', 'expense', 'expense'])
  return { owner, account, category, txn }
}

describe('categoryType follows the category', () => {
  test('changes through the API show in the next list, account list, read and agent context', async () => {
    const { owner, account, category, txn } = await categorisedTransaction()

    for (const type of ['income', null, 'expense'] as const) {
      const res = await server.request('PATCH', `/v1/categories/${category}`, { key: owner.key, body: { type } })
      expect(res.status).toBe(200)
      expect(await categoryTypes(owner, txn, account)).toEqual([type, type, type, type])
    }

    // A new category, and the transaction moved into it.
    const income = (await createCategory(server, owner.key, { name: 'Refunds', type: 'income' })).id
    expect((await server.request('PATCH', `/v1/transactions/${txn}`, { key: owner.key, body: { categoryId: income } })).status).toBe(200)
    expect(await categoryTypes(owner, txn, account)).toEqual(['income', 'income', 'income', 'income'])
  })

  test('a commit by another connection shows in the next read, with no wait', async () => {
    const { owner, account, category, txn } = await categorisedTransaction()

    otherConnection(owner, (db) => db.run("UPDATE categories SET type = 'income' WHERE id = ?", [category]))
    expect(await categoryTypes(owner, txn, account)).toEqual(['income', 'income', 'income', 'income'])

    // A category the server has never seen, and the transaction moved into it, in one commit.
    const made = (await createCategory(server, owner.key, { name: 'Template', type: 'expense' })) as { id: string }
    otherConnection(owner, (db) => {
      db.run(
        "INSERT INTO categories (id, external_id, name, icon, color, type, parent_id, preset_key, is_archived, is_system, countries, created_at) SELECT 'cat_0000000000000000000000000000abcd', NULL, 'Elsewhere', NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, created_at FROM categories WHERE id = ?",
        [made.id],
      )
      db.run("UPDATE transactions SET category_id = 'cat_0000000000000000000000000000abcd' WHERE id = ?", [txn])
    })
    expect(await categoryTypes(owner, txn, account)).toEqual([null, null, null, null])
    otherConnection(owner, (db) => db.run("UPDATE categories SET type = 'expense' WHERE id = 'cat_0000000000000000000000000000abcd'"))
    expect(await categoryTypes(owner, txn, account)).toEqual(['expense', 'expense', 'expense', 'expense'])
  })
})
