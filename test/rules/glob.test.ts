import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { compileGlob } from '../../src/lib/glob.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { ledger, newRule } from './helpers.ts'

/**
 * CONTRACT §23: `matches` takes a glob with `*` and `?` and nothing else, matched in time linear
 * in the text whatever the pattern: the same answers as a reference matcher written here, and a
 * hostile pattern answered at once.
 */

/** The reference: the textbook dynamic programme over code points (quadratic, obviously right). */
function reference(pattern: string, text: string): boolean {
  const p = [...pattern]
  const t = [...text]
  // row[j]: the pattern's first i characters match the text's first j.
  let row = Array.from({ length: t.length + 1 }, (_, j) => j === 0)
  for (const char of p) {
    const next = Array.from({ length: t.length + 1 }, () => false)
    if (char === '*') {
      next[0] = row[0] as boolean
      for (let j = 1; j <= t.length; j++) next[j] = (row[j] as boolean) || (next[j - 1] as boolean)
    } else {
      for (let j = 1; j <= t.length; j++) next[j] = (row[j - 1] as boolean) && (char === '?' || char === t[j - 1])
    }
    row = next
  }
  return row[t.length] as boolean
}

const textChar = fc.constantFrom('a', 'b', 'é', '😀', ' ')
const patternChar = fc.oneof({ arbitrary: textChar, weight: 3 }, { arbitrary: fc.constantFrom('*', '?'), weight: 2 })
const text = (max: number) => fc.array(textChar, { maxLength: max }).map((chars) => chars.join(''))
const pattern = (max: number) => fc.array(patternChar, { maxLength: max }).map((chars) => chars.join(''))

describe('the matcher', () => {
  test('property: compileGlob agrees with the reference, with and without ?, over one and several machine words', () => {
    fc.assert(
      fc.property(pattern(80), text(60), (p, t) => compileGlob(p).matches(t) === reference(p, t)),
      { numRuns: 20_000 },
    )
  })

  test('property: a text matches a pattern made from it (its characters, some turned into ? and *)', () => {
    fc.assert(
      fc.property(text(60), fc.array(fc.constantFrom('keep', '?', '*', '*x'), { minLength: 60, maxLength: 60 }), (t, edits) => {
        const p = [...t].map((char, i) => (edits[i] === '?' ? '?' : edits[i] === '*' ? `*${char}` : edits[i] === '*x' ? '*' : char)).join('')
        return compileGlob(p).matches(t) && reference(p, t)
      }),
      { numRuns: 5_000 },
    )
  })

  test('examples', () => {
    const cases: [string, string, boolean][] = [
      ['', '', true],
      ['', 'a', false],
      ['*', '', true],
      ['**', 'anything', true],
      ['a*', 'abc', true],
      ['*c', 'abc', true],
      ['a*c', 'ac', true],
      ['a*c', 'abcbc', true],
      ['a*b*b', 'ab', false],
      ['ab*ba', 'aba', false],
      ['?', '😀', true],
      ['??', '😀', false],
      ['*.*', 'no dot', false],
      ['[a]', '[a]', true],
      ['a+b', 'a+b', true],
    ]
    for (const [p, t, expected] of cases) expect([p, t, compileGlob(p).matches(t)]).toEqual([p, t, expected])
  })

  test('a hostile pattern against a long text answers at once, with and without ?', () => {
    const long = 'a'.repeat(2000)
    for (const p of [`${'*a'.repeat(99)}*b`, `${'*a?'.repeat(10)}*b`, `*${'a'.repeat(150)}b`]) {
      const glob = compileGlob(p)
      const started = performance.now()
      expect(glob.matches(long)).toBe(false)
      // A backtracking matcher takes longer than the age of the universe here.
      expect(performance.now() - started).toBeLessThan(50)
    }
  })
})

describe('matches in a rule', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startUnthrottledServer()
  })
  afterAll(() => server.stop())

  test('a rule of hostile globs over a 2,000-character text: the write answers fast and matches correctly', async () => {
    const { key, account, coffee } = await ledger(server)
    const rule = await newRule(server, key, {
      name: 'hostile',
      conditions: [
        { field: 'originalDescription', op: 'matches', value: `${'*a'.repeat(99)}*b` },
        { field: 'originalDescription', op: 'matches', value: `${'*a?'.repeat(10)}*` },
      ],
      actions: [{ set: 'categoryId', value: coffee }],
    })
    const body = (tail: string) => ({ accountId: account, amount: 1, date: '2026-03-01', originalDescription: `${'a'.repeat(1999)}${tail}`, applyRules: true })
    const started = performance.now()
    const miss = await server.request('POST', '/v1/transactions', { key, body: body('a') })
    const hit = await server.request('POST', '/v1/transactions', { key, body: body('b') })
    expect(performance.now() - started).toBeLessThan(1000)
    expect([miss.json.rulesApplied, hit.json.rulesApplied]).toEqual([[], [rule.id]])
    expect(hit.json.data.categoryId).toBe(coffee)
  })

  test('a pattern with ? may hold at most 31 characters besides *; one without may be as long as any text value', async () => {
    const { key } = await ledger(server)
    const long = await server.request('POST', '/v1/rules', {
      key,
      body: { name: 'x', conditions: [{ field: 'note', op: 'matches', value: `*${'a?'.repeat(16)}*` }], actions: [{ set: 'note', value: 'y' }] },
    })
    expectProblem(long, 422, 'validation_failed')
    expect(long.json.detail).toContain('at most 31 characters besides *')
    const fits = `*${'a?'.repeat(15)}a*`
    expect(
      (await newRule(server, key, { name: 'x', conditions: [{ field: 'note', op: 'matches', value: fits }], actions: [{ set: 'note', value: 'y' }] }))
        .conditions[0].value,
    ).toBe(fits)
    const starOnly = `*${'ab*'.repeat(66)}`
    expect(starOnly.length).toBe(199)
    expect(
      (await newRule(server, key, { name: 'x', conditions: [{ field: 'note', op: 'matches', value: starOnly }], actions: [{ set: 'note', value: 'y' }] }))
        .conditions[0].value,
    ).toBe(starOnly)
  })
})
