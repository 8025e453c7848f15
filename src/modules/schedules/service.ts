import { eq } from 'drizzle-orm'
import { recordScheduleChange, settleCreated } from '../../db/tenant/change-log.ts'
import { isId, newId } from '../../db/ids.ts'
import { scheduleOccurrences, schedules, type StoredRecurrence } from '../../db/tenant/schema.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { today as clockToday } from '../../platform/clock.ts'
import { ApiError, externalIdConflict, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { readMoney } from '../../platform/money.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import { References } from '../transactions/references.ts'
import {
  DEFAULT_MATCH_WINDOW_DAYS,
  MAX_SCHEDULES,
  MAX_UPCOMING_DAYS,
  MAX_WINDOW_DAYS,
  type OccurrenceOut,
  type RecurrenceIn,
  type ScheduleCreateInput,
  type ScheduleUpdateInput,
  type UpcomingOut,
} from './model.ts'
import { postDue, refreshNextPost } from './posting.ts'
import { countSchedules, findSchedule, findScheduleByExternalId, listScheduleRows, occurrenceRow, type ScheduleRow, toSchedule } from './queries.ts'
import { occurrenceStatuses } from './matching.ts'
import { dateOf, dayOf, occurrenceDays } from './recurrence.ts'

/**
 * Schedules (CONTRACT §29): what a schedule may say is checked when it is saved, so that posting
 * it never meets a reference it cannot use. The rule's parts that do not fit together (a month
 * day on a weekly rule, `count` with `until`) are refused as a schema would refuse them (422
 * validation_failed naming `recurrence.…`), as rules' conditions are (§23).
 */

const shape = (detail: string) => new ApiError('validation_failed', detail)

/** Owners whose schedules changed since the auto-post timer last looked (it refreshes their due date in control.db). */
export const changedOwners = new Set<string>()

function storedRecurrence(input: RecurrenceIn): StoredRecurrence {
  const rule: StoredRecurrence = {
    freq: input.freq,
    interval: input.interval ?? 1,
    byMonthDay: input.byMonthDay ?? null,
    byWeekday: input.byWeekday ?? null,
    start: input.start,
    until: input.until ?? null,
    count: input.count ?? null,
    weekendAdjust: input.weekendAdjust ?? 'none',
  }
  if (rule.byMonthDay && rule.freq !== 'monthly') throw shape(`recurrence.byMonthDay: only a monthly rule takes byMonthDay, not a ${rule.freq} one`)
  if (rule.byMonthDay && rule.byWeekday) throw shape('recurrence.byWeekday: a monthly rule takes byMonthDay or byWeekday, not both')
  if (rule.byWeekday && rule.freq === 'yearly') throw shape('recurrence.byWeekday: a yearly rule falls on the month and day of start; it takes no byWeekday')
  if (rule.byWeekday && rule.freq !== 'monthly') {
    const ordinal = rule.byWeekday.findIndex((day) => !/^(MO|TU|WE|TH|FR|SA|SU)$/.test(day))
    if (ordinal >= 0)
      throw shape(`recurrence.byWeekday[${ordinal}]: an ordinal (${rule.byWeekday[ordinal]}) needs a monthly rule; a ${rule.freq} rule takes MO…SU`)
  }
  if (rule.until !== null && rule.count !== null) throw shape('recurrence.count: send count or until, not both')
  if (rule.until !== null && rule.until < rule.start) throw shape(`recurrence.until: ${rule.until} is before start ${rule.start}`)
  return rule
}

type Changes = Partial<Omit<ScheduleRow, 'id' | 'createdAt' | 'updatedAt'>>

/** The body's fields as stored, every reference checked; `current` is the stored schedule (PATCH) or null (create). */
function changesFrom(tenant: Tenant, country: string | null, body: ScheduleUpdateInput & { payeeName?: string }, current: ScheduleRow | null): Changes {
  const refs = new References(tenant, country)
  const changes: Changes = {}
  if (body.externalId !== undefined) {
    const externalId = trimmed(body.externalId)
    const holder = externalId === null ? undefined : findScheduleByExternalId(tenant, externalId)
    if (holder && holder.id !== current?.id) throw externalIdConflict('schedule', externalId, holder.id)
    changes.externalId = externalId
  }
  if (body.name !== undefined) changes.name = body.name.trim()
  if (body.accountId !== undefined) {
    if (!refs.account(body.accountId)) throw invalidReference('accountId', body.accountId)
    changes.accountId = body.accountId
  }
  if (body.amount !== undefined) changes.amount = readMoney(body, 'amount')
  if (body.amountTolerance !== undefined) changes.amountTolerance = readMoney(body, 'amountTolerance')
  if (body.payeeId !== undefined && body.payeeName !== undefined) throw ruleViolation('Send payeeId or payeeName, not both')
  if (body.payeeName !== undefined) changes.payeeId = refs.payeeNamed(body.payeeName.trim()).id
  if (body.payeeId !== undefined) {
    if (body.payeeId !== null && !refs.payee(body.payeeId)) throw invalidReference('payeeId', body.payeeId)
    changes.payeeId = body.payeeId
  }
  if (body.categoryId !== undefined) {
    if (body.categoryId !== null && !refs.visibleCategory(body.categoryId)) throw invalidReference('categoryId', body.categoryId)
    changes.categoryId = body.categoryId
  }
  if (body.tagIds !== undefined) {
    const kept = new Set(current?.tagIds ?? [])
    const tagIds: string[] = []
    for (const [index, id] of body.tagIds.entries()) {
      const tag = refs.tag(id)
      if (!tag) throw invalidReference(`tagIds[${index}]`, id)
      if (tag.isArchived && !kept.has(id)) throw ruleViolation(`tagIds[${index}]: tag ${JSON.stringify(tag.name)} (${id}) is archived`)
      if (!tagIds.includes(id)) tagIds.push(id)
    }
    changes.tagIds = tagIds
  }
  if (body.note !== undefined) changes.note = trimmed(body.note)
  if (body.isTransfer !== undefined) changes.isTransfer = body.isTransfer
  if (body.transferToAccountId !== undefined) {
    if (body.transferToAccountId !== null && !refs.account(body.transferToAccountId)) throw invalidReference('transferToAccountId', body.transferToAccountId)
    changes.transferToAccountId = body.transferToAccountId
  }
  if (body.destinationAmount !== undefined) changes.destinationAmount = body.destinationAmount === null ? null : readMoney(body, 'destinationAmount')
  if (body.recurrence !== undefined) changes.recurrence = storedRecurrence(body.recurrence)
  if (body.autoPost !== undefined) changes.autoPost = body.autoPost
  if (body.matchWindowDays !== undefined) changes.matchWindowDays = body.matchWindowDays
  if (body.isActive !== undefined) changes.isActive = body.isActive
  return changes
}

/** The rules across fields, on the schedule as it will be (CONTRACT §4's transfer rules, as a transaction's). */
function assertSound(refs: References, row: ScheduleRow): void {
  if (row.amountTolerance < 0n) throw shape('amountTolerance must be 0 or more')
  if (row.isTransfer !== (row.transferToAccountId !== null)) throw ruleViolation('isTransfer: true and transferToAccountId go together')
  if (!row.isTransfer) {
    if (row.destinationAmount !== null) throw ruleViolation('destinationAmount: only a transfer has one')
    return
  }
  if (row.transferToAccountId === row.accountId) throw ruleViolation('transferToAccountId: a transfer goes to another account')
  if (row.amount <= 0n) throw ruleViolation('amount: a transfer moves a positive amount')
  const source = refs.account(row.accountId)
  const destination = refs.account(row.transferToAccountId as string)
  if (source && destination && source.currency !== destination.currency && row.destinationAmount === null) {
    throw ruleViolation('destinationAmount: a transfer between currencies needs the amount credited')
  }
}

export function getSchedule(tenant: Tenant, id: string): ScheduleRow {
  const row = findSchedule(tenant, id)
  if (!row) throw notFound('Schedule', id)
  return row
}

const yesterdayOf = (date: string) => dateOf(dayOf(date) - 1)

/**
 * After a write: auto-posting starts from today when it is switched on (or the schedule made
 * active), never for the dates before; then whatever is due today is posted in the same write.
 */
function settleAutoPost(tenant: Tenant, before: ScheduleRow | null, row: ScheduleRow, today: string): ScheduleRow {
  const posting = row.autoPost && row.isActive
  const wasPosting = before?.autoPost === true && before.isActive
  let postedThrough = row.postedThrough
  if (!posting) postedThrough = null
  else if (!wasPosting) postedThrough = yesterdayOf(today)
  const next = refreshNextPost({ ...row, postedThrough })
  tenant.db.update(schedules).set({ postedThrough, nextPost: next.nextPost }).where(eq(schedules.id, row.id)).run()
  changedOwners.add(tenant.ownerId)
  postDue(tenant, today, row.id)
  return getSchedule(tenant, row.id)
}

export function createSchedule(tenant: Tenant, country: string | null, body: ScheduleCreateInput & { payeeName?: string }): ScheduleRow {
  return tenant.write(() => {
    const changes = changesFrom(tenant, country, body, null)
    if (countSchedules(tenant) >= MAX_SCHEDULES) throw new ApiError('limit_reached', `An owner may have at most ${MAX_SCHEDULES} schedules`)
    const now = Date.now()
    const row: ScheduleRow = {
      id: newId('sch'),
      externalId: null,
      amountTolerance: 0n,
      payeeId: null,
      categoryId: null,
      tagIds: [],
      note: null,
      isTransfer: false,
      transferToAccountId: null,
      destinationAmount: null,
      autoPost: false,
      matchWindowDays: DEFAULT_MATCH_WINDOW_DAYS,
      isActive: true,
      postedThrough: null,
      nextPost: null,
      createdAt: now,
      updatedAt: now,
      name: changes.name as string,
      accountId: changes.accountId as string,
      amount: changes.amount as bigint,
      recurrence: changes.recurrence as StoredRecurrence,
      ...changes,
    }
    assertSound(new References(tenant, country), row)
    tenant.db.insert(schedules).values(row).run()
    settleCreated(tenant, 'schedules', row.id)
    return settleAutoPost(tenant, null, row, clockToday())
  })
}

export function updateSchedule(tenant: Tenant, country: string | null, id: string, body: ScheduleUpdateInput & { payeeName?: string }): ScheduleRow {
  return tenant.write(() => {
    const current = getSchedule(tenant, id)
    const changes = changesFrom(tenant, country, body, current)
    if (Object.keys(changes).length === 0) return current
    const next = { ...current, ...changes }
    assertSound(new References(tenant, country), next)
    tenant.db.update(schedules).set(changes).where(eq(schedules.id, id)).run()
    return settleAutoPost(tenant, current, getSchedule(tenant, id), clockToday())
  })
}

/** Permanent; the transactions it posted stay, with their scheduleId (CONTRACT §29). The feed keeps a tombstone. */
export function deleteSchedule(tenant: Tenant, id: string): ScheduleRow {
  return tenant.write(() => {
    const current = getSchedule(tenant, id)
    tenant.db.delete(scheduleOccurrences).where(eq(scheduleOccurrences.scheduleId, id)).run()
    tenant.db.delete(schedules).where(eq(schedules.id, id)).run()
    changedOwners.add(tenant.ownerId)
    return current
  })
}

export function upsertSchedule(tenant: Tenant, country: string | null, body: ScheduleCreateInput & { externalId: string }) {
  return tenant.write(() => {
    const existing = findScheduleByExternalId(tenant, body.externalId.trim())
    if (!existing) return { created: true, row: createSchedule(tenant, country, body) }
    return { created: false, row: updateSchedule(tenant, country, existing.id, body) }
  })
}

export function listSchedules(tenant: Tenant, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'ns') as [number, string] | undefined
  if (after && !isId('sch', after[1])) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  const rows = listScheduleRows(tenant, { limit: limit + 1, after })
  return page(rows, limit, (row) => [row.createdAt, row.id], toSchedule)
}

/** `GET /v1/schedules/{id}/occurrences`: from today for 90 days unless told. */
export function scheduleOccurrencesIn(tenant: Tenant, id: string, query: { from?: string; to?: string }): OccurrenceOut[] {
  const row = getSchedule(tenant, id)
  const today = clockToday()
  const from = query.from ?? today
  const to = query.to ?? dateOf(dayOf(from) + 90)
  if (dayOf(to) - dayOf(from) > MAX_WINDOW_DAYS) throw shape(`query parameter 'to' must be at most ${MAX_WINDOW_DAYS} days after from`)
  if (to < from) return []
  return tenant.read(() => occurrenceStatuses(tenant, row, dayOf(from), dayOf(to), dayOf(today)))
}

/** `GET /v1/schedules/upcoming`: every active schedule's occurrences from today for `days` days, by date. */
export function upcomingOccurrences(tenant: Tenant, days: number): { data: UpcomingOut[]; from: string; to: string } {
  const today = clockToday()
  const span = Math.min(Math.max(days, 1), MAX_UPCOMING_DAYS)
  const from = dayOf(today)
  const to = from + span - 1
  const data = tenant.read(() => upcomingOf(tenant, listScheduleRows(tenant, { limit: -1 }), from, to, from))
  return { data, from: today, to: dateOf(to) }
}

/** The upcoming occurrences inside a read the caller holds (the agent context's snapshot). */
export function upcomingIn(tenant: Tenant, days: number): UpcomingOut[] {
  const from = dayOf(clockToday())
  return upcomingOf(tenant, listScheduleRows(tenant, { limit: -1 }), from, from + days - 1, from)
}

/** The active schedules' occurrences `from`–`to` (day numbers), by date, then name, then id. */
export function upcomingOf(tenant: Tenant, rows: readonly ScheduleRow[], from: number, to: number, today: number): UpcomingOut[] {
  const out: UpcomingOut[] = []
  for (const row of rows) {
    if (!row.isActive) continue
    const shown = toSchedule(row)
    for (const occurrence of occurrenceStatuses(tenant, row, from, to, today)) {
      out.push({ scheduleId: row.id, name: row.name, accountId: row.accountId, amount: shown.amount, ...occurrence })
    }
  }
  return out.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : a.scheduleId < b.scheduleId ? -1 : 1))
}

/** `POST /v1/schedules/{id}/skip`: the date must be one of the schedule's occurrences, and not one auto-posting has posted. */
export function skipOccurrence(tenant: Tenant, id: string, date: string): OccurrenceOut {
  return tenant.write(() => {
    const row = getSchedule(tenant, id)
    const day = dayOf(date)
    if (occurrenceDays(row.recurrence, day, day).length === 0) throw ruleViolation(`date: ${date} is not an occurrence of schedule ${id}`)
    const stored = occurrenceRow(tenant, id, date)
    if (stored?.state === 'posted') {
      throw ruleViolation(`date: the occurrence of ${date} was posted as transaction ${stored.transactionId}; delete that transaction instead`)
    }
    if (!stored) {
      tenant.db.insert(scheduleOccurrences).values({ scheduleId: id, date, state: 'skipped', transactionId: null }).run()
      // Its occurrences are part of what a schedule tells: a skip is a change of it in the feed.
      recordScheduleChange(tenant, id)
    }
    return { date, status: 'skipped', transactionId: null }
  })
}
