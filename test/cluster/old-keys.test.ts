import { Database } from 'bun:sqlite'
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { hash } from '@node-rs/argon2'
import { newId } from '../../src/db/ids.ts'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'
import { admin, adminJson, processEnv } from '../support/processes.ts'

/**
 * Keys in the old form (`pfk_<keyId>_<secret>`, made before CONTRACT §31) keep working on one
 * server, but a cluster's router cannot place them. Pins: `pfin cluster old-keys` lists each
 * live one (node, owner, id, name, scopes, last use; never a secret or its hash), `pfin cluster
 * status` counts them, keys made now are not listed, and `pfin key rotate` takes a key off the
 * list once the old one is revoked (its replacement names the owner).
 */

setDefaultTimeout(60_000)

const root = tempDir()
let server: TestServer | undefined
afterAll(async () => {
  await server?.stop({ remove: false })
  rmSync(root, { recursive: true, force: true })
})

test('pfin cluster old-keys lists keys without their owner in them, with what it takes to reissue them', async () => {
  const dataDir = join(root, 'data-a')
  server = await startTestServer({ dataDir })
  const owner = await server.owner({ name: 'Olga', scopes: ['transactions:read', 'accounts:read'] })
  expect(owner.key.startsWith(`pfk_${owner.id}_key_`)).toBe(true)

  // A key as pfin made them before §31: no owner in its text, its form not recorded (0).
  const keyId = newId('key')
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const oldKey = `pfk_${keyId}_${secret}`
  const secretHash = await hash(secret)
  const control = new Database(join(dataDir, 'control.db'))
  control
    .query(
      `INSERT INTO api_keys (id, owner_id, name, scopes, secret_hash, created_at, last_used_at, expires_at, revoked_at, replaced_by)
       VALUES (?, ?, 'laptop script', '["transactions:read"]', ?, ?, NULL, NULL, NULL, NULL)`,
    )
    .run(keyId, owner.id, secretHash, Date.now() - 86_400_000)
  control.close()
  // It works on one server, and its use is recorded.
  const me = await server.request('GET', '/v1/transactions', { key: oldKey })
  expect(me.status).toBe(200)

  const clusterFile = join(root, 'cluster.json')
  writeFileSync(
    clusterFile,
    JSON.stringify({ directory: join(root, 'directory.json'), haproxy: null, nodes: { a: { dataDir, backend: 'node_a', replica: null } } }),
  )
  const env = processEnv(root)
  const listed = await adminJson(env, 'cluster', 'old-keys', '--cluster', clusterFile)
  const keys = listed.keys as Record<string, unknown>[]
  expect(keys.map((k) => k.id)).toEqual([keyId])
  expect(keys[0]).toMatchObject({ node: 'a', owner: owner.id, ownerName: 'Olga', name: 'laptop script', scopes: ['transactions:read'], replacedBy: null })
  expect(String(listed.reissue)).toContain('pfin key rotate')
  const text = JSON.stringify(listed)
  expect(text).not.toContain(secret)
  expect(text).not.toContain(secretHash)
  const human = await admin(env, 'cluster', 'old-keys', '--cluster', clusterFile)
  expect(human.stdout).toContain(keyId)
  expect(human.stdout).toContain('pfin key rotate')
  expect((await adminJson(env, 'cluster', 'status', '--cluster', clusterFile)).oldKeys).toBe(1)

  // Reissued: the replacement names its owner; once the old key is revoked, nothing is listed.
  const rotated = await adminJson(processEnv(dataDir), 'key', 'rotate', keyId, '--grace', '0')
  expect(String((rotated as { key: string }).key).startsWith(`pfk_${owner.id}_key_`)).toBe(true)
  const after = await adminJson(env, 'cluster', 'old-keys', '--cluster', clusterFile)
  expect(after.keys).toEqual([])
  expect((await adminJson(env, 'cluster', 'status', '--cluster', clusterFile)).oldKeys).toBe(0)
})
