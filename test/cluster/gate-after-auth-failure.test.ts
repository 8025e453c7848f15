import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ACK_FILE } from '../../src/platform/cluster.ts'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * A request whose authentication fails with an error (control.db not readable as expected) on a
 * cluster node (CONTRACT §31). The gate counts a request as under way for the owner its key names
 * before the key is checked; pins that such a failure ends that count like any other answer:
 * the error escaped before the pipeline's try, the count stayed up, and the node never
 * acknowledged a freeze of that owner (every move of it gave up after 10 s).
 */

const dir = tempDir()
const directory = join(dir, 'directory.json')
let server: TestServer
let owner: { id: string; key: string }

function place(frozen: boolean, version: number): void {
  writeFileSync(`${directory}.tmp`, JSON.stringify({ version, owners: { [owner.id]: { node: 'a', epoch: 1, frozen } } }))
  renameSync(`${directory}.tmp`, directory)
}

beforeAll(async () => {
  server = await startTestServer({ env: { CLUSTER_NODE: 'a', CLUSTER_DIRECTORY: directory } })
  owner = await server.owner({ name: 'Counted' })
  place(false, 1)
  await Bun.sleep(100)
})
afterAll(() => server.stop())

test('an error while checking the key ends the request for the gate too: a freeze is still acknowledged', async () => {
  expect((await server.request('GET', '/v1/me', { key: owner.key })).status).toBe(200)
  // Another process breaks control.db under the server (a commit: the cached key is read again).
  const control = new Database(join(server.dataDir, 'control.db'))
  control.run('ALTER TABLE api_keys RENAME TO api_keys_elsewhere')
  const failed = await server.request('GET', '/v1/me', { key: owner.key })
  expect(failed.status).toBeGreaterThanOrEqual(500)
  expect(failed.headers.get('content-type')).toContain('application/problem+json')
  control.run('ALTER TABLE api_keys_elsewhere RENAME TO api_keys')
  control.close()

  place(true, 2)
  let acknowledged = 0
  for (let i = 0; i < 50 && acknowledged < 2; i++) {
    await Bun.sleep(20)
    acknowledged = (JSON.parse(readFileSync(join(server.dataDir, ACK_FILE), 'utf8')) as { version: number }).version
  }
  expect(acknowledged).toBe(2)
})
