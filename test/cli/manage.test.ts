import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliDataDir, cliJson, expectUsageError, parseOneObject } from './cli.ts'

/** The admin commands an operator uses after day one: update, delete, rotate, --version, serve flags. */

setDefaultTimeout(30_000)
const dirs: string[] = []
const dataDir = () => {
  const dir = cliDataDir()
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const ROOT = join(import.meta.dir, '..', '..')

describe('pfin --version', () => {
  test('prints the package version', async () => {
    const { version } = (await Bun.file(join(ROOT, 'package.json')).json()) as { version: string }
    const result = await cli(dataDir(), '--version')
    expect(result).toMatchObject({ code: 0, stdout: `pfin ${version}\n` })
    expect(await cliJson(dataDir(), 'version')).toEqual({ version })
  })
})

describe('owner update', () => {
  test('changes the owner and the profile copy in its file; nothing to change is a usage error', async () => {
    const dir = dataDir()
    const { id } = await cliJson(dir, 'owner', 'create', '--name', 'Ana', '--currency', 'EUR')
    const { owner } = await cliJson(dir, 'owner', 'update', '--owner', id, '--name', 'Ana Silva', '--country', 'PT', '--tier', 'free')
    expect(owner).toMatchObject({ id, name: 'Ana Silva', country: 'PT', defaultCurrency: 'EUR', tier: 'free' })
    const out = join(dir, 'export.db')
    await cliJson(dir, 'owner', 'export', '--owner', id, '--out', out)
    const { Database } = await import('bun:sqlite')
    const copy = new Database(out, { readonly: true })
    try {
      expect(copy.query('SELECT name, country FROM profile').get()).toEqual({ name: 'Ana Silva', country: 'PT' })
    } finally {
      copy.close()
    }
    expectUsageError(await cli(dir, 'owner', 'update', '--owner', id), /needs something to change/)
    expectUsageError(await cli(dir, 'owner', 'update', '--owner', id, '--currency', 'eur'), /--currency/)
  })

  test('a missing owner file fails the command before anything changes; a tier change needs no file', async () => {
    const dir = dataDir()
    const { id } = await cliJson(dir, 'owner', 'create', '--name', 'Ana')
    rmSync(join(dir, 'tenants', `${id}.db`))
    const failed = await cli(dir, 'owner', 'update', '--owner', id, '--name', 'Someone Else')
    expect(failed.code).toBe(1)
    expect(failed.stdout).toBe('')
    const listed = (await cliJson(dir, 'owner', 'list')).owners.find((owner: { id: string }) => owner.id === id)
    expect(listed.name).toBe('Ana')
    expect((await cliJson(dir, 'owner', 'update', '--owner', id, '--tier', 'free')).owner.tier).toBe('free')
  })
})

describe('owner delete', () => {
  test('without --yes says what it would delete, deletes nothing and exits 2; with --yes removes the owner, its keys and its file', async () => {
    const dir = dataDir()
    const { id } = await cliJson(dir, 'owner', 'create', '--name', 'Gone')
    await cliJson(dir, 'key', 'create', '--owner', id)
    const file = join(dir, 'tenants', `${id}.db`)
    // Not done is not success: a script must not carry on as if the owner were gone.
    const preview = await cli(dir, 'owner', 'delete', '--owner', id, '--json')
    expect(preview.code).toBe(2)
    expect(parseOneObject(preview.stdout)).toEqual({ deleted: false, owner: id, keys: 1, file })
    expect(preview.stderr).toContain(`then: bun run admin owner delete --owner ${id} --yes --data-dir ${dir}`)
    expect(existsSync(file)).toBe(true)
    expect((await cliJson(dir, 'key', 'list', '--owner', id)).keys).toHaveLength(1)
    expect(await cliJson(dir, 'owner', 'delete', '--owner', id, '--yes')).toEqual({ deleted: true, owner: id, keys: 1, file })
    expect(existsSync(file)).toBe(false)
    expect((await cliJson(dir, 'owner', 'list')).owners).toEqual([])
    expectUsageError(await cli(dir, 'key', 'list', '--owner', id), /no owner/)
  })
})

describe('key rotate', () => {
  test('makes a key with the same scopes and name; the old one expires after the grace period (or at once with 0)', async () => {
    const dir = dataDir()
    const { id: ownerId } = await cliJson(dir, 'owner', 'create', '--name', 'Rot')
    const old = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--scopes', 'me:read,accounts:read', '--name', 'sync')
    const before = Date.now()
    const rotated = await cliJson(dir, 'key', 'rotate', old.id, '--grace', '2h')
    expect(rotated).toMatchObject({ scopes: ['me:read', 'accounts:read'], replaces: old.id })
    expect(rotated.key).toStartWith('pfk_')
    expect(rotated.oldKeyStopsAt).toBeGreaterThanOrEqual(before + 2 * 3_600_000)
    const { keys } = await cliJson(dir, 'key', 'list', '--owner', ownerId)
    const oldRow = keys.find((k: { id: string }) => k.id === old.id)
    const newRow = keys.find((k: { id: string }) => k.id === rotated.id)
    expect(oldRow).toMatchObject({ revokedAt: null, expiresAt: rotated.oldKeyStopsAt })
    expect(newRow).toMatchObject({ name: 'sync', scopes: ['me:read', 'accounts:read'], expiresAt: null })
    const now = await cliJson(dir, 'key', 'rotate', rotated.id, '--grace', '0')
    const after = (await cliJson(dir, 'key', 'list', '--owner', ownerId)).keys.find((k: { id: string }) => k.id === rotated.id)
    expect(after.revokedAt).not.toBeNull()
    expect(now.replaces).toBe(rotated.id)
    expectUsageError(await cli(dir, 'key', 'rotate', rotated.id), /no active key/)
    expectUsageError(await cli(dir, 'key', 'rotate', now.id, '--grace', 'soon'), /--grace/)
  })

  test('an expired key is not rotated; a key expiring within the grace period says when it really stops', async () => {
    const dir = dataDir()
    const { id: ownerId } = await cliJson(dir, 'owner', 'create', '--name', 'Rot')
    const soon = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--expires-in', '1h')
    const expiresAt = (await cliJson(dir, 'key', 'list', '--owner', ownerId)).keys.find((k: { id: string }) => k.id === soon.id).expiresAt
    expect(expiresAt).toBeGreaterThan(Date.now())
    const rotated = await cliJson(dir, 'key', 'rotate', soon.id, '--grace', '24h')
    // The old key keeps its own expiry (an hour), not now + 24 h.
    expect(rotated.oldKeyStopsAt).toBe(expiresAt)
    const brief = await cliJson(dir, 'key', 'create', '--owner', ownerId, '--expires-in', '1s')
    await Bun.sleep(1100)
    expectUsageError(await cli(dir, 'key', 'rotate', brief.id), /no active key.*expired/)
  })
})

describe('serve flags', () => {
  test('--port, --host and --data-dir win over the environment; bad values are usage errors', async () => {
    const dir = dataDir()
    const proc = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir], {
      cwd: ROOT,
      env: { ...process.env, PORT: '1', HOST: '203.0.113.1', DATA_DIR: join(dir, 'not-this-one') },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
      let text = ''
      while (!/listening on (\S+)/.test(text)) {
        const { value, done } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      const url = /listening on (\S+)/.exec(text)?.[1]
      expect(url).toStartWith('http://127.0.0.1:')
      expect((await fetch(`${url}/healthz`)).status).toBe(200)
      expect(existsSync(join(dir, 'control.db'))).toBe(true)
      expect(existsSync(join(dir, 'not-this-one'))).toBe(false)
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
    expectUsageError(await cli(dir, 'serve', '--port', 'abc'), /--port must be a whole number/)
    expectUsageError(await cli(dir, 'serve', '--prot', '3000'), /did you mean --port/)
  })
})
