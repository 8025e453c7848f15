import { expect, test } from 'bun:test'
import { expectProblem, sendRaw, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A JSON-RPC batch whose tools/call requests share an `id` is refused whole before any of it
 * runs, so no amount in it is stored rounded.
 *
 * /mcp keeps each call's decoded `arguments` by JSON-RPC id (endpoint.ts `decodedArgumentsOf`)
 * to hand the route the numbers' source texts. For an id seen twice it cannot tell the calls
 * apart, and the SDK's own copy of the arguments holds doubles: `9223372036.12345678` would be
 * stored as 9223372036.123457 (and the SDK answers only one of the two, so the agent would not
 * be told). CONTRACT §4: "Money is exact"; §17: money over MCP is as exact as over REST, both
 * ways. A batch the server cannot attribute may be refused, never rounded.
 */

const fixture = unthrottledServerWithKey()

test('a batch whose tools/calls share an id stores no rounded amount', async () => {
  const created = await fixture.server.request('POST', '/v1/accounts', { key: fixture.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })
  expect(created.status).toBe(201)
  const accountId = created.json.data.id
  const upsert = (externalId: string, amountText: string) =>
    `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"upsert_transaction","arguments":{"externalId":"${externalId}","accountId":"${accountId}","amount":${amountText},"date":"2026-01-02"}}}`
  const res = await sendRaw(fixture.server.url, '/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${fixture.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: `[${upsert('dup-other', '1')},${upsert('dup-exact', '9223372036.12345678')}]`,
  })
  // The fix refuses such a batch whole, before any of it runs: neither call is stored.
  expect(expectProblem(res, 422, 'validation_failed').detail).toContain('JSON-RPC id 5 is used by more than one request')
  for (const externalId of ['dup-exact', 'dup-other']) {
    const stored = await fixture.server.request('GET', `/v1/transactions?externalId=${externalId}`, { key: fixture.key })
    // The failure this catches: both stored, dup-exact with amount 9223372036.123457.
    expect(stored.json.data).toEqual([])
  }
})
