import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { decimalOfUnits, moneyJson } from '../../src/platform/money.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, lexeme, rawNumbers } from './helpers.ts'

/**
 * A list page's items are made from bare value rows (`transactionOfValues`), every other answer
 * from the stored row (`toTransaction`): the two must give the same bytes for every stored
 * transaction, whatever its money, text, transfer fields, legs and tags hold. Money goes out as a plain
 * double where that prints as exactly its decimal (`moneyJson`), and is compared here as text,
 * never through a double.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const MAX = 92_233_720_368n * 10n ** 8n
const units = fc.bigInt({ min: -MAX, max: MAX })
/** Text that JSON must escape: quotes, backslashes, control characters, lone surrogates are refused by the API so left out. */
const awkwardText = fc.string({
  unit: fc.constantFrom('a', 'Z', ' ', '"', '\\', '\u0001', '\u001f', '\n', '\t', 'é', '€', '😀', '</', '\u2028'),
  minLength: 1,
  maxLength: 12,
})
const rate = fc.constantFrom('1.0842', '0.5', '1e-3', '2E+2', '1.23456789012345678', '100')

const item = fc.record({
  amount: units.filter((u) => u !== 0n),
  note: fc.option(awkwardText, { nil: undefined }),
  externalId: fc.option(awkwardText, { nil: undefined }),
  time: fc.option(fc.constantFrom('00:00', '23:59', '12:30:15'), { nil: undefined }),
  date: fc.constantFrom('2026-01-01', '2026-06-15', '2026-06-15', '2025-12-31'),
  kind: fc.constantFrom('expense', 'income', 'plain', 'transfer', 'fx-transfer', 'split'),
  rate,
})

/** The JSON of one item inside `{"data":[…]…}` with exactly one item, or `{"data":…}`. */
function only(body: string, list: boolean): string {
  const head = list ? '{"data":[' : '{"data":'
  expect(body.startsWith(head)).toBe(true)
  return list ? body.slice(head.length, body.lastIndexOf('],"nextCursor"')) : body.slice(head.length, -1)
}

/** Units at and around the edges where `moneyJson` stops writing a plain double (100 and 10¹⁵), and everywhere else. */
const edgeUnits = fc.oneof(
  units,
  fc.bigInt({ min: -1000n, max: 1000n }),
  fc.bigInt({ min: 10n ** 15n - 1000n, max: 10n ** 15n + 1000n }),
  fc.bigInt({ min: -(10n ** 15n) - 1000n, max: -(10n ** 15n) + 1000n }),
  // 15 significant digits with every fraction length, and values that are whole.
  fc.bigInt({ min: 10n ** 14n, max: 10n ** 15n - 1n }),
  fc.bigInt({ min: 1n, max: 10n ** 7n }).map((whole) => whole * 10n ** 8n),
  fc.bigInt({ min: 1n, max: 10n ** 14n }).map((u) => -u),
)

describe('list items and money text', () => {
  test('decimalOfUnits writes what bigint arithmetic gives, at every size and sign', () => {
    fc.assert(
      fc.property(units, (u) => {
        expect(decimalOfUnits(u.toString())).toBe(lexeme(u))
      }),
      { numRuns: 2000 },
    )
    for (const u of [0n, 1n, -1n, 10n ** 8n, -(10n ** 8n), 123_456_789n, MAX, -MAX]) expect(decimalOfUnits(u.toString())).toBe(lexeme(u))
  })

  test('moneyJson is written by JSON.stringify as exactly the decimal, from units or their text', () => {
    fc.assert(
      fc.property(edgeUnits, (u) => {
        expect(JSON.stringify(moneyJson(u))).toBe(lexeme(u))
        expect(JSON.stringify(moneyJson(u.toString()))).toBe(lexeme(u))
        expect(JSON.stringify({ amount: moneyJson(u) })).toBe(`{"amount":${lexeme(u)}}`)
      }),
      { numRuns: 20_000 },
    )
    const edges = [
      0n,
      1n,
      99n,
      100n,
      101n,
      123_456_789n,
      10n ** 15n - 1n,
      10n ** 15n,
      999_999_999_999_999n,
      100_000_000_000_001n,
      30_000_000n,
      70_000_000n,
      MAX,
      MAX - 1n,
    ]
    for (const u of edges.flatMap((e) => [e, -e])) {
      expect(JSON.stringify(moneyJson(u))).toBe(lexeme(u))
      expect(JSON.stringify(moneyJson(u.toString()))).toBe(lexeme(u))
    }
  })

  test('every item of a page has the bytes GET /v1/transactions/{id} gives for it', async () => {
    const owner = await server.owner({ country: 'PT' })
    const a = (await createAccount(server, owner.key, { name: 'A', currency: 'EUR' })).id
    const sameCurrency = (await createAccount(server, owner.key, { name: 'B', currency: 'EUR' })).id
    const otherCurrency = (await createAccount(server, owner.key, { name: 'C', currency: 'USD' })).id
    let n = 0
    let created = 0
    const posted = new Map<string, string>()
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 6 }), async (items) => {
        for (const it of items) {
          const fields: string[] = [`"accountId":"${a}"`, `"date":"${it.date}"`]
          const amount = it.amount < 0n && it.kind.endsWith('transfer') ? -it.amount : it.amount
          fields.push(`"amount":${lexeme(amount)}`)
          if (it.note !== undefined) fields.push(`"note":${JSON.stringify(it.note)}`)
          if (it.externalId !== undefined) fields.push(`"externalId":${JSON.stringify(`${it.externalId}#${n++}`)}`)
          if (it.time !== undefined) fields.push(`"time":"${it.time}"`)
          if (it.kind === 'expense') fields.push('"categoryId":"cat_sys_groceries"')
          if (it.kind === 'income') fields.push('"categoryId":"cat_sys_salary"')
          if (it.kind === 'transfer') fields.push(`"isTransfer":true,"transferToAccountId":"${sameCurrency}"`)
          if (it.kind === 'fx-transfer') fields.push(`"isTransfer":true,"transferToAccountId":"${otherCurrency}","exchangeRate":${it.rate}`)
          if (it.kind === 'split') {
            // Two legs that sum exactly (CONTRACT §21), one with a category and the item's note, and a tag.
            const half = amount / 2n
            const note = it.note === undefined ? '' : `,"note":${JSON.stringify(it.note)}`
            fields.push(
              `"splits":[{"amount":${lexeme(half)},"categoryId":"cat_sys_groceries"${note}},{"amount":${lexeme(amount - half)}}]`,
              '"tagNames":["bytes"]',
            )
          }
          const res = await server.request('POST', '/v1/transactions', { key: owner.key, body: `{${fields.join(',')}}` })
          if (res.status === 201) posted.set(res.json.data.id, lexeme(amount))
          // Far-out amounts may move a balance beyond its range: refused, and then nothing to compare.
          if (res.status !== 201) {
            expect(res.status).toBe(422)
            continue
          }
          created++
        }
        let cursor = ''
        let seen = 0
        for (;;) {
          const pageRes = await server.request('GET', `/v1/transactions?limit=1${cursor ? `&cursor=${cursor}` : ''}`, { key: owner.key })
          expect(pageRes.status).toBe(200)
          if (pageRes.json.data.length === 0) break
          const fromList = only(pageRes.text, true)
          const one = await server.request('GET', `/v1/transactions/${pageRes.json.data[0].id}`, { key: owner.key })
          expect(fromList).toBe(only(one.text, false))
          expect(rawNumbers(fromList, 'amount')[0]).toBe(posted.get(pageRes.json.data[0].id) as string)
          seen++
          if (!pageRes.json.hasMore) break
          cursor = pageRes.json.nextCursor
        }
        expect(seen).toBe(created)
      }),
      { numRuns: 12 },
    )
    expect(created).toBeGreaterThan(12)
  }, 60_000)
})
