/**
 * CONTRACT §29: the recurrence rule is a strict subset of RFC 5545. For random rules and windows
 * in the subset where pfin and RFC 5545 agree (month days 1–28 and -1, no weekend adjustment), the
 * occurrences equal those of an independent RRULE implementation (the `rrule` package), read from
 * the `rrule` text pfin writes — so that text is checked too.
 */
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { rrulestr } from 'rrule'
import type { StoredRecurrence } from '../../src/db/tenant/schema.ts'
import { dateOf, dayOf, occurrenceDays, rruleText, WEEKDAYS } from '../../src/modules/schedules/recurrence.ts'

const FIRST = dayOf('2020-01-01')
const LAST = dayOf('2030-12-31')

const plainWeekdays = fc.uniqueArray(fc.constantFrom(...WEEKDAYS), { minLength: 1, maxLength: 7 })
// Ordinals on every entry or on none: with both (BYDAY=MO,3TU) RFC 5545 means every Monday and the
// third Tuesday, and `rrule` drops the plain entries — a difference of that library, not of pfin.
const ordinalWeekdays = fc.oneof(
  plainWeekdays,
  fc
    .uniqueArray(fc.tuple(fc.constantFrom('1', '2', '3', '4', '-1', '-2'), fc.constantFrom(...WEEKDAYS)), {
      minLength: 1,
      maxLength: 4,
      selector: ([, day]) => day,
    })
    .map((list) => list.map(([ordinal, day]) => `${ordinal}${day}`)),
)
const monthDays = fc.uniqueArray(fc.oneof(fc.integer({ min: 1, max: 28 }), fc.constant(-1)), { minLength: 1, maxLength: 5 })

const rule = fc
  .record({
    freq: fc.constantFrom('daily', 'weekly', 'monthly', 'yearly') as fc.Arbitrary<StoredRecurrence['freq']>,
    interval: fc.integer({ min: 1, max: 5 }),
    start: fc.integer({ min: FIRST, max: LAST }),
    end: fc.oneof(fc.constant(null), fc.record({ count: fc.integer({ min: 1, max: 40 }) }), fc.record({ until: fc.integer({ min: 0, max: 900 }) })),
    variant: fc.integer({ min: 0, max: 2 }),
    weekdays: plainWeekdays,
    ordinals: ordinalWeekdays,
    days: monthDays,
  })
  .map(({ freq, interval, start, end, variant, weekdays, ordinals, days }): StoredRecurrence => {
    let startDate = dateOf(start)
    // A yearly rule on the 29th–31st is where pfin takes the month's last day and RFC 5545 skips.
    if (Number(startDate.slice(8)) > 28) startDate = `${startDate.slice(0, 8)}28`
    const rec: StoredRecurrence = {
      freq,
      interval,
      byMonthDay: null,
      byWeekday: null,
      start: startDate,
      until: end && 'until' in end ? dateOf(dayOf(startDate) + end.until) : null,
      count: end && 'count' in end ? end.count : null,
      weekendAdjust: 'none',
    }
    if (freq === 'daily' && variant === 1) rec.byWeekday = weekdays
    if (freq === 'weekly' && variant > 0) rec.byWeekday = weekdays
    if (freq === 'monthly' && variant === 1) rec.byMonthDay = days
    if (freq === 'monthly' && variant === 2) rec.byWeekday = ordinals
    return rec
  })

/** The other implementation's dates for the window, from pfin's own RRULE text. */
function reference(rec: StoredRecurrence, from: number, to: number): string[] {
  const text = rruleText(rec)
    .replace(/DTSTART;VALUE=DATE:(\d{8})/, 'DTSTART:$1T000000Z')
    .replace(/UNTIL=(\d{8})/, 'UNTIL=$1T000000Z')
  const set = rrulestr(text)
  const at = (day: number) => new Date(day * 86_400_000)
  return set.between(at(from), at(to), true).map((date) => date.toISOString().slice(0, 10))
}

test('occurrences equal an independent RRULE implementation on the subset both define', () => {
  fc.assert(
    fc.property(rule, fc.integer({ min: -60, max: 1200 }), fc.integer({ min: 0, max: 400 }), (rec, offset, span) => {
      const from = dayOf(rec.start) + offset
      const to = from + span
      expect(occurrenceDays(rec, from, to).map(dateOf)).toEqual(reference(rec, from, to))
    }),
    { numRuns: 400 },
  )
})
