import { expect, test } from 'bun:test'
import { expectProblem, sendRaw, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * Campaign 5 finding (2026-11-26): two tools/call requests in one JSON-RPC batch that share an
 * `id` both run, but their money is no longer read from the digits sent. /mcp keeps each call's
 * decoded `arguments` by JSON-RPC id (endpoint.ts `decodedArgumentsOf`) to hand the route the
 * numbers' texts; for an id seen twice it keeps neither, and the tool falls back to the SDK's
 * copy, whose numbers are doubles. So `upsert_transaction` with `amount: 9223372036.12345678`
 * stores 9223372036.123457 — over REST, and over /mcp in a message of its own, it is stored
 * exactly. (The SDK also answers only one of the two, so the agent is not told.)
 *
 * CONTRACT §4: "Money is exact." README "Agents (MCP)": "Money is as exact as over REST both
 * ways: an amount is read from the digits the agent sent (`9223372036.12345678` is stored as
 * such, nine decimals are `validation_failed`)". A batch the server runs must run by the same
 * rules; one it cannot attribute may be refused, but never rounded.
 *
 * Before a fix: the transaction `dup-exact` exists with amount 9223372036.123457.
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
    // Before the fix: both stored, dup-exact with amount 9223372036.123457.
    expect(stored.json.data).toEqual([])
  }
})
