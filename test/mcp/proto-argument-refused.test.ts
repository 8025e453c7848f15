import { expect, test } from 'bun:test'
import { mcpAnswerText, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A tool argument named `__proto__` is refused as validation_failed, as the same name is over
 * REST (a query parameter or a body field), and the tool does not run.
 *
 * The MCP SDK copies `arguments` into a new object, where the key `__proto__` becomes the copy's
 * prototype instead of an own property: a check for undeclared arguments that reads
 * `Object.keys` never sees it, and a tool that reads its filters through `args[name]` would
 * even apply what sits under it. docs/agents.md: an argument a tool does not declare is
 * `validation_failed`, so a misspelt filter never returns an unfiltered list. CONTRACT §17: each
 * tool "is one REST operation underneath, with the same rules and errors".
 */

const fixture = unthrottledServerWithKey()

async function callTool(name: string, argumentsText: string): Promise<{ isError?: boolean; structuredContent?: { code?: string; detail?: string } }> {
  const message = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${argumentsText}}}`
  return JSON.parse(await mcpAnswerText(fixture.server, fixture.key, message)).result
}

test('REST refuses __proto__ as a query parameter and as a body field', async () => {
  const query = await fixture.server.request('GET', '/v1/accounts?__proto__=x', { key: fixture.key })
  expect(query.status).toBe(422)
  expect(query.json.code).toBe('validation_failed')
  const body = await fixture.server.request('POST', '/v1/accounts/upsert', {
    key: fixture.key,
    body: '{"externalId":"rest-proto","name":"N","type":"bank","balance":0,"currency":"EUR","__proto__":{"x":1}}',
  })
  expect(body.status).toBe(422)
  expect(body.json.code).toBe('validation_failed')
})

test('list_accounts refuses an argument named __proto__', async () => {
  const result = await callTool('list_accounts', '{"__proto__":{}}')
  // The failure this catches: the account list (isError undefined).
  expect(result.isError).toBe(true)
  expect(result.structuredContent?.code).toBe('validation_failed')
  expect(result.structuredContent?.detail).toContain('__proto__')
})

test('upsert_account refuses an argument named __proto__ and creates nothing', async () => {
  const result = await callTool('upsert_account', '{"externalId":"mcp-proto","name":"N","type":"bank","balance":0,"currency":"EUR","__proto__":{"x":1}}')
  // The failure this catches: {operation: "created", …}.
  expect(result.isError).toBe(true)
  expect(result.structuredContent?.code).toBe('validation_failed')
  const accounts = await fixture.server.request('GET', '/v1/accounts', { key: fixture.key })
  expect(accounts.json.data.map((account: { externalId: string | null }) => account.externalId)).not.toContain('mcp-proto')
})
