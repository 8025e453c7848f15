import { afterAll, beforeAll, expect, test } from 'bun:test'
import { expectProblem, startTestServer, type TestServer } from '../support/harness.ts'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.stop())

test('GET /v1/me answers the owner behind the key', async () => {
  const owner = await server.owner({ name: 'Ana', country: 'PT' })
  const res = await server.request('GET', '/v1/me', { key: owner.key })
  expect(res.status).toBe(200)
  expect(res.json.data).toMatchObject({ id: owner.id, name: 'Ana', country: 'PT', tier: 'pro', accessMode: 'self' })
})

test('no key is 401 problem+json', async () => {
  expectProblem(await server.request('GET', '/v1/me'), 401, 'unauthorized')
})
