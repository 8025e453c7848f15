import { and, asc, eq, gte, isNotNull, lte, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import { scheduleOccurrences, schedules, transactions } from '../../db/tenant/schema.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { moneyJson } from '../../platform/money.ts'
import type { ScheduleOut } from './model.ts'
import { rruleText } from './recurrence.ts'

export type ScheduleRow = typeof schedules.$inferSelect
export type OccurrenceRow = typeof scheduleOccurrences.$inferSelect

const inOrder = (db: TenantDrizzle) => db.select().from(schedules).orderBy(asc(schedules.createdAt), asc(schedules.id))
const after = sql`(${schedules.createdAt}, ${schedules.id}) > (${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`

const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(schedules)
      .where(eq(schedules.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(schedules)
      .where(eq(schedules.externalId, sql.placeholder('externalId')))
      .prepare(),
  firstPage: (db) => inOrder(db).limit(sql.placeholder('limit')).prepare(),
  nextPage: (db) => inOrder(db).where(after).limit(sql.placeholder('limit')).prepare(),
  count: (db) => db.select({ n: sql<number>`count(*)` }).from(schedules).prepare(),
  /** The schedules with auto-posting due on or before a date: a walk of the partial next_post index. */
  dueBy: (db) =>
    db
      .select()
      .from(schedules)
      .where(and(isNotNull(schedules.nextPost), lte(schedules.nextPost, sql.placeholder('date'))))
      .prepare(),
  nextDue: (db) =>
    db
      .select({ date: sql<string | null>`min(${schedules.nextPost})` })
      .from(schedules)
      .where(isNotNull(schedules.nextPost))
      .prepare(),
  occurrences: (db) =>
    db
      .select()
      .from(scheduleOccurrences)
      .where(
        and(
          eq(scheduleOccurrences.scheduleId, sql.placeholder('scheduleId')),
          gte(scheduleOccurrences.date, sql.placeholder('from')),
          lte(scheduleOccurrences.date, sql.placeholder('to')),
        ),
      )
      .prepare(),
  occurrence: (db) =>
    db
      .select()
      .from(scheduleOccurrences)
      .where(and(eq(scheduleOccurrences.scheduleId, sql.placeholder('scheduleId')), eq(scheduleOccurrences.date, sql.placeholder('date'))))
      .prepare(),
  /** The transactions of one account dated in a window: a walk of the account index. */
  accountWindow: (db) =>
    db
      .select({
        id: transactions.id,
        date: transactions.date,
        amount: transactions.amount,
        scheduleId: transactions.scheduleId,
        createdAt: transactions.createdAt,
      })
      .from(transactions)
      .where(
        and(
          eq(transactions.accountId, sql.placeholder('accountId')),
          gte(transactions.date, sql.placeholder('from')),
          lte(transactions.date, sql.placeholder('to')),
        ),
      )
      .orderBy(asc(transactions.date), asc(transactions.createdAt), asc(transactions.id))
      .prepare(),
})

const scheduleQueries = (tenant: Tenant) => tenant.prepared(statements)

export const findSchedule = (tenant: Tenant, id: string): ScheduleRow | undefined => scheduleQueries(tenant).byId.get({ id })
export const findScheduleByExternalId = (tenant: Tenant, externalId: string): ScheduleRow | undefined =>
  scheduleQueries(tenant).byExternalId.get({ externalId })
export const countSchedules = (tenant: Tenant): number => Number(scheduleQueries(tenant).count.get()?.n ?? 0)
export const schedulesDueBy = (tenant: Tenant, date: string): ScheduleRow[] => scheduleQueries(tenant).dueBy.all({ date })
export const ownerNextDue = (tenant: Tenant): string | null => scheduleQueries(tenant).nextDue.get()?.date ?? null
export const occurrenceRows = (tenant: Tenant, scheduleId: string, from: string, to: string): OccurrenceRow[] =>
  scheduleQueries(tenant).occurrences.all({ scheduleId, from, to })
export const occurrenceRow = (tenant: Tenant, scheduleId: string, date: string): OccurrenceRow | undefined =>
  scheduleQueries(tenant).occurrence.get({ scheduleId, date })
export type WindowTransaction = { id: string; date: string; amount: bigint; scheduleId: string | null; createdAt: number }
export const accountTransactions = (tenant: Tenant, accountId: string, from: string, to: string): WindowTransaction[] =>
  scheduleQueries(tenant).accountWindow.all({ accountId, from, to })

/** Schedules after the cursor, `limit` of them (-1: all), oldest first. */
export function listScheduleRows(tenant: Tenant, opts: { limit: number; after?: [number, string] }): ScheduleRow[] {
  const q = scheduleQueries(tenant)
  if (!opts.after) return q.firstPage.all({ limit: opts.limit })
  const [createdAt, id] = opts.after
  return q.nextPage.all({ limit: opts.limit, createdAt, id })
}

export function toSchedule(row: ScheduleRow): ScheduleOut {
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    accountId: row.accountId,
    amount: moneyJson(row.amount),
    amountTolerance: moneyJson(row.amountTolerance),
    payeeId: row.payeeId,
    categoryId: row.categoryId,
    tagIds: row.tagIds,
    note: row.note,
    isTransfer: row.isTransfer,
    transferToAccountId: row.transferToAccountId,
    destinationAmount: row.destinationAmount === null ? null : moneyJson(row.destinationAmount),
    recurrence: row.recurrence,
    rrule: rruleText(row.recurrence),
    autoPost: row.autoPost,
    matchWindowDays: row.matchWindowDays,
    isActive: row.isActive,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}
