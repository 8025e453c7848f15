import { eq, sql } from 'drizzle-orm'
import { ByArity, inList, lazyStatements, placeholders } from '../../db/statements.ts'
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
  /**
   * The tags of every transaction of a page: one statement per number of ids, made on first use.
   * Unordered: sorting a transaction's few tags by position here costs less than SQLite's sort.
   */
  ofMany: (db) =>
    new ByArity((arity) =>
      db.$client.prepare<[string, string, bigint], string[]>(
        `SELECT transaction_id, tag_id, position FROM transaction_tags WHERE transaction_id IN (${inList(arity)})`,
      ),
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
  const links = new Map<string, [tagId: string, position: bigint][]>()
  if (transactionIds.length === 0) return new Map()
  for (const [transactionId, tagId, position] of tagLinkQueries(tenant)
    .ofMany.of(transactionIds.length)
    .values(...transactionIds) as [string, string, bigint][]) {
    const list = links.get(transactionId)
    if (list) list.push([tagId, position])
    else links.set(transactionId, [[tagId, position]])
  }
  const found = new Map<string, string[]>()
  for (const [transactionId, list] of links) {
    if (list.length > 1) list.sort((a, b) => (a[1] < b[1] ? -1 : 1))
    found.set(
      transactionId,
      list.map(([tagId]) => tagId),
    )
  }
  return found
}
