import { MAX_SIGNIFICANT_DIGITS, parseDecimalLexeme } from './decimal.ts'
import { ApiError } from './errors.ts'
import { numberSource } from './number-sources.ts'

/**
 * Money is exact (CONTRACT §4): integers of 10⁻⁸ units, bigint in code, INTEGER in SQLite.
 * Values come in as JSON numbers (read from their source text) and go out as raw JSON numbers.
 */
export const SCALE = 8
const UNIT = 10n ** BigInt(SCALE)
/** The largest magnitude accepted: ±92,233,720,368 (fits SQLite's signed 64-bit INTEGER with room). */
export const MAX_UNITS = 92_233_720_368n * UNIT

export type Units = bigint

/** Parses a decimal lexeme into units, or explains why it is not a money value. */
export function unitsFromLexeme(lexeme: string): Units | string {
  const d = parseDecimalLexeme(lexeme)
  if (!d) return 'must be a finite number'
  if (-d.exponent > SCALE) return `must have at most ${SCALE} decimal places`
  // Judged on the digit string, so 1e400 or a thousand digits never become a bigint.
  if (d.digits.length + d.exponent > 12) return 'must be between -92233720368 and 92233720368'
  // Here the value has at most 12 integer and 8 decimal digits: the bigint is small.
  const units = BigInt(d.digits) * 10n ** BigInt(d.exponent + SCALE)
  if (units > MAX_UNITS) return 'must be between -92233720368 and 92233720368'
  return d.negative ? -units : units
}

/** Reads `holder[key]` (a validated JSON number) as exact units; 422 names the field otherwise. */
export function readMoney(holder: object, key: string, field = key): Units {
  const result = unitsFromLexeme(numberSource(holder, key))
  if (typeof result === 'string') throw new ApiError('validation_failed', `${field} ${result}`)
  return result
}

/**
 * The decimal text of a count of 10⁻⁸ units written as an integer ("-123400000" → "-1.234"),
 * by moving the point in the digits: no bigint arithmetic, and exact at any size.
 */
export function decimalOfUnits(integer: string): string {
  const negative = integer.charCodeAt(0) === MINUS
  const digits = (negative ? integer.slice(1) : integer).padStart(SCALE + 1, '0')
  const point = digits.length - SCALE
  let end = digits.length
  while (end > point && digits.charCodeAt(end - 1) === ZERO) end--
  const whole = digits.slice(0, point)
  return `${negative ? '-' : ''}${end > point ? `${whole}.${digits.slice(point, end)}` : whole}`
}

const MINUS = 0x2d
const ZERO = 0x30

/**
 * Money values whose nearest double prints as exactly their decimal: at most 15 significant
 * digits (|units| < 10¹⁵, so `Number(units)` is exact too) and at least 10⁻⁶ (|units| ≥ 100;
 * smaller values print in exponent form).
 */
const PLAIN_DOUBLE = { min: 100, max: 1e15 } as const
const UNITS_PER_WHOLE = 10 ** SCALE

/**
 * A money value for a response body, written by JSON.stringify as exactly its decimal
 * ("12.5", never "12.499999999999998"), given as units or as their integer's text.
 *
 * Most values go out as a plain number: `units / 10⁸` is correctly rounded, so it is the
 * double nearest the decimal, and JSON.stringify writes a double's shortest form that reads
 * back as the same double. Two decimals of at most 15 significant digits never round to one
 * double, so that shortest form is the decimal itself. The rest (beyond ten million, or below
 * 10⁻⁶) go out verbatim as `JSON.rawJSON`, which costs a wrapper object per value.
 */
export function moneyJson(units: Units | string): number {
  const value = Number(units)
  const magnitude = value < 0 ? -value : value
  if (magnitude >= PLAIN_DOUBLE.min && magnitude < PLAIN_DOUBLE.max) return value / UNITS_PER_WHOLE
  return JSON.rawJSON(decimalOfUnits(typeof units === 'string' ? units : units.toString())) as number
}

/** Adds with the range check every stored balance and total must pass. */
export function addUnits(a: Units, b: Units, what: string): Units {
  const sum = a + b
  if (sum > MAX_UNITS || sum < -MAX_UNITS) {
    throw new ApiError('rule_violation', `${what} would exceed the supported range of ±92233720368`)
  }
  return sum
}

/** A finite double written in at most MAX_SIGNIFICANT_DIGITS digits stays within these powers of ten. */
const MAX_RATE_EXPONENT = 400

/** amount × rate, rounded half away from zero to 8 places; the rate is read from its source text. */
export function multiplyByRate(amount: Units, rateLexeme: string): Units {
  const d = parseDecimalLexeme(rateLexeme)
  if (!d) throw new ApiError('validation_failed', 'exchangeRate must be a finite number')
  // Bodies cannot carry such a rate (decodeJson limits digits, the schema a finite double); a stored one is checked all the same.
  if (d.digits.length > MAX_SIGNIFICANT_DIGITS || Math.abs(d.exponent) > MAX_RATE_EXPONENT) {
    throw new ApiError(
      'validation_failed',
      `exchangeRate must have at most ${MAX_SIGNIFICANT_DIGITS} significant digits and lie within 1e±${MAX_RATE_EXPONENT}`,
    )
  }
  let numerator = amount * BigInt(d.digits)
  let denominator = 1n
  if (d.exponent >= 0) numerator *= 10n ** BigInt(d.exponent)
  else denominator = 10n ** BigInt(-d.exponent)
  const negative = numerator < 0n !== d.negative
  const absNum = numerator < 0n ? -numerator : numerator
  const rounded = (absNum * 2n + denominator) / (2n * denominator)
  return negative ? -rounded : rounded
}
