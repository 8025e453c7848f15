import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { DEFAULT_SCOPES } from '../../src/platform/scopes.ts'
import { startTestServer } from '../support/harness.ts'
import { cli, cliJson, expectUsageError, scratchDirs } from './cli.ts'

/** `owner create --with-key`: the owner and its first key in one command, printed for `eval` (stdout) and for a person (stderr). */

setDefaultTimeout(60_000)
const ROOT = join(import.meta.dir, '..', '..')
const scratch = scratchDirs()

describe('owner create --with-key', () => {
  test('stdout is exactly one export line; stderr names the owner, says the key is shown once and what to run next', async () => {
    const dir = scratch()
    const result = await cli(dir, 'owner', 'create', '--name', 'Ana', '--with-key')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^export PFIN_API_KEY=pfk_own_[0-9a-f]{32}_key_[0-9a-f]{32}_[\w-]+\n$/)
    const { owners } = await cliJson(dir, 'owner', 'list')
    expect(owners).toHaveLength(1)
    expect(result.stderr).toContain(owners[0].id)
    expect(result.stderr).toMatch(/printed once/)
    expect(result.stderr).toContain('curl -s http://localhost:3000/v1/me -H "Authorization: Bearer $PFIN_API_KEY"')
    const keyId = /PFIN_API_KEY=pfk_own_[0-9a-f]{32}_(key_[0-9a-f]{32})_/.exec(result.stdout)?.[1]
    const { keys } = await cliJson(dir, 'key', 'list', '--owner', owners[0].id)
    expect(keys).toMatchObject([{ id: keyId, scopes: [...DEFAULT_SCOPES], expiresAt: null, revokedAt: null }])
  })

  test('the hint uses PORT when it is set', async () => {
    const proc = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), 'owner', 'create', '--name', 'Ana', '--with-key'], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: scratch(), PORT: '8123' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const stderr = await new Response(proc.stderr).text()
    expect(await proc.exited).toBe(0)
    expect(stderr).toContain('curl -s http://localhost:8123/v1/me')
  })

  test('eval "$(… --with-key)" sets PFIN_API_KEY, and the key reads /v1/me', async () => {
    const dir = scratch()
    const script = `eval "$(bun ${JSON.stringify(join(ROOT, 'src', 'main.ts'))} owner create --name "Ana Silva" --country PT --with-key --data-dir ${JSON.stringify(dir)})" && printf '%s' "$PFIN_API_KEY"`
    const proc = Bun.spawn(['bash', '-c', script], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    const [key, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
    expect(await proc.exited).toBe(0)
    expect(key).toMatch(/^pfk_own_[0-9a-f]{32}_key_/)
    expect(stderr).toContain('Created owner own_')
    const server = await startTestServer({ dataDir: dir })
    try {
      const me = await server.request('GET', '/v1/me', { key })
      expect(me.status).toBe(200)
      expect(me.json.data).toMatchObject({ name: 'Ana Silva', country: 'PT', scopes: [...DEFAULT_SCOPES] })
    } finally {
      await server.stop()
    }
  })

  test('--json prints {"id", "key": {"id", "key", "scopes"}} and nothing on stderr; key flags apply', async () => {
    const dir = scratch()
    const result = await cli(
      dir,
      'owner',
      'create',
      '--name',
      'Bo',
      '--with-key',
      '--scopes',
      'me:read,accounts:read',
      '--key-name',
      'laptop',
      '--expires-in',
      '30d',
      '--json',
    )
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const printed = JSON.parse(result.stdout)
    expect(Object.keys(printed)).toEqual(['id', 'key'])
    expect(Object.keys(printed.key)).toEqual(['id', 'key', 'scopes'])
    expect(printed.key).toMatchObject({ scopes: ['me:read', 'accounts:read'] })
    expect(printed.key.key).toContain(`_${printed.key.id}_`)
    const [key] = (await cliJson(dir, 'key', 'list', '--owner', printed.id)).keys
    expect(key).toMatchObject({ id: printed.key.id, name: 'laptop' })
    expect(key.expiresAt - key.createdAt).toBe(30 * 86_400_000)
  })

  test('key flags without --with-key, and bad key flags, are usage errors that make nothing', async () => {
    const dir = scratch()
    expectUsageError(await cli(dir, 'owner', 'create', '--name', 'X', '--scopes', 'me:read'), /--scopes goes with --with-key/)
    expectUsageError(await cli(dir, 'owner', 'create', '--name', 'X', '--key-name', 'a'), /--key-name goes with --with-key/)
    expectUsageError(await cli(dir, 'owner', 'create', '--name', 'X', '--with-key', '--scopes', 'me:read,,accounts:read'), /empty item/)
    expectUsageError(await cli(dir, 'owner', 'create', '--name', 'X', '--with-key', '--expires-in', 'soon'), /--expires-in/)
    expect((await cliJson(dir, 'owner', 'list')).owners).toEqual([])
  })
})
