import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { MAX_SIGNIFICANT_DIGITS } from '../../src/platform/decimal.ts'
import { decodeJson, decodeJsonVerbatim, JsonLimitError, MAX_DEPTH } from '../../src/platform/json.ts'
import { numberSource } from '../../src/platform/number-sources.ts'
import { deeplyNested, depthOf, jsonNode, jsonText, numbersOf, referenceDecimal } from '../support/json-arbitraries.ts'

/** decodeJson reads any JSON text as JSON.parse does and keeps each number's text exactly as sent (money's exactness rests on it). */

const RUNS = Number(process.env.JSON_PROPERTY_RUNS ?? 300)

/** A number as JSON.parse's reviver saw it: its value and its text in the source. */
class Seen {
  constructor(
    readonly value: number,
    readonly source: string,
  ) {}
}

/** JSON.parse with every number replaced by what the reviver's context says its source was: the reference. */
const parseWithSources = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => (typeof value === 'number' ? new Seen(value, context?.source as string) : value))

/** Walks the decoded value beside the reference, checking every number's value and kept text. */
function expectSameSources(decoded: unknown, reference: unknown, where = '$'): void {
  if (reference === null || typeof reference !== 'object' || reference instanceof Seen) return
  const holder = decoded as Record<string, unknown>
  const expected = reference as Record<string, unknown>
  expect(Object.keys(holder)).toEqual(Object.keys(expected))
  for (const key of Object.keys(expected)) {
    const item = expected[key]
    if (item instanceof Seen) {
      expect({ at: `${where}.${key}`, value: holder[key], source: numberSource(holder, key) }).toEqual({
        at: `${where}.${key}`,
        value: item.value,
        source: item.source,
      })
    } else {
      expectSameSources(holder[key], item, `${where}.${key}`)
    }
  }
}

const significantDigits = (lexeme: string) => {
  const decimal = referenceDecimal(lexeme)
  return decimal === null || decimal.digits === '0' ? 0 : decimal.digits.length
}

/** What decodeJson must do with the text: refuse its depth, refuse a number's digits (naming the first), or read it. */
function expectedOutcome(node: Parameters<typeof depthOf>[0]): 'depth' | { digitsAt: (string | number)[] } | 'read' {
  if (depthOf(node) > MAX_DEPTH) return 'depth'
  const long = numbersOf(node).find(({ lexeme }) => significantDigits(lexeme) > MAX_SIGNIFICANT_DIGITS)
  return long ? { digitsAt: long.path } : 'read'
}

function decodeOutcome(text: string): { error: JsonLimitError } | { value: unknown } {
  try {
    return { value: decodeJson(text) }
  } catch (error) {
    if (error instanceof JsonLimitError) return { error }
    throw error
  }
}

function checkAgainstJsonParse({ node, text }: { node: Parameters<typeof depthOf>[0]; text: string }): void {
  const expected = expectedOutcome(node)
  const outcome = decodeOutcome(text)
  if (expected === 'depth') {
    expect('error' in outcome && outcome.error.limit).toBe('depth')
    return
  }
  if (expected !== 'read') {
    expect('error' in outcome && { limit: outcome.error.limit, path: outcome.error.path }).toEqual({ limit: 'digits', path: expected.digitsAt })
    return
  }
  if (!('value' in outcome)) throw outcome.error
  expect(outcome.value).toStrictEqual(JSON.parse(text))
  expectSameSources(outcome.value, parseWithSources(text))
}

describe('decodeJson agrees with JSON.parse', () => {
  test('on random JSON text: the same value, and every number with the text it was written as', () => {
    fc.assert(fc.property(jsonText(jsonNode()), checkAgainstJsonParse), { numRuns: RUNS })
  })

  test('on JSON serialised by JSON.stringify, with and without indentation', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
        const text = JSON.stringify(value, null, indent)
        const decoded = decodeJson(text)
        expect(decoded).toStrictEqual(JSON.parse(text))
        expectSameSources(decoded, parseWithSources(text))
      }),
      { numRuns: RUNS },
    )
  })

  test(`around the depth limit (${MAX_DEPTH}): deeper text is refused before it is parsed, the rest is read`, () => {
    const nested = deeplyNested(jsonNode({ maxDepth: 2 }), fc.integer({ min: MAX_DEPTH - 4, max: MAX_DEPTH + 4 }))
    fc.assert(fc.property(jsonText(nested), checkAgainstJsonParse), { numRuns: Math.ceil(RUNS / 3) })
  })

  test(`numbers past ${MAX_SIGNIFICANT_DIGITS} significant digits are refused, naming the first one's place`, () => {
    fc.assert(fc.property(jsonText(jsonNode({ long: true })), checkAgainstJsonParse), { numRuns: RUNS })
  })

  test('decodeJsonVerbatim: JSON.stringify writes every number back exactly as it was sent', () => {
    fc.assert(
      fc.property(jsonText(jsonNode({ maxDepth: 3 })), ({ node, text }) => {
        // A bare number as the whole text has no holder to keep its text in.
        fc.pre(expectedOutcome(node) === 'read' && node.kind !== 'number')
        const written = JSON.stringify(decodeJsonVerbatim(text))
        expect(parseWithSources(written)).toEqual(parseWithSources(text))
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    )
  })
})
