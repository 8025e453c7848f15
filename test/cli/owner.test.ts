import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliDataDir, cliJson, expectUsageError, parseOneObject } from './cli.ts'

/** `owner create`, `owner list` and `owner export` as an operator runs them: their output, their options and their usage errors. */

// Each test spawns CLI processes (and some a server); bunfig's [test] timeout is not read by
// bun test 1.4, so the 5 s default would apply on a slow or busy machine.
setDefaultTimeout(30_000)

const dirs: string[] = []
function dataDir(): string {
  const dir = cliDataDir()
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe('owner create', () => {
  test('prints {"id"} and defaults the tier to pro', async () => {
    const dir = dataDir()
    const created = await cliJson(dir, 'owner', 'create', '--name', 'Ana')
    expect(Object.keys(created)).toEqual(['id'])
    expect(created.id).toMatch(/^own_[0-9a-f]{32}$/)
    const { owners } = await cliJson(dir, 'owner', 'list')
    expect(owners).toEqual([{ id: created.id, name: 'Ana', email: null, tier: 'pro' }])
    // The owner's own database file exists already.
    expect(existsSync(join(dir, 'tenants', `${created.id}.db`))).toBe(true)
  })

  test('accepts every option and stores them', async () => {
    const dir = dataDir()
    const created = await cliJson(
      dir,
      'owner',
      'create',
      '--name',
      'Bruno Sá',
      '--email',
      'bruno@example.com',
      '--country',
      'PT',
      '--currency',
      'EUR',
      '--language',
      'pt-BR',
      '--tier',
      'free',
    )
    const { owners } = await cliJson(dir, 'owner', 'list')
    expect(owners).toEqual([{ id: created.id, name: 'Bruno Sá', email: 'bruno@example.com', tier: 'free' }])
    const control = new Database(join(dir, 'control.db'), { readonly: true })
    try {
      const row = control.query('SELECT country, default_currency, preferred_language, tier FROM owners WHERE id = ?').get(created.id)
      expect(row).toEqual({ country: 'PT', default_currency: 'EUR', preferred_language: 'pt-BR', tier: 'free' })
    } finally {
      control.close()
    }
  })

  test('without --json prints a readable line, not JSON', async () => {
    const result = await cli(dataDir(), 'owner', 'create', '--name', 'Plain')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Created owner own_[0-9a-f]{32} \(Plain\)/)
  })

  const bad: [string, string[], RegExp][] = [
    ['missing --name', ['--email', 'a@b.co'], /--name/],
    ['empty --name', ['--name', '  '], /--name/],
    ['bad --country', ['--name', 'X', '--country', 'DEU'], /--country/],
    ['bad --currency', ['--name', 'X', '--currency', 'E'], /--currency/],
    // One rule for the CLI and the API (CONTRACT §3): a lower-case code is refused, not normalised.
    ['lower-case --currency', ['--name', 'X', '--currency', 'eur'], /--currency must be an upper-case/],
    ['lower-case --country', ['--name', 'X', '--country', 'pt'], /--country must be an upper-case/],
    ['misspelt flag', ['--name', 'X', '--emial', 'x@y.z'], /unknown flag --emial; did you mean --email\?/],
    ['bad --tier', ['--name', 'X', '--tier', 'gold'], /--tier/],
    ['bad --email', ['--name', 'X', '--email', 'not-an-email'], /--email/],
    ['bad --language', ['--name', 'X', '--language', 'english language'], /--language/],
    ['unknown option', ['--name', 'X', '--colour', 'red'], /colour/],
  ]
  for (const [what, args, pattern] of bad) {
    test(`${what} → exit 2, one line on stderr, nothing created`, async () => {
      const dir = dataDir()
      expectUsageError(await cli(dir, 'owner', 'create', ...args, '--json'), pattern)
      expect((await cliJson(dir, 'owner', 'list')).owners).toEqual([])
    })
  }
})

describe('owner list', () => {
  test('empty, then every owner in creation order', async () => {
    const dir = dataDir()
    expect(await cliJson(dir, 'owner', 'list')).toEqual({ owners: [] })
    const a = await cliJson(dir, 'owner', 'create', '--name', 'A', '--email', 'a@example.com')
    const b = await cliJson(dir, 'owner', 'create', '--name', 'B', '--tier', 'free')
    expect(await cliJson(dir, 'owner', 'list')).toEqual({
      owners: [
        { id: a.id, name: 'A', email: 'a@example.com', tier: 'pro' },
        { id: b.id, name: 'B', email: null, tier: 'free' },
      ],
    })
  })
})

describe('owner export', () => {
  test('writes a SQLite copy of the owner database holding the profile', async () => {
    const dir = dataDir()
    const owner = await cliJson(dir, 'owner', 'create', '--name', 'Carla', '--country', 'DE', '--currency', 'EUR')
    const out = join(dir, 'carla-export.db')
    const result = await cliJson(dir, 'owner', 'export', '--owner', owner.id, '--out', out)
    expect(result).toEqual({ out })
    const copy = new Database(out, { readonly: true })
    try {
      expect(copy.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' })
      const rows = copy.query('SELECT id, name, country, default_currency FROM profile').all()
      expect(rows).toEqual([{ id: owner.id, name: 'Carla', country: 'DE', default_currency: 'EUR' }])
    } finally {
      copy.close()
    }
  })

  test('a relative --out is resolved and reported as an absolute path', async () => {
    const dir = dataDir()
    const owner = await cliJson(dir, 'owner', 'create', '--name', 'Rel')
    const proc = Bun.spawn(['bun', join(import.meta.dir, '..', '..', 'src', 'main.ts'), 'owner', 'export', '--owner', owner.id, '--out', 'rel.db', '--json'], {
      cwd: dir,
      env: { ...process.env, DATA_DIR: dir },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const stdout = await new Response(proc.stdout).text()
    expect(await proc.exited).toBe(0)
    const printed = parseOneObject(stdout)
    expect(printed.out).toBe(join(dir, 'rel.db'))
    expect(existsSync(join(dir, 'rel.db'))).toBe(true)
  })

  test('an existing --out file → exit 2 and the file is untouched', async () => {
    const dir = dataDir()
    const owner = await cliJson(dir, 'owner', 'create', '--name', 'D')
    const out = join(dir, 'exists.db')
    writeFileSync(out, 'keep me')
    expectUsageError(await cli(dir, 'owner', 'export', '--owner', owner.id, '--out', out, '--json'), /already exists/)
    expect(await Bun.file(out).text()).toBe('keep me')
  })

  test('unknown owner or missing options → exit 2', async () => {
    const dir = dataDir()
    const out = join(dir, 'never.db')
    expectUsageError(await cli(dir, 'owner', 'export', '--owner', 'own_00000000000000000000000000000000', '--out', out, '--json'), /no owner/)
    expectUsageError(await cli(dir, 'owner', 'export', '--out', out, '--json'), /--owner/)
    const owner = await cliJson(dir, 'owner', 'create', '--name', 'E')
    expectUsageError(await cli(dir, 'owner', 'export', '--owner', owner.id, '--json'), /--out/)
    expect(existsSync(out)).toBe(false)
  })
})
