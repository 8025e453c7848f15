import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { fixture } from '../imports/helpers.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, type Json, listAll } from '../transactions/helpers.ts'

/**
 * CONTRACT §17, §24: MCP's import_file runs the import route: a dry run that reads the file and
 * writes nothing, with a confirmToken only when every row passes and the dates are not ambiguous;
 * the import itself only with that token, for those very arguments, once.
 */

let server: TestServer
let client: Client
let key: string
let account: string
beforeAll(async () => {
  server = await startUnthrottledServer()
  const owner = await server.owner({ country: 'DE' })
  key = owner.key
  account = (await createAccount(server, key, { balance: 0, accountNumber: 'DE89370400440532013000' })).id
  client = new Client({ name: 'pfin-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
})
afterAll(async () => {
  await client.close()
  await server.stop()
})

async function call(args: Record<string, unknown>) {
  const result = (await client.callTool({ name: 'import_file', arguments: args })) as {
    isError?: boolean
    structuredContent?: Json
    content: { text: string }[]
  }
  return { isError: result.isError === true, structured: result.structuredContent as Json, text: result.content[0]?.text ?? '' }
}

test('import_file: a dry run reads the file and writes nothing; its token imports exactly that file, once', async () => {
  const contentBase64 = Buffer.from(fixture('camt053-batch.xml')).toString('base64')
  const dry = await call({ accountId: account, contentBase64 })
  expect(dry.isError).toBe(false)
  expect(dry.text.split('\n')[0]).toStartWith('Dry run only, nothing written.')
  expect(dry.structured.data.summary).toMatchObject({ created: 3, failed: 0 })
  expect(dry.structured.data.items[0].data).toMatchObject({ amount: 0.29, payeeName: 'Commerzbank AG' })
  expect(dry.structured.confirmToken).toMatch(/^cfm_/)
  expect(await listAll(server, key, `?accountId=${account}`)).toEqual([])

  // The token is for this file and these options only.
  const other = await call({ accountId: account, contentBase64, ifDeleted: 'recreate', confirmToken: dry.structured.confirmToken })
  expect([other.isError, other.structured.code]).toEqual([true, 'confirmation_required'])

  const done = await call({ accountId: account, contentBase64, confirmToken: dry.structured.confirmToken })
  expect(done.isError).toBe(false)
  expect(done.structured.data.summary).toMatchObject({ created: 3 })
  expect(await listAll(server, key, `?accountId=${account}`)).toHaveLength(3)
  // The import changed the ledger: the token acts once.
  const twice = await call({ accountId: account, contentBase64, confirmToken: dry.structured.confirmToken })
  expect([twice.isError, twice.structured.code]).toEqual([true, 'confirmation_required'])
})

test('import_file: ambiguous dates or failing rows get no token, and say what to do', async () => {
  const ambiguous = await call({ accountId: account, content: 'Datum;Betrag;Text\n01.02.2026;-1,00;A\n03.04.2026;-2,00;B\n' })
  expect(ambiguous.structured.confirmToken).toBeUndefined()
  expect(ambiguous.text).toContain('send dateFormat')
  const failing = await call({ accountId: account, content: 'Date;Amount;Text\n2026-01-01;abc;A\n' })
  expect(failing.structured.confirmToken).toBeUndefined()
  expect(failing.structured.data.summary.failed).toBe(1)
  const unreadable = await call({ accountId: account, content: 'nothing here' })
  expect([unreadable.isError, unreadable.structured.code]).toEqual([true, 'rule_violation'])
})
