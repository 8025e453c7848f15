import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { fileSeparator, readAmountText, separatorShown } from '../../src/modules/imports/money-text.ts'

/**
 * Amounts read from a bank file's text into exact 10⁻⁸ units, never through a double (CONTRACT
 * §4, §24): every separator convention, signs and currency signs, and a property over random
 * decimal strings in every spelling.
 */

const U = 100_000_000n

describe('amount text', () => {
  test('0.29 is exactly 29 cents (iso20022.js reads 28: 0.29 × 100 in doubles is 28.999999999999996)', () => {
    expect(readAmountText('0.29', '.')).toBe(29_000_000n)
    expect(readAmountText('0,29', ',')).toBe(29_000_000n)
    expect(readAmountText('1.15', '.')).toBe(115_000_000n)
  })

  test.each([
    ['1.234,56', ',', 123_456_000_000n],
    ['1 234,56', ',', 123_456_000_000n],
    ['1\u00a0234,56', ',', 123_456_000_000n],
    ['1\u202f234,56', ',', 123_456_000_000n],
    ['1,234.56', '.', 123_456_000_000n],
    ["1'234.56", '.', 123_456_000_000n],
    ['1,23,456.78', '.', 12_345_678_000_000n],
    ['(30.00)', '.', -30n * U],
    ['30,00-', ',', -30n * U],
    ['−7,5', ',', -750_000_000n],
    ['+12', '.', 12n * U],
    ['.5', '.', 50_000_000n],
    ['€ -1.234,56', ',', -123_456_000_000n],
    ['-€1.234,56', ',', -123_456_000_000n],
    ['1.234,56 €', ',', 123_456_000_000n],
    ['R$ 1.234,56', ',', 123_456_000_000n],
    ['-$30.00', '.', -30n * U],
    ['£2,150.00', '.', 2150n * U],
    ['EUR 12.50', '.', 1_250_000_000n],
    ['12.50 CHF', '.', 1_250_000_000n],
    ['0.00000001', '.', 1n],
    ['-0', '.', 0n],
  ] as const)('%p with decimal %p', (text, separator, expected) => {
    expect(readAmountText(text, separator)).toBe(expected)
  })

  test.each([
    ['0.123456789', 'must have at most 8 decimal places'],
    ['1e5', 'is not an amount'],
    ['abc', 'is not an amount'],
    ['-', 'is not an amount'],
    ['1.2.3', 'more than one decimal separator'],
    ['12,3456.00', 'is not an amount'],
    ['92233720369', 'must be between'],
    ['', 'is empty'],
  ])('%p is refused: %p', (text, why) => {
    const read = readAmountText(text, '.')
    expect(typeof read).toBe('string')
    expect(read as string).toContain(why)
  })

  test('a cell far longer than any amount is refused without being read', () => {
    expect(readAmountText('1'.repeat(1_000_000), '.')).toContain('is not an amount')
  })

  test('the file’s separator comes from what its values show', () => {
    expect(separatorShown('1.234,56')).toBe(',')
    expect(separatorShown('1,234')).toBeNull()
    expect(separatorShown('12,5')).toBe(',')
    expect(separatorShown('1,234,567')).toBe('.')
    expect(fileSeparator(['12', '1.234', '7,50'], '.')).toBe(',')
    expect(fileSeparator(['12', '1,234'], ',')).toBe(',')
    expect(fileSeparator(['£24.18', '£2,150.00'], ',')).toBe('.')
  })
})

/** A decimal of at most 8 places and 11 integer digits, as digits: the value it stands for, in units. */
const decimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 92_233_720_367n }), fc.integer({ min: 0, max: 8 }), fc.bigInt({ min: 0n, max: 99_999_999n }))
  .map(([negative, whole, places, fraction]) => {
    const fractionDigits = places === 0 ? '' : String(fraction % 10n ** BigInt(places)).padStart(places, '0')
    const units = (whole * U + (places === 0 ? 0n : BigInt(fractionDigits) * 10n ** BigInt(8 - places))) * (negative ? -1n : 1n)
    return { negative, whole: String(whole), fraction: fractionDigits, units }
  })

/** The same decimal as a bank may print it: grouped or not, with either convention, sign before, after or in parentheses, a currency sign. */
function spelled(
  d: { negative: boolean; whole: string; fraction: string },
  style: { separator: '.' | ','; group: string; sign: number; currency: string },
): string {
  const grouped = style.group === '' ? d.whole : d.whole.replace(/\B(?=(\d{3})+(?!\d))/g, style.group)
  const number = d.fraction === '' ? grouped : `${grouped}${style.separator}${d.fraction}`
  const signed = !d.negative ? number : style.sign === 0 ? `-${number}` : style.sign === 1 ? `${number}-` : `(${number})`
  return style.currency === '' ? signed : `${style.currency} ${signed}`
}

test('property: any decimal string of ≤ 8 places, in any spelling, reads as exactly its units', () => {
  const style = fc.record({
    separator: fc.constantFrom('.' as const, ',' as const),
    group: fc.constantFrom('', ' ', '\u00a0', "'", 'other'),
    sign: fc.integer({ min: 0, max: 2 }),
    currency: fc.constantFrom('', '€', '$', 'EUR', 'R$', 'CHF'),
  })
  fc.assert(
    fc.property(decimal, style, (d, s) => {
      const group = s.group === 'other' ? (s.separator === '.' ? ',' : '.') : s.group
      const text = spelled(d, { ...s, group })
      expect({ text, units: readAmountText(text, s.separator) }).toEqual({ text, units: d.units === 0n ? 0n : d.units })
    }),
    { numRuns: 5000 },
  )
})

test('property: a ninth decimal place is always refused, never rounded', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.integer({ min: 1, max: 9 }), (whole, last) => {
      const text = `${whole}.12345678${last}`
      expect(readAmountText(text, '.')).toBe('must have at most 8 decimal places')
    }),
  )
})
