import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/harness.ts'

/**
 * The owner's own keys (CONTRACT §28): `keys:read`/`keys:write` are given to no key by default;
 * a key made through the API carries at most its maker's scopes, its secret is shown once and
 * never stored (a replay answers `key: null`); revocation stops a key on the next request;
 * lists page keys and grants together; another owner's keys are not there.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

let server: TestServer
let manager: { id: string; key: string; keyId: string }

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_PER_DAY: '100000' } })
  manager = await server.owner({ name: 'Ana', scopes: ['me:read', 'accounts:read', 'keys:read', 'keys:write'] })
})
afterAll(() => server?.stop())

describe('keys:read and keys:write', () => {
  test('no key gets them unless asked for', async () => {
    const plain = await server.owner({ name: 'Bea' })
    const me = await server.request('GET', '/v1/me', { key: plain.key })
    expect(me.json.data.scopes).not.toContain('keys:read')
    expect(me.json.data.scopes).not.toContain('keys:write')
    expect(me.json.data.scopes).toContain('transactions:write')
    const list = await server.request('GET', '/v1/keys', { key: plain.key })
    expect(list.status).toBe(403)
    expect(list.json.code).toBe('insufficient_scope')
    const reader = await server.key(plain.id, { scopes: ['keys:read'] })
    expect((await server.request('GET', '/v1/keys', { key: reader.key })).status).toBe(200)
    expect((await server.request('POST', '/v1/keys', { key: reader.key, body: { name: 'x', scopes: ['keys:read'] } })).status).toBe(403)
  })
})

describe('POST /v1/keys', () => {
  test('makes a key that works at once, its secret in this answer only; a replay answers key null', async () => {
    const body = { name: '  bank import  ', scopes: ['me:read', 'accounts:read'], expiresIn: 3600 }
    const made = await server.request('POST', '/v1/keys', { key: manager.key, body, idempotencyKey: 'make-import-key' })
    expect(made.status).toBe(201)
    const data = made.json.data
    expect(data).toMatchObject({
      type: 'key',
      name: 'bank import',
      clientId: null,
      scopes: ['me:read', 'accounts:read'],
      revokedAt: null,
      current: false,
      lastUsedAt: null,
    })
    expect(data.key).toMatch(/^pfk_own_[0-9a-f]{32}_key_[0-9a-f]{32}_/)
    expect(data.expiresAt - data.createdAt).toBe(3_600_000)
    expect(made.headers.get('location')).toBe(`/v1/keys/${data.id}`)
    const me = await server.request('GET', '/v1/me', { key: data.key })
    expect(me.json.data.scopes).toEqual(['me:read', 'accounts:read'])

    const replay = await server.request('POST', '/v1/keys', { key: manager.key, body, idempotencyKey: 'make-import-key' })
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.json.data).toEqual({ ...data, key: null })
    // The secret is nowhere in control.db (the stored answer, or anything else).
    const stored = server.platform.control.sqlite.query('SELECT body FROM idempotency_records').all() as { body: string }[]
    expect(stored.some((row) => row.body.includes(data.key))).toBe(false)
    const reused = await server.request('POST', '/v1/keys', { key: manager.key, body: { ...body, name: 'other' }, idempotencyKey: 'make-import-key' })
    expect(reused.status).toBe(409)
    expect(reused.json.code).toBe('idempotency_key_reused')
  })

  test('scopes beyond the caller’s own are refused, and the refusal is kept for a retry', async () => {
    const answer = await server.request('POST', '/v1/keys', {
      key: manager.key,
      body: { name: 'too much', scopes: ['me:read', 'transactions:write'] },
      idempotencyKey: 'too-much',
    })
    expect(answer.status).toBe(403)
    expect(answer.json.code).toBe('insufficient_scope')
    expect(answer.json.detail).toContain('transactions:write')
    const again = await server.request('POST', '/v1/keys', {
      key: manager.key,
      body: { name: 'too much', scopes: ['me:read', 'transactions:write'] },
      idempotencyKey: 'too-much',
    })
    expect(again.text).toBe(answer.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
  })

  test('bad bodies are 422; Idempotency-Key is required', async () => {
    for (const body of [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['me:read', 'me:read'] },
      { name: 'x', scopes: ['admin'] },
      { name: '', scopes: ['me:read'] },
      { name: 'x', scopes: ['me:read'], expiresIn: 5 },
    ]) {
      const answer = await server.request('POST', '/v1/keys', { key: manager.key, body })
      expect([JSON.stringify(body), answer.status]).toEqual([JSON.stringify(body), 422])
      expect(answer.json.code).toBe('validation_failed')
    }
    const missing = await server.request('POST', '/v1/keys', { key: manager.key, body: { name: 'x', scopes: ['me:read'] }, idempotencyKey: null })
    expect(missing.json.code).toBe('idempotency_key_missing')
  })
})

describe('GET and DELETE /v1/keys', () => {
  test('lists live keys oldest first with the caller marked; DELETE revokes at once; again: unchanged', async () => {
    const made = await server.request('POST', '/v1/keys', { key: manager.key, body: { name: 'phone', scopes: ['me:read'] } })
    const id = made.json.data.id
    const secret = made.json.data.key
    expect((await server.request('GET', '/v1/me', { key: secret })).status).toBe(200)

    const list = await server.request('GET', '/v1/keys', { key: manager.key })
    const ids = list.json.data.map((item: { id: string }) => item.id)
    expect(ids[0]).toBe(manager.keyId)
    expect(ids).toContain(id)
    expect(list.json.data[0].current).toBe(true)
    expect(JSON.stringify(list.json)).not.toContain('pfk_')

    // lastUsedAt is written behind (within a second): written now, so the two answers below compare whole.
    server.platform.authenticator.flush()
    const revoked = await server.request('DELETE', `/v1/keys/${id}`, { key: manager.key })
    expect(revoked.status).toBe(200)
    expect(revoked.json.data.revokedAt).toBeNumber()
    expect((await server.request('GET', '/v1/me', { key: secret })).status).toBe(401)
    const again = await server.request('DELETE', `/v1/keys/${id}`, { key: manager.key })
    expect(again.json.data).toEqual(revoked.json.data)

    const live = await server.request('GET', '/v1/keys', { key: manager.key })
    expect(live.json.data.map((item: { id: string }) => item.id)).not.toContain(id)
    const all = await server.request('GET', '/v1/keys?includeRevoked=true', { key: manager.key })
    expect(all.json.data.map((item: { id: string }) => item.id)).toContain(id)
    expect((await server.request('GET', `/v1/keys/${id}`, { key: manager.key })).json.data.revokedAt).toBe(revoked.json.data.revokedAt)
  })

  // Pins CONTRACT §25's ETag on one key: 304 while nothing moved, a new tag once it is revoked.
  test('GET of one key carries an ETag and answers 304 to it until the key changes', async () => {
    const made = await server.request('POST', '/v1/keys', { key: manager.key, body: { name: 'tablet', scopes: ['me:read'] } })
    const path = `/v1/keys/${made.json.data.id}`
    const read = await server.request('GET', path, { key: manager.key })
    const etag = read.headers.get('etag') as string
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
    expect((await server.request('GET', path, { key: manager.key, headers: { 'if-none-match': etag } })).status).toBe(304)
    await server.request('DELETE', path, { key: manager.key })
    const after = await server.request('GET', path, { key: manager.key, headers: { 'if-none-match': etag } })
    expect(after.status).toBe(200)
    expect(after.headers.get('etag')).not.toBe(etag)
  })

  test('pages with limit and cursor, never repeating or skipping', async () => {
    const owner = await server.owner({ name: 'Cy', scopes: ['keys:read', 'keys:write'] })
    for (let i = 0; i < 4; i++) await server.request('POST', '/v1/keys', { key: owner.key, body: { name: `k${i}`, scopes: ['keys:read'] } })
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const answer = await server.request('GET', `/v1/keys?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: owner.key })
      expect(answer.status).toBe(200)
      seen.push(...answer.json.data.map((item: { id: string }) => item.id))
      cursor = answer.json.nextCursor
    } while (cursor)
    expect(seen).toHaveLength(5)
    expect(new Set(seen).size).toBe(5)
    expect((await server.request('GET', '/v1/keys?cursor=nonsense', { key: owner.key })).status).toBe(422)
  })

  test('another owner’s key is not found, and cannot be revoked', async () => {
    const other = await server.owner({ name: 'Dee' })
    for (const method of ['GET', 'DELETE']) {
      const answer = await server.request(method, `/v1/keys/${other.keyId}`, { key: manager.key })
      expect(answer.status).toBe(404)
      expect(answer.json.code).toBe('not_found')
    }
    expect((await server.request('GET', '/v1/me', { key: other.key })).status).toBe(200)
  })

  test('a caller may revoke its own key: the next request is refused', async () => {
    const owner = await server.owner({ name: 'Eve', scopes: ['keys:write', 'me:read'] })
    expect((await server.request('DELETE', `/v1/keys/${owner.keyId}`, { key: owner.key })).status).toBe(200)
    expect((await server.request('GET', '/v1/me', { key: owner.key })).status).toBe(401)
  })
})
