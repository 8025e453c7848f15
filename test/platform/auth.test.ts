import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join, resolve } from 'node:path'
import { newId } from '../../src/db/ids.ts'
import { parseApiKey } from '../../src/platform/auth.ts'
import { expectProblem, sendRaw, startTestServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { forgeKey, sleep } from './fixtures.ts'

/** Every way a key can fail (CONTRACT §6: 401 + WWW-Authenticate, 403 for scope and tier), and request ids. */

const REPO = resolve(import.meta.dir, '../..')

let server: TestServer
let owner: { id: string; key: string; keyId: string }

beforeAll(async () => {
  // Many deliberately bad requests come from one IP here: keep the anonymous bucket out of the way.
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '10000', ANON_RATE_LIMIT_PER_DAY: '100000' } })
  owner = await server.owner({ name: 'Auth Owner' })
})
afterAll(() => server.stop())

function expectUnauthorized(res: TestResponse) {
  const problem = expectProblem(res, 401, 'unauthorized')
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/)
  return problem
}

/** Repeats a request until it answers `status`, for at most one second; returns the last answer. */
async function withinOneSecond(request: () => Promise<TestResponse>, status: number): Promise<TestResponse> {
  const deadline = Date.now() + 1000
  let res = await request()
  while (res.status !== status && Date.now() < deadline) {
    await sleep(20)
    res = await request()
  }
  return res
}

describe('401 unauthorized', () => {
  test('no Authorization header', async () => {
    expectUnauthorized(await server.request('GET', '/v1/me'))
  })

  test('garbage Authorization headers', async () => {
    for (const value of ['garbage', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', `Token ${owner.key}`, `Bearer ${owner.key} extra`]) {
      const res = await server.request('GET', '/v1/me', { headers: { authorization: value } })
      try {
        expectUnauthorized(res)
      } catch (error) {
        throw new Error(`Authorization: ${JSON.stringify(value)}: ${String(error)}`)
      }
    }
  })

  test('Bearer with a malformed key', async () => {
    const malformed = [
      'not-a-key',
      'pfk_',
      owner.key.slice(0, -1), // secret one character short
      `${owner.key}A`, // secret one character long
      owner.key.replace('pfk_', 'pfx_'),
      owner.key.replace(/key_[0-9a-f]{4}/, 'key_ZZZZ'),
    ]
    for (const key of malformed) {
      const res = await server.request('GET', '/v1/me', { key })
      try {
        expectUnauthorized(res)
      } catch (error) {
        throw new Error(`key ${JSON.stringify(key)}: ${String(error)}`)
      }
    }
  })

  test('well-formed key with an unknown key id', async () => {
    const key = forgeKey(newId('key'))
    expect(parseApiKey(key)).not.toBeNull()
    expectUnauthorized(await server.request('GET', '/v1/me', { key }))
  })

  test('right key id, wrong secret', async () => {
    const other = await server.owner({ name: 'Wrong Secret' })
    expectUnauthorized(await server.request('GET', '/v1/me', { key: forgeKey(other.keyId) }))
    // The genuine key still works afterwards (one failure is not a lockout).
    expect((await server.request('GET', '/v1/me', { key: other.key })).status).toBe(200)
  })

  test('the scheme name is case-insensitive (RFC 9110)', async () => {
    const res = await sendRaw(server.url, '/v1/me', { headers: { authorization: `bearer ${owner.key}` } })
    expect(res.status).toBe(200)
    expect(res.json.data.id).toBe(owner.id)
  })

  test('a key revoked with the CLI while the server runs stops working within one second (CONTRACT §2)', async () => {
    const key = await server.key(owner.id)
    // Verified and cached first: revocation must still take effect.
    expect((await server.request('GET', '/v1/me', { key: key.key })).status).toBe(200)
    const proc = Bun.spawn([process.execPath, 'src/main.ts', 'key', 'revoke', key.id, '--json'], {
      cwd: REPO,
      env: { ...process.env, DATA_DIR: server.dataDir },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(JSON.parse(stdout)).toEqual({ id: key.id, revoked: true })
    expectUnauthorized(await withinOneSecond(() => server.request('GET', '/v1/me', { key: key.key }), 401))
    // Other keys of the same owner are untouched.
    expect((await server.request('GET', '/v1/me', { key: owner.key })).status).toBe(200)
  })

  test('an expired key is refused', async () => {
    const key = await server.key(owner.id, { ttlMs: 1 })
    await sleep(10)
    expectUnauthorized(await server.request('GET', '/v1/me', { key: key.key }))
  })

  test('a key that expires after it was verified and cached is refused', async () => {
    const key = await server.key(owner.id, { ttlMs: 1500 })
    expect((await server.request('GET', '/v1/me', { key: key.key })).status).toBe(200)
    await sleep(1600)
    expectUnauthorized(await server.request('GET', '/v1/me', { key: key.key }))
  })
})

describe('403', () => {
  test('a free-tier owner gets pro_tier_required', async () => {
    const free = await server.owner({ name: 'Free', tier: 'free' })
    const problem = expectProblem(await server.request('GET', '/v1/me', { key: free.key }), 403, 'pro_tier_required')
    expect(problem.detail.toLowerCase()).toContain('pro')
  })

  test('an owner moved to the free tier by another connection is refused within one second, though the key is cached', async () => {
    const moved = await server.owner({ name: 'Downgraded' })
    expect((await server.request('GET', '/v1/me', { key: moved.key })).status).toBe(200)
    const other = new Database(join(server.dataDir, 'control.db'))
    other.run('PRAGMA busy_timeout = 5000')
    other.run("UPDATE owners SET tier = 'free' WHERE id = ?", [moved.id])
    other.close()
    expectProblem(await withinOneSecond(() => server.request('GET', '/v1/me', { key: moved.key }), 403), 403, 'pro_tier_required')
  })

  test('a key without the route scope gets insufficient_scope naming the scope', async () => {
    const key = await server.key(owner.id, { scopes: ['accounts:read', 'payees:write'] })
    const res = await server.request('GET', '/v1/me', { key: key.key })
    const problem = expectProblem(res, 403, 'insufficient_scope')
    expect(problem.detail).toContain('me:read')
    expect(res.headers.get('www-authenticate')).toBeNull()
  })

  test('a key with only the needed scope works and /v1/me reports exactly its scopes', async () => {
    const key = await server.key(owner.id, { scopes: ['me:read'] })
    const res = await server.request('GET', '/v1/me', { key: key.key })
    expect(res.status).toBe(200)
    expect(res.json.data).toMatchObject({ id: owner.id, tier: 'pro', accessMode: 'self', scopes: ['me:read'] })
  })
})

describe('failed verifications are slowed', () => {
  test('more than five wrong secrets lock an uncached key id for a while, then the right key works again', async () => {
    const victim = await server.owner({ name: 'Victim' })
    for (let i = 0; i < 6; i++) expectUnauthorized(await server.request('GET', '/v1/me', { key: forgeKey(victim.keyId) }))
    // Locked: even the right secret is refused (no argon2 verification while locked).
    expectUnauthorized(await server.request('GET', '/v1/me', { key: victim.key }))
    await sleep(1100)
    const res = await server.request('GET', '/v1/me', { key: victim.key })
    expect(res.status).toBe(200)
    expect(res.json.data.id).toBe(victim.id)
  })

  test('five wrong secrets do not lock the key', async () => {
    const user = await server.owner({ name: 'Clumsy' })
    for (let i = 0; i < 5; i++) expectUnauthorized(await server.request('GET', '/v1/me', { key: forgeKey(user.keyId) }))
    expect((await server.request('GET', '/v1/me', { key: user.key })).status).toBe(200)
  })

  test('wrong secrets for a key already verified in this process do not lock out its holder', async () => {
    const user = await server.owner({ name: 'Cached' })
    expect((await server.request('GET', '/v1/me', { key: user.key })).status).toBe(200)
    for (let i = 0; i < 8; i++) expectUnauthorized(await server.request('GET', '/v1/me', { key: forgeKey(user.keyId) }))
    expect((await server.request('GET', '/v1/me', { key: user.key })).status).toBe(200)
  })
})

describe('X-Request-Id', () => {
  test('every response has one, fresh per request', async () => {
    const a = await server.request('GET', '/v1/me', { key: owner.key })
    const b = await server.request('GET', '/v1/me', { key: owner.key })
    const ida = a.headers.get('x-request-id')
    const idb = b.headers.get('x-request-id')
    expect(ida).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
    expect(idb).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
    expect(ida).not.toBe(idb)
  })

  test('a sane client id is echoed, on success and in error bodies', async () => {
    const sane = `client.Req-${'x'.repeat(115)}_9`
    expect(sane).toHaveLength(128)
    const ok = await server.request('GET', '/v1/me', { key: owner.key, headers: { 'x-request-id': sane } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('x-request-id')).toBe(sane)
    const err = await server.request('GET', '/v1/me', { headers: { 'x-request-id': 'abc-123' } })
    expect(expectProblem(err, 401, 'unauthorized').request_id).toBe('abc-123')
    const missing = await server.request('GET', '/v1/nowhere', { headers: { 'x-request-id': 'route.miss_1' } })
    expect(expectProblem(missing, 404, 'route_not_found').request_id).toBe('route.miss_1')
  })

  test('an insane client id is replaced', async () => {
    for (const insane of ['x'.repeat(129), 'has space', 'semi;colon', 'quote"d', 'ünï']) {
      const res = await sendRaw(server.url, '/v1/me', { headers: { 'x-request-id': insane } })
      const problem = expectProblem(res, 401, 'unauthorized')
      const id = res.headers.get('x-request-id')
      expect(id).not.toBe(insane)
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
      expect(problem.request_id).toBe(id as string)
    }
  })
})
