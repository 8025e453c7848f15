import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { TSchema } from '@sinclair/typebox'
import fc from 'fast-check'
import { AccountCreate, AccountListQuery, AccountUpdate } from '../../src/modules/accounts/model.ts'
import { routes } from '../../src/modules/index.ts'
import { argumentProblem, buildTools, type ToolSpec } from '../../src/modules/mcp/tools.ts'
import { PayeeCreate } from '../../src/modules/payees/model.ts'
import { checkBatchBody } from '../../src/modules/transactions/batch.ts'
import { TransactionCreate, TransactionListQuery, TransactionUpsert } from '../../src/modules/transactions/model.ts'
import { ApiError } from '../../src/platform/errors.ts'
import { assertValid, coerceQuery } from '../../src/platform/validation.ts'
import { expectProblem, mcpAnswerText, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/** A 422 validation_failed names every problem of the body, query or tool arguments at once, in a bounded, well-formed detail. */

let server: TestServer
let key: string
let accountId: string

beforeAll(async () => {
  server = await startUnthrottledServer()
  key = (await server.owner({ name: 'Details' })).key
  accountId = (await server.request('POST', '/v1/accounts', { key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })).json.data.id
})
afterAll(() => server.stop())

const post = (path: string, body: unknown) => server.request('POST', path, { key, body })
const detailOf = async (path: string, body: unknown) => expectProblem(await post(path, body), 422, 'validation_failed').detail
const transactionCount = async () => (await server.request('GET', '/v1/transactions?limit=200', { key })).json.data.length

describe('a body', () => {
  test('a misspelt field is named first, with the field it is near, then the field it left missing', async () => {
    const before = await transactionCount()
    const detail = await detailOf('/v1/transactions', { accountId, ammount: 5, date: '2026-11-20' })
    expect(detail).toBe("field 'ammount' is not allowed (did you mean 'amount'?); field 'amount' is required")
    expect(await transactionCount()).toBe(before)
  })

  test('three mistakes in one body are named in one answer: unknown, then missing, then wrong', async () => {
    const before = await transactionCount()
    const detail = await detailOf('/v1/transactions', { accountId, amount: '12', notes: 'lunch' })
    expect(detail).toBe("field 'notes' is not allowed (did you mean 'note'?); field 'date' is required; field 'amount' must be a number")
    expect(await transactionCount()).toBe(before)
  })

  test('no suggestion where no known field is near; a field already sent is not suggested', async () => {
    expect(await detailOf('/v1/transactions', { accountId, amount: 1, date: '2026-11-20', sneaky: true })).toBe("field 'sneaky' is not allowed")
    expect(await detailOf('/v1/transactions', { accountId, amount: 1, amout: 2, date: '2026-11-20' })).toBe("field 'amout' is not allowed")
    // Case, `_` and `-` do not count: an agent's snake_case finds the camelCase field.
    expect(await detailOf('/v1/transactions', { account_id: accountId, amount: 1, date: '2026-11-20' })).toBe(
      "field 'account_id' is not allowed (did you mean 'accountId'?); field 'accountId' is required",
    )
  })

  test('nested fields are named by their path', async () => {
    const detail = await detailOf('/v1/accounts', {
      name: 'Nested',
      type: 'bank',
      balance: 0,
      currency: 'EUR',
      customFields: [
        { label: 'ok', value: 'v' },
        { lable: 'IBAN', value: 3 },
      ],
    })
    expect(detail).toBe(
      "field 'customFields[1].lable' is not allowed (did you mean 'label'?); field 'customFields[1].label' is required; field 'customFields[1].value' must be a string of at most 200 characters",
    )
  })

  test('at most ten problems are listed, then how many more', async () => {
    const body: Record<string, number> = {}
    for (let i = 1; i <= 25; i++) body[`extra${String(i).padStart(2, '0')}`] = i
    const detail = await detailOf('/v1/accounts', body)
    // 25 unknown fields and 4 missing ones: the first ten unknown, in the order sent.
    expect(detail).toBe(
      `${Array.from({ length: 10 }, (_, i) => `field 'extra${String(i + 1).padStart(2, '0')}' is not allowed`).join('; ')}; and 19 more problems`,
    )
  })

  test('past a thousand problems the search stops: the detail says there are more', async () => {
    const body: Record<string, number> = {}
    for (let i = 0; i < 5000; i++) body[`extra${String(i).padStart(4, '0')}`] = i
    const detail = await detailOf('/v1/accounts', body)
    expect(detail).toEndWith("field 'extra0009' is not allowed; and over 990 more problems")
    const items = Array.from({ length: 300 }, (_, n) => ({ externalId: `over-${n}`, amount: 'x', date: 5, note: 7, payeeName: 8 }))
    expect(await detailOf('/v1/transactions/batch', { items })).toEndWith('; and over 990 more problems')
  })

  test('a long field name comes back clipped, also when it holds a lone surrogate', async () => {
    const long = `x${'y'.repeat(100_000)}`
    const detail = await detailOf('/v1/accounts', { name: 'A', type: 'bank', balance: 0, currency: 'EUR', [long]: 1 })
    expect(detail).toBe(`field '${long.slice(0, 64)}…' is not allowed`)
    const surrogate = await detailOf('/v1/accounts', `{"name":"A","type":"bank","balance":0,"currency":"EUR","${long}\\udc00":1}`)
    expect(surrogate).toBe(`field name '${long.slice(0, 64)}…' must be valid Unicode text (it holds a lone surrogate)`)
  })

  test('a batch names every bad item, the first failing item first (CONTRACT §16), and a misspelt envelope field', async () => {
    const before = await transactionCount()
    const item = (n: number, extra: Record<string, unknown> = {}) => ({ externalId: `d-${n}`, accountId, amount: 1, date: '2026-11-20', ...extra })
    const { amount: _, ...noAmount } = item(1, { ammount: 5 })
    const items = [item(0), noAmount, item(2), item(3, { date: 'yesterday' })]
    expect(await detailOf('/v1/transactions/batch', { items })).toBe(
      "items[1].ammount: is not allowed (did you mean 'amount'?); items[1].amount: is required; items[3].date: must be a calendar date (YYYY-MM-DD)",
    )
    expect(await detailOf('/v1/transactions/batch', { items, dryrun: true })).toBe(
      "field 'dryrun' is not allowed (did you mean 'dryRun'?); items[1].ammount: is not allowed (did you mean 'amount'?); items[1].amount: is required; items[3].date: must be a calendar date (YYYY-MM-DD)",
    )
    expect(await transactionCount()).toBe(before)
  })

  test('a dry run reports the suggestion in the item’s own errors', async () => {
    const { amount: _, ...item } = { externalId: 'dry-1', accountId, amount: 1, date: '2026-11-20', ammount: 5 }
    const res = await post('/v1/transactions/batch', { items: [item], dryRun: true })
    expect(res.status).toBe(200)
    expect(res.json.data[0].errors).toEqual([
      { field: 'ammount', code: 'validation_failed', detail: "is not allowed (did you mean 'amount'?)" },
      { field: 'amount', code: 'validation_failed', detail: 'is required' },
    ])
  })
})

describe('query parameters', () => {
  const get = async (path: string) => expectProblem(await server.request('GET', path, { key }), 422, 'validation_failed').detail

  test('an unknown parameter is named with the one it is near', async () => {
    expect(await get('/v1/accounts?limt=5')).toBe("query parameter 'limt' is not allowed (did you mean 'limit'?)")
  })

  test('every problem of the query at once, unknown first', async () => {
    expect(await get('/v1/transactions?limit=0&acount=x&from=2026-02-30')).toBe(
      "query parameter 'acount' is not allowed; query parameter 'limit' must be an integer from 1 to 200; query parameter 'from' must be a calendar date (YYYY-MM-DD)",
    )
    expect(await get('/v1/transactions?accountid=x&categoryid=y')).toBe(
      "query parameter 'accountid' is not allowed (did you mean 'accountId'?); query parameter 'categoryid' is not allowed (did you mean 'categoryId'?)",
    )
  })

  test('a route without parameters names every one it was sent', async () => {
    expect(await get('/v1/me?fields=name&expand=all')).toBe(
      "query parameter 'fields' is not allowed: this route takes no query parameters; query parameter 'expand' is not allowed",
    )
  })
})

describe('MCP tool arguments', () => {
  let id = 0
  async function toolDetail(name: string, args: Record<string, unknown>): Promise<string> {
    const message = JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } })
    const result = JSON.parse(await mcpAnswerText(server, key, message)).result
    expect(result.isError).toBe(true)
    expect(result.structuredContent.code).toBe('validation_failed')
    return result.structuredContent.detail
  }

  test('a read tool names every unknown argument with the one it is near', async () => {
    expect(await toolDetail('search_transactions', { account_id: accountId, limt: 5 })).toBe(
      "argument 'account_id' is not allowed (did you mean 'accountId'?); argument 'limt' is not allowed (did you mean 'limit'?)",
    )
  })

  test('a write tool names the misspelt argument and the one it left missing, and writes nothing', async () => {
    const before = await transactionCount()
    expect(await toolDetail('upsert_transaction', { externalId: 'mcp-1', accountId, ammount: 5, date: '2026-11-20' })).toBe(
      "argument 'ammount' is not allowed (did you mean 'amount'?); argument 'amount' is required",
    )
    expect(await toolDetail('delete_transaction', { id: 'txn_x', confirmToken: 5 })).toBe(
      "argument 'id' is not allowed; argument 'transactionId' is required; argument 'confirmToken' must be a string",
    )
    expect(await transactionCount()).toBe(before)
  })
})

/**
 * Whatever the body, the detail of a refusal is one well-formed string of bounded length: names
 * are generated long, with lone surrogates, near the known ones and far from them.
 */
describe('property: the detail is well-formed and bounded for any body', () => {
  const MAX_DETAIL = 2000
  const SCHEMAS: [string, TSchema][] = [
    ['TransactionCreate', TransactionCreate],
    ['TransactionUpsert', TransactionUpsert],
    ['AccountCreate', AccountCreate],
    ['AccountUpdate', AccountUpdate],
    ['PayeeCreate', PayeeCreate],
  ]
  const knownNames = [...new Set(SCHEMAS.flatMap(([, schema]) => Object.keys((schema as unknown as { properties: object }).properties)))]
  const name = fc.oneof(
    fc.constantFrom(...knownNames, 'label', 'value', 'ammount', 'acount_id', '__proto__', 'constructor'),
    fc.constantFrom(...knownNames).chain((known) => fc.nat(known.length).map((at) => `${known.slice(0, at)}x${known.slice(at + 1)}`)),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: fc.constantFrom('a', '\ud800', '\udc00', '😀', 'é'), maxLength: 200 }),
    fc.nat(5000).map((n) => `k${'x'.repeat(n)}`),
  )
  const leaf = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom('2026-11-20', '14:30', 'EUR', 'bank'),
  )
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(name, tie('value'), { maxKeys: 30 }),
  }))
  const body = fc.oneof(fc.dictionary(name, value, { maxKeys: 60 }), value)

  function expectSound(detail: unknown) {
    expect(typeof detail).toBe('string')
    const text = detail as string
    expect(text.length).toBeGreaterThan(0)
    expect(text.length).toBeLessThanOrEqual(MAX_DETAIL)
    expect(text.isWellFormed()).toBe(true)
  }

  function refusal(run: () => unknown): string | undefined {
    try {
      run()
      return undefined
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      expect(error.code).toBe('validation_failed')
      return error.detail
    }
  }

  test('bodies against the resource schemas', () => {
    const schemas = new Map(SCHEMAS)
    fc.assert(
      fc.property(fc.constantFrom(...schemas.keys()), body, (schema, value) => {
        const detail = refusal(() => assertValid(schemas.get(schema) as TSchema, value, 'body'))
        if (detail !== undefined) expectSound(detail)
      }),
      { numRuns: 1500 },
    )
  })

  test('batch bodies', () => {
    const items = fc.array(fc.oneof(body, fc.dictionary(name, value, { maxKeys: 8 })), { maxLength: 40 })
    fc.assert(
      fc.property(items, fc.dictionary(name, value, { maxKeys: 3 }), (list, extra) => {
        const detail = refusal(() => checkBatchBody({ items: list, ...extra }))
        if (detail !== undefined) expectSound(detail)
      }),
      { numRuns: 500 },
    )
  })

  test('query strings', () => {
    const pairs = fc.array(fc.tuple(name, fc.string({ maxLength: 20 })), { maxLength: 40 })
    fc.assert(
      fc.property(fc.constantFrom('accounts', 'transactions'), pairs, (which, list) => {
        const schema = which === 'accounts' ? AccountListQuery : TransactionListQuery
        const params = new URLSearchParams()
        for (const [key, text] of list) params.append(key, text)
        const detail = refusal(() => assertValid(schema, coerceQuery(schema, params), 'query'))
        if (detail !== undefined) expectSound(detail)
      }),
      { numRuns: 1000 },
    )
  })

  test('MCP tool arguments', () => {
    const tools = new Map(buildTools(routes).map((tool) => [tool.name, tool]))
    fc.assert(
      fc.property(fc.constantFrom(...tools.keys()), fc.dictionary(name, value, { maxKeys: 40 }), (tool, args) => {
        const problem = argumentProblem(tools.get(tool) as ToolSpec, args, 'req_1')
        if (problem) expectSound(problem.body.detail)
      }),
      { numRuns: 1000 },
    )
  })
})
