import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startTestServer } from '../support/harness.ts'
import { cli, cliDataDir, cliJson, expectUsageError } from './cli.ts'

/** `key rotate`: one live replacement at a time, the new key's expiry chosen (never a grace period's), the old key stopping after its grace. */

setDefaultTimeout(60_000)
const HOUR = 3_600_000
const DAY = 24 * HOUR
let dir: string
let ownerId: string

beforeAll(async () => {
  dir = cliDataDir()
  ownerId = (await cliJson(dir, 'owner', 'create', '--name', 'Rotating')).id
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Key {
  name: string | null
  id: string
  expiresAt: number | null
  revokedAt: number | null
  replacedBy: string | null
  createdAt: number
}

async function keys(): Promise<Map<string, Key>> {
  const listed = (await cliJson(dir, 'key', 'list', '--owner', ownerId)).keys as Key[]
  return new Map(listed.map((key) => [key.id, key]))
}

const live = (key: Key | undefined, now = Date.now()) => key !== undefined && key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now)

describe('one live replacement', () => {
  test('rotating a key twice is refused the second time (exit 2, naming the replacement); one live successor remains', async () => {
    const a = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--name', 'sync')
    const b = await cliJson(dir, 'key', 'rotate', a.id)
    expectUsageError(await cli(dir, 'key', 'rotate', a.id, '--json'), new RegExp(`rotated already and ${b.id} replaces it`))
    const all = await keys()
    expect(all.get(a.id)?.replacedBy).toBe(b.id)
    expect([...all.values()].filter((key) => key.id !== a.id && key.name === 'sync' && live(key)).map((key) => key.id)).toEqual([b.id])
  })

  test('rotating the replacement is allowed and ends the older key no later than the replacement', async () => {
    const a = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const b = await cliJson(dir, 'key', 'rotate', a.id, '--grace', '24h')
    const c = await cliJson(dir, 'key', 'rotate', b.id, '--grace', '1h')
    const all = await keys()
    expect(all.get(b.id)?.expiresAt).toBe(c.oldKeyStopsAt)
    expect(all.get(a.id)?.expiresAt).toBeLessThanOrEqual(c.oldKeyStopsAt)
    expect(c.oldKeyStopsAt).toBeLessThanOrEqual(Date.now() + HOUR)
    // The line's newest key is named when an older one is rotated again.
    expectUsageError(await cli(dir, 'key', 'rotate', a.id), new RegExp(c.id))
  })

  test('a replacement revoked (its secret lost) lets the old key be rotated again, with a chosen expiry', async () => {
    const a = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const b = await cliJson(dir, 'key', 'rotate', a.id, '--grace', '2h')
    await cliJson(dir, 'key', 'revoke', b.id)
    // a's expiry is now its grace period: its own lifetime is not known, so it must be chosen.
    expectUsageError(await cli(dir, 'key', 'rotate', a.id), /--expires-in/)
    const c = await cliJson(dir, 'key', 'rotate', a.id, '--expires-in', 'never')
    expect(c.expiresAt).toBeNull()
    expect((await keys()).get(a.id)?.replacedBy).toBe(c.id)
  })

  test('two rotations of one key at once make one replacement', async () => {
    const a = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const count = (await keys()).size
    const results = await Promise.all([cli(dir, 'key', 'rotate', a.id, '--json'), cli(dir, 'key', 'rotate', a.id, '--json')])
    expect(results.map((result) => result.code).sort()).toEqual([0, 2])
    const made = results.find((result) => result.code === 0)?.stdout as string
    const all = await keys()
    expect(all.size).toBe(count + 1)
    expect(all.get(a.id)?.replacedBy).toBe(JSON.parse(made).id)
  })
})

describe("the new key's expiry is chosen, never inherited from a grace period", () => {
  test('the replacement of a rotated key that never expired does not expire (not the grace period of the key before)', async () => {
    const a = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const b = await cliJson(dir, 'key', 'rotate', a.id, '--grace', '24h')
    expect(b.expiresAt).toBeNull()
    const c = await cliJson(dir, 'key', 'rotate', b.id, '--grace', '24h')
    expect(c.expiresAt).toBeNull()
    expect((await keys()).get(c.id)?.expiresAt).toBeNull()
  })

  test('--expires-in 90d sets it from now; never removes it; by default an expiring key is renewed for its own lifetime', async () => {
    const before = Date.now()
    const chosen = await cliJson(dir, 'key', 'rotate', (await cliJson(dir, 'key', 'create', '--owner', ownerId)).id, '--expires-in', '90d')
    expect(chosen.expiresAt).toBeGreaterThanOrEqual(before + 90 * DAY)
    expect(chosen.expiresAt).toBeLessThanOrEqual(Date.now() + 90 * DAY)

    const monthly = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--expires-in', '30d')
    const monthlyExpiry = (await keys()).get(monthly.id)?.expiresAt as number
    const renewed = await cliJson(dir, 'key', 'rotate', monthly.id)
    expect(renewed.expiresAt).toBeGreaterThan(monthlyExpiry)
    expect(renewed.expiresAt - ((await keys()).get(renewed.id) as Key).createdAt).toBe(30 * DAY)

    const forever = await cliJson(dir, 'key', 'rotate', renewed.id, '--expires-in', 'never')
    expect(forever.expiresAt).toBeNull()
    expectUsageError(await cli(dir, 'key', 'rotate', forever.id, '--expires-in', 'someday'), /--expires-in/)
  })
})

test('the old key keeps working for the grace period, then stops; the new one works at once', async () => {
  const server = await startTestServer({ dataDir: dir })
  try {
    const old = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const rotated = await cliJson(dir, 'key', 'rotate', old.id, '--grace', '3s')
    expect((await server.request('GET', '/v1/me', { key: old.key })).status).toBe(200)
    expect((await server.request('GET', '/v1/me', { key: rotated.key })).status).toBe(200)
    await Bun.sleep(Math.max(0, rotated.oldKeyStopsAt - Date.now()) + 1200)
    expect((await server.request('GET', '/v1/me', { key: old.key })).status).toBe(401)
    expect((await server.request('GET', '/v1/me', { key: rotated.key })).status).toBe(200)
  } finally {
    await server.stop()
  }
})
