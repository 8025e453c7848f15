import { afterAll, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, call, cleanup, MAIN, processEnv, ROOT, startServer, tempDir } from '../support/processes.ts'

/**
 * A whole `restore` interrupted after it put the backup's `control.db` in place, then run again
 * to completion, keeps a key revoked since the backup revoked.
 *
 * The restore sets the `control.db` it replaces aside (`control.db.before-restore`), puts the
 * backup's in place and the owner files back, and only then re-applies the revocations made
 * since the backup. Copying the owner files is most of a restore's time, so that is where an
 * interruption (Ctrl-C, SIGTERM, a crash) is likely to land; the run after it must still re-apply
 * the revocations from the first run's copy, not from the backup's control.db it finds in place.
 * CONTRACT §18: keys are credentials, not data; a key revoked since the backup stays revoked,
 * also when a restore was interrupted and run again.
 */

afterAll(cleanup)

test('a whole restore interrupted after control.db was replaced, then run again, keeps a key revoked since the backup revoked', async () => {
  const dataDir = tempDir('pfin-irestore-')
  const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'Ana')).id as string
  const leaked = await adminJson(env, 'key', 'create', '--owner', owner, '--name', 'leaked')
  // Enough owner files that putting them back takes a moment after control.db is in place.
  let owners = 1
  while (owners < 80) {
    await Promise.all(Array.from({ length: 8 }, (_, i) => adminJson(env, 'owner', 'create', '--name', `Owner ${owners + i}`)))
    owners += 8
  }
  const out = join(tempDir('pfin-irestore-out-'), 'b')
  await adminJson(env, 'backup', '--out', out)

  // The key leaks after the backup and is revoked.
  expect((await admin(env, 'key', 'revoke', leaked.id as string)).code).toBe(0)

  // A restore, interrupted once the backup's control.db has replaced the current one.
  const before = statSync(join(dataDir, 'control.db')).ino
  const proc = Bun.spawn(['bun', MAIN, 'restore', '--from', out, '--yes', '--json'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && statSync(join(dataDir, 'control.db')).ino === before) await Bun.sleep(1)
  expect(statSync(join(dataDir, 'control.db')).ino).not.toBe(before)
  proc.kill('SIGINT')
  await proc.exited

  // The operator runs the restore again, to completion.
  const again = await admin(env, 'restore', '--from', out, '--yes')
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
