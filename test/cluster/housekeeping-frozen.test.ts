import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { readDirectory, writeDirectory } from '../../src/platform/cluster.ts'
import { housekeep } from '../../src/server.ts'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * Pins: housekeeping leaves an owner being moved alone (CONTRACT §31). Its round wrote to every
 * open owner's file, a frozen one included: a move whose copy it raced then failed its
 * comparison with the original ("the copy differs") and had to be run again.
 */

let server: TestServer
let ownerId: string
const directory = join(tempDir('pfin-housekeeping-frozen-'), 'directory.json')

beforeAll(async () => {
  server = await startTestServer({ env: { CLUSTER_NODE: 'a', CLUSTER_DIRECTORY: directory } })
  ownerId = (await server.owner({ name: 'Moving' })).id
})
afterAll(() => server.stop())

/** Places the owner on node a, frozen or not, and waits until the node has read it. */
async function place(frozen: boolean): Promise<void> {
  const current = readDirectory(directory)
  writeDirectory(directory, { version: current.version + 1, owners: { [ownerId]: { node: 'a', epoch: 1, ...(frozen ? { frozen } : {}) } } })
  const cluster = server.platform.cluster
  for (let i = 0; i < 200 && cluster?.serves(ownerId) !== !frozen; i++) await Bun.sleep(10)
  expect(cluster?.serves(ownerId)).toBe(!frozen)
}

/** The owner's free pages, read by a connection of its own. */
function freePages(): number {
  const db = new Database(join(server.dataDir, 'tenants', `${ownerId}.db`), { readonly: true })
  try {
    return Number(db.query<{ freelist_count: number }, []>('PRAGMA freelist_count').get()?.freelist_count)
  } finally {
    db.close()
  }
}

test('a housekeeping round writes nothing to an owner being moved, and tends it again once it is not', async () => {
  await place(false)
  // Space to give back in the owner's open file: a table filled and dropped.
  const tenant = server.platform.tenants.get(ownerId)
  tenant.write(() => {
    tenant.sqlite.run('CREATE TABLE scratch (x)')
    tenant.sqlite.run('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) INSERT INTO scratch SELECT hex(randomblob(500)) FROM n')
    tenant.sqlite.run('DROP TABLE scratch')
  })
  tenant.foldLog()
  const free = freePages()
  expect(free).toBeGreaterThan(10)

  await place(true)
  housekeep(server.platform)
  tenant.foldLog()
  expect(freePages()).toBe(free)

  await place(false)
  housekeep(server.platform)
  tenant.foldLog()
  expect(freePages()).toBeLessThan(free)
})
