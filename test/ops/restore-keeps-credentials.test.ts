import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { admin, adminJson, call, cleanup, processEnv, startServer, tempDir } from '../support/processes.ts'

// Each test runs a backup, a whole restore and several admin commands: seconds on a busy machine.
setDefaultTimeout(30_000)

/**
 * A whole `restore --from DIR` keeps the key decisions made since the backup: a key revoked since
 * stays revoked, a key made since keeps working, and an owner created since keeps its file, keys
 * and stored answers; when the replaced control.db cannot be read, the restore still completes
 * and says that revocations were not kept.
 *
 * Keys are credentials, not data (CONTRACT §18). Putting the backup's control.db back as it was
 * would bring a revoked (say, leaked) key back to life and leave an owner created since with a
 * file in tenants/ and nothing pointing at it. CONTRACT §2: a revoked key stops working; §18:
 * no retry is told "done" for a write the restore removed.
 */

afterAll(cleanup)

async function withServer<T>(env: Record<string, string>, fn: (url: string) => Promise<T>): Promise<T> {
  const server = await startServer(env)
  try {
    return await fn(server.url)
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
}

test('a key revoked after the backup stays revoked after a whole restore; a key made since keeps working', async () => {
  const env = processEnv(tempDir('pfin-restore-'))
  const owner = (await adminJson(env, 'owner', 'create', '--name', 'Restore')).id as string
  const leaked = (await adminJson(env, 'key', 'create', '--owner', owner)) as { id: string; key: string }
  const kept = (await adminJson(env, 'key', 'create', '--owner', owner)) as { id: string; key: string }
  const out = join(tempDir('pfin-backup-'), 'b')
  expect((await admin(env, 'backup', '--out', out)).code).toBe(0)
  expect((await adminJson(env, 'key', 'revoke', leaked.id)).revoked).toBe(true)
  const later = (await adminJson(env, 'key', 'create', '--owner', owner)) as { id: string; key: string }

  const restored = await admin(env, 'restore', '--from', out, '--yes')
  expect(restored.code).toBe(0)
  expect(restored.json?.kept).toEqual({ revokedKeys: 1, newKeys: 1, newOwners: [], read: true })

  const statuses = await withServer(env, async (url) => ({
    leaked: (await call(url, 'GET', '/v1/me', { key: leaked.key })).status,
    kept: (await call(url, 'GET', '/v1/me', { key: kept.key })).status,
    later: (await call(url, 'GET', '/v1/me', { key: later.key })).status,
  }))
  // The failure this catches: leaked 200 (the restore un-revoked it) and later 401.
  expect(statuses).toEqual({ leaked: 401, kept: 200, later: 200 })
})

test('an owner created after the backup keeps its file, keys and stored answers through a whole restore', async () => {
  const dataDir = tempDir('pfin-restore-')
  const env = processEnv(dataDir)
  const before = (await adminJson(env, 'owner', 'create', '--name', 'Before')).id as string
  const beforeKey = (await adminJson(env, 'key', 'create', '--owner', before)) as { key: string }
  const out = join(tempDir('pfin-backup-'), 'b')
  expect((await admin(env, 'backup', '--out', out)).code).toBe(0)

  const late = (await adminJson(env, 'owner', 'create', '--name', 'Late')).id as string
  const lateKey = (await adminJson(env, 'key', 'create', '--owner', late)) as { key: string }
  const idempotencyKey = crypto.randomUUID()
  const body = '{"name":"Savings","type":"bank","balance":1234.5,"currency":"EUR"}'
  const write = await withServer(env, (url) => call(url, 'POST', '/v1/accounts', { key: lateKey.key, idempotencyKey, body }))
  expect(write.status).toBe(201)

  const restored = await admin(env, 'restore', '--from', out, '--yes')
  expect(restored.code).toBe(0)
  expect(restored.json?.kept).toEqual({ revokedKeys: 0, newKeys: 1, newOwners: [late], read: true })
  expect(existsSync(join(dataDir, 'tenants', `${late}.db`))).toBe(true)
  const owners = ((await adminJson(env, 'owner', 'list')).owners as { id: string }[]).map((o) => o.id).sort()
  expect(owners).toEqual([before, late].sort())

  const after = await withServer(env, async (url) => ({
    me: (await call(url, 'GET', '/v1/me', { key: lateKey.key })).status,
    accounts: JSON.parse((await call(url, 'GET', '/v1/accounts', { key: lateKey.key })).text).data.map((a: { name: string }) => a.name),
    retry: await call(url, 'POST', '/v1/accounts', { key: lateKey.key, idempotencyKey, body }),
    before: (await call(url, 'GET', '/v1/me', { key: beforeKey.key })).status,
  }))
  // The failure this catches: the owner was gone from control.db (its key 401) while its file stayed.
  expect({ me: after.me, accounts: after.accounts, before: after.before }).toEqual({ me: 200, accounts: ['Savings'], before: 200 })
  // Its stored answer came along: the retry replays the original write instead of making a second account.
  expect(after.retry.status).toBe(201)
  expect(after.retry.headers.get('idempotent-replayed')).toBe('true')
  expect(after.retry.text).toBe(write.text)
})

test('when the replaced control.db cannot be read, the restore still completes and says that revocations were not kept', async () => {
  const dataDir = tempDir('pfin-restore-')
  const env = processEnv(dataDir)
  await adminJson(env, 'owner', 'create', '--name', 'Damaged')
  const out = join(tempDir('pfin-backup-'), 'b')
  expect((await admin(env, 'backup', '--out', out)).code).toBe(0)
  writeFileSync(join(dataDir, 'control.db'), 'this is not a database')
  for (const suffix of ['-wal', '-shm']) writeFileSync(join(dataDir, `control.db${suffix}`), '')

  const restored = await admin(env, 'restore', '--from', out, '--yes')
  expect(restored.code).toBe(0)
  expect(restored.json?.kept).toEqual({ revokedKeys: 0, newKeys: 0, newOwners: [], read: false })
  expect(restored.stderr).toContain('revoke them again')
  // The damaged file is kept as it was, moved with its -wal and -shm, not copied through SQLite.
  const kept = restored.json?.replacedDir as string
  expect(readFileSync(join(kept, 'control.db'), 'utf8')).toBe('this is not a database')
  expect(readdirSync(kept).sort()).toEqual(['control.db', 'control.db-shm', 'control.db-wal', 'tenants'])
  expect(((await adminJson(env, 'owner', 'list')).owners as unknown[]).length).toBe(1)
  expect(existsSync(join(dataDir, 'control.db.before-restore'))).toBe(false)
})
