import { describe, expect, test } from 'bun:test'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * /openapi.json declares `Idempotent-Replayed` on the error responses the server stores and
 * replays (404, 409 and 422 of writes), not only on successes.
 *
 * CONTRACT §8: every response of a request that reached its handler, with status < 500, is stored
 * and replayed with `Idempotent-Replayed: true`; §12: /openapi.json is true, response headers
 * included. A client generated from the document must be able to tell a replayed refusal from a
 * fresh one.
 */

type Json = Record<string, unknown>
const fixture = unthrottledServerWithKey()

async function replayed(method: string, path: string, body: unknown) {
  const { server, key } = fixture
  const idempotencyKey = crypto.randomUUID()
  const first = await server.request(method, path, { key, body, idempotencyKey })
  const second = await server.request(method, path, { key, body, idempotencyKey })
  return { first, second }
}

async function documentedHeaders(path: string, method: string, status: number): Promise<string[]> {
  const doc = (await fixture.server.request('GET', '/openapi.json')).json as {
    paths: Record<string, Record<string, { responses: Record<string, { headers?: Json }> }>>
  }
  return Object.keys(doc.paths[path]?.[method]?.responses[String(status)]?.headers ?? {})
}

describe('a replayed stored error carries Idempotent-Replayed, and the document says so', () => {
  test('PATCH /v1/accounts/{accountId} → 404 not_found', async () => {
    const { first, second } = await replayed('PATCH', '/v1/accounts/acct_missing', { name: 'x' })
    expect([first.status, second.status]).toEqual([404, 404])
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(await documentedHeaders('/v1/accounts/{accountId}', 'patch', 404)).toContain('Idempotent-Replayed')
  })

  test('POST /v1/transactions → 422 invalid_reference', async () => {
    const { first, second } = await replayed('POST', '/v1/transactions', { accountId: 'acct_missing', amount: 1, date: '2026-11-21' })
    expect([first.status, second.status]).toEqual([422, 422])
    expect(second.json.code).toBe('invalid_reference')
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(await documentedHeaders('/v1/transactions', 'post', 422)).toContain('Idempotent-Replayed')
  })

  test('POST /v1/accounts → 409 external_id_conflict', async () => {
    const { server, key } = fixture
    await server.request('POST', '/v1/accounts', { key, body: { name: 'A', type: 'bank', balance: 0, currency: 'EUR', externalId: 'taken' } })
    const { first, second } = await replayed('POST', '/v1/accounts', { name: 'B', type: 'bank', balance: 0, currency: 'EUR', externalId: 'taken' })
    expect([first.status, second.status]).toEqual([409, 409])
    expect(second.json.code).toBe('external_id_conflict')
    expect(second.headers.get('idempotent-replayed')).toBe('true')
    expect(await documentedHeaders('/v1/accounts', 'post', 409)).toContain('Idempotent-Replayed')
  })
})
