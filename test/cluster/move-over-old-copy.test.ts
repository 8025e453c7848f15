import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { routerlessCluster } from '../support/cluster.ts'
import { adminJson, call, cleanup, integrity, processEnv, startServer, withDb } from '../support/processes.ts'

/**
 * `pfin cluster move` onto a node that still has an older copy of the owner's file with its
 * write-ahead log (CONTRACT §31): a node killed while it served the owner (a replicated node never
 * checkpoints, so its log holds recent commits) and later given the owner back. Pins that the old
 * set is put aside, log and all, before the copy takes its place: the copy was renamed over the
 * old file alone, the old -wal stayed beside it, and SQLite applied its frames over the copy at the
 * next open — the owner's newest account gone, an old name back, integrity_check failing.
 */

afterAll(cleanup)

test('a move onto a node holding an old copy with its log: the copy is what the new node opens, the old set is kept aside', async () => {
  const { root, dataDir, clusterFile, envOf } = routerlessCluster('pfin-move-old-copy-', ['a', 'b'])
  const made = await adminJson(envOf('a'), 'owner', 'create', '--name', 'Mover', '--currency', 'EUR', '--with-key')
  const owner = made.id as string
  const key = (made.key as { key: string }).key
  await adminJson(processEnv(root), 'cluster', 'place', owner, '--on', 'a', '--cluster', clusterFile)
  const nodeA = await startServer(envOf('a'))
  const account = (name: string) =>
    call(nodeA.url, 'POST', '/v1/accounts', { key, body: JSON.stringify({ name, type: 'bank', balance: 1, currency: 'EUR' }), idempotencyKey: name })
  expect((await account('Main')).status).toBe(201)

  // What node b kept of an earlier stay of this owner: a copy whose log holds a commit not yet in the file.
  const old = join(dataDir('b'), 'tenants', `${owner}.db`)
  mkdirSync(join(dataDir('b'), 'tenants'))
  withDb(join(dataDir('a'), 'tenants', `${owner}.db`), (db) => db.run('VACUUM INTO ?', [old]), { readonly: true })
  const stale = new Database(old)
  stale.run('PRAGMA journal_mode = WAL')
  stale.run('PRAGMA wal_autocheckpoint = 0')
  stale.run("UPDATE accounts SET name = 'Renamed long ago'")
  const log = { wal: readFileSync(`${old}-wal`), shm: readFileSync(`${old}-shm`) }
  stale.close() // folds and deletes the log: put it back as a killed process leaves it
  writeFileSync(`${old}-wal`, log.wal)
  writeFileSync(`${old}-shm`, log.shm)

  expect((await account('Second')).status).toBe(201)
  const nodeB = await startServer(envOf('b'))
  const moved = await adminJson(processEnv(root), 'cluster', 'move', owner, '--to', 'b', '--cluster', clusterFile)
  expect(moved.to).toBe('b')

  expect(integrity(old)).toBe('ok')
  const names = withDb(old, (db) => (db.query('SELECT name FROM accounts ORDER BY name').all() as { name: string }[]).map((r) => r.name))
  expect(names).toEqual(['Main', 'Second'])
  // The old set is kept, with its log, for whoever wants to look at it.
  const kept = readdirSync(join(dataDir('b'), 'moved'))
  expect(kept.some((f) => f.startsWith(`${owner}.found-`) && f.endsWith('.db-wal'))).toBe(true)
  expect(existsSync(`${old}.moving`)).toBe(false)

  // Node b serves the copy.
  const listed = await call(nodeB.url, 'GET', '/v1/accounts', { key })
  expect(listed.status).toBe(200)
  expect((JSON.parse(listed.text).data as { name: string }[]).map((a) => a.name).sort()).toEqual(['Main', 'Second'])
}, 30_000)
