import { afterAll, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, call, cleanup, MAIN, processEnv, ROOT, startServer, tempDir } from '../support/processes.ts'

/**
 * Campaign 7 finding (2026-11-26): a whole `restore` interrupted (Ctrl-C / SIGINT, SIGTERM, a
 * crash) after it has put the backup's `control.db` in place, while it is still putting the owner
 * files back, brings revoked keys back to life for good. The restore copies the control.db it
 * replaces to `control.db.before-restore`, replaces control.db, restores every owner file, and
 * only then re-applies the revocations made since the backup (`keepCredentials`). Interrupted in
 * between, control.db is the backup's (the key active again); run again, as an operator does after
 * an interrupted restore, the restore copies that control.db over `control.db.before-restore`,
 * so the revocation is gone and the second restore reports `kept.revokedKeys: 0`. Copying the
 * owner files is most of a restore's time, so this is the likely moment for an interruption.
 *
 * README "Backups and restore": "Keys are credentials, not data. A whole restore brings
 * `control.db` back as it was at the backup, except for what it must not undo: a key revoked since
 * the backup stays revoked (a leaked key is never brought back to life)". README "Admin commands":
 * "`restore --from DIR [--owner ID]` | puts a backup back; …; keeps revocations, newer keys and
 * newer owners".
 *
 * Before a fix: the interrupted restore exits by the signal, the second restore exits 0 with
 * `"kept":{"revokedKeys":0,…}`, and a server started afterwards answers the revoked key 200.
 */

afterAll(cleanup)

test('a whole restore interrupted after control.db was replaced, then run again, keeps a key revoked since the backup revoked', async () => {
  const dataDir = tempDir('pfin-campaign7-irestore-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'Ana')).id as string
  const leaked = await adminJson(env, 'key', 'create', '--owner', owner, '--name', 'leaked')
  // Enough owner files that putting them back takes a moment after control.db is in place.
  let owners = 1
  while (owners < 80) {
    await Promise.all(Array.from({ length: 8 }, (_, i) => adminJson(env, 'owner', 'create', '--name', `Owner ${owners + i}`)))
    owners += 8
  }
  const out = join(tempDir('pfin-campaign7-irestore-out-'), 'b')
  await adminJson(env, 'backup', '--out', out)

  // The key leaks after the backup and is revoked.
  expect((await admin(env, 'key', 'revoke', leaked.id as string)).code).toBe(0)

  // A restore, interrupted once the backup's control.db has replaced the current one.
  const before = statSync(join(dataDir, 'control.db')).ino
  const proc = Bun.spawn(['bun', MAIN, 'restore', '--from', out, '--json'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && statSync(join(dataDir, 'control.db')).ino === before) await Bun.sleep(1)
  expect(statSync(join(dataDir, 'control.db')).ino).not.toBe(before)
  proc.kill('SIGINT')
  await proc.exited

  // The operator runs the restore again, to completion.
  const again = await admin(env, 'restore', '--from', out)
  expect(again.code).toBe(0)

  const server = await startServer(env)
  try {
    const me = await call(server.url, 'GET', '/v1/me', { key: leaked.key as string })
    expect(me.status).toBe(401)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
}, 60_000)
