import { afterAll, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { admin, adminJson, cleanup, MAIN, processEnv, ROOT, tempDir } from '../support/processes.ts'

/**
 * A `backup` that runs while `owner delete --yes` removes an owner still succeeds and verifies,
 * and holds every owner that still exists.
 *
 * The backup lists the owner files when it starts; a listed file deleted before it is copied is
 * not damage to report. Failing the whole backup would leave the other owners without one too,
 * and a scheduled backup would be lost until the next interval (24 h by default). CONTRACT §2:
 * admin commands run while the server runs, and several at once; §18: `backup` is safe while the
 * server runs, and an owner deleted while it runs is left out.
 */

afterAll(cleanup)

const OWNERS = 120

test('a backup overlapping an owner delete still succeeds and verifies', async () => {
  const dataDir = tempDir('pfin-bdel-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  // Enough owners that copying them takes longer than an `owner delete` process needs to run.
  const owners: string[] = []
  while (owners.length < OWNERS) {
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => adminJson(env, 'owner', 'create', '--name', `Owner ${owners.length + i}`)))
    owners.push(...made.map((o) => o.id as string))
  }
  // Files are copied in id order (ids are time-ordered): the newest owner is copied last.
  const victim = [...owners].sort().at(-1) as string

  const out = join(tempDir('pfin-bdel-out-'), 'b')
  const startedAt = Date.now()
  const proc = Bun.spawn(['bun', MAIN, 'backup', '--out', out, '--json'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const backupDone = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]).then(([stdout, stderr, code]) => ({
    stdout,
    stderr,
    code,
    exitedAt: Date.now(),
  }))
  // Wait until the backup has listed the owners and started copying them (its hidden folder holds a copy).
  const parent = dirname(out)
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const partial = readdirSync(parent).find((name) => name.includes('.partial-'))
    if (partial && existsSync(join(parent, partial, 'control.db'))) break
    await Bun.sleep(2)
  }
  const deleted = await admin(env, 'owner', 'delete', '--owner', victim, '--yes')
  const backup = await backupDone
  expect(deleted.code).toBe(0)
  // The two overlapped: the delete finished while the backup was still running.
  expect(deleted.exitedAt).toBeGreaterThan(startedAt)
  expect(deleted.exitedAt).toBeLessThan(backup.exitedAt)

  expect({ code: backup.code, stderr: backup.stderr.trim() }).toEqual({ code: 0, stderr: '' })
  const verify = await adminJson(env, 'backup', 'verify', out)
  expect(verify.ok).toBe(true)
  // Every owner that still exists is in the backup.
  const manifest = await Bun.file(join(out, 'manifest.json')).json()
  for (const owner of owners) if (owner !== victim) expect(manifest.owners).toContain(owner)
}, 60_000)
