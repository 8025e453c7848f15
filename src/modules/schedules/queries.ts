import { and, asc, eq, gte, isNotNull, lte, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import { scheduleOccurrences, schedules } from '../../db/tenant/schema.ts'
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
/**
 * The transactions of one account dated in a window, as matching reads them: a walk of the
 * account index, read as bare values (ten years of a daily schedule read 3,650 of them).
 */
export function accountTransactions(tenant: Tenant, accountId: string, from: string, to: string): WindowTransaction[] {
  const rows = tenant.sqlite
    .query<unknown, [string, string, string]>(
      'SELECT id, date, amount, schedule_id, created_at FROM transactions WHERE account_id = ? AND date BETWEEN ? AND ? ORDER BY date, created_at, id',
    )
    .values(accountId, from, to) as [string, string, bigint | number, string | null, bigint | number][]
  return rows.map(([id, date, amount, scheduleId, createdAt]) => ({ id, date, amount: BigInt(amount), scheduleId, createdAt: Number(createdAt) }))
}

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
