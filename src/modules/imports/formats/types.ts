import { MAX_IMPORT_ROWS } from '../limits.ts'

/**
 * What every format's reader gives (CONTRACT §24): the statements of the file, each with its
 * rows as the file writes them. Dates and amounts stay text here: a file's date format and
 * decimal separator are decided over all of its rows (statement.ts), not row by row.
 */

export type ImportFormat = 'csv' | 'ofx' | 'qfx' | 'qif' | 'camt053'
export const IMPORT_FORMATS: readonly ImportFormat[] = ['csv', 'ofx', 'qfx', 'qif', 'camt053']

/** An error of one row, named by the transaction field it would fill. */
export interface RowError {
  field: string | null
  detail: string
}

/**
 * A row's amount as written. `signed`: one number whose sign the file gives (`negate` turns a
 * bank's sign, negative = money out, into pfin's, positive = expense); `pair`: an outflow and an
 * inflow column; `indicated`: a number and a debit/credit marker.
 */
export type AmountText =
  | { kind: 'signed'; text: string; negate: boolean }
  | { kind: 'pair'; outflow: string; inflow: string }
  | { kind: 'indicated'; text: string; indicator: string }

export interface RawLeg {
  amount: string
  payee: string | null
  description: string | null
}

export interface RawRow {
  /** The line of the file the row starts on (1-based). */
  line: number
  /** The date as written; for OFX and CAMT already `YYYY-MM-DD`. */
  dateText: string
  amount: AmountText | null
  /** The bank's own id of the row (FITID, AcctSvcrRef/NtryRef, a CSV id column). */
  bankId: string | null
  /** The counterparty as the bank names it. */
  payee: string | null
  /** The bank's description (memo, remittance text). */
  description: string | null
  note: string | null
  /** A currency the row names (CSV currency column). */
  currency: string | null
  /** The details of a CAMT entry booked as one (a batch of payments), when each has an amount. */
  legs: RawLeg[] | null
  errors: RowError[]
}

export interface RawStatement {
  /** The account the statement is for, as written (OFX ACCTID, CAMT IBAN). */
  account: string | null
  currency: string | null
  /** The statement's closing balance as written, signed as the bank's balance (negative: owed). */
  closingBalance: string | null
  rows: RawRow[]
}

export interface ParsedFile {
  format: ImportFormat
  /** What kind of id `bankId` is, for the externalId (CONTRACT §24). */
  idKind: 'fitid' | 'camt' | 'ref'
  /** The decimal separator of the amounts, or null to tell it from them. */
  decimalSeparator: '.' | ',' | null
  /** Whether the amounts may carry currency signs and codes (CSV). */
  amountAffixes: boolean
  /** The dates' format when the format fixes it (`YYYYMMDD` for OFX), else null to detect it. */
  fixedDateFormat: string | null
  delimiter: string | null
  /** CSV: each role and the column it was read from. */
  columns: Record<string, string> | null
  /** The description is the only text a row has of its counterparty (a CSV without a payee column): the payee is made from it. */
  descriptionNamesPayee: boolean
  statements: RawStatement[]
}

/** A file that cannot be read as its format: 422 naming what is wrong. */
export class FormatError extends Error {}

export { MAX_IMPORT_ROWS }

export class TooManyRowsError extends Error {
  constructor() {
    super(`the file holds more than ${MAX_IMPORT_ROWS} rows; import it in parts (for example one month at a time)`)
  }
}

/** Text as the row's field: spaces collapsed, trimmed, null when empty. */
export function clean(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null
  const collapsed = text.replace(/\s+/g, ' ').trim()
  return collapsed === '' ? null : collapsed
}
