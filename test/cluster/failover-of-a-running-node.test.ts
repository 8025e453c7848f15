import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { clusterFileWithoutRouter } from '../support/cluster.ts'
import { admin, adminJson, call, cleanup, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * `pfin cluster failover NODE` of a node that is still running (CONTRACT §31): a confused
 * operator's failover would restore the node's owners from a replica that lacks their newest
 * writes and mark the node lost while it held them. Pins that the tool sees the node acknowledge
 * the freeze, puts the directory back as it was (owners unfrozen, the node not lost), refuses with
 * exit 1 and a reason, and the node goes on serving its owner; no copy is made on another node.
 */

afterAll(cleanup)

test('a failover of a node that acknowledges the freeze is refused, and the directory is put back', async () => {
  const root = tempDir('pfin-failover-running-')
  const directory = join(root, 'directory.json')
  const dataDir = (node: string) => join(root, `data-${node}`)
  for (const node of ['a', 'b']) mkdirSync(dataDir(node))
  const clusterFile = clusterFileWithoutRouter(root, directory, { a: dataDir('a'), b: dataDir('b') })
  // Node a names a replica in the cluster file (what failover restores from).
  const spec = JSON.parse(readFileSync(clusterFile, 'utf8'))
  spec.nodes.a.replica = `file://${join(root, 'replica-a')}`
  writeFileSync(clusterFile, JSON.stringify(spec))
  const envOf = (node: string) => processEnv(dataDir(node), { CLUSTER_NODE: node, CLUSTER_DIRECTORY: directory, LOG_FORMAT: 'off' })
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
