import { type Units, unitsFromLexeme } from '../../platform/money.ts'

/**
 * Amounts as bank files write them, read into 10⁻⁸ units from their digits, never through a
 * double (CONTRACT §4, §24): `1.234,56`, `1 234,56`, `1'234.56`, `1,234.56` by the decimal
 * separator; `-30`, `30-`, `(30.00)` and `−30` negative; currency symbols and codes around the
 * number (CSV) dropped. More than 8 decimal places is an error, as over JSON.
 */

export type DecimalSeparator = '.' | ','

/** Currency signs and codes a bank prints beside an amount: `€`, `R$`, `EUR`, `CHF`, `kr`. */
const AFFIX = /^[\p{Sc}\p{L}.\s]*?(?=[-+−(\d.,])|(?<=[\d)\-−])[\p{Sc}\p{L}.\s]*$/gu
const SPACES = /[\s\u00a0\u202f']/g
const MAX_AMOUNT_TEXT = 64

/**
 * What a decimal separator a value shows by itself: the last of `.` and `,` when both appear,
 * the one that appears more than once is the grouping, one followed by other than three digits is
 * the decimal point. `null` when the value cannot tell (`1,234`, `12`).
 */
export function separatorShown(text: string): DecimalSeparator | null {
  const dot = text.lastIndexOf('.')
  const comma = text.lastIndexOf(',')
  if (dot >= 0 && comma >= 0) return dot > comma ? '.' : ','
  const at = Math.max(dot, comma)
  if (at < 0) return null
  const mark = text[at] as DecimalSeparator
  if (text.indexOf(mark) !== at) return mark === '.' ? ',' : '.'
  const digitsAfter = /^\d*/.exec(text.slice(at + 1))?.[0].length ?? 0
  return digitsAfter === 3 ? null : mark
}

/**
 * The file's decimal separator from all its amounts: the one the values show (`,` when none
 * shows either, unless the file is comma-separated, where `.` is the only one that fits).
 */
export function fileSeparator(texts: Iterable<string>, fallback: DecimalSeparator): DecimalSeparator {
  let dots = 0
  let commas = 0
  for (const text of texts) {
    const shown = separatorShown(text)
    if (shown === '.') dots++
    else if (shown === ',') commas++
  }
  if (dots === 0 && commas === 0) return fallback
  return commas > dots ? ',' : '.'
}

/**
 * Reads one amount. `separator`: the decimal separator (the other of `.` and `,` groups digits,
 * as do spaces and `'`). `affixes`: drop currency signs and codes around the number. Returns
 * units or why the text is not an amount.
 */
export function readAmountText(raw: string, separator: DecimalSeparator, affixes = true): Units | string {
  let text = raw.trim()
  // No amount is longer; a longer cell is no amount, however it would read.
  if (text.length > MAX_AMOUNT_TEXT) return `is not an amount (${JSON.stringify(text.slice(0, 40))}…)`
  if (affixes) text = text.replace(AFFIX, '')
  text = text.replace(SPACES, '')
  if (text === '') return 'is empty'
  let negative = false
  if (text.startsWith('(') && text.endsWith(')')) {
    negative = true
    text = text.slice(1, -1)
  }
  const first = text[0]
  if (first === '-' || first === '−' || first === '+') {
    negative ||= first !== '+'
    text = text.slice(1)
  } else if (text.endsWith('-') || text.endsWith('−')) {
    negative = true
    text = text.slice(0, -1)
  }
  // Money symbols between the sign and the digits: `-$30.00`, `-€ 30,00`.
  if (affixes) text = text.replace(AFFIX, '').replace(SPACES, '')
  const group = separator === '.' ? ',' : '.'
  const [whole = '', fraction, extra] = text.split(separator)
  if (extra !== undefined) return `has more than one decimal separator "${separator}"`
  const groups = whole.split(group)
  const digits = groups.join('')
  // Groups of three (two in Indian grouping, 1,23,456.78) after a first of one to three digits.
  const grouped = groups.length === 1 || (/^\d{1,3}$/.test(groups[0] as string) && groups.slice(1).every((g) => /^\d{2,3}$/.test(g)))
  if (!grouped || !/^\d*$/.test(digits) || (fraction !== undefined && !/^\d+$/.test(fraction)) || (digits === '' && !fraction)) {
    return `is not an amount (${JSON.stringify(raw.trim().slice(0, 40))})`
  }
  if (fraction !== undefined && fraction.length > 8) return 'must have at most 8 decimal places'
  const lexeme = `${negative ? '-' : ''}${digits || '0'}${fraction ? `.${fraction}` : ''}`
  const units = unitsFromLexeme(lexeme)
  return units === 0n ? 0n : units
}
