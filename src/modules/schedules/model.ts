import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import {
  CalendarDate,
  Cursor,
  EpochMs,
  ExternalId,
  Id,
  Limit,
  ListOf,
  LongText,
  Money,
  Name,
  Nullable,
  PathId,
  SingleOf,
  UpdatedAt,
  UpsertOf,
} from '../../platform/schemas.ts'
import { WEEKDAY_PATTERN } from './recurrence.ts'

/** Schedules (CONTRACT §29): a transaction expected again and again, and when. */

export const MAX_INTERVAL = 1000
export const MAX_COUNT = 10_000
export const MAX_MATCH_WINDOW_DAYS = 31
export const DEFAULT_MATCH_WINDOW_DAYS = 3
export const MAX_SCHEDULES = 1000
/** The longest window `occurrences` reads: ten years of a daily schedule and then some. */
export const MAX_WINDOW_DAYS = 4000
export const MAX_UPCOMING_DAYS = 366

const Freq = t.Union([t.Literal('daily'), t.Literal('weekly'), t.Literal('monthly'), t.Literal('yearly')], {
  description: 'how often: every `interval` days, weeks, months or years from `start`',
})
const WeekendAdjust = t.Union([t.Literal('none'), t.Literal('before'), t.Literal('after')], {
  description: '`before`: a Saturday or Sunday moves to the Friday before; `after`: to the Monday after; `none` (default): stays',
})
const MonthDay = t.Union([t.Literal(-1), Type.Integer({ minimum: 1, maximum: 31 })], {
  description: '1–31, or -1 for the last day; 29–31 in a shorter month fall on its last day',
})
const Weekday = t.String({
  pattern: WEEKDAY_PATTERN,
  description: 'MO…SU; in a monthly rule an ordinal may lead: 2WE (the second Wednesday), -1FR (the last Friday)',
})
const ByMonthDay = t.Array(MonthDay, { minItems: 1, maxItems: 31, uniqueItems: true, description: 'monthly only: the days of the month' })
const ByWeekday = t.Array(Weekday, {
  minItems: 1,
  maxItems: 35,
  uniqueItems: true,
  description: 'daily: only these weekdays; weekly: these weekdays (default: start’s); monthly: these weekdays, with an ordinal for one of them',
})

export const Recurrence = t.Object(
  {
    freq: Freq,
    interval: Type.Integer({ minimum: 1, maximum: MAX_INTERVAL }),
    byMonthDay: Nullable(t.Array(Type.Integer())),
    byWeekday: Nullable(t.Array(t.String())),
    start: t.String({ description: 'YYYY-MM-DD: the first date the rule may fall on' }),
    until: Nullable(t.String({ description: 'YYYY-MM-DD, inclusive; null: no end' })),
    count: Nullable(Type.Integer({ description: 'how many occurrences in all; null: no limit' })),
    weekendAdjust: WeekendAdjust,
  },
  { title: 'Recurrence', additionalProperties: false },
)

export const RecurrenceInput = t.Object(
  {
    freq: Freq,
    interval: t.Optional(Type.Integer({ minimum: 1, maximum: MAX_INTERVAL, description: `1–${MAX_INTERVAL}, default 1` })),
    byMonthDay: t.Optional(Nullable(ByMonthDay)),
    byWeekday: t.Optional(Nullable(ByWeekday)),
    start: CalendarDate,
    until: t.Optional(Nullable(CalendarDate)),
    count: t.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_COUNT, description: `1–${MAX_COUNT} occurrences in all; not with until` }))),
    weekendAdjust: t.Optional(WeekendAdjust),
  },
  { title: 'RecurrenceInput', additionalProperties: false },
)

export const Schedule = t.Object(
  {
    id: Id('sch', 'sch_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    externalId: Nullable(t.String()),
    name: t.String(),
    accountId: t.String(),
    amount: t.Number({ description: 'exact decimal, the expected amount; positive = expense, negative = income' }),
    amountTolerance: t.Number({ description: 'how far a transaction’s amount may be from `amount` and still count (inclusive)' }),
    payeeId: Nullable(t.String()),
    categoryId: Nullable(t.String()),
    tagIds: t.Array(t.String()),
    note: Nullable(t.String()),
    isTransfer: t.Boolean(),
    transferToAccountId: Nullable(t.String()),
    destinationAmount: Nullable(t.Number()),
    recurrence: Recurrence,
    rrule: t.String({ description: 'the recurrence as RFC 5545 text (DTSTART and RRULE lines), before weekend adjustment' }),
    autoPost: t.Boolean({ description: 'true: pfin records each occurrence’s transaction on its date' }),
    matchWindowDays: Type.Integer({ description: 'how many days before or after an occurrence a transaction may land and count for it' }),
    isActive: t.Boolean({ description: 'inactive: no upcoming occurrences and no auto-posting' }),
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
  },
  { title: 'Schedule', additionalProperties: false },
)

const Tolerance = t.Number({ minimum: 0, description: 'exact decimal ≥ 0, default 0' })
const MatchWindow = Type.Integer({
  minimum: 0,
  maximum: MAX_MATCH_WINDOW_DAYS,
  description: `0–${MAX_MATCH_WINDOW_DAYS}, default ${DEFAULT_MATCH_WINDOW_DAYS}`,
})
const TagIds = t.Array(t.String(), { maxItems: 20, description: '0–20 of your tag ids, given to each posted transaction' })

const optional = {
  amountTolerance: t.Optional(Tolerance),
  payeeId: t.Optional(Nullable(t.String())),
  payeeName: t.Optional(Name),
  categoryId: t.Optional(Nullable(t.String())),
  tagIds: t.Optional(TagIds),
  note: t.Optional(Nullable(LongText)),
  isTransfer: t.Optional(t.Boolean()),
  transferToAccountId: t.Optional(Nullable(t.String())),
  destinationAmount: t.Optional(Nullable(t.Number({ exclusiveMinimum: 0, description: 'transfers: the amount credited, exact decimal > 0' }))),
  autoPost: t.Optional(t.Boolean({ description: 'default false' })),
  matchWindowDays: t.Optional(MatchWindow),
  isActive: t.Optional(t.Boolean({ description: 'default true' })),
}

export const ScheduleCreate = t.Object(
  { name: Name, accountId: t.String(), amount: Money, recurrence: RecurrenceInput, externalId: t.Optional(ExternalId), ...optional },
  { title: 'ScheduleCreate', additionalProperties: false },
)

export const ScheduleUpsert = t.Object(
  { externalId: ExternalId, name: Name, accountId: t.String(), amount: Money, recurrence: RecurrenceInput, ...optional },
  { title: 'ScheduleUpsert', additionalProperties: false },
)

export const ScheduleUpdate = t.Object(
  {
    externalId: t.Optional(Nullable(ExternalId)),
    name: t.Optional(Name),
    accountId: t.Optional(t.String()),
    amount: t.Optional(Money),
    recurrence: t.Optional(RecurrenceInput),
    ...optional,
  },
  { title: 'ScheduleUpdate', additionalProperties: false },
)

export const OCCURRENCE_STATUSES = ['expected', 'posted', 'missed', 'skipped'] as const
export type OccurrenceStatus = (typeof OCCURRENCE_STATUSES)[number]

export const Occurrence = t.Object(
  {
    date: t.String({ description: 'YYYY-MM-DD, after weekend adjustment' }),
    status: t.Union(
      OCCURRENCE_STATUSES.map((status) => t.Literal(status)),
      {
        description:
          '`posted`: a transaction counts for it (`transactionId`); `skipped`: skipped by you; `missed`: past, beyond the match window, with none; `expected`: none yet',
      },
    ),
    transactionId: Nullable(t.String()),
  },
  { title: 'Occurrence', additionalProperties: false },
)

export const UpcomingOccurrence = t.Object(
  {
    scheduleId: t.String(),
    name: t.String(),
    accountId: t.String(),
    amount: t.Number({ description: 'the expected amount; positive = expense, negative = income' }),
    date: t.String(),
    status: Occurrence.properties.status,
    transactionId: Nullable(t.String()),
  },
  { title: 'UpcomingOccurrence', additionalProperties: false },
)

export const ScheduleListQuery = t.Object({ limit: t.Optional(Limit), cursor: t.Optional(Cursor) }, { additionalProperties: false })
export const OccurrencesQuery = t.Object(
  {
    from: t.Optional(CalendarDate),
    to: t.Optional(CalendarDate),
  },
  { additionalProperties: false },
)
export const UpcomingQuery = t.Object(
  {
    days: t.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_UPCOMING_DAYS,
        default: 30,
        description: `how many days from today (today included), 1–${MAX_UPCOMING_DAYS}, default 30`,
      }),
    ),
  },
  { additionalProperties: false },
)
export const SkipBody = t.Object({ date: CalendarDate }, { title: 'ScheduleSkip', additionalProperties: false })

export const ScheduleParams = PathId('scheduleId')
export const ScheduleResponse = SingleOf(Schedule, 'ScheduleResponse')
export const ScheduleListResponse = ListOf(Schedule, 'ScheduleListResponse')
export const ScheduleUpsertResponse = UpsertOf(Schedule, 'ScheduleUpsertResponse')
export const OccurrencesResponse = t.Object(
  { data: t.Array(Occurrence), scheduleId: t.String() },
  { title: 'OccurrencesResponse', additionalProperties: false },
)
export const UpcomingResponse = t.Object(
  { data: t.Array(UpcomingOccurrence), from: t.String(), to: t.String() },
  { title: 'UpcomingResponse', additionalProperties: false },
)
export const SkipResponse = t.Object({ data: Occurrence }, { title: 'ScheduleSkipResponse', additionalProperties: false })

export type ScheduleOut = typeof Schedule.static
export type ScheduleCreateInput = typeof ScheduleCreate.static
export type ScheduleUpdateInput = typeof ScheduleUpdate.static
export type RecurrenceIn = typeof RecurrenceInput.static
export type OccurrenceOut = typeof Occurrence.static
export type UpcomingOut = typeof UpcomingOccurrence.static
