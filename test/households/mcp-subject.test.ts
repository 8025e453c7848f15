import { afterAll, beforeAll, expect, test } from 'bun:test'
import { newId } from '../../src/db/ids.ts'
import { SCOPES, VIEWER_SCOPES } from '../../src/platform/scopes.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { grantNow } from '../support/households.ts'
import { BRIDGE_INITIALIZE, throughBridge } from '../support/processes.ts'

/**
 * MCP honours Pfin-Subject (CONTRACT §17, §30): tools act on the subject's ledger, with the
 * grant's scopes (a viewer grant lists no write tool), and the stdio bridge sends PFIN_SUBJECT.
 */

let server: TestServer
let ana: { id: string; key: string }
let bea: { id: string; key: string }

beforeAll(async () => {
  server = await startUnthrottledServer()
  ana = await server.owner({ name: 'Ana' })
  bea = await server.owner({ name: 'Bea', scopes: [...SCOPES] })
  await server.request('POST', '/v1/accounts', { key: ana.key, body: { name: 'Ana’s savings', type: 'bank', currency: 'EUR', balance: 5 } })
  grantNow(server.platform.control, ana.id, bea.id, VIEWER_SCOPES)
})
afterAll(() => server.stop())

const rpc = (body: unknown, subject?: string) =>
  fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bea.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(subject ? { 'pfin-subject': subject } : {}),
    },
    body: JSON.stringify(body),
  })

test("/mcp with Pfin-Subject: the subject's accounts, read-only tools only; without a grant, 404", async () => {
  const listed = (await (await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, ana.id)).json()) as { result: { tools: { name: string }[] } }
  const names: string[] = listed.result.tools.map((tool: { name: string }) => tool.name)
  expect(names).toContain('list_accounts')
  expect(names).not.toContain('create_transaction')
  const called = await (await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_accounts', arguments: {} } }, ana.id)).text()
  expect(called).toContain('Ana’s savings')
  const own = await (await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_accounts', arguments: {} } })).text()
  expect(own).not.toContain('Ana’s savings')
  const refused = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/list' }, newId('own'))
  expect(refused.status).toBe(404)
})

test('the stdio bridge sends PFIN_SUBJECT', async () => {
  const { code, lines } = await throughBridge({ PFIN_URL: server.url, PFIN_API_KEY: bea.key, PFIN_SUBJECT: ana.id }, [
    JSON.stringify(BRIDGE_INITIALIZE),
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_accounts', arguments: {} } }),
  ])
  expect(code).toBe(0)
  const answer = lines.find((line) => line.includes('"id":2'))
  expect(answer).toContain('Ana’s savings')
})
