import { expect, test } from 'bun:test'
import { unthrottledServerWithKey } from '../support/harness.ts'
import { BRIDGE_INITIALIZE, throughBridge } from '../support/processes.ts'

/**
 * `pfin mcp`, the stdio bridge for desktop agents, passes each answer through with its money as
 * the server wrote it: an 18-digit balance reaches the agent exactly.
 *
 * Parsing an answer into doubles and writing it out again would round 9223372036.12345678 to
 * 9223372036.123457, although /mcp itself writes it exactly. CONTRACT §4: money is exact; §17:
 * tool results carry the REST `data`.
 */

const fixture = unthrottledServerWithKey()

test('an answer passes through the stdio bridge with its money as the server wrote it', async () => {
  const created = await fixture.server.request('POST', '/v1/accounts', {
    key: fixture.key,
    body: '{"name":"Brokerage","type":"investment","balance":9223372036.12345678,"currency":"EUR"}',
  })
  expect(created.status).toBe(201)

  const { code, lines } = await throughBridge({ PFIN_URL: fixture.server.url, PFIN_API_KEY: fixture.key }, [
    JSON.stringify(BRIDGE_INITIALIZE),
    JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_accounts', arguments: {} } }),
  ])
  expect(code).toBe(0)
  const answer = lines.find((line) => line.includes('"id":2'))
  expect(answer).toBeDefined()
  const balances = [...(answer as string).matchAll(/\\?"balance\\?":(-?[0-9.eE+-]+)/g)].map((match) => match[1])
  expect(balances.length).toBeGreaterThan(0)
  // The failure this catches: 9223372036.123457 in the text and in the structured content.
  for (const balance of balances) expect(balance).toBe('9223372036.12345678')
})
