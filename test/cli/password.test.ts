import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { ControlStore } from '../../src/db/control/store.ts'
import { verifyPassword } from '../../src/platform/passwords.ts'
import { type CliResult, cliJson, expectUsageError, parseOneObject, scratchDirs } from './cli.ts'

/**
 * `owner set-password` and `owner invite` (CONTRACT §2, §28): the password comes from stdin,
 * never an argument, and meets the policy; a login name is unique; an invitation needs
 * PUBLIC_URL, is printed once and kept only as a hash.
 */

// Each command is a process of its own (argon2 included): seconds apiece on a busy machine.
setDefaultTimeout(60_000)

const ROOT = join(import.meta.dir, '..', '..')
const fresh = scratchDirs()

async function run(dataDir: string, args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const proc = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PUBLIC_URL: '', ...opts.env },
    stdin: new Blob([opts.stdin ?? '']),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

async function ownerIn(dir: string, name: string): Promise<string> {
  return (await cliJson(dir, 'owner', 'create', '--name', name)).id as string
}

function storedLogin(dir: string, ownerId: string) {
  const control = new ControlStore(dir)
  try {
    return control.oauth.findLogin(ownerId)
  } finally {
    control.close()
  }
}

describe('owner set-password', () => {
  test('reads the first line of stdin, keeps an argon2id hash, and normalizes the login', async () => {
    const dir = fresh()
    const id = await ownerIn(dir, 'Ana')
    const result = await run(dir, ['owner', 'set-password', '--owner', id, '--login', ' Ana@Example.COM ', '--json'], {
      stdin: 'a long enough secret\nignored\n',
    })
    expect(result.code).toBe(0)
    expect(parseOneObject(result.stdout)).toEqual({ owner: id, login: 'ana@example.com', passwordSet: true })
    const login = storedLogin(dir, id)
    expect(login?.passwordHash).toStartWith('$argon2id$')
    expect(await verifyPassword(login?.passwordHash as string, 'a long enough secret')).toBe(true)
    // Later: the login stays, the password changes.
    expect((await run(dir, ['owner', 'set-password', '--owner', id], { stdin: 'another long secret' })).code).toBe(0)
    expect(await verifyPassword(storedLogin(dir, id)?.passwordHash as string, 'another long secret')).toBe(true)
  })

  test('refuses a short or common password, a taken login, no login the first time, and a password as an argument', async () => {
    const dir = fresh()
    const ana = await ownerIn(dir, 'Ana')
    const bea = await ownerIn(dir, 'Bea')
    expectUsageError(await run(dir, ['owner', 'set-password', '--owner', ana, '--login', 'ana'], { stdin: 'too short' }), /at least 12 characters/)
    expectUsageError(await run(dir, ['owner', 'set-password', '--owner', ana, '--login', 'ana'], { stdin: 'qwerty123456' }), /most common passwords/)
    expectUsageError(await run(dir, ['owner', 'set-password', '--owner', ana], { stdin: 'a long enough secret' }), /no login name yet: add --login/)
    expectUsageError(await run(dir, ['owner', 'set-password', '--owner', ana, '--password', 'a long enough secret']), /unknown flag --password/)
    expect(storedLogin(dir, ana)).toBeUndefined()
    expect((await run(dir, ['owner', 'set-password', '--owner', ana, '--login', 'ana'], { stdin: 'a long enough secret' })).code).toBe(0)
    expectUsageError(await run(dir, ['owner', 'set-password', '--owner', bea, '--login', 'ANA'], { stdin: 'a long enough secret' }), /belongs to another owner/)
    // Deleting an owner takes its login along (its rows reference the owner), and frees the name.
    expect((await run(dir, ['owner', 'delete', '--owner', ana, '--yes'])).code).toBe(0)
    expect((await run(dir, ['owner', 'set-password', '--owner', bea, '--login', 'ana'], { stdin: 'a long enough secret' })).code).toBe(0)
  })
})

describe('owner invite', () => {
  test('prints a one-time link under PUBLIC_URL, valid 24 hours; only its hash is kept', async () => {
    const dir = fresh()
    const id = await ownerIn(dir, 'Ana')
    const before = Date.now()
    const result = await run(dir, ['owner', 'invite', '--owner', id, '--login', 'ana', '--json'], { env: { PUBLIC_URL: 'https://pfin.example.com' } })
    expect(result.code).toBe(0)
    const printed = parseOneObject(result.stdout) as { url: string; expiresAt: number; login: string }
    expect(printed.login).toBe('ana')
    expect(printed.url).toMatch(/^https:\/\/pfin\.example\.com\/signin\?invite=pfi_[A-Za-z0-9_-]{43}$/)
    expect(printed.expiresAt - before).toBeGreaterThanOrEqual(24 * 3_600_000)
    expect(printed.expiresAt - before).toBeLessThan(24 * 3_600_000 + 60_000)
    const token = new URL(printed.url).searchParams.get('invite') as string
    const control = new ControlStore(dir)
    try {
      const rows = control.sqlite.query('SELECT token_hash FROM owner_invites').all() as { token_hash: string }[]
      expect(rows).toHaveLength(1)
      expect(rows[0]?.token_hash).not.toContain(token)
      expect(control.oauth.findLogin(id)?.passwordHash).toBeNull()
    } finally {
      control.close()
    }
  })

  test('without PUBLIC_URL it refuses and names the setting', async () => {
    const dir = fresh()
    const id = await ownerIn(dir, 'Ana')
    expectUsageError(await run(dir, ['owner', 'invite', '--owner', id, '--login', 'ana']), /PUBLIC_URL is not set/)
  })
})
