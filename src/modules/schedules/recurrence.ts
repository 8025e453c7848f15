import type { StoredRecurrence } from '../../db/tenant/schema.ts'

/**
 * The dates of a recurrence (CONTRACT §29): a strict subset of RFC 5545's RRULE over calendar
 * dates, with two differences the contract states: a month day past the month's end (29–31)
 * falls on the month's last day instead of being skipped, and `weekendAdjust` moves a Saturday or
 * Sunday to the Friday before or the Monday after. Dates are day numbers (days since 1970-01-01)
 * inside, so stepping is integer arithmetic; nothing here knows of time zones.
 */

export type Recurrence = StoredRecurrence

export const WEEKDAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const
export const WEEKDAY_PATTERN = '^(-?[1-5])?(MO|TU|WE|TH|FR|SA|SU)$'
const WEEKDAY_RE = new RegExp(WEEKDAY_PATTERN)

/** The last day number pfin reasons about: 9999-12-31. */
const LAST_DAY = dayOf('9999-12-31')

/**
 * Day numbers from and to civil dates by integer arithmetic (H. Hinnant's algorithms, proleptic
 * Gregorian): no Date object per date, which matters when ten years of a daily rule are read.
 */
function dayOfYmd(year: number, month0: number, date: number): number {
  // Months past December or before January roll into the year, as Date.UTC does.
  const y0 = year + Math.floor(month0 / 12)
  const m = (((month0 % 12) + 12) % 12) + 1
  const y = m <= 2 ? y0 - 1 : y0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + date - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

export function dayOf(date: string): number {
  return dayOfYmd(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)))
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n))

export function dateOf(day: number): string {
  const z = day + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`
}

/** 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday). */
export const weekdayOf = (day: number): number => (((day + 3) % 7) + 7) % 7

const daysInMonth = (year: number, month0: number): number => dayOfYmd(year, month0 + 1, 1) - dayOfYmd(year, month0, 1)

interface Parsed {
  ordinal: number | null
  weekday: number
}

function parseWeekday(text: string): Parsed {
  const match = WEEKDAY_RE.exec(text)
  if (!match) throw new Error(`not a weekday: ${text}`)
  return { ordinal: match[1] === undefined ? null : Number(match[1]), weekday: WEEKDAYS.indexOf(match[2] as (typeof WEEKDAYS)[number]) }
}

/** The dates a month holds for the rule, ascending, without repeats. */
function monthDates(rule: Recurrence, year: number, month0: number, startDay: number): number[] {
  const length = daysInMonth(year, month0)
  const first = dayOfYmd(year, month0, 1)
  const days = new Set<number>()
  if (rule.byWeekday) {
    for (const { ordinal, weekday } of rule.byWeekday.map(parseWeekday)) {
      const firstOf = first + ((weekday - weekdayOf(first) + 7) % 7)
      const all: number[] = []
      for (let day = firstOf; day < first + length; day += 7) all.push(day)
      if (ordinal === null) for (const day of all) days.add(day)
      else {
        const pick = ordinal > 0 ? all[ordinal - 1] : all[all.length + ordinal]
        if (pick !== undefined) days.add(pick)
      }
    }
  } else {
    const monthDays = rule.byMonthDay ?? [Number(dateOf(startDay).slice(8))]
    // Day 29–31 in a shorter month is its last day, never skipped; -1 is always the last day.
    for (const monthDay of monthDays) days.add(first + (monthDay === -1 ? length : Math.min(monthDay, length)) - 1)
  }
  return [...days].sort((a, b) => a - b)
}

/**
 * The rule's dates before weekend adjustment, ascending, from the period holding `from` (from
 * `start` when `count` is set, which counts from the start), up to `until` and 9999-12-31.
 */
function* rawDays(rule: Recurrence, from: number): Generator<number> {
  const start = dayOf(rule.start)
  const until = rule.until === null ? LAST_DAY : Math.min(dayOf(rule.until), LAST_DAY)
  const jumpTo = rule.count === null ? Math.max(from, start) : start
  let emitted = 0
  const emit = function* (day: number): Generator<number, boolean> {
    if (day < start) return true
    if (day > until) return false
    if (rule.count !== null && emitted >= rule.count) return false
    emitted++
    yield day
    return true
  }
  const interval = rule.interval
  if (rule.freq === 'daily') {
    const filter = rule.byWeekday ? new Set(rule.byWeekday.map((text) => parseWeekday(text).weekday)) : null
    let day = start + Math.floor((jumpTo - start) / interval) * interval
    for (; day <= until; day += interval) {
      if (filter && !filter.has(weekdayOf(day))) continue
      if (!(yield* emit(day))) return
    }
    return
  }
  if (rule.freq === 'weekly') {
    const weekdays = rule.byWeekday ? [...new Set(rule.byWeekday.map((text) => parseWeekday(text).weekday))].sort((a, b) => a - b) : [weekdayOf(start)]
    const firstWeek = start - weekdayOf(start)
    const span = 7 * interval
    for (let week = firstWeek + Math.floor((jumpTo - firstWeek) / span) * span; week <= until; week += span) {
      for (const weekday of weekdays) if (!(yield* emit(week + weekday))) return
    }
    return
  }
  const [startYear, startMonth] = rule.start.split('-').map(Number) as [number, number]
  if (rule.freq === 'monthly') {
    const firstMonth = startYear * 12 + startMonth - 1
    const jumpDate = dateOf(jumpTo)
    const jumpMonth = Number(jumpDate.slice(0, 4)) * 12 + Number(jumpDate.slice(5, 7)) - 1
    for (let month = firstMonth + Math.floor((jumpMonth - firstMonth) / interval) * interval; ; month += interval) {
      const year = Math.floor(month / 12)
      if (year > 9999) return
      for (const day of monthDates(rule, year, month % 12, start)) if (!(yield* emit(day))) return
    }
  }
  // Yearly: the start's month and day each year (29 February is the 28th in other years).
  const startDate = Number(rule.start.slice(8))
  const jumpYear = Number(dateOf(jumpTo).slice(0, 4))
  for (let year = startYear + Math.floor((jumpYear - startYear) / interval) * interval; year <= 9999; year += interval) {
    const day = dayOfYmd(year, startMonth - 1, Math.min(startDate, daysInMonth(year, startMonth - 1)))
    if (!(yield* emit(day))) return
  }
}

/** A date moved off the weekend, as the rule says. Monotone: a later date never moves before an earlier one. */
function adjusted(rule: Recurrence, day: number): number {
  if (rule.weekendAdjust === 'none') return day
  const weekday = weekdayOf(day)
  if (weekday < 5) return day
  return rule.weekendAdjust === 'before' ? day - (weekday - 4) : day + (7 - weekday)
}

/** Weekend adjustment moves a date by at most two days. */
const MAX_SHIFT = 2

/**
 * The occurrences dated `from`–`to` (day numbers, inclusive), after weekend adjustment, ascending
 * and without repeats (two dates adjusted onto one day are one occurrence).
 */
export function occurrenceDays(rule: Recurrence, from: number, to: number): number[] {
  const out: number[] = []
  for (const raw of rawDays(rule, from - MAX_SHIFT)) {
    if (raw > to + MAX_SHIFT) break
    const day = adjusted(rule, raw)
    if (day < from || day > to) continue
    if (out[out.length - 1] !== day) out.push(day)
  }
  return out
}

/** The first occurrence on or after `from`, or null when the rule has none left. */
export function nextOccurrenceDay(rule: Recurrence, from: number): number | null {
  for (const raw of rawDays(rule, from - MAX_SHIFT)) {
    const day = adjusted(rule, raw)
    if (day >= from) return day
  }
  return null
}

const compact = (date: string) => date.replaceAll('-', '')

/**
 * The rule as RFC 5545 text: `DTSTART;VALUE=DATE:…` and the `RRULE:` line. It names the dates
 * before weekend adjustment, which RFC 5545 cannot say, and a month day of 29–31 means there
 * "that day, when the month has it" where pfin takes the month's last day (CONTRACT §29).
 */
export function rruleText(rule: Recurrence): string {
  const parts = [`FREQ=${rule.freq.toUpperCase()}`, `INTERVAL=${rule.interval}`]
  if (rule.byMonthDay) parts.push(`BYMONTHDAY=${rule.byMonthDay.join(',')}`)
  if (rule.byWeekday) parts.push(`BYDAY=${rule.byWeekday.join(',')}`)
  if (rule.freq === 'weekly' || (rule.freq === 'daily' && rule.byWeekday)) parts.push('WKST=MO')
  if (rule.until !== null) parts.push(`UNTIL=${compact(rule.until)}`)
  if (rule.count !== null) parts.push(`COUNT=${rule.count}`)
  return `DTSTART;VALUE=DATE:${compact(rule.start)}\nRRULE:${parts.join(';')}`
}
