import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { cli, cliDataDir, expectUsageError } from './cli.ts'

/** The admin CLI as a whole: unknown commands, repeated flags and bad environment values are usage errors (exit 2); help lists every command. */

// Each test spawns CLI processes (and some a server); bunfig's [test] timeout is not read by
// bun test 1.4, so the 5 s default would apply on a slow or busy machine.
setDefaultTimeout(30_000)

const dir = cliDataDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('unknown command → exit 2 with one line on stderr', async () => {
  expectUsageError(await cli(dir, 'frobnicate'), /unknown command/)
  expectUsageError(await cli(dir, 'frobnicate', '--json'), /unknown command/)
})

test('a flag given twice → exit 2 naming it, and nothing is made', async () => {
  const fresh = cliDataDir()
  try {
    expectUsageError(await cli(fresh, 'owner', 'create', '--name', 'A', '--name', 'B', '--json'), /--name is given more than once/)
    expectUsageError(await cli(fresh, 'owner', 'list', '--json', '--json'), /--json is given more than once/)
    expect((await cli(fresh, 'owner', 'list', '--json')).stdout).toBe('{"owners":[]}\n')
  } finally {
    rmSync(fresh, { recursive: true, force: true })
  }
})

test('unknown subcommands → exit 2', async () => {
  expectUsageError(await cli(dir, 'owner', 'frobnicate', '--json'), /owner frobnicate/)
  expectUsageError(await cli(dir, 'key', 'rotat', '--json'), /key rotat.*did you mean "rotate"/)
  expectUsageError(await cli(dir, 'owne', 'list'), /did you mean "owner"/)
  expectUsageError(await cli(dir, 'owner'), /owner needs a command/)
  expectUsageError(await cli(dir, 'key'), /key needs a command/)
})

test('help (and no command at all) → exit 0 and lists every command', async () => {
  for (const word of ['help', '--help', '-h', undefined]) {
    const result = await cli(dir, ...(word === undefined ? [] : [word]))
    expect(result.code).toBe(0)
    for (const command of [
      'serve',
      'owner create',
      'owner list',
      'owner update',
      'owner delete',
      'owner export',
      'key create',
      'key list',
      'key revoke',
      'key rotate',
      'backup',
      'restore',
      'mcp',
    ]) {
      expect(result.stdout).toContain(`pfin ${command}`)
    }
  }
})

test('a bad environment value is a usage error too', async () => {
  const proc = Bun.spawn(['bun', `${import.meta.dir}/../../src/main.ts`, 'owner', 'list', '--json'], {
    env: { ...process.env, DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: 'lots' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  expectUsageError({ code, stdout, stderr }, /RATE_LIMIT_PER_MINUTE/)
})
