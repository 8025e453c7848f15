import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { canonicalJson } from '../../src/platform/canonical-json.ts'
import { decodeJson } from '../../src/platform/json.ts'
import { referenceDecimal } from '../support/json-arbitraries.ts'

/** Request fingerprints: canonical JSON is the same text for equal bodies, whatever their key order or number spelling, and differs otherwise. */

const RUNS = Number(process.env.JSON_PROPERTY_RUNS ?? 300)

/** The value as JSON text with sorted keys: two values are equal JSON exactly when these agree. */
function sortedText(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(sortedText).join(',')}]`
  const record = value as Record<string, unknown>
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${sortedText(record[key])}`)
    .join(',')}}`
}

/** Another lexeme of exactly the same decimal: padded with zeros, or moved into the exponent. */
function respell(lexeme: string, form: number): string {
  const decimal = referenceDecimal(lexeme)
  if (decimal === null || decimal.digits === '0') return ['0', '-0', '0.000', '0e7', '-0E-3'][form % 5] as string
  const sign = decimal.negative ? '-' : ''
  const { digits, exponent } = decimal
  switch (form % 4) {
    case 0:
      return `${sign}${digits}e${exponent}`
    case 1:
      return `${sign}${digits}00E${exponent - 2}`
    case 2: {
      const power = exponent + digits.length
      return `${sign}0.${digits}e${power >= 0 ? '+' : ''}${power}`
    }
    default:
      return lexeme
  }
}

/** The value as JSON text with every object's keys in the order `order` picks and every number respelt. */
function rewritten(value: unknown, order: number[], forms: number[]): string {
  let turn = 0
  const next = (choices: number[]) => choices[turn++ % choices.length] as number
  const write = (item: unknown): string => {
    if (typeof item === 'number') return respell(JSON.stringify(item), next(forms))
    if (item === null || typeof item !== 'object') return JSON.stringify(item)
    if (Array.isArray(item)) return `[${item.map(write).join(',')}]`
    const record = item as Record<string, unknown>
    const keys = Object.keys(record)
    // A rotation by a chosen amount, then a reversal by choice: enough to reach every order over many runs.
    const shift = next(order) % Math.max(1, keys.length)
    const rotated = [...keys.slice(shift), ...keys.slice(0, shift)]
    const ordered = next(order) % 2 === 0 ? rotated : rotated.reverse()
    return `{${ordered.map((key) => `${JSON.stringify(key)}:${write(record[key])}`).join(',')}}`
  }
  return write(value)
}

const choices = fc.array(fc.nat(100), { minLength: 1, maxLength: 10 })

/** Small values from few constants, so that two of them are often equal. */
const { small } = fc.letrec<{ small: unknown }>((tie) => ({
  small: fc.oneof(
    { depthSize: 'small', maxDepth: 2 },
    fc.constantFrom(0, 1, -1, 1.5, 100, 'a', '', true, false, null),
    fc.array(tie('small'), { maxLength: 2 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('small'), { maxKeys: 2 }),
  ),
}))

describe('canonicalJson', () => {
  test('is the same text under key reordering and respelt numbers, decoded or not', () => {
    fc.assert(
      fc.property(fc.jsonValue(), choices, choices, (value, order, forms) => {
        const canonical = canonicalJson(value)
        expect(canonicalJson(decodeJson(JSON.stringify(value)))).toBe(canonical)
        expect(canonicalJson(decodeJson(rewritten(value, order, forms)))).toBe(canonical)
      }),
      { numRuns: RUNS },
    )
  })

  test('is equal for equal values and different for different ones', () => {
    fc.assert(
      fc.property(small, small, (a, b) => {
        expect(canonicalJson(a) === canonicalJson(b)).toBe(sortedText(a) === sortedText(b))
        expect(canonicalJson(decodeJson(JSON.stringify(a))) === canonicalJson(decodeJson(JSON.stringify(b)))).toBe(sortedText(a) === sortedText(b))
      }),
      { numRuns: RUNS },
    )
  })

  test('tells apart numbers one double holds: the text sent is what counts', () => {
    const body = (amount: string) => canonicalJson(decodeJson(`{"amount":${amount}}`))
    expect(body('0.1')).toBe(body('0.10'))
    expect(body('0.1')).not.toBe(body('0.1000000000000000000001'))
    expect(body('92233720368.54775807')).not.toBe(body('92233720368.54775808'))
  })
})
