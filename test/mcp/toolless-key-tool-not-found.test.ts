import { beforeAll, expect, test } from 'bun:test'
import { mcpAnswerText, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A key whose scopes admit no tool (`me:read` alone, say for a profile widget) lists no tools
 * (an empty list, not an error) and gets -32602 "tool not found" for a tool call, as every other
 * key does for a tool it may not use.
 *
 * With no tool registered, the SDK would answer every tools method -32601 "Method not found".
 * CONTRACT §17: tools are listed only when the key may call them, and an unlisted tool is the MCP
 * error `-32602` (tool not found).
 */

const fixture = unthrottledServerWithKey()
let meOnlyKey: string

beforeAll(async () => {
  const ownerId = (await fixture.server.request('GET', '/v1/me', { key: fixture.key })).json.data.id
  meOnlyKey = (await fixture.server.key(ownerId, { scopes: ['me:read'] })).key
})

async function answer(key: string, message: unknown) {
  return JSON.parse(await mcpAnswerText(fixture.server, key, JSON.stringify(message)))
}

test('for comparison: a read-only key calling a write tool gets -32602', async () => {
  const ownerId = (await fixture.server.request('GET', '/v1/me', { key: fixture.key })).json.data.id
  const readOnly = (await fixture.server.key(ownerId, { scopes: ['accounts:read'] })).key
  const reply = await answer(readOnly, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'upsert_account', arguments: {} } })
  expect(reply.error?.code).toBe(-32602)
})

test('a me:read-only key calling a tool gets -32602 tool not found', async () => {
  const reply = await answer(meOnlyKey, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_accounts', arguments: {} } })
  // The failure this catches: -32601 Method not found.
  expect(reply.error?.code).toBe(-32602)
})

test('a me:read-only key lists no tools (an empty list, not an error)', async () => {
  const reply = await answer(meOnlyKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
  // The failure this catches: {"error":{"code":-32601,"message":"Method not found"}}.
  expect(reply.error).toBeUndefined()
  expect(reply.result?.tools).toEqual([])
})
