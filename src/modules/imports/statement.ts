import { type Units, unitsFromLexeme } from '../../platform/money.ts'
import { type DateOrder, detectDateOrder, parseDateFormat, patternOf, readDate } from './dates.ts'
import { beyondAscii } from './encoding.ts'
import { bankExternalId, rowExternalId } from './external-ids.ts'
import { isDebit } from './formats/csv.ts'
import type { AmountText, ParsedFile, RawRow, RowError } from './formats/types.ts'
import { type DecimalSeparator, fileSeparator, readAmountText } from './money-text.ts'

/**
 * A file's rows made into what a transaction needs (CONTRACT §24): its one date format (tried over
 * all rows) and decimal separator, each row's date and amount in pfin's sign, its externalId, and
 * whether it repeats a row before it. Pure: the same file and options always give the same rows.
 */

export interface ResolvedLeg {
  units: Units
  payee: string | null
  description: string | null
}

export interface ResolvedRow {
  line: number
  externalId: string | null
  /** The row repeats an earlier one exactly (same bank id, same values): it is not imported again. */
  duplicate: boolean
  date: string | null
  /** pfin's sign: positive = expense. */
  units: Units | null
  payee: string | null
  description: string | null
  note: string | null
  legs: ResolvedLeg[] | null
  warnings: string[]
  errors: RowError[]
}

export interface Resolution {
  /** The format the dates were read in (`DD.MM.YYYY`), null when the file has no dates. */
  dateFormat: string | null
  dateFormatAmbiguous: boolean
  /** The date orders that read every row, when more than one does. */
  dateCandidates: string[]
  rows: ResolvedRow[]
}

export interface ResolveOptions {
  accountId: string
  accountCurrency: string
  /** The caller's `dateFormat`, checked. */
  dateFormat: string | null
  /** The owner's country: decides which order wins when the dates cannot tell. */
  preference: readonly DateOrder[]
  /** The file's text was guessed to be windows-1252: rows with text beyond ASCII are warned. */
  encodingGuessed: boolean
}

function amountTexts(rows: readonly RawRow[]): string[] {
  const texts: string[] = []
  for (const row of rows) {
    const amount = row.amount
    if (!amount) continue
    if (amount.kind === 'pair') texts.push(amount.outflow, amount.inflow)
    else texts.push(amount.text)
  }
  return texts.filter((text) => text.trim() !== '')
}

const magnitude = (units: Units) => (units < 0n ? -units : units)

/** One amount in pfin's sign, or the row's error. */
function readAmount(amount: AmountText, separator: DecimalSeparator, affixes: boolean): Units | RowError {
  const read = (text: string, what = 'amount') => {
    const units = readAmountText(text, separator, affixes)
    return typeof units === 'string' ? ({ field: 'amount', detail: `${what} ${units}` } satisfies RowError) : units
  }
  if (amount.kind === 'signed') {
    const units = read(amount.text)
    return typeof units === 'bigint' ? (amount.negate ? -units : units) : units
  }
  if (amount.kind === 'indicated') {
    const units = read(amount.text)
    if (typeof units !== 'bigint') return units
    const debit = isDebit(amount.indicator)
    if (debit === null)
      return { field: 'amount', detail: `the debit/credit indicator ${JSON.stringify(amount.indicator.trim().slice(0, 40))} is neither a debit nor a credit` }
    return debit ? magnitude(units) : -magnitude(units)
  }
  const hasOut = amount.outflow.trim() !== ''
  const hasIn = amount.inflow.trim() !== ''
  if (!hasOut && !hasIn) return { field: 'amount', detail: 'both the outflow and the inflow column are empty' }
  const out = hasOut ? read(amount.outflow, 'the outflow') : 0n
  if (typeof out !== 'bigint') return out
  const inflow = hasIn ? read(amount.inflow, 'the inflow') : 0n
  if (typeof inflow !== 'bigint') return inflow
  if (out !== 0n && inflow !== 0n) return { field: 'amount', detail: 'both the outflow and the inflow column hold an amount' }
  return magnitude(out) - magnitude(inflow)
}

/** The values that make two rows with one bank id the same row. */
const sameness = (row: ResolvedRow) =>
  JSON.stringify([row.date, String(row.units), row.payee, row.description, row.note, row.legs?.map((leg) => [String(leg.units), leg.payee, leg.description])])

export function resolveRows(file: ParsedFile, rows: readonly RawRow[], options: ResolveOptions): Resolution {
  // Dates: one format per file.
  let order: DateOrder = 'YMD'
  let dateFormat: string | null = file.fixedDateFormat
  let ambiguous = false
  let candidates: string[] = []
  const dated = rows.filter((row) => row.dateText.trim() !== '')
  if (file.fixedDateFormat === null) {
    const given = options.dateFormat === null ? null : parseDateFormat(options.dateFormat)
    if (given) {
      order = given.order
      dateFormat = given.pattern
    } else {
      const detected = detectDateOrder(
        dated.map((row) => row.dateText),
        options.preference,
      )
      order = detected.chosen
      ambiguous = detected.ambiguous
      candidates = detected.ambiguous ? detected.survivors.map((survivor) => patternOf(survivor, dated[0]?.dateText)) : []
      dateFormat = dated.length > 0 ? patternOf(order, dated[0]?.dateText) : null
    }
  }
  // When no amount tells: `,` for a `;`-separated file (Europe's CSV), `.` otherwise.
  const separator = file.decimalSeparator ?? fileSeparator(amountTexts(rows), file.delimiter === ';' ? ',' : '.')

  const resolved = rows.map((row): ResolvedRow => {
    const errors = [...row.errors]
    const warnings: string[] = []
    let date: string | null = null
    if (!errors.some((error) => error.field === 'date')) {
      date = readDate(row.dateText, order)
      if (date === null) {
        const written = JSON.stringify(row.dateText.trim().slice(0, 40))
        errors.push({ field: 'date', detail: row.dateText.trim() === '' ? 'is empty' : `${written} is not a date in the file's format ${dateFormat}` })
      }
    }
    let units: Units | null = null
    if (row.amount && !errors.some((error) => error.field === 'amount')) {
      const read = readAmount(row.amount, separator, file.amountAffixes)
      if (typeof read === 'bigint') units = read
      else errors.push(read)
    }
    if (row.currency !== null && row.currency.toUpperCase() !== options.accountCurrency) {
      errors.push({ field: 'amount', detail: `the row is in ${row.currency.slice(0, 10)}, but the account is in ${options.accountCurrency}` })
    }
    const legs = units === null || row.legs === null ? null : resolveLegs(row, units, warnings)
    if (options.encodingGuessed && [row.payee, row.description, row.note].some(beyondAscii)) {
      warnings.push('the file is not UTF-8 and declares no encoding: its text was read as windows-1252 (send encoding=… if that is wrong)')
    }
    return {
      line: row.line,
      externalId: null,
      duplicate: false,
      date,
      units,
      payee: row.payee,
      description: row.description,
      note: row.note,
      legs,
      warnings,
      errors,
    }
  })
  assignExternalIds(file, rows, resolved, options.accountId)
  return { dateFormat, dateFormatAmbiguous: ambiguous, dateCandidates: candidates, rows: resolved }
}

/** A CAMT entry's details as legs, when their amounts (all of the entry's sign) sum exactly to it. */
function resolveLegs(row: RawRow, units: Units, warnings: string[]): ResolvedLeg[] | null {
  const legs: ResolvedLeg[] = []
  let sum = 0n
  for (const leg of row.legs ?? []) {
    const read = unitsFromLexeme(leg.amount.trim())
    if (typeof read !== 'bigint') {
      warnings.push(`a detail's amount ${JSON.stringify(leg.amount.slice(0, 40))} ${read}: the entry is imported as one transaction`)
      return null
    }
    const signed = units < 0n ? -magnitude(read) : magnitude(read)
    sum += signed
    legs.push({ units: signed, payee: leg.payee, description: leg.description })
  }
  if (sum !== units) {
    warnings.push(`the entry's ${legs.length} details do not sum to its amount: it is imported as one transaction`)
    return null
  }
  if (legs.length > 100) {
    warnings.push(`the entry has ${legs.length} details, more than a transaction's 100 legs: it is imported as one transaction`)
    return null
  }
  return legs
}

/**
 * The externalIds (external-ids.ts). A bank id seen before in the file: the same values again
 * are a duplicate of that row (a statement that repeats itself); other values get `:2`, `:3`
 * and a warning, so no row is lost to a bank that reuses ids.
 */
function assignExternalIds(file: ParsedFile, raw: readonly RawRow[], rows: ResolvedRow[], accountId: string): void {
  const byBankId = new Map<string, { externalId: string; line: number; sameness: string }[]>()
  const perDateAmount = new Map<string, number>()
  for (const [index, row] of rows.entries()) {
    const bankId = (raw[index] as RawRow).bankId
    if (bankId !== null) {
      const base = bankExternalId(accountId, file.idKind, bankId)
      const seen = byBankId.get(base) ?? []
      const key = sameness(row)
      const same = seen.find((earlier) => earlier.sameness === key)
      if (same) {
        row.externalId = same.externalId
        row.duplicate = true
        continue
      }
      row.externalId = seen.length === 0 ? base : `${base}:${seen.length + 1}`
      if (seen.length > 0) {
        const first = seen[0] as { line: number }
        row.warnings.push(
          `the bank's id ${JSON.stringify(bankId.slice(0, 60))} is also used by line ${first.line} with other values: this row is imported as ${row.externalId}`,
        )
      }
      seen.push({ externalId: row.externalId, line: row.line, sameness: key })
      byBankId.set(base, seen)
      continue
    }
    if (row.date === null || row.units === null) continue
    const key = `${row.date}:${row.units}`
    const n = (perDateAmount.get(key) ?? 0) + 1
    perDateAmount.set(key, n)
    row.externalId = rowExternalId(accountId, row.date, row.units, n)
  }
}
