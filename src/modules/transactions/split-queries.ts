import { eq, sql } from 'drizzle-orm'
import { ByArity, inList, lazyStatements, placeholders } from '../../db/statements.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { transactionSplits } from '../../db/tenant/schema.ts'
import { moneyJson } from '../../platform/money.ts'
import type { SplitOut } from './model.ts'

/** The legs of split transactions as stored (CONTRACT §21). */
export type SplitRow = typeof transactionSplits.$inferSelect
/** A leg with its category's type, as answers show it. */
export type SplitView = SplitRow & { categoryType: 'expense' | 'income' | null }

type RawSplit = {
  id: string
  transaction_id: string
  position: bigint
  amount: bigint
  category_id: string | null
  payee_id: string | null
  note: string | null
  date: string
  created_at: bigint
  category_type: 'expense' | 'income' | null
}

const statements = lazyStatements({
  insert: (db) =>
    db
      .insert(transactionSplits)
      .values(placeholders(transactionSplits, ['id', 'transactionId', 'position', 'amount', 'categoryId', 'payeeId', 'note', 'date', 'createdAt']))
      .prepare(),
  deleteOf: (db) =>
    db
      .delete(transactionSplits)
      .where(eq(transactionSplits.transactionId, sql.placeholder('transactionId')))
      .prepare(),
  /** The legs of every transaction of a page, with their categories' types: one statement per number of ids, made on first use. */
  ofMany: (db) =>
    new ByArity((arity) =>
      db.$client.prepare<RawSplit, string[]>(
        `SELECT s.id, s.transaction_id, s.position, s.amount, s.category_id, s.payee_id, s.note, s.date, s.created_at, c.type AS category_type
         FROM transaction_splits s LEFT JOIN categories c ON c.id = s.category_id
         WHERE s.transaction_id IN (${inList(arity)}) ORDER BY s.transaction_id, s.position`,
      ),
    ),
})

const splitQueries = (tenant: Tenant) => tenant.prepared(statements)

export function insertSplits(tenant: Tenant, legs: readonly SplitRow[]): void {
  const insert = splitQueries(tenant).insert
  for (const leg of legs) insert.run(leg)
}

export function deleteSplits(tenant: Tenant, transactionId: string): void {
  splitQueries(tenant).deleteOf.run({ transactionId })
}

/** The legs of each of `transactionIds` that has any, in order. */
export function splitsOf(tenant: Tenant, transactionIds: readonly string[]): Map<string, SplitView[]> {
  const found = new Map<string, SplitView[]>()
  if (transactionIds.length === 0) return found
  for (const raw of splitQueries(tenant)
    .ofMany.of(transactionIds.length)
    .all(...transactionIds)) {
    const leg: SplitView = {
      id: raw.id,
      transactionId: raw.transaction_id,
      position: Number(raw.position),
      amount: raw.amount,
      categoryId: raw.category_id,
      payeeId: raw.payee_id,
      note: raw.note,
      date: raw.date,
      createdAt: Number(raw.created_at),
      categoryType: raw.category_type,
    }
    const legs = found.get(leg.transactionId)
    if (legs) legs.push(leg)
    else found.set(leg.transactionId, [leg])
  }
  return found
}

export function toSplit(leg: SplitView): SplitOut {
  return { id: leg.id, amount: moneyJson(leg.amount), categoryId: leg.categoryId, categoryType: leg.categoryType, payeeId: leg.payeeId, note: leg.note }
}
