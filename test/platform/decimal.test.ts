import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { decimalNormalForm, parseDecimalLexeme, significantDigitCount } from '../../src/platform/decimal.ts'
import { numberLexeme, referenceDecimal } from '../support/json-arbitraries.ts'

/** The exact decimal scanner money and fingerprints rest on reads every lexeme as the slow, obvious reference does. */

const RUNS = Number(process.env.JSON_PROPERTY_RUNS ?? 300)

const run = (digits: string, min: number, max: number) => fc.string({ unit: fc.constantFrom(...digits), minLength: min, maxLength: max })

/** Decimal lexemes as the scanner accepts them (leading zeros too), zeros in long runs, exponents up to beyond 2^53. */
const decimalLexeme = fc
  .tuple(
    fc.constantFrom('', '-'),
    fc.oneof(
      run('0', 1, 30),
      run('0123456789', 1, 25),
      fc.tuple(run('0', 0, 20), run('123456789', 1, 3), run('0', 0, 20)).map((parts) => parts.join('')),
    ),
    fc.option(
      fc.oneof(run('0', 1, 30), run('0123456789', 1, 25)).map((fraction) => `.${fraction}`),
      { nil: '' },
    ),
    fc.option(
      fc
        .tuple(
          fc.constantFrom('e', 'E'),
          fc.constantFrom('', '+', '-'),
          fc.oneof(
            run('0123456789', 1, 4),
            run('0', 1, 10),
            fc.constantFrom('9007199254740991', '9007199254740992', '9007199254740993', '99999999999999999999'),
          ),
        )
        .map((parts) => parts.join('')),
      { nil: '' },
    ),
  )
  .map((parts) => parts.join(''))

/** Near misses: strings of a number's characters in any order. */
const garbage = run('0123456789.eE+-', 0, 12)

const anyLexeme = fc.oneof(decimalLexeme, numberLexeme({ long: true }), garbage)

describe('the decimal scanner', () => {
  test('reads every lexeme as the reference does, and nothing else', () => {
    fc.assert(
      fc.property(anyLexeme, (lexeme) => {
        const expected = referenceDecimal(lexeme)
        expect({ lexeme, decimal: parseDecimalLexeme(lexeme) }).toEqual({ lexeme, decimal: expected })
        expect(significantDigitCount(lexeme)).toBe(expected === null ? null : expected.digits === '0' ? 0 : expected.digits.length)
        expect(decimalNormalForm(lexeme)).toBe(expected === null ? null : `${expected.negative ? '-' : ''}${expected.digits}e${expected.exponent}`)
      }),
      { numRuns: RUNS * 3 },
    )
  })

  test('gives the value JavaScript reads from the same lexeme', () => {
    fc.assert(
      fc.property(fc.oneof(decimalLexeme, numberLexeme({ long: true })), (lexeme) => {
        const decimal = parseDecimalLexeme(lexeme)
        fc.pre(decimal !== null)
        // Both are the double nearest one decimal value, so they are the same double (-0 and 0 aside).
        expect(Number(`${decimal?.negative ? '-' : ''}${decimal?.digits}e${decimal?.exponent}`) === Number(lexeme)).toBe(true)
      }),
      { numRuns: RUNS * 3 },
    )
  })

  test('reads equal decimals, however written, as one', () => {
    fc.assert(
      fc.property(decimalLexeme, fc.nat(20), fc.nat(20), (lexeme, leading, trailing) => {
        const decimal = referenceDecimal(lexeme)
        fc.pre(decimal !== null && !lexeme.includes('e') && !lexeme.includes('E'))
        const negative = lexeme.startsWith('-')
        const [integer = '', fraction = ''] = (negative ? lexeme.slice(1) : lexeme).split('.')
        const padded = `${negative ? '-' : ''}${'0'.repeat(leading)}${integer}.${fraction}${'0'.repeat(trailing)}0`
        expect(decimalNormalForm(padded)).toBe(decimalNormalForm(lexeme))
      }),
      { numRuns: RUNS },
    )
  })
})
