import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SCOPES, VIEWER_SCOPES } from '../../src/platform/scopes.ts'
import { expectProblem, startTestServer, type TestServer, tempDir } from '../support/harness.ts'
import { grantNow } from '../support/households.ts'

/**
 * A delegated request in a cluster (CONTRACT §30, §31): the router places a request by its key's
 * owner, so the node must also refuse a subject placed on another node (421) or moving (503),
 * rather than open whatever copy of that ledger it may hold. Pins the merge of households with
 * the cluster gate, which first checked the key's owner only.
 */

setDefaultTimeout(30_000)

const dir = tempDir()
const directoryPath = join(dir, 'directory.json')
let server: TestServer
type Who = { id: string; key: string }
let ana: Who
let bea: Who

/** Writes the directory as `pfin cluster` does (by rename), then waits for the node's next look. */
async function place(owners: Record<string, { node: string; frozen?: boolean }>, version: number) {
  const body = { version, owners: Object.fromEntries(Object.entries(owners).map(([id, p]) => [id, { epoch: 1, ...p }])) }
  writeFileSync(`${directoryPath}.tmp`, JSON.stringify(body))
  renameSync(`${directoryPath}.tmp`, directoryPath)
  await Bun.sleep(100)
}

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '10000000', CLUSTER_NODE: 'node-a', CLUSTER_DIRECTORY: directoryPath } })
  ana = await server.owner({ name: 'Ana', scopes: [...SCOPES] })
  bea = await server.owner({ name: 'Bea', scopes: [...SCOPES] })
  grantNow(server.platform.control, bea.id, ana.id, VIEWER_SCOPES)
})
afterAll(async () => {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('Pfin-Subject on a cluster node', () => {
  test('the subject on this node: served; on another node: 421; moving: 503 with Retry-After', async () => {
    const asAna = { key: ana.key, headers: { 'pfin-subject': bea.id } }
    await place({ [ana.id]: { node: 'node-a' }, [bea.id]: { node: 'node-a' } }, 1)
    const here = await server.request('GET', '/v1/me', asAna)
    expect(here.status).toBe(200)
    expect(here.json.data).toMatchObject({ id: bea.id, accessMode: 'delegated' })

    await place({ [ana.id]: { node: 'node-a' }, [bea.id]: { node: 'node-b' } }, 2)
    expect((await server.request('GET', '/v1/me', { key: ana.key })).status).toBe(200)
    expectProblem(await server.request('GET', '/v1/me', asAna), 421, 'misdirected_request')
    expectProblem(await server.request('GET', '/v1/accounts', asAna), 421, 'misdirected_request')

    await place({ [ana.id]: { node: 'node-a' }, [bea.id]: { node: 'node-a', frozen: true } }, 3)
    const moving = await server.request('GET', '/v1/me', asAna)
    expectProblem(moving, 503, 'owner_moving')
    expect(moving.headers.get('retry-after')).toBe('1')
  })
})
