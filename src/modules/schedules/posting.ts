import { eq } from 'drizzle-orm'
import { scheduleOccurrences, schedules } from '../../db/tenant/schema.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError } from '../../platform/errors.ts'
import { decimalOfUnits } from '../../platform/money.ts'
import { attachSources } from '../../platform/number-sources.ts'
import type { TransactionWriteInput } from '../transactions/model.ts'
import { findTransactionByExternalId } from '../transactions/queries.ts'
import { References } from '../transactions/references.ts'
import { createTransaction } from '../transactions/service.ts'
import { findSchedule, occurrenceRow, type ScheduleRow, schedulesDueBy } from './queries.ts'
import { dateOf, dayOf, nextOccurrenceDay, occurrenceDays } from './recurrence.ts'

/**
 * Auto-posting (CONTRACT §29): each due occurrence of a schedule with `autoPost` becomes a
 * transaction on its date, exactly once. Three things make it once: the occurrence's row in
 * `schedule_occurrences` (primary key: schedule and date), the transaction's externalId
 * `sched:{id}:{date}` (unique), and `postedThrough`, all written in the same database
 * transaction as the transactions themselves, so a crash leaves all of an owner's catch-up or
 * none of it, and the next run starts where the last commit left off.
 */

export const postingExternalId = (scheduleId: string, date: string) => `sched:${scheduleId}:${date}`

/** `nextPost`: the first occurrence after `postedThrough`, while auto-posting is on. */
export function refreshNextPost(row: ScheduleRow): { nextPost: string | null } {
  if (!row.autoPost || !row.isActive || row.postedThrough === null) return { nextPost: null }
  const next = nextOccurrenceDay(row.recurrence, dayOf(row.postedThrough) + 1)
  return { nextPost: next === null ? null : dateOf(next) }
}

/** Money as a body carries it: a number whose source text is the exact decimal (read back by readMoney). */
function moneyBody(fields: Record<string, bigint | null>): Record<string, number> {
  const body: Record<string, number> = {}
  const sources = new Map<string, string>()
  for (const [key, units] of Object.entries(fields)) {
    if (units === null) continue
    const text = decimalOfUnits(String(units))
    body[key] = Number(text)
    sources.set(key, text)
  }
  attachSources(body, sources)
  return body
}

function countryOf(tenant: Tenant): string | null {
  return tenant.sqlite.query<{ country: string | null }, []>('SELECT country FROM profile LIMIT 1').get()?.country ?? null
}

/**
 * One occurrence's transaction; true when one was recorded. Nothing is recorded for a date already
 * skipped or posted, nor when the transaction cannot be recorded (it stays unposted: expected,
 * then missed; the log says why).
 */
function postOne(tenant: Tenant, refs: References, row: ScheduleRow, date: string, log: (message: string) => void): boolean {
  if (occurrenceRow(tenant, row.id, date)) return false
  const externalId = postingExternalId(row.id, date)
  const existing = findTransactionByExternalId(tenant, externalId)
  let transactionId = existing?.id
  if (!transactionId) {
    const amounts = moneyBody({ amount: row.amount, destinationAmount: row.isTransfer ? row.destinationAmount : null })
    // An archived tag is not given to a new transaction (CONTRACT §22): it is left out, not a reason to post nothing.
    const tagIds = row.tagIds.filter((id) => refs.tag(id)?.isArchived === false)
    const body = Object.assign(amounts, {
      externalId,
      accountId: row.accountId,
      date,
      payeeId: row.payeeId,
      categoryId: row.categoryId,
      tagIds,
      note: row.note,
      ...(row.isTransfer ? { isTransfer: true, transferToAccountId: row.transferToAccountId } : {}),
    }) as unknown as TransactionWriteInput
    try {
      transactionId = tenant.savepoint(() => createTransaction(tenant, refs.country, body, { refs }, row.id).row.id)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      refs.forget()
      log(`schedule ${row.id} of owner ${tenant.ownerId}: the occurrence of ${date} was not posted: ${error.detail}`)
      return false
    }
  }
  tenant.db.insert(scheduleOccurrences).values({ scheduleId: row.id, date, state: 'posted', transactionId }).run()
  return existing === undefined
}

/**
 * Posts every occurrence due by `today` of the owner's auto-posting schedules (only `onlyId`'s
 * when given), in one write. Returns how many transactions were made.
 */
export function postDue(tenant: Tenant, today: string, onlyId?: string, log: (message: string) => void = console.error): number {
  return tenant.write(() => {
    const due =
      onlyId === undefined ? schedulesDueBy(tenant, today) : [findSchedule(tenant, onlyId)].filter((row) => row?.nextPost != null && row.nextPost <= today)
    if (due.length === 0) return 0
    const refs = new References(tenant, countryOf(tenant))
    let posted = 0
    for (const row of due as ScheduleRow[]) {
      if (row.postedThrough === null) continue
      for (const day of occurrenceDays(row.recurrence, dayOf(row.postedThrough) + 1, dayOf(today))) {
        if (postOne(tenant, refs, row, dateOf(day), log)) posted++
      }
      const settled = { ...row, postedThrough: today }
      tenant.db
        .update(schedules)
        .set({ postedThrough: today, nextPost: refreshNextPost(settled).nextPost })
        .where(eq(schedules.id, row.id))
        .run()
    }
    return posted
  })
}
