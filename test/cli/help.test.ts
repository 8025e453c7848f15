import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { cli, cliDataDir } from './cli.ts'

/** Every command and subcommand answers --help and -h: its usage, its flags, one example; exit 0, nothing made. */

setDefaultTimeout(60_000)
const dir = cliDataDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const COMMANDS: [name: string, flags: string[]][] = [
  ['serve', ['--port', '--host', '--data-dir']],
  ['mcp', []],
  ['owner create', ['--name', '--with-key', '--scopes', '--key-name', '--expires-in', '--data-dir', '--json']],
  ['owner list', ['--data-dir', '--json']],
  ['owner update', ['--owner', '--tier', '--data-dir']],
  ['owner delete', ['--owner', '--yes', '--data-dir']],
  ['owner export', ['--owner', '--out', '--data-dir']],
  ['key create', ['--owner', '--scopes', '--all-scopes', '--name', '--expires-in', '--data-dir', '--json']],
  ['key list', ['--owner', '--data-dir']],
  ['key revoke', ['--data-dir']],
  ['key rotate', ['--grace', '--expires-in', '--data-dir']],
  ['backup', ['--out', '--data-dir']],
  ['backup verify', ['--data-dir']],
  ['restore', ['--from', '--owner', '--yes', '--data-dir']],
]

test('each command: --help and -h print usage, flags and an example, exit 0, stderr empty', async () => {
  for (const [name, flags] of COMMANDS) {
    const words = name.split(' ')
    const long = await cli(dir, ...words, '--help')
    expect({ name, code: long.code, stderr: long.stderr }).toEqual({ name, code: 0, stderr: '' })
    expect(long.stdout).toContain(`Usage: pfin ${name}`)
    expect(long.stdout).toMatch(/Example:\n {2}(eval "\$\()?bun run (--silent )?admin /)
    expect(long.stdout).toContain('Exit codes:')
    for (const flag of flags) expect({ name, has: long.stdout.includes(`  ${flag}`) }).toEqual({ name, has: true })
    const short = await cli(dir, ...words, '-h')
    expect({ name, code: short.code, same: short.stdout === long.stdout }).toEqual({ name, code: 0, same: true })
  }
})

test('help wins over other flags, even missing or wrong ones, and opens no data folder', async () => {
  const missing = join(dir, 'not-there')
  for (const args of [
    ['key', 'create', '--help'],
    ['key', 'create', '--bogus', '-h'],
    ['owner', 'export', '--owner', 'x', '--help', '--data-dir', missing],
    ['restore', '--from', missing, '--help'],
  ]) {
    const result = await cli(missing, ...args)
    expect({ args, code: result.code }).toEqual({ args, code: 0 })
    expect(result.stdout).toContain('Usage: pfin ')
  }
  expect(existsSync(missing)).toBe(false)
})

test('groups answer --help with their commands: owner, key, backup; and help COMMAND is the command’s --help', async () => {
  for (const [group, commands] of [
    ['owner', ['create', 'list', 'update', 'delete', 'export']],
    ['key', ['create', 'list', 'revoke', 'rotate']],
    ['backup', ['--out', 'verify']],
  ] as const) {
    for (const asked of [
      [group, '--help'],
      [group, '-h'],
      ['help', group],
    ]) {
      const result = await cli(dir, ...asked)
      expect({ asked, code: result.code }).toEqual({ asked, code: 0 })
      for (const command of commands) expect(result.stdout).toContain(`pfin ${group} ${command}`)
      expect(result.stdout).toContain('Example:')
    }
  }
  const viaHelp = await cli(dir, 'help', 'key', 'create')
  expect(viaHelp.code).toBe(0)
  expect(viaHelp.stdout).toBe((await cli(dir, 'key', 'create', '--help')).stdout)
})

test('the top-level help states the exit codes and the shared flags', async () => {
  const result = await cli(dir, '--help')
  expect(result.stdout).toContain('Exit codes: 0 done; 2 a usage error')
  expect(result.stdout).toContain('--data-dir DIR')
  expect(result.stdout).toContain('--help (or -h)')
})
