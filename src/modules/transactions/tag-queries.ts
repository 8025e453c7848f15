import { eq, sql } from 'drizzle-orm'
import { lazyStatements, placeholders } from '../../db/statements.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { transactionTags } from '../../db/tenant/schema.ts'

/** Which tags each transaction carries (CONTRACT §22), in the order given. */

type TagLink = typeof transactionTags.$inferSelect

const statements = lazyStatements({
  insert: (db) =>
    db
      .insert(transactionTags)
      .values(placeholders(transactionTags, ['transactionId', 'tagId', 'position', 'date', 'createdAt']))
      .prepare(),
  deleteOf: (db) =>
    db
      .delete(transactionTags)
      .where(eq(transactionTags.transactionId, sql.placeholder('transactionId')))
      .prepare(),
  /** The tags of every transaction in a JSON array of ids: one query for a whole page. */
  ofMany: (db) =>
    db.$client.prepare<{ transaction_id: string; tag_id: string }, [string]>(
      'SELECT transaction_id, tag_id FROM transaction_tags WHERE transaction_id IN (SELECT value FROM json_each(?)) ORDER BY transaction_id, position',
    ),
})

const tagLinkQueries = (tenant: Tenant) => tenant.prepared(statements)

/** Gives the transaction (whose sort key is `date`, `createdAt`) these tags, in this order. */
export function insertTagLinks(tenant: Tenant, transaction: { id: string; date: string; createdAt: number }, tagIds: readonly string[]): void {
  const insert = tagLinkQueries(tenant).insert
  for (const [position, tagId] of tagIds.entries()) {
    insert.run({ transactionId: transaction.id, tagId, position, date: transaction.date, createdAt: transaction.createdAt } satisfies TagLink)
  }
}

export function deleteTagLinks(tenant: Tenant, transactionId: string): void {
  tagLinkQueries(tenant).deleteOf.run({ transactionId })
}

/** The tag ids of each of `transactionIds` that has any, in order. */
export function tagIdsOf(tenant: Tenant, transactionIds: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>()
  if (transactionIds.length === 0) return found
  for (const row of tagLinkQueries(tenant).ofMany.all(JSON.stringify(transactionIds))) {
    const ids = found.get(row.transaction_id)
    if (ids) ids.push(row.tag_id)
    else found.set(row.transaction_id, [row.tag_id])
  }
  return found
}
