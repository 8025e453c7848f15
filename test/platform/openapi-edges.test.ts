import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Ajv from 'ajv'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * /openapi.json is true at its edges: what the document says a `time` is, and the errors it lists
 * for routes whose handlers can answer more than the usual set.
 */

type Json = Record<string, unknown>
interface Operation {
  requestBody?: { content: Record<string, { schema: Json; example?: unknown }> }
  responses: Record<string, { description: string }>
}

let server: TestServer
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } }

beforeAll(async () => {
  server = await startUnthrottledServer()
  doc = (await server.request('GET', '/openapi.json')).json
})
afterAll(() => server.stop())

/** Every schema node of the document, depth first. */
function* nodes(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const item of value) yield* nodes(item)
  else if (value && typeof value === 'object') {
    yield value as Json
    for (const child of Object.values(value)) yield* nodes(child)
  }
}

/** The string branch of a `time` property (it is nullable: anyOf string | null). */
function timeSchema(component: string): Json {
  const property = (doc.components.schemas[component]?.properties as Record<string, Json> | undefined)?.time
  const branches = (property?.anyOf as Json[] | undefined) ?? [property ?? {}]
  const string = branches.find((branch) => branch.type === 'string')
  if (!string) throw new Error(`${component}.time has no string schema`)
  return string
}

/**
 * A validator that reads `format` as OpenAPI does (RFC 3339 full-date and full-time), the way
 * a strict generated client would: with `format: time`, "14:30" is refused.
 */
function rfc3339Validator() {
  return new Ajv({
    strict: false,
    allErrors: true,
    formats: {
      date: /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/,
      time: /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i,
    },
  })
}

describe('time of day in the document', () => {
  test('documented as a pattern, not format: time (RFC 3339 full-time, which "14:30" is not)', () => {
    for (const node of nodes(doc)) expect(node.format).not.toBe('time')
    for (const component of ['TransactionCreate', 'TransactionUpsert', 'TransactionUpdate']) {
      const schema = timeSchema(component)
      expect({ component, pattern: schema.pattern }).toEqual({ component, pattern: '^([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d)?$' })
    }
  })

  test("the document's pattern accepts HH:MM and HH:MM:SS and refuses what the server refuses", () => {
    const pattern = new RegExp(timeSchema('TransactionCreate').pattern as string)
    for (const time of ['14:30', '14:30:15', '00:00', '23:59', '23:59:59']) expect({ time, ok: pattern.test(time) }).toEqual({ time, ok: true })
    for (const time of ['24:00', '14:60', '14:30:60', '1:30', '14:3', '14:30Z', '14:30:15+01:00', '14:30:15.5', '']) {
      expect({ time, ok: pattern.test(time) }).toEqual({ time, ok: false })
    }
  })

  test('the server agrees with the document on every case', async () => {
    const account = await server.owner({ name: 'Times' }).then(async ({ key }) => {
      const res = await server.request('POST', '/v1/accounts', { key, body: { name: 'A', type: 'bank', currency: 'EUR', balance: 0 } })
      return { key, id: res.json.data.id as string }
    })
    const pattern = new RegExp(timeSchema('TransactionCreate').pattern as string)
    for (const time of ['14:30', '14:30:15', '24:00', '14:60', '1:30', '14:30Z']) {
      const res = await server.request('POST', '/v1/transactions', { key: account.key, body: { accountId: account.id, amount: 1, date: '2026-01-02', time } })
      expect({ time, status: res.status }).toEqual({ time, status: pattern.test(time) ? 201 : 422 })
      if (res.status === 201) expect(res.json.data.time).toBe(time)
    }
  })

  test('a validator reading formats as RFC 3339 accepts the API’s own examples, times and dates included', () => {
    const ajv = rfc3339Validator()
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`)
    const create = ajv.compile({ $ref: '#/components/schemas/TransactionCreate' })
    const example = doc.paths['/v1/transactions']?.post?.requestBody?.content['application/json']?.example as Json
    for (const time of ['14:30', '14:30:15']) {
      const body = { ...example, time }
      expect({ time, valid: create(body), errors: create.errors ?? null }).toEqual({ time, valid: true, errors: null })
    }
    expect(create({ ...example, time: '24:00' })).toBe(false)
    expect(create({ ...example, date: '2026-13-01' })).toBe(false)
  })

  test('dates stay format: date (RFC 3339 full-date is YYYY-MM-DD, as the API sends)', () => {
    const date = (doc.components.schemas.TransactionCreate?.properties as Record<string, Json> | undefined)?.date as Json
    expect(date.format).toBe('date')
    expect(date.examples).toEqual(['2026-11-21'])
  })
})

describe('errors the document lists', () => {
  const errorsOf = (path: string, method: string): string[] =>
    Object.values(doc.paths[path]?.[method]?.responses ?? {}).flatMap((response) =>
      [...response.description.matchAll(/`([a-z_]+)`/g)].map((m) => m[1] as string),
    )

  test('DELETE /v1/transactions/{id} lists rule_violation, and it happens: the reversal would leave the money range', async () => {
    expect(errorsOf('/v1/transactions/{transactionId}', 'delete')).toContain('rule_violation')

    const { key } = await server.owner({ name: 'Range' })
    const account = (await server.request('POST', '/v1/accounts', { key, body: { name: 'Full', type: 'bank', currency: 'EUR', balance: 92233720000 } })).json
      .data
    const expense = (await server.request('POST', '/v1/transactions', { key, body: { accountId: account.id, amount: 1000, date: '2026-01-02' } })).json.data
    // A reconciliation sets the balance to the top of the range; undoing the expense would pass it.
    expect((await server.request('PATCH', `/v1/accounts/${account.id}`, { key, body: { balance: 92233720368 } })).status).toBe(200)
    const res = await server.request('DELETE', `/v1/transactions/${expense.id}`, { key })
    expect(expectProblem(res, 422, 'rule_violation').detail).toContain('92233720368')
    expect((await server.request('GET', `/v1/transactions/${expense.id}`, { key })).status).toBe(200)
    expect((await server.request('GET', `/v1/accounts/${account.id}`, { key })).json.data.balance).toBe(92233720368)
  })

  test('every DELETE lists insufficient_storage: it writes like a POST', () => {
    const deletes = Object.entries(doc.paths).filter(([, item]) => item.delete)
    expect(deletes.length).toBeGreaterThan(0)
    for (const [path] of deletes) expect({ path, listed: errorsOf(path, 'delete').includes('insufficient_storage') }).toEqual({ path, listed: true })
  })
})

describe('text in the document', () => {
  test('every text schema refuses a lone surrogate, as the server does, and accepts text with emoji', () => {
    const free: string[] = []
    // JSON bodies, both ways, and query and path parameters (headers are not the client's text).
    const places = [
      doc.components.schemas,
      ...Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => [op.requestBody, (op as unknown as Json).parameters])),
    ]
    for (const node of nodes(places)) {
      if (node.type !== 'string' || node.format !== undefined || node.enum !== undefined || node.const !== undefined) continue
      const pattern = node.pattern
      if (typeof pattern !== 'string') {
        free.push(JSON.stringify(node).slice(0, 120))
        continue
      }
      for (const flags of ['', 'u']) {
        const regex = new RegExp(pattern, flags)
        expect({ pattern, flags, lone: regex.test('ok\ud800') || regex.test('\udc00') }).toEqual({ pattern, flags, lone: false })
      }
    }
    expect(free).toEqual([])
    const note = doc.components.schemas.TransactionCreate?.properties as Record<string, Json>
    const branches = (note.note?.anyOf as Json[] | undefined) ?? [note.note as Json]
    const text = branches.find((branch) => branch.type === 'string') as Json
    expect(new RegExp(text.pattern as string, 'u').test('café 😀 receipt')).toBe(true)
  })
})
