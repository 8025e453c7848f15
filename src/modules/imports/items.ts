import { decimalOfUnits, moneyJson, type Units } from '../../platform/money.ts'
import { attachSources } from '../../platform/number-sources.ts'
import type { ImportedRowOut } from './model.ts'
import type { PayeeMatcher } from './payee-text.ts'
import type { ResolvedRow } from './statement.ts'

/**
 * A resolved row as the transaction upsert the batch applies (CONTRACT §16, §24): the one place
 * where an imported row becomes a batch item.

 *
 * The bank's text goes as the transaction's `originalDescription`; the payee found for it (an
 * alias, else the cleaned text) goes as the batch's per-item fallback, so the owner's rules, which
 * run first, may name another (CONTRACT §23, §24). `shown.payeeName` is that fallback: what the
 * row gets unless a rule says otherwise (`rulesApplied` lists those that ran).
 */

const NOTE_LIMIT = 2000

/** A money value as a request body carries it: a JSON number whose source text is the exact decimal (money.ts reads that text). */
function withMoney<T extends Record<string, unknown>>(fields: T, units: Units): T & { amount: number } {
  const text = decimalOfUnits(units.toString())
  const item = { ...fields, amount: Number(text) }
  attachSources(item, new Map([['amount', text]]))
  return item
}

/** Text cut to `limit` characters (code points), with a warning when it was longer. */
function cut(text: string | null, limit: number, what: string, warnings: string[]): string | null {
  if (text === null) return null
  const chars = [...text]
  if (chars.length <= limit) return text
  warnings.push(`the ${what} is longer than ${limit} characters: it is cut there`)
  return chars.slice(0, limit).join('')
}

export interface BatchItemPlan {
  /** What the response shows as the row's `data`. */
  shown: ImportedRowOut
  /** The transaction upsert sent to the batch. */
  item: Record<string, unknown>
  /** The payee the row gets when no rule names one (the batch's fallback). */
  fallbackPayeeName: string | null
}

/**
 * The row as a batch item. `stored`: a transaction with this externalId exists, so only what the
 * bank states (date and amount, and the legs when the amount of a split transaction changes) is
 * sent: a payee or note the owner changed since the first import stays theirs, and the same file
 * again is `unchanged`.
 */
export function toBatchItem(
  row: ResolvedRow & { externalId: string; date: string; units: Units },
  accountId: string,
  payees: PayeeMatcher,
  stored: { amount: Units; hasSplits: boolean } | undefined,
  warnings: string[],
  descriptionNamesPayee: boolean,
): BatchItemPlan {
  const originalDescription = cut([row.payee, row.description].filter(Boolean).join(' — ') || null, NOTE_LIMIT, 'bank’s text', warnings)
  const fresh = stored === undefined
  const payeeName = fresh ? payees.payeeFor(row.payee, row.description, descriptionNamesPayee) : null
  const note = fresh ? cut(row.note, NOTE_LIMIT, 'note', warnings) : null
  const sendLegs = row.legs !== null && (fresh || (stored.hasSplits && stored.amount !== row.units))
  const legs = sendLegs
    ? (row.legs ?? []).map((leg) => ({
        units: leg.units,
        payeeName: cleanLegPayee(payees, leg.payee, leg.description),
        note: cut(leg.description, NOTE_LIMIT, 'detail’s text', warnings),
      }))
    : []
  const item: Record<string, unknown> = withMoney({ externalId: row.externalId, accountId, date: row.date }, row.units)
  if (originalDescription !== null) item.originalDescription = originalDescription
  if (note !== null) item.note = note
  if (legs.length > 0) {
    item.splits = legs.map((leg) => {
      const fields: Record<string, unknown> = {}
      if (leg.payeeName !== null) fields.payeeName = leg.payeeName
      if (leg.note !== null) fields.note = leg.note
      return withMoney(fields, leg.units)
    })
  }
  const shown: ImportedRowOut = {
    externalId: row.externalId,
    date: row.date,
    amount: moneyJson(row.units),
    payeeName,
    note,
    originalDescription,
    splits: legs.map((leg) => ({ amount: moneyJson(leg.units), payeeName: leg.payeeName, note: leg.note })),
  }
  return { shown, item, fallbackPayeeName: payeeName }
}

const cleanLegPayee = (payees: PayeeMatcher, payee: string | null, description: string | null) =>
  payee === null ? null : payees.payeeFor(payee, description, false)
