import { afterAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Runs the real admin CLI (`bun src/main.ts …`) as its own process over a DATA_DIR. */

const ROOT = join(import.meta.dir, '..', '..')
const MAIN = join(ROOT, 'src', 'main.ts')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export function cliDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'pfin-cli-'))
}

export async function cli(dataDir: string, ...args: string[]): Promise<CliResult> {
  const proc = Bun.spawn(['bun', MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

/** Runs a command with `--json`, expects success and exactly one JSON object on stdout. */
// biome-ignore lint/suspicious/noExplicitAny: tests read the JSON freely
export async function cliJson(dataDir: string, ...args: string[]): Promise<any> {
  const result = await cli(dataDir, ...args, '--json')
  if (result.code !== 0) throw new Error(`pfin ${args.join(' ')} exited ${result.code}: ${result.stderr}`)
  return parseOneObject(result.stdout)
}

/** stdout must be a single JSON object (one line, nothing else). */
export function parseOneObject(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((line) => line.trim() !== '')
  if (lines.length !== 1) throw new Error(`expected one line of JSON on stdout, got ${lines.length}:\n${stdout}`)
  const value = JSON.parse(lines[0] as string)
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not a JSON object: ${stdout}`)
  return value
}

/** A usage error: exit code 2, nothing on stdout, exactly one line on stderr. */
export function expectUsageError(result: CliResult, pattern?: RegExp): void {
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '')
  const problems: string[] = []
  if (result.code !== 2) problems.push(`exit code ${result.code} (expected 2)`)
  if (lines.length !== 1) problems.push(`${lines.length} lines on stderr (expected 1)`)
  if (result.stdout.trim() !== '') problems.push('output on stdout')
  if (pattern && !pattern.test(result.stderr)) problems.push(`stderr does not match ${pattern}`)
  if (problems.length) throw new Error(`not a usage error: ${problems.join('; ')}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`)
}

/** Fresh data folders for one test file, all removed after its last test. */
export function scratchDirs(): () => string {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = cliDataDir()
    dirs.push(dir)
    return dir
  }
}
