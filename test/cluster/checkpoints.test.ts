import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ControlStore } from '../../src/db/control/store.ts'
import { LITESTREAM_CONFIG } from '../../src/db/data-dir.ts'
import { TenantRegistry } from '../../src/db/tenant/registry.ts'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * Who checkpoints a replicated file (CONTRACT §31): Litestream alone. Litestream 0.3.13 embeds
 * SQLite 3.42.0, which has the WAL-reset race (fixed in 3.51.3) between two checkpointing
 * connections and a writer, so a node that replicates never checkpoints its owners' files or
 * its control.db, nor do admin commands over its DATA_DIR: SQLite's automatic checkpoint is off
 * on every such connection and the idle or full-disk fold does nothing. Observed in the files
 * themselves: the log grows past the 1,000 pages at which SQLite would checkpoint, and the
 * shared-memory index says no frame was ever copied back (nBackfill 0). A plain connection held
 * open stands for Litestream's (without one, closing the last connection checkpoints).
 * The same writes on a server that does not replicate are checkpointed: the observation can fail.
 */

setDefaultTimeout(60_000)

const dirs: string[] = []
const servers: TestServer[] = []
afterAll(async () => {
  for (const server of servers) await server.stop({ remove: false })
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Frames a checkpoint has copied back into the file since the log last restarted: WalCkptInfo.nBackfill, just after the two 48-byte index headers. */
const backfilled = (path: string): number => readFileSync(`${path}-shm`).readUInt32LE(96)
const walBytes = (path: string): number => statSync(`${path}-wal`).size
/** SQLite's automatic checkpoint runs once the log passes 1,000 pages of 4 KiB. */
const AUTOCHECKPOINT_BYTES = 1000 * 4096

/** Writes ~6 MiB of transactions through the API in batches (long notes: the rows and their text index). */
async function writeMuch(server: TestServer, key: string): Promise<void> {
  const account = await server.request('POST', '/v1/accounts', { key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })
  expect(account.status).toBe(201)
  for (let batch = 0; batch < 6; batch++) {
    const items = Array.from({ length: 200 }, (_, i) => ({
      accountId: account.json.data.id,
      externalId: `w-${batch}-${i}`,
      amount: 1.25,
      date: '2026-01-15',
      note: `${batch}-${i} ${'ledger line '.repeat(80)}`,
    }))
    const res = await server.request('POST', '/v1/transactions/batch', { key, body: { items } })
    expect(`${res.status} ${res.text.slice(0, 300)}`).toStartWith('200')
  }
}

async function node(replicated: boolean): Promise<{ server: TestServer; owner: { id: string; key: string }; tenantFile: string; holder: Database }> {
  const dir = tempDir()
  dirs.push(dir)
  const directory = join(dir, 'directory.json')
  const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '10000000', CLUSTER_NODE: 'a', CLUSTER_DIRECTORY: directory }
  if (replicated) env.CLUSTER_REPLICA = `file://${join(dir, 'replica')}`
  const server = await startTestServer({ dataDir: join(dir, 'data'), env })
  servers.push(server)
  const owner = await server.owner({ name: 'Ann' })
  writeFileSync(`${directory}.tmp`, JSON.stringify({ version: 1, owners: { [owner.id]: { node: 'a', epoch: 1 } } }))
  renameSync(`${directory}.tmp`, directory)
  await Bun.sleep(100)
  const tenantFile = join(server.dataDir, 'tenants', `${owner.id}.db`)
  const holder = new Database(tenantFile, { readonly: true })
  holder.query('SELECT count(*) FROM accounts').get()
  return { server, owner, tenantFile, holder }
}

describe('checkpoints on a replicated node', () => {
  test("a node with CLUSTER_REPLICA never checkpoints its owner's file, whatever it writes and however long it rests", async () => {
    const { server, owner, tenantFile, holder } = await node(true)
    try {
      await writeMuch(server, owner.key)
      // What an idle spell and a full disk would run.
      server.platform.tenants.foldAllLogs()
      expect(server.platform.control.foldLog()).toBe(true)
      expect(walBytes(tenantFile)).toBeGreaterThan(AUTOCHECKPOINT_BYTES)
      expect(backfilled(tenantFile)).toBe(0)
    } finally {
      holder.close()
    }
  })

  test('the same writes on a node without replication are checkpointed (the observation can fail)', async () => {
    const { server, owner, tenantFile, holder } = await node(false)
    try {
      await writeMuch(server, owner.key)
      server.platform.tenants.foldAllLogs()
      expect(backfilled(tenantFile) > 0 || walBytes(tenantFile) < AUTOCHECKPOINT_BYTES).toBe(true)
    } finally {
      holder.close()
    }
  })

  test("admin commands over a replicated DATA_DIR (Litestream's configuration there) leave control.db and owners' files to Litestream", () => {
    const dir = tempDir()
    dirs.push(dir)
    writeFileSync(join(dir, LITESTREAM_CONFIG), 'dbs: []\n')
    // What `pfin key create`, `pfin owner create` and the others open (src/cli/session.ts).
    const control = new ControlStore(dir)
    const registry = new TenantRegistry(dir, 4)
    const path = join(dir, 'control.db')
    const holder = new Database(path, { readonly: true })
    try {
      expect(control.checkpoints).toBe(false)
      holder.query('SELECT count(*) FROM owners').get()
      const insert = control.sqlite.query('INSERT INTO rate_limit_counters (bucket, minute_window, minute_count, day_window, day_count) VALUES (?, 0, 0, 0, 0)')
      for (let i = 0; i < 300; i++) control.sqlite.transaction(() => insert.run(`${i}-${'x'.repeat(3000)}`))()
      expect(control.foldLog()).toBe(true)
      expect(walBytes(path)).toBeGreaterThan(AUTOCHECKPOINT_BYTES)
      expect(backfilled(path)).toBe(0)
      const tenant = registry.create('own_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b')
      expect(tenant.checkpoints).toBe(false)
      expect(tenant.foldLog()).toBe(true)
    } finally {
      holder.close()
      registry.closeAll()
      control.close()
    }
  })
})
