import { afterAll, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, cleanup, MAIN, processEnv, ROOT, tempDir } from '../support/processes.ts'

/**
 * `backup verify` of a damaged backup exits 1 with one line on stderr naming the damaged file,
 * and nothing on stdout, `--json` or not.
 *
 * CONTRACT §2: any failure other than bad arguments (a damaged file, a backup that does not
 * verify) is one line on stderr and exit 1, and a command that fails prints nothing on stdout,
 * so a script checks the exit code before it reads the object, and a script or a service
 * manager's log finds the reason on stderr.
 */

afterAll(cleanup)

test('backup verify of a damaged backup: exit 1, one line on stderr naming the damaged file, nothing on stdout', async () => {
  const dataDir = tempDir('pfin-verify-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'A')).id as string
  const out = join(tempDir('pfin-verify-out-'), 'b')
  await adminJson(env, 'backup', '--out', out)
  const file = join(out, 'tenants', `${owner}.db`)
  const bytes = await Bun.file(file).bytes()
  bytes[bytes.length - 100] = (bytes[bytes.length - 100] as number) ^ 0xff
  writeFileSync(file, bytes)

  // With --json (the helper adds it).
  const json = await admin(env, 'backup', 'verify', out)
  expect(json.code).toBe(1)
  expect(json.stdout).toBe('')
  const lines = json.stderr.split('\n').filter((line) => line.trim() !== '')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain(`tenants/${owner}.db`)

  // Without --json.
  const proc = Bun.spawn(['bun', MAIN, 'backup', 'verify', out], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  expect(code).toBe(1)
  expect(stdout).toBe('')
  expect(stderr.split('\n').filter((line) => line.trim() !== '')).toHaveLength(1)
}, 30_000)
