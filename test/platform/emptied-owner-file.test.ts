import { afterAll, expect, test } from 'bun:test'
import { rmSync, truncateSync } from 'node:fs'
import { join } from 'node:path'
import { call, cleanup, processEnv, startServer, tempDir, ownerWithKey } from '../support/processes.ts'

/**
 * An owner file emptied (truncated to 0 bytes) or removed while the server was stopped is a
 * damaged file: 503 storage_unavailable for that owner only, taking no writes, while other owners
 * are served.
 *
 * A zero-length file is a valid, empty SQLite database that passes `quick_check`. Migrated into a
 * fresh ledger, it would tell the client, as the truth, that the owner has nothing, and the
 * writes accepted on it would be lost again once the operator restores the real file.
 * CONTRACT §14: every owner's file is made with the owner, so the server never makes an empty
 * ledger in its place.
 */

afterAll(cleanup)

async function ownerWithData(env: Record<string, string>) {
  const { id: damaged, key: damagedKey } = await ownerWithKey(env, 'Damaged')
  const { key: otherKey } = await ownerWithKey(env, 'Other')
  const server = await startServer(env)
  try {
    for (const key of [damagedKey, otherKey]) {
      const account = await call(server.url, 'POST', '/v1/accounts', {
        key,
        body: JSON.stringify({ name: 'Main', type: 'bank', balance: 100, currency: 'EUR' }),
        idempotencyKey: crypto.randomUUID(),
      })
      expect(account.status).toBe(201)
      const accountId = JSON.parse(account.text).data.id
      const txn = await call(server.url, 'POST', '/v1/transactions', {
        key,
        body: JSON.stringify({ accountId, amount: 12.5, date: '2026-01-02' }),
        idempotencyKey: crypto.randomUUID(),
      })
      expect(txn.status).toBe(201)
    }
  } finally {
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
  return { damaged, damagedKey, otherKey }
}

for (const [name, damage] of [
  ['truncated to 0 bytes', (file: string) => truncateSync(file, 0)],
  ['removed', (file: string) => rmSync(file)],
] as const) {
  test(`an owner file ${name} while the server was stopped is 503 storage_unavailable, not a fresh empty ledger`, async () => {
    const dataDir = tempDir('pfin-empty-')
    const env = processEnv(dataDir, { LOG_FORMAT: 'off' })
    const { damaged, damagedKey, otherKey } = await ownerWithData(env)
    damage(join(dataDir, 'tenants', `${damaged}.db`))

    const server = await startServer(env)
    try {
      const accounts = await call(server.url, 'GET', '/v1/accounts', { key: damagedKey })
      const write = await call(server.url, 'POST', '/v1/accounts', {
        key: damagedKey,
        body: JSON.stringify({ name: 'On top', type: 'bank', balance: 1, currency: 'EUR' }),
        idempotencyKey: crypto.randomUUID(),
      })
      const other = await call(server.url, 'GET', '/v1/transactions', { key: otherKey })
      // The failure this catches: accounts 200 with [] (the account and its transaction are gone), write 201.
      expect({ accounts: accounts.status, write: write.status, other: other.status }).toEqual({ accounts: 503, write: 503, other: 200 })
      expect(JSON.parse(accounts.text).code).toBe('storage_unavailable')
      expect(JSON.parse(other.text).data).toHaveLength(1)
    } finally {
      server.proc.kill('SIGTERM')
      await server.proc.exited
    }
  }, 60_000)
}
