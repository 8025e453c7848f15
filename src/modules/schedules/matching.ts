import type { Tenant } from '../../db/tenant/tenant.ts'
import { findTransaction } from '../transactions/queries.ts'
import type { OccurrenceOut } from './model.ts'
import { accountTransactions, occurrenceRows, type ScheduleRow, type WindowTransaction } from './queries.ts'
import { dateOf, dayOf, occurrenceDays } from './recurrence.ts'

/**
 * Which transaction counts for which occurrence (CONTRACT §29). An occurrence auto-posting made
 * is linked to its transaction for good (a bank's row that adopts it keeps the link). Any other
 * occurrence is `posted` by a transaction of the same account, without a schedule of its own,
 * whose amount is within `amountTolerance` of the expected one and whose date is within
 * `matchWindowDays` of the occurrence's, and that no earlier occurrence took: occurrences take
 * transactions in date order, each the nearest in date (then the earliest recorded). It is
 * worked out at each read, from the transactions as they are, so it follows every edit.
 *
 * The window is widened by the match window on each side, so an occurrence just inside it sees
 * the same transactions, and the same earlier occurrences taking them, as from a wider window.
 */
export function occurrenceStatuses(tenant: Tenant, row: ScheduleRow, from: number, to: number, today: number): OccurrenceOut[] {
  const window = row.matchWindowDays
  const days = occurrenceDays(row.recurrence, from - window, to + window)
  if (days.length === 0) return []
  const stored = new Map(occurrenceRows(tenant, row.id, dateOf(from - window), dateOf(to + window)).map((occurrence) => [occurrence.date, occurrence]))
  const byDay = new Map<number, WindowTransaction[]>()
  for (const txn of accountTransactions(tenant, row.accountId, dateOf(from - 2 * window), dateOf(to + 2 * window))) {
    // A transaction a schedule posted belongs to that schedule's occurrence, never to another.
    if (txn.scheduleId !== null) continue
    const day = dayOf(txn.date)
    const list = byDay.get(day)
    if (list) list.push(txn)
    else byDay.set(day, [txn])
  }
  const taken = new Set<string>()
  const out: OccurrenceOut[] = []
  for (const day of days) {
    const date = dateOf(day)
    const occurrence = stored.get(date)
    let status: OccurrenceOut['status']
    let transactionId: string | null = null
    if (occurrence?.state === 'skipped') status = 'skipped'
    else if (occurrence?.state === 'posted' && occurrence.transactionId !== null && findTransaction(tenant, occurrence.transactionId)) {
      status = 'posted'
      transactionId = occurrence.transactionId
    } else {
      const match = nearest(byDay, taken, day, window, row.amount, row.amountTolerance)
      if (match) {
        taken.add(match.id)
        status = 'posted'
        transactionId = match.id
      } else status = day + window < today ? 'missed' : 'expected'
    }
    if (day >= from && day <= to) out.push({ date, status, transactionId })
  }
  return out
}

function nearest(byDay: Map<number, WindowTransaction[]>, taken: Set<string>, day: number, window: number, expected: bigint, tolerance: bigint) {
  for (let distance = 0; distance <= window; distance++) {
    for (const candidateDay of distance === 0 ? [day] : [day - distance, day + distance]) {
      for (const txn of byDay.get(candidateDay) ?? []) {
        const gap = txn.amount - expected
        if (!taken.has(txn.id) && (gap < 0n ? -gap : gap) <= tolerance) return txn
      }
    }
  }
  return undefined
}
