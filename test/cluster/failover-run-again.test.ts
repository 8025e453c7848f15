import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { routerlessCluster } from '../support/cluster.ts'
import { adminJson, call, cleanup, groupGone, integrity, processEnv, startGroupServer, withDb } from '../support/processes.ts'

/**
 * `pfin cluster failover` run again after one was killed part way (CONTRACT §31: the next command
 * takes over what a killed one left). Pins that the copy a killed failover left on the new node
 * (`<owner>.db.moving`) is made again rather than refused: VACUUM INTO does not write over a file
 * that exists, so every later failover of the node failed with "output file already exists" and
 * its owners stayed frozen.
 */

afterAll(cleanup)

test('a failover finds the partial copy of a killed one and makes it again', async () => {
  const { root, dataDir, clusterFile, envOf, replica: replicaOf } = routerlessCluster('pfin-failover-again-', ['a', 'b'], { replicated: ['a'] })
  const replica = replicaOf('a')
  const made = await adminJson(envOf('a'), 'owner', 'create', '--name', 'Lost', '--currency', 'EUR', '--with-key')
  const owner = made.id as string
  const key = (made.key as { key: string }).key
  await adminJson(envOf('b'), 'owner', 'create', '--name', 'Other', '--currency', 'EUR')
  await adminJson(processEnv(root), 'cluster', 'place', owner, '--on', 'a', '--cluster', clusterFile)
  const nodeA = await startGroupServer(envOf('a', { CLUSTER_REPLICA: replica }))
  const body = '{"name":"Main","type":"bank","balance":1,"currency":"EUR"}'
  expect((await call(nodeA.url, 'POST', '/v1/accounts', { key, body, idempotencyKey: 'k1' })).status).toBe(201)
  // Litestream ships within its 1 s interval; then node a and its Litestream are killed.
  const shipped = join(root, 'replica-a', 'owners', owner)
  for (let i = 0; i < 100 && !(existsSync(shipped) && readdirSync(shipped, { recursive: true }).some((f) => String(f).endsWith('.lz4'))); i++)
    await Bun.sleep(50)
  await Bun.sleep(1500)
  process.kill(-nodeA.pgid, 'SIGKILL')
  expect(await groupGone(nodeA.pgid, 5000)).toBe(true)

  // What a failover killed after its copy leaves on node b.
  mkdirSync(join(dataDir('b'), 'tenants'), { recursive: true })
  writeFileSync(join(dataDir('b'), 'tenants', `${owner}.db.moving`), 'half a copy')

  const done = await adminJson(processEnv(root), 'cluster', 'failover', 'a', '--cluster', clusterFile)
  expect(done.owners).toEqual([{ owner, to: 'b', epoch: 2 }])
  const file = join(dataDir('b'), 'tenants', `${owner}.db`)
  expect(integrity(file)).toBe('ok')
  expect(withDb(file, (db) => db.query('SELECT name FROM accounts').all(), { readonly: true })).toEqual([{ name: 'Main' }])
  expect(existsSync(`${file}.moving`)).toBe(false)
}, 30_000)
