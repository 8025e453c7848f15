import { expect, test } from 'bun:test'
import { mcpAnswerText, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * MCP tool results show money exactly as REST writes it, in the text and in the structured
 * content alike (list_accounts, get_transaction).
 *
 * Parsing the route's JSON body into doubles and serializing it again would show
 * 9223372036.12345678 as 9223372036.123457, and an agent that reconciles from what it read
 * (upsert_account sets `balance`) would write the rounded value back. CONTRACT §4: "Money is
 * exact"; §17: results "carry the REST `data`".
 */

const fixture = unthrottledServerWithKey()

/** One JSON-RPC tools/call and the text of its JSON-RPC answer, as sent on the wire. */
const callToolText = (name: string, args: Record<string, unknown>) =>
  mcpAnswerText(fixture.server, fixture.key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }))

/** Every money value of `field` the message carries, structured content and (escaped) text alike. */
const valuesOf = (message: string, field: string) => [...message.matchAll(new RegExp(`\\\\?"${field}\\\\?":(-?[0-9.eE+-]+)`, 'g'))].map((m) => m[1])

test('list_accounts shows a balance as REST does, to the last decimal', async () => {
  const created = await fixture.server.request('POST', '/v1/accounts', {
    key: fixture.key,
    body: '{"name":"Brokerage","type":"investment","balance":9223372036.12345678,"currency":"EUR"}',
  })
  expect(created.status).toBe(201)
  expect(/"balance":([0-9.]+)/.exec(created.text)?.[1]).toBe('9223372036.12345678')

  const values = valuesOf(await callToolText('list_accounts', {}), 'balance')
  expect(values.length).toBeGreaterThan(0)
  // The failure this catches: every one is 9223372036.123457.
  for (const value of values) expect(value).toBe('9223372036.12345678')
})

test('get_transaction shows an amount as REST does, to the last decimal', async () => {
  const account = await fixture.server.request('POST', '/v1/accounts', { key: fixture.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })
  const txn = await fixture.server.request('POST', '/v1/transactions', {
    key: fixture.key,
    body: `{"accountId":"${account.json.data.id}","amount":923372036.87654321,"date":"2026-01-02"}`,
  })
  expect(txn.status).toBe(201)
  expect(/"amount":([0-9.]+)/.exec(txn.text)?.[1]).toBe('923372036.87654321')

  const values = valuesOf(await callToolText('get_transaction', { transactionId: txn.json.data.id }), 'amount')
  expect(values.length).toBeGreaterThan(0)
  for (const value of values) expect(value).toBe('923372036.87654321')
})
