import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { expectProblem, startTestServer, type TestServer, tempDir } from '../support/harness.ts'

/**
 * Sign-in in a cluster (CONTRACT §31): a router cannot tell whose node a sign-in belongs to before
 * it happens, and each node's control.db holds only its own owners' logins and grants, so a
 * cluster node serves no sign-in or OAuth route even with PUBLIC_URL set: 404 saying why, and its
 * 401s name no OAuth metadata. The same routes on a single server answer (the contrast pins that
 * the cluster, not a missing PUBLIC_URL, turned them off).
 */

const dir = tempDir()
let node: TestServer
let single: TestServer
beforeAll(async () => {
  node = await startTestServer({ dataDir: join(dir, 'node'), env: { CLUSTER_NODE: 'node-a', CLUSTER_DIRECTORY: join(dir, 'directory.json') } })
  single = await startTestServer({ dataDir: join(dir, 'single') })
})
afterAll(async () => {
  await node?.stop()
  await single?.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('a cluster node answers the sign-in page, the OAuth endpoints and their metadata with 404, saying to use a key', async () => {
  expect(node.platform.config.publicUrl).not.toBeNull()
  for (const [method, path] of [
    ['GET', '/signin'],
    ['GET', '/oauth/authorize?client_id=x'],
    ['POST', '/oauth/token'],
    ['POST', '/oauth/register'],
    ['GET', '/.well-known/oauth-authorization-server'],
    ['GET', '/.well-known/oauth-protected-resource/v1'],
  ] as const) {
    const res = await node.request(method, path)
    expectProblem(res, 404, 'route_not_found')
    expect(res.json.detail).toContain('not by a cluster node')
    const there = await single.request(method, path)
    expect([method, path, there.status]).not.toEqual([method, path, 404])
  }
  const unauthenticated = await node.request('GET', '/v1/transactions')
  expect(unauthenticated.status).toBe(401)
  expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer')
  expect((await single.request('GET', '/v1/transactions')).headers.get('www-authenticate')).toContain('resource_metadata=')
})
