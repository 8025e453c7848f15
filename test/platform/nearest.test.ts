import { describe, expect, test } from 'bun:test'
import { closest, editDistance } from '../../src/platform/nearest.ts'

/** The "did you mean" rule shared by the CLI and the API (CONTRACT §6). */

describe('closest', () => {
  const fields = ['externalId', 'accountId', 'amount', 'date', 'note', 'time', 'payeeId', 'payeeName']

  test('a misspelt name finds the field it is near', () => {
    expect(closest('ammount', fields)).toBe('amount')
    expect(closest('acountId', fields)).toBe('accountId')
    expect(closest('notes', fields)).toBe('note')
    expect(closest('tiem', fields)).toBe('time')
    expect(closest('amou', fields)).toBe('amount')
  })

  test('case, - and _ are not told apart', () => {
    expect(closest('account_id', fields)).toBe('accountId')
    expect(closest('EXTERNAL-ID', fields)).toBe('externalId')
    expect(closest('expires_in', ['expires-in', 'name'])).toBe('expires-in')
  })

  test('a swap of two neighbours is one edit', () => {
    expect(closest('emial', ['email', 'name'])).toBe('email')
    expect(closest('prot', ['port', 'host'])).toBe('port')
  })

  test('a short name reaches one edit only; a far or huge name finds nothing', () => {
    expect(closest('id', ['q', 'limit', 'cursor'])).toBeUndefined()
    expect(closest('to', ['q'])).toBeUndefined()
    expect(closest('sneaky', fields)).toBeUndefined()
    expect(closest('a'.repeat(100_000), ['a'.repeat(10)])).toBeUndefined()
  })

  test('the nearest wins, the first on a tie', () => {
    expect(closest('payeeIds', fields)).toBe('payeeId')
    expect(closest('dat', ['data', 'date'])).toBe('data')
  })
})

describe('editDistance', () => {
  test('insertions, deletions, substitutions and swaps', () => {
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(editDistance('ab', 'ba')).toBe(1)
    expect(editDistance('amount', 'amount')).toBe(0)
  })

  test('beyond the limit it answers limit + 1', () => {
    expect(editDistance('abcdef', 'uvwxyz', 2)).toBe(3)
    expect(editDistance('a', 'abcdefgh', 2)).toBe(3)
  })
})
