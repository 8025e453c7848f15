import { beforeAll, expect, test } from 'bun:test'
import { mcpAnswerText, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * Campaign 5 finding (2026-11-26): a key whose scopes admit no tool (`me:read` alone — a valid
 * key, e.g. for a profile widget) gets an MCP server with no tools registered, and the SDK then
 * answers every tools method with -32601 "Method not found": `tools/list` is an error instead
 * of an empty list, and `tools/call` of a tool the key may not use is -32601 instead of the
 * documented -32602 "tool not found" that every other key gets for an unlisted tool.
 *
 * README "Agents (MCP)", "Listed by scope": "A key sees only the tools whose routes it may call
 * […]. Calling an unlisted tool is an MCP error (`-32602`, tool not found)." CONTRACT §17:
 * "Tools, listed only when the key holds their scopes".
 *
 * Before a fix: `tools/list` → `{"error":{"code":-32601,"message":"Method not found"}}`;
 * `tools/call` `list_accounts` → the same -32601.
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
  // Before the fix: -32601 Method not found.
  expect(reply.error?.code).toBe(-32602)
})

test('a me:read-only key lists no tools (an empty list, not an error)', async () => {
  const reply = await answer(meOnlyKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' })
  // Before the fix: {"error":{"code":-32601,"message":"Method not found"}}.
  expect(reply.error).toBeUndefined()
  expect(reply.result?.tools).toEqual([])
})
