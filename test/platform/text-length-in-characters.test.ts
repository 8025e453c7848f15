import { describe, expect, test } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * Text limits count characters (Unicode code points), not UTF-16 code units, on the server as in
 * /openapi.json.
 *
 * CONTRACT §3: "`name` 1–200 chars, `note`/`notes` ≤ 2000, `externalId` 1–200, other strings ≤
 * 200". In OpenAPI 3.1 (JSON Schema 2020-12) `maxLength` counts characters, which is how Ajv and
 * generated clients check it; measuring `string.length` would refuse a name of 101 emoji (202
 * code units) that the document and the contract accept.
 */

const fixture = unthrottledServerWithKey()
const EMOJI = '😀' // one character, two UTF-16 code units
const name101 = EMOJI.repeat(101) // 101 characters ≤ 200
const note1001 = EMOJI.repeat(1001) // 1001 characters ≤ 2000

describe('maxLength counts characters, as the document and CONTRACT §3 say', () => {
  test('the document accepts these values (JSON Schema counts code points)', async () => {
    const doc = (await fixture.server.request('GET', '/openapi.json')).json
    const ajv = new Ajv2020({ strict: false })
    ajv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/)
    ajv.addSchema({ $id: 'doc', components: doc.components })
    const valid = (component: string, value: unknown) => ajv.validate({ $ref: `doc#/components/schemas/${component}` }, value)
    expect(valid('AccountCreate', { name: name101, type: 'bank', balance: 0, currency: 'EUR' })).toBe(true)
    expect(valid('PayeeCreate', { name: name101, externalId: name101 })).toBe(true)
    expect(valid('TransactionCreate', { accountId: 'acct_x', amount: 1, date: '2026-11-21', note: note1001 })).toBe(true)
  })

  test('POST /v1/accounts with a 101-character name (202 UTF-16 units) is created', async () => {
    const res = await fixture.server.request('POST', '/v1/accounts', {
      key: fixture.key,
      body: { name: name101, type: 'bank', balance: 0, currency: 'EUR' },
    })
    expect({ status: res.status, detail: res.json?.detail }).toEqual({ status: 201, detail: undefined })
    expect(res.json.data.name).toBe(name101)
  })

  test('POST /v1/payees with a 101-character name and externalId is created', async () => {
    const res = await fixture.server.request('POST', '/v1/payees', { key: fixture.key, body: { name: name101, externalId: name101 } })
    expect({ status: res.status, detail: res.json?.detail }).toEqual({ status: 201, detail: undefined })
  })

  test('POST /v1/transactions with a 1001-character note is created', async () => {
    const account = await fixture.server.request('POST', '/v1/accounts', {
      key: fixture.key,
      body: { name: 'Notes', type: 'bank', balance: 0, currency: 'EUR' },
    })
    const res = await fixture.server.request('POST', '/v1/transactions', {
      key: fixture.key,
      body: { accountId: account.json.data.id, amount: 1, date: '2026-11-21', note: note1001 },
    })
    expect({ status: res.status, detail: res.json?.detail }).toEqual({ status: 201, detail: undefined })
    expect(res.json.data.note).toBe(note1001)
  })

  test('GET /v1/payees?q= with 101 characters (the parameter is documented maxLength 200) is answered', async () => {
    const res = await fixture.server.request('GET', `/v1/payees?q=${encodeURIComponent(name101)}`, { key: fixture.key })
    expect({ status: res.status, detail: res.json?.detail }).toEqual({ status: 200, detail: undefined })
  })

  test('201 characters are still refused', async () => {
    const res = await fixture.server.request('POST', '/v1/accounts', {
      key: fixture.key,
      body: { name: EMOJI.repeat(201), type: 'bank', balance: 0, currency: 'EUR' },
    })
    expect(res.status).toBe(422)
  })
})
