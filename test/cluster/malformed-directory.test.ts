import { afterAll, expect, test } from 'bun:test'
import { readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ACK_FILE } from '../../src/platform/cluster.ts'
import { adminJson, call, cleanup, processEnv, startServer, tempDir } from '../support/processes.ts'

/**
 * A node given a directory whose placements are not whole (CONTRACT §31: the directory is written
 * by `pfin cluster`, but copied to nodes and so open to hand edits and truncated copies). Pins
 * that the node keeps its last good directory and says so in its log: it took such a file, and its
 * acknowledgement of a freeze then failed on the entry (`TypeError: null is not an object`), so
 * a move waited 10 s and gave up, and with Litestream its list of owners failed the same way.
 */

afterAll(cleanup)

test('a directory with a placement that is not {node, epoch} is not taken; the next good one is, and acknowledged', async () => {
  const root = tempDir('pfin-bad-directory-')
  const directory = join(root, 'directory.json')
  const dataDir = join(root, 'data-a')
  const write = (content: unknown) => {
    writeFileSync(`${directory}.tmp`, JSON.stringify(content))
    renameSync(`${directory}.tmp`, directory)
  }
  const made = await adminJson(processEnv(dataDir), 'owner', 'create', '--name', 'Here', '--currency', 'EUR', '--with-key')
  const owner = made.id as string
  const key = (made.key as { key: string }).key
  write({ version: 1, owners: { [owner]: { node: 'a', epoch: 1 } } })
  const node = await startServer(processEnv(dataDir, { CLUSTER_NODE: 'a', CLUSTER_DIRECTORY: directory }))
  expect((await call(node.url, 'GET', '/v1/me', { key })).status).toBe(200)

  const other = `own_${'1'.repeat(32)}`
  const broken = [
    { version: 2, owners: { [owner]: { node: 'a', epoch: 1, frozen: true }, [other]: null } },
    { version: 3, owners: { [owner]: { node: 'a', epoch: 1, frozen: true }, [other]: { epoch: 1 } } },
    { version: 4, owners: { [owner]: { node: 'a', epoch: '1', frozen: true } } },
    { version: 5, owners: [] },
    { version: 6, owners: { [owner]: { node: 'a', epoch: 1, frozen: true } }, lost: 'b' },
  ]
  for (const content of broken) {
    write(content)
    await Bun.sleep(150)
    // The last good directory still holds: the owner is served, not frozen.
    expect({ content, status: (await call(node.url, 'GET', '/v1/me', { key })).status }).toEqual({ content, status: 200 })
  }
  expect(node.stderr()).toContain('could not be read')
  expect(node.stderr()).not.toContain('TypeError')

  write({ version: 7, owners: { [owner]: { node: 'a', epoch: 1, frozen: true } } })
  let ack = 0
  for (let i = 0; i < 100 && ack < 7; i++) {
    await Bun.sleep(20)
    ack = (JSON.parse(readFileSync(join(dataDir, ACK_FILE), 'utf8')) as { version: number }).version
  }
  expect(ack).toBe(7)
  expect((await call(node.url, 'GET', '/v1/me', { key })).status).toBe(503)
}, 30_000)
