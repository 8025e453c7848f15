import { type TSchema, type TString, Type } from '@sinclair/typebox'
import { t } from 'elysia'

// Elysia's t.Integer also accepts numeric strings; integers here use TypeBox's own.

/**
 * Field schemas shared by the resource models (CONTRACT §3 formats and length limits).
 * Text is trimmed by the services before it is stored.
 */
export const Nullable = <T extends TSchema>(schema: T) => t.Union([schema, t.Null()])

export const Name = t.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1–200 characters' })
export const ShortText = t.String({ maxLength: 200 })
export const LongText = t.String({ maxLength: 2000 })
export const ExternalId = t.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  description: 'an id of your own for sync (1–200 characters, not only spaces), unique per resource',
})
export const Currency = t.String({ pattern: '^[A-Z][A-Z0-9]{2,9}$', description: 'an upper-case currency code such as EUR or BTC' })
export const CalendarDate = t.String({
  format: 'date',
  pattern: '^\\d{4}-\\d{2}-\\d{2}$',
  description: 'a calendar date, YYYY-MM-DD',
  examples: ['2026-11-21'],
})
/** A 24-hour time, HH:MM or HH:MM:SS (CONTRACT §3). */
export const CLOCK_TIME_PATTERN = '^([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?$'
// A pattern, not `format: 'time'`: in OpenAPI that is RFC 3339 full-time (seconds and an
// offset), so generated clients would refuse "14:30". `date` is RFC 3339 full-date, as sent.
export const ClockTime = t.String({ pattern: CLOCK_TIME_PATTERN, description: 'a time of day (HH:MM or HH:MM:SS)', examples: ['14:30', '14:30:15'] })
/** Money in requests: a JSON number with at most 8 decimal places (checked exactly from its text). */
export const Money = t.Number({ description: 'exact decimal, at most 8 decimal places, |value| ≤ 92233720368' })
export const EpochMs = Type.Integer({ description: 'Unix epoch milliseconds' })
/** A resource's time of its latest change (CONTRACT §25). */
export const UpdatedAt = Type.Integer({
  description:
    'Unix epoch milliseconds of the latest change (its own, or one that follows from another write, such as a balance); never before createdAt, never goes back',
})
export const Id = (prefix: string, example: string) => t.String({ description: `an id starting with ${prefix}_`, examples: [example] })

/** Query parameters shared by the list routes (CONTRACT §9). */
export const Limit = Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'page size, 1–200 (default 50)' })
export const Cursor = t.String({ minLength: 1, maxLength: 500, description: 'the previous page’s nextCursor' })
export const BooleanQuery = (description: string) => t.Boolean({ default: false, description })

/** The list envelope: `{ data, nextCursor, hasMore }`. */
export const ListOf = <T extends TSchema>(item: T, title: string) =>
  t.Object({ data: t.Array(item), nextCursor: Nullable(t.String()), hasMore: t.Boolean() }, { title, additionalProperties: false })

export const SingleOf = <T extends TSchema>(item: T, title: string) => t.Object({ data: item }, { title, additionalProperties: false })

export const UpsertOf = <T extends TSchema>(item: T, title: string) =>
  t.Object({ operation: t.Union([t.Literal('created'), t.Literal('updated')]), data: item }, { title, additionalProperties: false })

export const PathId = <K extends string>(name: K) => t.Object({ [name]: t.String() } as Record<K, TString>)

/**
 * Trims an optional text field; text that is blank once trimmed is stored as null, the same
 * as no value. Required text (names, externalIds) cannot be blank: their schemas say so.
 */
export function trimmed(value: string | null | undefined): string | null {
  return typeof value === 'string' ? value.trim() || null : (value ?? null)
}
