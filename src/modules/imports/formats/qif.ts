import { clean, FormatError, MAX_IMPORT_ROWS, type ParsedFile, type RawRow, TooManyRowsError } from './types.ts'

/**
 * Quicken Interchange Format (CONTRACT §24), read line by line: `!Type:Bank` (or Cash, CCard,
 * Oth A, Oth L) opens a list of records, each line a one-letter field (`D` date, `T` or `U`
 * amount, `P` payee, `M` memo, `N` number), `^` ends a record. Dates are in the file's one
 * format, detected like a CSV's, with Quicken's apostrophe years (`6/ 4'18` is 2018). Amounts
 * are negated (QIF: negative = payment). Categories (`L`) and splits (`S`, `E`, `$`) are not
 * read: pfin's categories are its own. Investment lists are refused.
 */

const TRANSACTION_TYPES = new Set(['bank', 'cash', 'ccard', 'oth a', 'oth l'])

interface Draft {
  line: number
  date: string | null
  amount: string | null
  payee: string | null
  memo: string | null
  number: string | null
}

export function readQif(text: string): ParsedFile {
  const rows: RawRow[] = []
  let reading = false
  let draft: Draft | null = null
  let line = 0
  let sawType = false
  const finish = () => {
    if (!draft) return
    if (draft.date !== null || draft.amount !== null) {
      if (rows.length >= MAX_IMPORT_ROWS) throw new TooManyRowsError()
      const errors: RawRow['errors'] = []
      if (draft.date === null) errors.push({ field: 'date', detail: 'the record has no D (date) line' })
      if (draft.amount === null) errors.push({ field: 'amount', detail: 'the record has no T (amount) line' })
      rows.push({
        line: draft.line,
        dateText: draft.date ?? '',
        amount: draft.amount === null ? null : { kind: 'signed', text: draft.amount, negate: true },
        bankId: null,
        payee: clean(draft.payee),
        description: clean(draft.memo ?? (draft.number !== null && draft.payee === null ? `Check ${draft.number}` : null)),
        note: null,
        currency: null,
        legs: null,
        errors,
      })
    }
    draft = null
  }
  /** The text of a line, read only for the fields kept: a record of endless lines costs a scan, not a copy each. */
  const field = (start: number, end: number) => text.slice(start, text.charCodeAt(end - 1) === 0x0d ? end - 1 : end)
  let at = 0
  while (at < text.length) {
    const code = text.charCodeAt(at)
    if (code === 0x0a) {
      at++
      line++
      continue
    }
    let end = text.indexOf('\n', at)
    if (end < 0) end = text.length
    const start = at
    at = end + 1
    line++
    if (code === 0x0d) continue
    if (code === 0x21) {
      finish()
      const header = field(start + 1, end)
        .trim()
        .toLowerCase()
      if (header.startsWith('type:')) {
        sawType = true
        const type = header.slice(5).trim()
        if (type === 'invst') throw new FormatError(`line ${line}: the file is an investment list (!Type:Invst), which is not imported`)
        reading = TRANSACTION_TYPES.has(type)
      } else if (header === 'account') {
        // An account list: its records describe accounts, not transactions, until the next !Type.
        reading = false
      }
      continue
    }
    if (!reading) continue
    if (code === 0x5e) {
      finish()
      continue
    }
    draft ??= { line, date: null, amount: null, payee: null, memo: null, number: null }
    if (code === 0x44) draft.date = field(start + 1, end).trim()
    else if (code === 0x54 || (code === 0x55 && draft.amount === null)) draft.amount = field(start + 1, end).trim()
    else if (code === 0x50) draft.payee = field(start + 1, end)
    else if (code === 0x4d) draft.memo = field(start + 1, end)
    else if (code === 0x4e) draft.number = field(start + 1, end).trim()
  }
  finish()
  if (!sawType) throw new FormatError('the file has no !Type: line: it is not a QIF file')
  return {
    format: 'qif',
    idKind: 'ref',
    decimalSeparator: null,
    amountAffixes: false,
    fixedDateFormat: null,
    delimiter: null,
    columns: null,
    descriptionNamesPayee: false,
    statements: [{ account: null, currency: null, closingBalance: null, rows }],
  }
}
