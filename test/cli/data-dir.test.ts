import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliJson, expectUsageError, parseOneObject, scratchDirs } from './cli.ts'

/** --data-dir on every admin command (over DATA_DIR); read-only commands never create a data folder; hints repeat it. */

setDefaultTimeout(60_000)
const ROOT = join(import.meta.dir, '..', '..')
const scratch = scratchDirs()

describe('--data-dir', () => {
  test('wins over DATA_DIR for owner, key and backup commands', async () => {
    const decoy = scratch()
    const chosen = join(scratch(), 'data')
    const { id } = await cliJson(decoy, 'owner', 'create', '--name', 'Chosen', '--data-dir', chosen)
    expect(existsSync(join(chosen, 'control.db'))).toBe(true)
    expect(existsSync(join(decoy, 'control.db'))).toBe(false)
    expect((await cliJson(decoy, 'owner', 'list', '--data-dir', chosen)).owners.map((o: { id: string }) => o.id)).toEqual([id])
    const key = await cliJson(decoy, 'key', 'create', '--owner', id, '--data-dir', chosen)
    expect((await cliJson(decoy, 'key', 'list', '--owner', id, '--data-dir', chosen)).keys.map((k: { id: string }) => k.id)).toEqual([key.id])
    const out = join(scratch(), 'b')
    expect(await cliJson(decoy, 'backup', '--out', out, '--data-dir', chosen)).toMatchObject({ out, owners: 1 })
    expect(await cliJson(decoy, 'backup', 'verify', out, '--data-dir', chosen)).toMatchObject({ ok: true })
    expect((await cliJson(decoy, 'owner', 'update', '--owner', id, '--tier', 'free', '--data-dir', chosen)).owner.tier).toBe('free')
    expect(await cliJson(decoy, 'key', 'revoke', key.id, '--data-dir', chosen)).toEqual({ id: key.id, revoked: true })
    expect(existsSync(join(decoy, 'control.db'))).toBe(false)
  })

  test('commands that need data refuse a folder that does not exist: exit 2 naming it, and nothing is created', async () => {
    const missing = join(scratch(), 'no', 'such', 'data')
    const own = 'own_00000000000000000000000000000000'
    const commands = [
      ['owner', 'list'],
      ['owner', 'update', '--owner', own, '--tier', 'free'],
      ['owner', 'delete', '--owner', own],
      ['owner', 'export', '--owner', own, '--out', join(scratch(), 'x.db')],
      ['key', 'create', '--owner', own],
      ['key', 'list', '--owner', own],
      ['key', 'revoke', 'key_00000000000000000000000000000000'],
      ['key', 'rotate', 'key_00000000000000000000000000000000'],
      ['backup', '--out', join(scratch(), 'b')],
      ['backup', 'verify', missing],
      ['restore', '--from', missing],
    ]
    for (const args of commands) {
      const viaFlag = await cli(scratch(), ...args, '--data-dir', missing, '--json')
      expectUsageError(viaFlag, new RegExp(missing.replaceAll('/', '\\/')))
      // The same through DATA_DIR.
      expectUsageError(await cli(missing, ...args), /does not exist|no folder/)
    }
    expect(readdirSync(join(missing, '..', '..', '..'))).not.toContain('no')
  })

  test('a data folder without control.db: owner list has no owners and creates nothing; other commands say it holds no data', async () => {
    const empty = scratch()
    expect(await cliJson(empty, 'owner', 'list')).toEqual({ owners: [] })
    expectUsageError(await cli(empty, 'key', 'revoke', 'key_00000000000000000000000000000000'), /holds no pfin data/)
    expectUsageError(await cli(empty, 'backup', '--out', join(scratch(), 'b')), /holds no pfin data/)
    expect(readdirSync(empty)).toEqual([])
  })
})

describe('hints repeat --data-dir and the way pfin was run', () => {
  test('owner create, owner list and a missing owner name the next command with --data-dir', async () => {
    const parent = scratch()
    const dataDir = join(parent, 'my data')
    mkdirSync(dataDir)
    const listed = await cli(parent, 'owner', 'list', '--data-dir', dataDir)
    expect(listed.stdout).toContain(`bun run admin owner create --name "Your Name" --with-key --data-dir '${dataDir}'`)
    const created = await cli(parent, 'owner', 'create', '--name', 'Hinted', '--data-dir', dataDir)
    expect(created.stdout).toMatch(new RegExp(`Next: bun run admin key create --owner own_\\w+ --data-dir '${dataDir}'`))
    const unknown = await cli(parent, 'key', 'list', '--owner', 'own_00000000000000000000000000000000', '--data-dir', dataDir)
    expect(unknown.stderr).toContain(`(see: bun run admin owner list --data-dir '${dataDir}')`)
  })

  test('without a chosen folder the hint has no --data-dir', async () => {
    const proc = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), 'owner', 'create', '--name', 'Plain'], {
      cwd: scratch(),
      env: { ...process.env, DATA_DIR: '' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const stdout = await new Response(proc.stdout).text()
    expect(await proc.exited).toBe(0)
    expect(stdout).toMatch(/Next: bun run admin key create --owner own_\w+\n$/)
  })

  test('serve on an empty --data-dir prints an owner create hint that repeats it', async () => {
    const dataDir = join(scratch(), 'served')
    const proc = Bun.spawn(['bun', join(ROOT, 'src', 'main.ts'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: join(dataDir, 'not-this'), LOG_FORMAT: 'off', BACKUP_DIR: '' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader()
      let text = ''
      const deadline = Date.now() + 15_000
      while (!text.includes('--with-key') && Date.now() < deadline) {
        const chunk = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)])
        if (chunk === null || chunk.done) break
        text += new TextDecoder().decode(chunk.value)
      }
      expect(text).toContain(
        `No owner yet. Create one and its first API key:\n  bun run admin owner create --name "Your Name" --with-key --data-dir ${dataDir}\n`,
      )
    } finally {
      proc.kill('SIGTERM')
      await proc.exited
    }
    // Following the hint reaches the server's folder.
    const created = parseOneObject((await cli(scratch(), 'owner', 'create', '--name', 'Followed', '--with-key', '--data-dir', dataDir, '--json')).stdout)
    expect(existsSync(join(dataDir, 'tenants', `${created.id}.db`))).toBe(true)
  })
})
