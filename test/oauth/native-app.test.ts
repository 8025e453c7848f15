import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { givePassword, NativeApp, PASSWORD } from './native-app.ts'

/**
 * A native app signs in end to end (CONTRACT §28): it registers, signs the person in with PKCE
 * through the page and a loopback redirect, calls the API with its token, refreshes (the refresh
 * token rotates), is caught reusing an old refresh token (the whole grant is revoked), signs in
 * again, and the person signs it out from `DELETE /v1/keys/{id}`.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

let server: TestServer
let app: NativeApp
let ownerId: string
let ownerKey: string

beforeAll(async () => {
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
  const owner = await server.owner({ name: 'Ana', scopes: ['me:read', 'keys:read', 'keys:write'] })
  ownerId = owner.id
  ownerKey = owner.key
  await givePassword(server, ownerId, 'ana@example.com')
  app = await NativeApp.register(server)
})
afterAll(async () => {
  app?.stop()
  await server?.stop()
})

describe('a native app', () => {
  test('signs in, calls the API, refreshes, is caught reusing a refresh token, and is signed out by the person', async () => {
    const first = await app.signIn(server, 'Ana@Example.com', PASSWORD, { scope: 'me:read accounts:read keys:read' })
    expect(first.token_type).toBe('bearer')
    expect(first.access_token).toMatch(/^pfa_own_[0-9a-f]{32}_app_[0-9a-f]{32}_/)
    expect(first.refresh_token).toMatch(/^pfr_own_[0-9a-f]{32}_app_[0-9a-f]{32}_/)
    expect(first.expires_in).toBe(3600)
    expect(first.scope).toBe('me:read accounts:read keys:read')

    const me = await server.request('GET', '/v1/me', { key: first.access_token })
    expect(me.status).toBe(200)
    expect(me.json.data.id).toBe(ownerId)
    expect(me.json.data.scopes).toEqual(['me:read', 'accounts:read', 'keys:read'])
    // Scopes hold as for keys: this grant may not write accounts.
    const write = await server.request('POST', '/v1/accounts', {
      key: first.access_token,
      body: { name: 'Cash', type: 'physical', balance: 0, currency: 'EUR' },
    })
    expect(write.status).toBe(403)
    expect(write.json.code).toBe('insufficient_scope')

    // The refresh token rotates: a new pair, and both access tokens work until they expire.
    const second = await app.refresh(first.refresh_token as string)
    expect(second.refresh_token).not.toBe(first.refresh_token)
    expect((await server.request('GET', '/v1/me', { key: second.access_token })).status).toBe(200)

    // The first refresh token again: stolen, or a copy. The whole grant ends.
    const reused = await app.rawRefresh(first.refresh_token as string)
    expect(reused.status).toBe(400)
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant')
    expect((await server.request('GET', '/v1/me', { key: second.access_token })).status).toBe(401)
    expect((await app.rawRefresh(second.refresh_token as string)).status).toBe(400)

    // Signing in again makes a new grant; the person sees it beside their keys, and ends it.
    const third = await app.signIn(server, 'ana@example.com', PASSWORD, { scope: 'me:read' })
    const list = await server.request('GET', '/v1/keys?includeRevoked=true', { key: ownerKey })
    expect(list.status).toBe(200)
    const grants = list.json.data.filter((item: { type: string }) => item.type === 'oauth')
    expect(grants).toHaveLength(2)
    const live = grants.find((grant: { revokedAt: number | null }) => grant.revokedAt === null)
    expect(live).toMatchObject({ name: 'Budget Buddy (iOS)', scopes: ['me:read'], clientId: app.client.client_id, current: false })
    const revoked = await server.request('DELETE', `/v1/keys/${live.id}`, { key: ownerKey })
    expect(revoked.status).toBe(200)
    expect(revoked.json.data.revokedAt).toBeNumber()
    // Revoked at once: the next request is refused, and the refresh token gives nothing.
    const after = await server.request('GET', '/v1/me', { key: third.access_token })
    expect(after.status).toBe(401)
    expect((await app.rawRefresh(third.refresh_token as string)).status).toBe(400)
  })

  test('an access token counts against a rate limit of its own grant, like a key', async () => {
    const tokens = await app.signIn(server, 'ana@example.com', PASSWORD, { scope: 'me:read' })
    // A new grant starts a bucket of its own: the owner's key has been counted before, this one has not.
    await server.request('GET', '/v1/me', { key: ownerKey })
    const first = await server.request('GET', '/v1/me', { key: tokens.access_token })
    const second = await server.request('GET', '/v1/me', { key: tokens.access_token })
    expect(first.headers.get('x-ratelimit-limit-minute')).toBe('120')
    expect(first.headers.get('x-ratelimit-remaining-minute')).toBe('119')
    expect(second.headers.get('x-ratelimit-remaining-minute')).toBe('118')
  })

  test('revoking its token at /oauth/revoke signs it out (RFC 7009)', async () => {
    const tokens = await app.signIn(server, 'ana@example.com', PASSWORD, { scope: 'me:read' })
    await app.revoke(tokens.refresh_token as string)
    expect((await server.request('GET', '/v1/me', { key: tokens.access_token })).status).toBe(401)
  })
})
