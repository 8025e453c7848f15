import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { ControlStore } from '../../src/db/control/store.ts'
import { newId } from '../../src/db/ids.ts'
import { EDITOR_SCOPES, type Scope, SCOPES, VIEWER_SCOPES } from '../../src/platform/scopes.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { grantNow } from '../support/households.ts'

/** Households (CONTRACT §30): Pfin-Subject, /v1/me under delegation, /v1/grants, idempotency per (key owner, subject), revocation and expiry. */

setDefaultTimeout(30_000)

let server: TestServer
type Who = { id: string; key: string; keyId: string }
let ana: Who
let bea: Who
let cai: Who
let accountId: string

const as = (who: Who, subject?: string): { key: string; headers: Record<string, string> } => ({
  key: who.key,
  headers: subject ? { 'pfin-subject': subject } : {},
})

function grant(subject: Who, grantee: Who, scopes: readonly Scope[], expiresAt: number | null = null): string {
  return grantNow(server.platform.control, subject.id, grantee.id, scopes, expiresAt)
}

beforeAll(async () => {
  server = await startUnthrottledServer()
  ana = await server.owner({ name: 'Ana', defaultCurrency: 'EUR', scopes: [...SCOPES] })
  bea = await server.owner({ name: 'Bea', scopes: [...SCOPES] })
  cai = await server.owner({ name: 'Cai', scopes: [...SCOPES] })
  accountId = (await server.request('POST', '/v1/accounts', { ...as(ana), body: { name: 'Joint', type: 'bank', currency: 'EUR', balance: 0 } })).json.data.id
})
afterAll(() => server.stop())

describe('GET /v1/me', () => {
  test('self mode: principal is null, as before', async () => {
    const me = (await server.request('GET', '/v1/me', as(bea))).json.data
    expect(me).toMatchObject({ id: bea.id, accessMode: 'self', principal: null })
  })

  test("delegated: the subject's profile, accessMode delegated, the effective scopes, and who is acting", async () => {
    const id = grant(ana, bea, ['me:read', 'accounts:read'])
    const narrow = await server.key(bea.id, { scopes: ['me:read', 'transactions:read'] })
    const me = (await server.request('GET', '/v1/me', { key: narrow.key, headers: { 'pfin-subject': ana.id } })).json.data
    expect(me).toMatchObject({ id: ana.id, name: 'Ana', accessMode: 'delegated', scopes: ['me:read'], principal: { id: bea.id, name: 'Bea' } })
    // Naming yourself is self mode.
    expect((await server.request('GET', '/v1/me', as(bea, bea.id))).json.data).toMatchObject({ id: bea.id, accessMode: 'self' })
    server.platform.control.grants.revoke(id, Date.now())
  })
})

describe('grants over the API', () => {
  test('made, listed on both sides, refused twice, revoked; me/subjects lists what the key may act on', async () => {
    const made = await server.request('POST', '/v1/grants', {
      ...as(ana),
      body: { granteeOwnerId: bea.id, scopes: [...VIEWER_SCOPES], label: 'partner', expiresIn: 3600 },
    })
    expect(made.status).toBe(201)
    const g = made.json.data
    expect(g).toMatchObject({ direction: 'given', subjectOwnerId: ana.id, granteeOwnerId: bea.id, label: 'partner', revokedAt: null })
    expect(made.headers.get('location')).toBe(`/v1/grants/${g.id}`)
    expect(g.id).toMatch(/^grt_[0-9a-f]{32}$/)

    const again = await server.request('POST', '/v1/grants', { ...as(ana), body: { granteeOwnerId: bea.id, scopes: ['me:read'] } })
    expectProblem(again, 409, 'grant_exists')

    const received = (await server.request('GET', '/v1/grants', as(bea))).json.data
    expect(received).toEqual([{ ...g, direction: 'received' }])
    const subjects = (await server.request('GET', '/v1/me/subjects', as(bea))).json.data
    expect(subjects.map((s: { ownerId: string; self: boolean }) => [s.ownerId, s.self])).toEqual([
      [bea.id, true],
      [ana.id, false],
    ])
    expect(subjects[1]).toMatchObject({ name: 'Ana', grantId: g.id, scopes: [...VIEWER_SCOPES], expiresAt: g.expiresAt })

    // Only the giver revokes: the grantee gets 404, as for anyone's resource.
    expectProblem(await server.request('DELETE', `/v1/grants/${g.id}`, as(bea)), 404, 'not_found')
    const revoked = await server.request('DELETE', `/v1/grants/${g.id}`, as(ana))
    expect(revoked.status).toBe(200)
    expect(revoked.json.data.revokedAt).toBeNumber()
    // Honoured at once by this server: the next delegated request is 404.
    expectProblem(await server.request('GET', '/v1/accounts', as(bea, ana.id)), 404, 'not_found')
    expect((await server.request('GET', '/v1/grants', as(ana))).json.data).toEqual([])
    const all = (await server.request('GET', '/v1/grants?includeRevoked=true', as(ana))).json.data
    expect(all.find((x: { id: string }) => x.id === g.id)).toEqual(revoked.json.data)
  })

  test('bad grants are refused: unknown grantee, oneself, keys:* or grants:*, scopes beyond the caller’s', async () => {
    const post = (key: string, body: unknown) => server.request('POST', '/v1/grants', { key, body })
    expectProblem(await post(ana.key, { granteeOwnerId: newId('own'), scopes: ['me:read'] }), 422, 'invalid_reference')
    expectProblem(await post(ana.key, { granteeOwnerId: ana.id, scopes: ['me:read'] }), 422, 'validation_failed')
    expectProblem(await post(ana.key, { granteeOwnerId: bea.id, scopes: ['keys:read'] }), 422, 'validation_failed')
    expectProblem(await post(ana.key, { granteeOwnerId: bea.id, scopes: ['grants:write'] }), 422, 'validation_failed')
    expectProblem(await post(ana.key, { granteeOwnerId: bea.id, scopes: [] }), 422, 'validation_failed')
    const small = await server.key(ana.id, { scopes: ['grants:write', 'me:read'] })
    expectProblem(await post(small.key, { granteeOwnerId: bea.id, scopes: ['transactions:read'] }), 403, 'insufficient_scope')
    // grants:* are not default scopes: a default key cannot share the ledger.
    const plain = await server.key(ana.id)
    expectProblem(await post(plain.key, { granteeOwnerId: bea.id, scopes: ['me:read'] }), 403, 'insufficient_scope')
  })

  test('no re-delegation: grants and keys routes refuse a delegated request, even with a key holding every scope', async () => {
    const id = grant(ana, bea, EDITOR_SCOPES)
    for (const [method, path, body] of [
      ['POST', '/v1/grants', { granteeOwnerId: cai.id, scopes: ['me:read'] }],
      ['GET', '/v1/grants', undefined],
      ['POST', '/v1/keys', { name: 'sneaky', scopes: ['me:read'] }],
      ['GET', '/v1/keys', undefined],
      ['GET', '/v1/me/subjects', undefined],
    ] as const) {
      expectProblem(await server.request(method, path, { ...as(bea, ana.id), body }), 403, 'insufficient_scope')
    }
    // Nothing was made.
    expect(server.platform.control.grants.list({ grantee: cai.id }, true, Date.now())).toEqual([])
    server.platform.control.grants.revoke(id, Date.now())
  })
})

describe('using a grant', () => {
  test('no transitivity: a grantee of a grantee gets nothing', async () => {
    const ab = grant(ana, bea, EDITOR_SCOPES)
    const bc = grant(bea, cai, EDITOR_SCOPES)
    expect((await server.request('GET', '/v1/accounts', as(bea, ana.id))).status).toBe(200)
    expect((await server.request('GET', '/v1/accounts', as(cai, bea.id))).status).toBe(200)
    expectProblem(await server.request('GET', '/v1/accounts', as(cai, ana.id)), 404, 'not_found')
    server.platform.control.grants.revoke(ab, Date.now())
    server.platform.control.grants.revoke(bc, Date.now())
  })

  test('an expired grant → 404; a revoked grantee key → 401', async () => {
    const id = grant(ana, bea, VIEWER_SCOPES, Date.now() + 300)
    expect((await server.request('GET', '/v1/accounts', as(bea, ana.id))).status).toBe(200)
    await Bun.sleep(350)
    expectProblem(await server.request('GET', '/v1/accounts', as(bea, ana.id)), 404, 'not_found')
    // An expired grant is not live: another may be given.
    const next = grant(ana, bea, VIEWER_SCOPES)
    const key = await server.key(bea.id)
    expect((await server.request('GET', '/v1/accounts', { key: key.key, headers: { 'pfin-subject': ana.id } })).status).toBe(200)
    server.platform.control.revokeKey(key.id, Date.now())
    server.platform.control.commits.changedHere()
    expectProblem(await server.request('GET', '/v1/accounts', { key: key.key, headers: { 'pfin-subject': ana.id } }), 401, 'unauthorized')
    server.platform.control.grants.revoke(next, Date.now())
    void id
  })

  test('a free-tier subject → 403 pro_tier_required; a free-tier grantee → 403 as today', async () => {
    const free = await server.owner({ name: 'Free', tier: 'free' })
    const id = grant(free, bea, VIEWER_SCOPES)
    expectProblem(await server.request('GET', '/v1/accounts', as(bea, free.id)), 403, 'pro_tier_required')
    server.platform.control.grants.revoke(id, Date.now())
    const id2 = grant(ana, free, VIEWER_SCOPES)
    expectProblem(await server.request('GET', '/v1/accounts', as(free, ana.id)), 403, 'pro_tier_required')
    server.platform.control.grants.revoke(id2, Date.now())
  })

  test('idempotency keys are per (key owner, subject): the same key string never collides across ledgers or people', async () => {
    const ab = grant(ana, bea, EDITOR_SCOPES)
    const ca = grant(ana, cai, EDITOR_SCOPES)
    const body = { accountId, amount: -1, date: '2026-03-01', note: 'same key' }
    const own = await server.request('POST', '/v1/transactions', { ...as(ana), body, idempotencyKey: 'k-1' })
    const byBea = await server.request('POST', '/v1/transactions', { ...as(bea, ana.id), body, idempotencyKey: 'k-1' })
    const byCai = await server.request('POST', '/v1/transactions', { ...as(cai, ana.id), body, idempotencyKey: 'k-1' })
    expect([own.status, byBea.status, byCai.status]).toEqual([201, 201, 201])
    expect(new Set([own.json.data.id, byBea.json.data.id, byCai.json.data.id]).size).toBe(3)
    // A retry by Bea replays Bea's answer, not Ana's or Cai's.
    const retry = await server.request('POST', '/v1/transactions', { ...as(bea, ana.id), body, idempotencyKey: 'k-1' })
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.json.data.id).toBe(byBea.json.data.id)
    server.platform.control.grants.revoke(ab, Date.now())
    server.platform.control.grants.revoke(ca, Date.now())
  })

  test('rate limits count against the key, whoever’s ledger it acts on', async () => {
    const id = grant(ana, bea, VIEWER_SCOPES)
    const own = await server.request('GET', '/v1/accounts', as(bea))
    const delegated = await server.request('GET', '/v1/accounts', as(bea, ana.id))
    const left = (r: typeof own) => Number(r.headers.get('x-ratelimit-remaining-minute'))
    expect(left(delegated)).toBe(left(own) - 1)
    server.platform.control.grants.revoke(id, Date.now())
  })

  test('a revocation by another process (the CLI) is honoured within a second while requests flow', async () => {
    const id = grant(ana, bea, VIEWER_SCOPES)
    const other = new ControlStore(server.dataDir)
    try {
      expect((await server.request('GET', '/v1/accounts', as(bea, ana.id))).status).toBe(200)
      const revokedAt = Date.now()
      other.grants.revoke(id, revokedAt)
      let status = 200
      let elapsed = 0
      while (status === 200 && elapsed < 2000) {
        status = (await server.request('GET', '/v1/accounts', as(bea, ana.id))).status
        elapsed = Date.now() - revokedAt
      }
      expect(status).toBe(404)
      expect(elapsed).toBeLessThan(1000)
    } finally {
      other.close()
    }
  })
})
