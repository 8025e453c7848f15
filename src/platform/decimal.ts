/**
 * Exact decimal numbers read from JSON number lexemes, without a double and without a bigint:
 * each scan is linear in the lexeme's length however many zeros pad it (CONTRACT §14).
 */

/**
 * More significant digits than any number of this API needs (a double carries 17, money at
 * most 19); the limit keeps exact arithmetic on a number's digits small.
 */
export const MAX_SIGNIFICANT_DIGITS = 40

/** A decimal number exactly: `digits × 10^exponent`, digits without leading or trailing zeros ('0' for zero). */
export interface Decimal {
  negative: boolean
  digits: string
  exponent: number
}

const MINUS = 0x2d
const DOT = 0x2e
const ZERO = 0x30
const NINE = 0x39
const isDigit = (c: number) => c >= ZERO && c <= NINE

/**
 * Where a lexeme's significant digits are and what power of ten the last one has, filled in
 * by scanDecimal. One object reused for every number: canonicalising a body of many numbers
 * allocates nothing per number but its canonical text.
 */
const scanned = { negative: false, zero: false, first: 0, intEnd: 0, last: 0, exponent: 0 }

/**
 * Scans a number lexeme (`-?\d+(\.\d+)?([eE][+-]?\d+)?`) by position. False when it is not
 * one, or when its power of ten is beyond a safe integer.
 */
function scanDecimal(text: string): boolean {
  const negative = text.charCodeAt(0) === MINUS
  const intStart = negative ? 1 : 0
  let at = intStart
  while (isDigit(text.charCodeAt(at))) at++
  const intEnd = at
  if (intEnd === intStart) return false
  let fractionEnd = intEnd
  if (text.charCodeAt(at) === DOT) {
    at++
    while (isDigit(text.charCodeAt(at))) at++
    if (at === intEnd + 1) return false
    fractionEnd = at
  }
  let power = 0
  if (at < text.length) {
    const e = text.charCodeAt(at++)
    if (e !== 0x65 && e !== 0x45) return false
    const sign = text.charCodeAt(at)
    if (sign === 0x2b || sign === MINUS) at++
    const expDigits = at
    for (let c = text.charCodeAt(at); isDigit(c); c = text.charCodeAt(++at)) {
      // Past 2^53 the sum is inexact, but then the exponent is refused below anyway.
      power = power * 10 + (c - ZERO)
    }
    if (at === expDigits || at !== text.length) return false
    if (sign === MINUS) power = -power
  }
  // The first and last non-zero digits, stepping over the decimal point.
  let first = intStart
  while (first < fractionEnd && (text.charCodeAt(first) === ZERO || first === intEnd)) first++
  scanned.zero = first === fractionEnd
  if (scanned.zero) return true
  let last = fractionEnd - 1
  while (text.charCodeAt(last) === ZERO || last === intEnd) last--
  // The place value of the last significant digit: 10^(intEnd - 1 - last) left of the point, 10^(intEnd - last) right of it.
  const exponent = power + (last < intEnd ? intEnd - 1 - last : intEnd - last)
  if (!Number.isSafeInteger(exponent) || !Number.isSafeInteger(power)) return false
  scanned.negative = negative
  scanned.first = first
  scanned.intEnd = intEnd
  scanned.last = last
  scanned.exponent = exponent
  return true
}

/** The significant digits scanDecimal found, without the decimal point. */
function scannedDigits(text: string): string {
  const { first, intEnd, last } = scanned
  return first < intEnd && last > intEnd ? text.slice(first, intEnd) + text.slice(intEnd + 1, last + 1) : text.slice(first, last + 1)
}

/** A number lexeme as its significant digits and a power of ten; null when it is not one. */
export function parseDecimalLexeme(text: string): Decimal | null {
  if (!scanDecimal(text)) return null
  if (scanned.zero) return { negative: false, digits: '0', exponent: 0 }
  return { negative: scanned.negative, digits: scannedDigits(text), exponent: scanned.exponent }
}

/** How many significant digits a lexeme has (0 for zero); null when parseDecimalLexeme cannot read it. */
export function significantDigitCount(text: string): number | null {
  if (!scanDecimal(text)) return null
  if (scanned.zero) return 0
  const { first, intEnd, last } = scanned
  return last - first + 1 - (first < intEnd && last > intEnd ? 1 : 0)
}

/**
 * One text per decimal value, whatever its spelling: `digits` e `exponent` as
 * parseDecimalLexeme reads the lexeme ("1.50", "15e-1" → "15e-1"; any zero → "0e0"); null when
 * it cannot read it. Built without the Decimal object, for canonical JSON's many numbers.
 */
export function decimalNormalForm(text: string): string | null {
  if (!scanDecimal(text)) return null
  if (scanned.zero) return '0e0'
  return `${scanned.negative ? '-' : ''}${scannedDigits(text)}e${scanned.exponent}`
}
