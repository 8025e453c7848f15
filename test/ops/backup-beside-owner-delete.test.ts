import { afterAll, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { admin, adminJson, cleanup, MAIN, processEnv, ROOT, tempDir } from '../support/processes.ts'

/**
 * Campaign 7 finding (2026-11-26): a `backup` that runs while `owner delete --yes` removes an
 * owner fails as a whole. The backup lists the owner files when it starts, and copying a listed
 * file that has since been deleted throws; the backup exits 1 with `pfin: unable to open database
 * file` (naming no file) and leaves nothing — the other owners are not backed up either. A
 * scheduled backup hit the same way is lost until the next interval (24 h by default).
 *
 * CONTRACT §2: "Admin commands run while the server runs, and several at once: each one that
 * reports success has committed (it waits on a busy database rather than failing), and none may
 * disturb the server." §18: "`backup --out DIR`: a consistent copy of `control.db` and every
 * owner's database, safe while the server runs". An owner deleted after the backup began is not
 * damage to report; a backup taken at that moment holds every owner that still exists (and may
 * or may not hold the deleted one).
 *
 * Before a fix: `owner delete --yes` exits 0, the overlapping `backup` exits 1 with
 * "pfin: unable to open database file" on stderr, and no backup folder is written.
 */

afterAll(cleanup)

const OWNERS = 120

test('a backup overlapping an owner delete still succeeds and verifies', async () => {
  const dataDir = tempDir('pfin-campaign7-bdel-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  // Enough owners that copying them takes longer than an `owner delete` process needs to run.
  const owners: string[] = []
  while (owners.length < OWNERS) {
    const made = await Promise.all(Array.from({ length: 8 }, (_, i) => adminJson(env, 'owner', 'create', '--name', `Owner ${owners.length + i}`)))
    owners.push(...made.map((o) => o.id as string))
  }
  // Files are copied in id order (ids are time-ordered): the newest owner is copied last.
  const victim = [...owners].sort().at(-1) as string

  const out = join(tempDir('pfin-campaign7-bdel-out-'), 'b')
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
