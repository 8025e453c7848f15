import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_SCOPES, SCOPES } from '../../src/platform/scopes.ts'
import { startTestServer } from '../support/harness.ts'
import { cli, cliDataDir, cliJson, expectUsageError } from './cli.ts'

/** `key create`, `key list` and `key revoke`, and that a key the CLI makes works against a server until revoked and is stored only as a hash. */

// Each test spawns CLI processes (and some a server); bunfig's [test] timeout is not read by
// bun test 1.4, so the 5 s default would apply on a slow or busy machine.
setDefaultTimeout(30_000)

const DAY = 86_400_000
let dir: string
let ownerId: string

beforeAll(async () => {
  dir = cliDataDir()
  ownerId = (await cliJson(dir, 'owner', 'create', '--name', 'Key Owner')).id
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The secret part of `pfk_<ownerId>_<keyId>_<secret>` (the secret may itself contain `_`). */
function secretOf(created: { id: string; key: string }): string {
  const marker = `_${created.id}_`
  expect(created.key).toMatch(/^pfk_own_[0-9a-f]{32}_key_/)
  return created.key.slice(created.key.indexOf(marker) + marker.length)
}

// biome-ignore lint/suspicious/noExplicitAny: tests read the JSON freely
async function listKeys(owner = ownerId): Promise<any[]> {
  const printed = await cliJson(dir, 'key', 'list', '--owner', owner)
  expect(Object.keys(printed)).toEqual(['keys'])
  return printed.keys
}

describe('key create', () => {
  test('defaults to every scope but keys:read and keys:write, and shows the plaintext once', async () => {
    const created = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    expect(Object.keys(created).sort()).toEqual(['id', 'key', 'scopes'])
    expect(created.id).toMatch(/^key_[0-9a-f]{32}$/)
    expect(created.key).toContain(`_${created.id}_`)
    // A key that could make keys could outlive its own revocation: that power is asked for by name (CONTRACT §2).
    expect(created.scopes).toEqual([...DEFAULT_SCOPES])
    expect(created.scopes).toHaveLength(13)
    expect(created.scopes).not.toContain('keys:write')
  })

  test('--scopes keeps only the given scopes', async () => {
    const created = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--scopes', 'me:read,accounts:read', '--name', 'read-only')
    expect(created.scopes).toEqual(['me:read', 'accounts:read'])
    const listed = (await listKeys()).find((k) => k.id === created.id)
    expect(listed).toMatchObject({ name: 'read-only', scopes: ['me:read', 'accounts:read'], revokedAt: null, expiresAt: null, lastUsedAt: null })
  })

  test('--all-scopes gives every scope, keys:read and keys:write included', async () => {
    const created = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--all-scopes')
    expect(created.scopes).toEqual([...SCOPES])
  })

  test('--expires-in 30d sets expiresAt to about now + 30 days', async () => {
    const before = Date.now()
    const created = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--expires-in', '30d')
    const after = Date.now()
    const listed = (await listKeys()).find((k) => k.id === created.id)
    expect(typeof listed.expiresAt).toBe('number')
    expect(listed.expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY)
    expect(listed.expiresAt).toBeLessThanOrEqual(after + 30 * DAY)
    expect(listed.createdAt).toBeGreaterThanOrEqual(before)
    expect(listed.createdAt).toBeLessThanOrEqual(after)
  })

  const bad: [string, string[], RegExp][] = [
    ['unknown scope', ['--scopes', 'me:read,money:print'], /money:print/],
    ['--scopes with --all-scopes', ['--scopes', 'me:read', '--all-scopes'], /--all-scopes/],
    // An empty item is a typo where a scope was meant: refused, not dropped.
    ['--scopes with an empty item', ['--scopes', 'me:read,,accounts:read'], /--scopes has an empty item/],
    ['--scopes with a trailing comma', ['--scopes', 'me:read,'], /--scopes has an empty item/],
    ['--scopes naming a scope twice', ['--scopes', 'me:read,me:read'], /me:read more than once/],
    ['a stray argument', ['extra'], /takes no arguments/],
    ['bad --expires-in', ['--expires-in', 'soon'], /--expires-in/],
    ['zero --expires-in', ['--expires-in', '0d'], /--expires-in/],
    ['--expires-in with an unknown unit', ['--expires-in', '3y'], /--expires-in/],
  ]
  for (const [what, args, pattern] of bad) {
    test(`${what} → exit 2, one line on stderr, no key made`, async () => {
      const count = (await listKeys()).length
      expectUsageError(await cli(dir, 'key', 'create', '--owner', ownerId, ...args, '--json'), pattern)
      expect(await listKeys()).toHaveLength(count)
    })
  }

  test('unknown or missing owner → exit 2', async () => {
    expectUsageError(await cli(dir, 'key', 'create', '--owner', 'own_00000000000000000000000000000000', '--json'), /no owner/)
    expectUsageError(await cli(dir, 'key', 'create', '--json'), /--owner/)
  })
})

describe('key list', () => {
  test('lists every key of the owner with its fields and no secrets', async () => {
    const other = await cliJson(dir, 'owner', 'create', '--name', 'Other')
    expect(await listKeys(other.id)).toEqual([])
    const created = await cliJson(dir, 'key', 'create', '--owner', other.id, '--name', 'laptop')
    const keys = await listKeys(other.id)
    expect(keys).toHaveLength(1)
    const [key] = keys
    expect(Object.keys(key).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'replacedBy', 'revokedAt', 'scopes'])
    expect(key).toMatchObject({
      id: created.id,
      name: 'laptop',
      scopes: [...DEFAULT_SCOPES],
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      replacedBy: null,
    })
    expect(Number.isInteger(key.createdAt)).toBe(true)
    expect(JSON.stringify(keys)).not.toContain(secretOf(created))
    expect(JSON.stringify(keys)).not.toContain('argon2')
  })

  test('unknown or missing owner → exit 2', async () => {
    expectUsageError(await cli(dir, 'key', 'list', '--owner', 'own_00000000000000000000000000000000', '--json'), /no owner/)
    expectUsageError(await cli(dir, 'key', 'list', '--json'), /--owner/)
  })
})

describe('key revoke', () => {
  test('prints {id, revoked: true} and key list shows revokedAt', async () => {
    const created = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const before = Date.now()
    expect(await cliJson(dir, 'key', 'revoke', created.id)).toEqual({ id: created.id, revoked: true })
    const listed = (await listKeys()).find((k) => k.id === created.id)
    expect(listed.revokedAt).toBeGreaterThanOrEqual(before)
    expect(listed.revokedAt).toBeLessThanOrEqual(Date.now())
  })

  test('unknown or missing id → exit 2', async () => {
    expectUsageError(await cli(dir, 'key', 'revoke', 'key_00000000000000000000000000000000', '--json'), /no key/)
    expectUsageError(await cli(dir, 'key', 'revoke', '--json'), /usage/)
    expectUsageError(await cli(dir, 'key', 'revoke', 'a', 'b', '--json'), /usage/)
  })
})

describe('a key made by the CLI', () => {
  test('authenticates against a server on the same DATA_DIR, until revoked', async () => {
    const keyDir = cliDataDir()
    const owner = await cliJson(keyDir, 'owner', 'create', '--name', 'Served', '--country', 'BR')
    const created = await cliJson(keyDir, 'key', 'create', '--owner', owner.id, '--scopes', 'me:read')
    const server = await startTestServer({ dataDir: keyDir })
    try {
      const res = await server.request('GET', '/v1/me', { key: created.key })
      expect(res.status).toBe(200)
      expect(res.json.data).toMatchObject({ id: owner.id, name: 'Served', country: 'BR', tier: 'pro', scopes: ['me:read'] })
      // Revocation from another process takes effect on the next request.
      await cliJson(keyDir, 'key', 'revoke', created.id)
      expect((await server.request('GET', '/v1/me', { key: created.key })).status).toBe(401)
    } finally {
      await server.stop()
    }
  })

  test('is stored only as an argon2id hash: the plaintext is nowhere in control.db', async () => {
    const created = await cliJson(dir, 'key', 'create', '--owner', ownerId)
    const secret = secretOf(created)
    expect(secret.length).toBeGreaterThanOrEqual(43) // 256 bits in base64url

    const control = new Database(join(dir, 'control.db'), { readonly: true })
    try {
      const row = control.query('SELECT * FROM api_keys WHERE id = ?').get(created.id) as Record<string, unknown>
      expect(String(row.secret_hash)).toStartWith('$argon2id$')
      for (const value of Object.values(row)) {
        expect(String(value)).not.toContain(secret)
      }
      // Every text value of every table, not just this row.
      const tables = control.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
      for (const { name } of tables) {
        const dump = JSON.stringify(control.query(`SELECT * FROM "${name}"`).all())
        expect(dump).not.toContain(secret)
      }
    } finally {
      control.close()
    }
    // And not in the raw bytes of the database files (including a WAL, if any).
    for (const file of readdirSync(dir).filter((f) => f.startsWith('control.db'))) {
      expect(readFileSync(join(dir, file)).includes(secret)).toBe(false)
    }
  })
})
