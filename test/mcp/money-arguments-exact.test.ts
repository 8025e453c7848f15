import { expect, test } from 'bun:test'
import { mcpAnswerText, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * Money sent to an MCP write tool is read from its digits, as over REST: an 18-digit amount or
 * balance is stored exactly, and nine decimal places are 422 validation_failed, never rounded.
 *
 * The tools rebuild the arguments into a new body object (tools.ts `bodyOf`); without the
 * numbers' source texts the route would read each double's shortest form
 * (9223372036.12345678 → 9223372036.123457) and accept nine decimals by rounding them.
 * CONTRACT §4: "Money is exact … More decimals … → 422 validation_failed"; §17: each tool "is
 * one REST operation underneath, with the same rules and errors".
 */

const fixture = unthrottledServerWithKey()

/** One raw JSON-RPC tools/call, the body text exactly as given, and its JSON-RPC result. */
async function callTool(text: string): Promise<{ isError?: boolean; structuredContent?: { code?: string; data?: { id: string } } }> {
  return JSON.parse(await mcpAnswerText(fixture.server, fixture.key, text)).result
}

const upsertText = (accountId: string, externalId: string, amountText: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upsert_transaction","arguments":{"externalId":"${externalId}","accountId":"${accountId}","amount":${amountText},"date":"2026-01-02"}}}`

/** The stored amount as the REST list writes it (its JSON text, not a double). */
async function storedAmountText(externalId: string): Promise<string | undefined> {
  const res = await fixture.server.request('GET', `/v1/transactions?externalId=${externalId}`, { key: fixture.key })
  expect(res.status).toBe(200)
  return /"amount":(-?[0-9.eE+-]+)/.exec(res.text)?.[1]
}

async function newAccount(): Promise<string> {
  const res = await fixture.server.request('POST', '/v1/accounts', { key: fixture.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })
  expect(res.status).toBe(201)
  return res.json.data.id
}

test('upsert_transaction stores an 18-digit amount exactly, as REST does', async () => {
  const accountId = await newAccount()
  // REST first: the value is valid and kept exactly.
  const rest = await fixture.server.request('POST', '/v1/transactions/upsert', {
    key: fixture.key,
    body: `{"externalId":"rest-exact","accountId":"${accountId}","amount":9223372036.12345678,"date":"2026-01-02"}`,
  })
  expect(rest.status).toBe(201)
  expect(await storedAmountText('rest-exact')).toBe('9223372036.12345678')

  const result = await callTool(upsertText(accountId, 'mcp-exact', '9223372036.12345678'))
  expect(result.isError).toBeUndefined()
  // The failure this catches: 9223372036.123457 (the double's shortest form), 0.00345678 lost.
  expect(await storedAmountText('mcp-exact')).toBe('9223372036.12345678')
})

test('upsert_transaction refuses an amount with nine decimal places, as REST does, instead of rounding it', async () => {
  const accountId = await newAccount()
  const rest = await fixture.server.request('POST', '/v1/transactions/upsert', {
    key: fixture.key,
    body: `{"externalId":"rest-nine","accountId":"${accountId}","amount":9223372036.123456789,"date":"2026-01-02"}`,
  })
  expect(rest.status).toBe(422)
  expect(rest.json.code).toBe('validation_failed')

  const result = await callTool(upsertText(accountId, 'mcp-nine', '9223372036.123456789'))
  // The failure this catches: created, with amount 9223372036.123457.
  expect(result.isError).toBe(true)
  expect(result.structuredContent?.code).toBe('validation_failed')
  expect(await storedAmountText('mcp-nine')).toBeUndefined()
})

test('upsert_account sets an 18-digit balance exactly, as REST does', async () => {
  const text =
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"upsert_account","arguments":{"externalId":"mcp-acct","name":"Savings","type":"bank","balance":9223372036.12345678,"currency":"EUR"}}}'
  const result = await callTool(text)
  expect(result.isError).toBeUndefined()
  const res = await fixture.server.request('GET', `/v1/accounts/${result.structuredContent?.data?.id}`, { key: fixture.key })
  expect(res.status).toBe(200)
  // The failure this catches: 9223372036.123457.
  expect(/"balance":(-?[0-9.eE+-]+)/.exec(res.text)?.[1]).toBe('9223372036.12345678')
})

test('update_transaction changes an amount to an 18-digit value exactly (the id beside the body fields)', async () => {
  const accountId = await newAccount()
  const created = await callTool(upsertText(accountId, 'mcp-update', '1'))
  const id = created.structuredContent?.data?.id
  const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"update_transaction","arguments":{"transactionId":"${id}","amount":923372036.87654321}}}`
  const result = await callTool(text)
  expect(result.isError).toBeUndefined()
  expect(await storedAmountText('mcp-update')).toBe('923372036.87654321')
})
