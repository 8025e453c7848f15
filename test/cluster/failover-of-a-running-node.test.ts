import { afterAll, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { routerlessCluster } from '../support/cluster.ts'
import { admin, adminJson, call, cleanup, processEnv, startServer } from '../support/processes.ts'

/**
 * `pfin cluster failover NODE` of a node that is still running (CONTRACT §31): a confused
 * operator's failover would restore the node's owners from a replica that lacks their newest
 * writes and mark the node lost while it held them. Pins that the tool sees the node acknowledge
 * the freeze, puts the directory back as it was (owners unfrozen, the node not lost), refuses with
 * exit 1 and a reason, and the node goes on serving its owner; no copy is made on another node.
 */

afterAll(cleanup)

test('a failover of a node that acknowledges the freeze is refused, and the directory is put back', async () => {
  const { root, directory, dataDir, clusterFile, envOf } = routerlessCluster('pfin-failover-running-', ['a', 'b'], { replicated: ['a'] })
  const made = await adminJson(envOf('a'), 'owner', 'create', '--name', 'Stays', '--currency', 'EUR', '--with-key')
  const owner = made.id as string
  const key = (made.key as { key: string }).key
  await adminJson(envOf('b'), 'owner', 'create', '--name', 'Other', '--currency', 'EUR')
  await adminJson(processEnv(root), 'cluster', 'place', owner, '--on', 'a', '--cluster', clusterFile)
  const nodeA = await startServer(envOf('a'))
  expect((await call(nodeA.url, 'GET', '/v1/accounts', { key })).status).toBe(200)

  const failed = await admin(processEnv(root), 'cluster', 'failover', 'a', '--cluster', clusterFile)
  expect({ code: failed.code, stderr: failed.stderr }).toEqual({ code: 1, stderr: expect.stringContaining('node a is running') })
  const after = JSON.parse(readFileSync(directory, 'utf8'))
  expect(after.owners).toEqual({ [owner]: { node: 'a', epoch: 1 } })
  expect(after.lost).toBeUndefined()
  expect(existsSync(join(dataDir('b'), 'tenants', `${owner}.db`))).toBe(false)
  let served = await call(nodeA.url, 'GET', '/v1/accounts', { key })
  for (let i = 0; i < 40 && served.status !== 200; i++) served = await call(nodeA.url, 'GET', '/v1/accounts', { key })
  expect(served.status).toBe(200)
}, 30_000)
