import { expect, test } from 'bun:test'
import { expectProblem, sendRaw, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * POST /mcp refuses a body over 1 MiB with 413 payload_too_large, as the tool's REST route does;
 * only import_transactions keeps the batch route's 4 MiB.
 *
 * CONTRACT §6: "body larger than 1 MiB (4 MiB for `POST /v1/transactions/batch`) | 413 |
 * `payload_too_large`", and §17: each MCP tool "is one REST operation underneath, with the same
 * rules and errors".
 */

const fixture = unthrottledServerWithKey()
const TWO_MIB_OF_SPACES = ' '.repeat(2 * 1024 * 1024)

test('a 2 MiB POST /mcp body is refused with 413 payload_too_large, as its REST route refuses it, and nothing is written', async () => {
  const { server, key } = fixture
  const args = { externalId: 'big-body', name: 'Big body', type: 'bank', balance: 1, currency: 'EUR' }

  // The REST route: 413, as CONTRACT §6 says.
  const rest = await server.request('POST', '/v1/accounts/upsert', { key, body: JSON.stringify(args).replace('{', `{${TWO_MIB_OF_SPACES}`) })
  expectProblem(rest, 413, 'payload_too_large')

  // The same operation through MCP.
  const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'upsert_account', arguments: args } }
  const body = JSON.stringify(message).replace('{', `{${TWO_MIB_OF_SPACES}`)
  expect(body.length).toBeGreaterThan(1024 * 1024)
  const res = await sendRaw(server.url, '/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  })
  expect({ status: res.status, text: res.text.slice(0, 120) }).toEqual({ status: 413, text: expect.stringContaining('payload_too_large') })
  expectProblem(res, 413, 'payload_too_large')

  const accounts = await server.request('GET', '/v1/accounts', { key })
  expect(accounts.json.data).toEqual([])
})

test('import_transactions keeps the batch route’s 4 MiB: a 2 MiB call is read, a 5 MiB one is 413', async () => {
  const { server, key } = fixture
  const account = await server.request('POST', '/v1/accounts', { key, body: { name: 'Import', type: 'bank', balance: 0, currency: 'EUR' } })
  const items = [{ externalId: 'mcp-big-import', accountId: account.json.data.id, amount: 1, date: '2026-11-21' }]
  const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'import_transactions', arguments: { items } } }
  const send = (padding: string) =>
    sendRaw(server.url, '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(message).replace('{', `{${padding}`),
    })
  const dryRun = await send(TWO_MIB_OF_SPACES)
  expect(dryRun.status).toBe(200)
  expect(dryRun.text).toContain('confirmToken')
  expectProblem(await send(' '.repeat(5 * 1024 * 1024)), 413, 'payload_too_large')
})
