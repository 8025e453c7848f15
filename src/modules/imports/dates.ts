/**
 * Dates as statement files write them (CONTRACT §24). One format per file: every candidate
 * order (year-month-day, day-month-year, month-day-year) is tried over all of the file's dates
 * and those that read every one survive. More than one survivor (no day above 12) is ambiguous.
 * Separators may be `/ . - ` or none (8 digits); two-digit years are 2000–2069 and 1970–1999,
 * except after QIF's apostrophe (`6/ 4'18`), which always means 20YY.
 */

export type DateOrder = 'YMD' | 'DMY' | 'MDY'
export const DATE_ORDERS: readonly DateOrder[] = ['YMD', 'DMY', 'MDY']

/** A date text split into its three numbers, as written. */
interface Parts {
  first: string
  second: string
  third: string
  /** The separators, for naming the format (`DD.MM.YYYY`). */
  separators: [string, string]
}

// Bounded and anchored: linear on any cell. A time may follow (`15.01.2026 10:22`, `2026-01-15T10:22:00`).
const SEPARATED = /^(\d{1,4}) ?([./\- ]) ?(\d{1,2}) ?([./\-' ]) ?(\d{1,4})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/
const COMPACT = /^(\d{8})$/

function split(text: string): Parts | null {
  const trimmed = text.trim()
  if (trimmed.length > 40) return null
  const separated = SEPARATED.exec(trimmed)
  if (separated) {
    const [, first, a, second, b, third] = separated as unknown as [string, string, string, string, string, string]
    return { first, second, third, separators: [a, b] }
  }
  const compact = COMPACT.exec(trimmed)?.[1]
  if (!compact) return null
  return { first: compact, second: '', third: '', separators: ['', ''] }
}

const pad = (n: number) => String(n).padStart(2, '0')

function century(year: string, apostrophe: boolean): number | null {
  if (year.length === 4) return Number(year)
  if (year.length !== 2) return null
  const yy = Number(year)
  if (apostrophe) return 2000 + yy
  return yy < 70 ? 2000 + yy : 1900 + yy
}

/** `YYYY-MM-DD` when y-m-d is a real calendar date, from 1900 to 2199. */
function isoDate(year: number | null, month: number, day: number): string | null {
  if (year === null || year < 1900 || year > 2199 || month < 1 || month > 12 || day < 1) return null
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return day <= days ? `${year}-${pad(month)}-${pad(day)}` : null
}

/** Reads `text` in one order; null when it is not a date in that order. */
export function readDate(text: string, order: DateOrder): string | null {
  const parts = split(text)
  if (!parts) return null
  if (parts.second === '') {
    const d = parts.first
    if (order === 'YMD') return isoDate(Number(d.slice(0, 4)), Number(d.slice(4, 6)), Number(d.slice(6)))
    const [a, b] = [Number(d.slice(0, 2)), Number(d.slice(2, 4))]
    return order === 'DMY' ? isoDate(Number(d.slice(4)), b, a) : isoDate(Number(d.slice(4)), a, b)
  }
  const apostrophe = parts.separators[1] === "'"
  if (order === 'YMD') {
    if (parts.first.length !== 4 || parts.third.length > 2 || apostrophe) return null
    return isoDate(Number(parts.first), Number(parts.second), Number(parts.third))
  }
  if (parts.first.length > 2 || (parts.third.length !== 2 && parts.third.length !== 4)) return null
  const year = century(parts.third, apostrophe)
  const [a, b] = [Number(parts.first), Number(parts.second)]
  return order === 'DMY' ? isoDate(year, b, a) : isoDate(year, a, b)
}

/** Whether a cell looks like a date in some order: what tells a footer (`Saldo`) from a row. */
export const looksLikeDate = (text: string): boolean => DATE_ORDERS.some((order) => readDate(text, order) !== null)

export interface DateFormat {
  order: DateOrder
  /** As the caller would write it: `DD/MM/YYYY`, `YYYY-MM-DD`, `MM/DD'YY`. */
  pattern: string
}

const FIELD = { Y: 'YYYY', M: 'MM', D: 'DD' } as const

/** The pattern the file's dates are written in, in `order`, from the first of them. */
export function patternOf(order: DateOrder, sample: string | undefined): string {
  const parts = sample === undefined ? null : split(sample)
  const [a, b] = parts ? parts.separators : ['-', '-']
  const year = (parts && (order === 'YMD' ? parts.first : parts.third).length === 2) || b === "'" ? 'YY' : 'YYYY'
  const fields = [...order].map((letter) => (letter === 'Y' ? year : FIELD[letter as 'M' | 'D']))
  return `${fields[0]}${a}${fields[1]}${b}${fields[2]}`
}

/**
 * A `dateFormat` option: `DD/MM/YYYY`, `MM-DD-YY`, `YYYY-MM-DD`, `DD.MM.YYYY`, `YYYYMMDD`, …
 * (one each of D, M and Y, any of `/ . - ' ` or nothing between). Only the order matters when
 * reading: a file's separators may vary. Null when it is not such a pattern.
 */
export function parseDateFormat(pattern: string): DateFormat | null {
  const match = /^(D{1,2}|M{1,2}|Y{2}|Y{4})([./\- ']?)(D{1,2}|M{1,2}|Y{2}|Y{4})([./\- ']?)(D{1,2}|M{1,2}|Y{2}|Y{4})$/.exec(pattern.trim().toUpperCase())
  if (!match) return null
  const order = [match[1], match[3], match[5]].map((field) => (field as string)[0]).join('')
  if (!(DATE_ORDERS as readonly string[]).includes(order)) return null
  return { order: order as DateOrder, pattern: pattern.trim() }
}

export interface DateDetection {
  /** The orders that read every date of the file. */
  survivors: DateOrder[]
  /** The order the rows are read in: the preferred survivor, or when none survives the one that reads the most. */
  chosen: DateOrder
  ambiguous: boolean
}

/**
 * Tries every order over all of `texts` (CONTRACT §24). `preference`: the orders in the owner's
 * usual order (month first in the US), used when several survive or none does.
 */
export function detectDateOrder(texts: readonly string[], preference: readonly DateOrder[]): DateDetection {
  const read = new Map(preference.map((order) => [order, 0]))
  for (const text of texts) for (const order of preference) if (readDate(text, order) !== null) read.set(order, (read.get(order) ?? 0) + 1)
  const survivors = preference.filter((order) => read.get(order) === texts.length)
  if (survivors.length > 0) return { survivors, chosen: survivors[0] as DateOrder, ambiguous: survivors.length > 1 }
  const best = [...preference].sort((a, b) => (read.get(b) ?? 0) - (read.get(a) ?? 0))[0] as DateOrder
  return { survivors, chosen: best, ambiguous: false }
}

/** The orders in the order an owner from `country` expects them when the dates cannot tell. */
export function preferredOrders(country: string | null): DateOrder[] {
  return country === 'US' ? ['MDY', 'DMY', 'YMD'] : ['DMY', 'MDY', 'YMD']
}
