import { describe, expect, test } from 'bun:test'
import Ajv2020 from 'ajv/dist/2020'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * Campaign 4 finding (2026-11-26): text limits are counted in UTF-16 code units, not characters.
 *
 * CONTRACT §3: "text fields | trimmed; `name` 1–200 chars, `note`/`notes` ≤ 2000, `externalId`
 * 1–200, other strings ≤ 200". /openapi.json says the same with `maxLength: 200` (and 2000),
 * and in OpenAPI 3.1 (JSON Schema 2020-12) the length of a string is its number of characters
 * (Unicode code points, RFC 8259), which is how Ajv and generated clients check it.
 *
 * Before the fix: a name of 101 emoji (101 characters, 202 UTF-16 code units) — valid per the
 * document and the contract — is refused with 422 validation_failed "field 'name' must be
 * 1–200 characters"; likewise an externalId, a payee name or a note of characters outside the
 * Basic Multilingual Plane well under the limit, and `GET /v1/payees?q=` (documented
 * `maxLength: 200`) with 101 such characters is 422 "must be a string of 1 to 200 characters".
 * The server measures `string.length`.
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
