import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { entityVersion } from '../../src/db/tenant/change-log.ts'
import { CONFIRM_TTL_MS, issueConfirmToken } from '../../src/modules/mcp/confirm.ts'
import type { Scope } from '../../src/platform/scopes.ts'
import { expectProblem, RATE_LIMIT_HEADERS, sendRaw, startTestServer, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * MCP at POST /mcp (CONTRACT §17) through the official SDK client, over real HTTP against a
 * real server, and through the `pfin mcp` stdio bridge as a real process. Every tool's answer
 * is held against the REST route it runs.
 */

// The bridge tests start processes; a busy machine makes that slow.
setDefaultTimeout(30_000)

const READ_SCOPES: Scope[] = ['me:read', 'accounts:read', 'transactions:read', 'categories:read', 'payees:read']
const READ_TOOLS = [
  'get_context',
  'list_accounts',
  'list_categories',
  'find_payees',
  'list_tags',
  'list_rules',
  'test_rule',
  'search_transactions',
  'get_transaction',
  'spending_summary',
  'get_changes',
]
const ALL_TOOLS = [
  ...READ_TOOLS,
  'get_budget',
  'list_upcoming',
  'upsert_account',
  'update_account',
  'upsert_category',
  'update_category',
  'upsert_payee',
  'update_payee',
  'upsert_tag',
  'upsert_rule',
  'upsert_transaction',
  'update_transaction',
  'bulk_update_transactions',
  'import_transactions',
  'set_budget',
  'upsert_schedule',
  'import_file',
  'delete_transaction',
  'archive_account',
]
const ROOT = new URL('../..', import.meta.url).pathname

// biome-ignore lint/suspicious/noExplicitAny: tool results are JSON
type Json = any

interface ToolAnswer {
  isError: boolean
  structured: Json
  text: string
}

async function connect(server: TestServer, key: string, options: { headers?: Record<string, string>; seen?: Response[] } = {}): Promise<Client> {
  const client = new Client({ name: 'pfin-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}`, ...options.headers } },
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      options.seen?.push(response)
      return response
    },
  })
  await client.connect(transport)
  return client
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean
    structuredContent?: unknown
    content: { type: string; text: string }[]
  }
  expect(result.content[0]?.type).toBe('text')
  return { isError: result.isError === true, structured: result.structuredContent, text: result.content[0]?.text ?? '' }
}

/** A successful call whose text is exactly its structured content (no plan summary). */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const answer = await call(client, name, args)
  if (answer.isError) throw new Error(`${name} failed: ${answer.text}`)
  expect(answer.text).toBe(JSON.stringify(answer.structured))
  return answer.structured
}

async function toolError(client: Client, name: string, args: Record<string, unknown>, code: string, status: number): Promise<Json> {
  const answer = await call(client, name, args)
  expect(answer.isError).toBe(true)
  expect(answer.structured).toMatchObject({ code, status, type: `urn:pfin:problem:${code}` })
  expect(Object.keys(answer.structured).sort()).toEqual(['code', 'detail', 'request_id', 'status', 'title', 'type'])
  expect(answer.text).toBe(`${code}: ${answer.structured.detail}`)
  return answer.structured
}

async function rest(server: TestServer, key: string, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await server.request(method, path, { key, body })
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status}: ${res.text}`)
  return res.json
}

async function toolNames(server: TestServer, key: string): Promise<string[]> {
  const client = await connect(server, key)
  try {
    return (await client.listTools()).tools.map((tool) => tool.name)
  } finally {
    await client.close()
  }
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

/** One raw JSON-RPC POST to /mcp, as a client that does not use the SDK would send it. */
function post(server: TestServer, message: unknown, headers: Record<string, string> = {}) {
  return sendRaw(server.url, '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
    body: JSON.stringify(message),
  })
}

function expectGateHeaders(headers: Headers) {
  expect(headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
  for (const name of RATE_LIMIT_HEADERS) expect(headers.get(name)).toMatch(/^\d+$/)
}

let server: TestServer
let owner: { id: string; key: string }
let full: Client

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ name: 'Ana Silva', country: 'PT', defaultCurrency: 'EUR' })
  full = await connect(server, owner.key)
})

afterAll(async () => {
  await full?.close()
  await server?.stop()
})

describe('tools/list', () => {
  test('a read-only key sees exactly the read tools; a full key all of them, in the stable order', async () => {
    const readOnly = await server.key(owner.id, { scopes: READ_SCOPES })
    expect(await toolNames(server, readOnly.key)).toEqual(READ_TOOLS)
    const { tools } = await full.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(ALL_TOOLS)
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint).toBe(READ_TOOLS.includes(tool.name) || tool.name === 'get_budget' || tool.name === 'list_upcoming')
      expect(tool.annotations?.destructiveHint).toBe(tool.name === 'delete_transaction' || tool.name === 'archive_account')
      expect(tool.description?.length).toBeGreaterThan(20)
    }
  })

  test('a tool is listed only when the key may call every route it runs', async () => {
    const writeOnly = await server.key(owner.id, { scopes: ['transactions:write'] })
    // delete_transaction reads the transaction for its plan: it needs transactions:read too.
    expect(await toolNames(server, writeOnly.key)).toEqual([
      'upsert_tag',
      'upsert_rule',
      'upsert_transaction',
      'update_transaction',
      'bulk_update_transactions',
      'import_transactions',
      'import_file',
    ])
    const readWrite = await server.key(owner.id, { scopes: ['transactions:read', 'transactions:write'] })
    expect(await toolNames(server, readWrite.key)).toEqual([
      'list_tags',
      'list_rules',
      'test_rule',
      'search_transactions',
      'get_transaction',
      'spending_summary',
      'get_changes',
      'upsert_tag',
      'upsert_rule',
      'upsert_transaction',
      'update_transaction',
      'bulk_update_transactions',
      'import_transactions',
      'import_file',
      'delete_transaction',
    ])
    const accounts = await server.key(owner.id, { scopes: ['accounts:read', 'accounts:write'] })
    expect(await toolNames(server, accounts.key)).toEqual(['list_accounts', 'get_changes', 'upsert_account', 'update_account', 'archive_account'])
    // get_context needs all five read scopes, as GET /v1/agent/context does.
    const fourReads = await server.key(owner.id, { scopes: ['accounts:read', 'transactions:read', 'categories:read', 'payees:read'] })
    expect(await toolNames(server, fourReads.key)).toEqual(READ_TOOLS.filter((name) => name !== 'get_context'))
  })

  test('every input schema is a closed JSON object schema derived from the route', async () => {
    const { tools } = await full.listTools()
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool.inputSchema as Json]))
    for (const schema of Object.values(byName)) {
      expect(schema.type).toBe('object')
      expect(schema.additionalProperties).toBe(false)
      expect(JSON.stringify(schema)).not.toContain('[Kind]')
    }
    const openapi = (await fetch(`${server.url}/openapi.json`).then((res) => res.json())) as Json
    const component = (name: string) => openapi.components.schemas[name]
    const upsertRef = openapi.paths['/v1/transactions/upsert'].post.requestBody.content['application/json'].schema.$ref as string
    const upsertBody = component(upsertRef.split('/').pop() as string)
    const upsert = byName.upsert_transaction
    expect([...upsert.required].sort()).toEqual(['accountId', 'amount', 'date', 'externalId'])
    expect(Object.keys(upsert.properties).sort()).toEqual(Object.keys(upsertBody.properties).sort())
    expect(upsert.properties.amount.type).toBe(upsertBody.properties.amount.type)
    expect(byName.get_transaction).toMatchObject({ required: ['transactionId'], properties: { transactionId: { type: 'string' } } })
    expect(Object.keys(byName.delete_transaction.properties).sort()).toEqual(['confirmToken', 'transactionId'])
    expect(byName.delete_transaction.required).toEqual(['transactionId'])
    expect(Object.keys(byName.archive_account.properties).sort()).toEqual(['accountId', 'confirmToken'])
    expect(Object.keys(byName.import_transactions.properties).sort()).toEqual(['applyRules', 'confirmToken', 'ifDeleted', 'items'])
    expect(byName.import_transactions.required).toEqual(['items'])
    expect(byName.update_transaction.required).toEqual(['transactionId'])
    expect(byName.search_transactions.properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 })
    // Where a tool's default differs from its route's, the schema tells the tool's.
    expect(byName.get_context.properties.payeeLimit).toMatchObject({ default: 20, description: expect.stringContaining('(default 20)') })
    expect(byName.get_context.properties.recentTransactionLimit).toMatchObject({ default: 20 })
    expect(byName.get_changes.properties.limit).toMatchObject({ default: 50, maximum: 500, description: expect.stringContaining('(default 50)') })
    expect(byName.list_accounts.properties.limit).toMatchObject({ default: 50 })
    expect(Object.keys(byName.search_transactions.properties)).toEqual(
      expect.arrayContaining(['accountId', 'categoryId', 'payeeId', 'from', 'to', 'externalId', 'cursor']),
    )
    // The sign convention is in the descriptions of the tools that take or show amounts.
    for (const name of [
      'upsert_transaction',
      'update_transaction',
      'import_transactions',
      'import_file',
      'search_transactions',
      'get_context',
      'get_changes',
      'delete_transaction',
    ]) {
      expect(tools.find((tool) => tool.name === name)?.description).toContain('a positive amount is an expense')
    }
  })

  test('the server introduces itself with instructions', async () => {
    expect(full.getServerVersion()).toEqual({ name: 'pfin', version: '1.0.0-alpha' })
    expect(full.getInstructions()).toContain('get_context')
  })
})

describe('every tool against its REST route', () => {
  const ids: Record<string, string> = {}

  test('upsert_account, upsert_category, upsert_payee, upsert_transaction create what REST then reads', async () => {
    const account = await ok(full, 'upsert_account', { externalId: 'acc-main', name: 'Main checking', type: 'bank', balance: 1000.5, currency: 'EUR' })
    expect(account.operation).toBe('created')
    ids.account = account.data.id
    expect(account.data).toEqual((await rest(server, owner.key, 'GET', `/v1/accounts/${ids.account}`)).data)

    const category = await ok(full, 'upsert_category', { externalId: 'cat-hobby', name: 'Hobbies', type: 'expense' })
    expect(category.operation).toBe('created')
    ids.category = category.data.id
    expect(category.data).toEqual((await rest(server, owner.key, 'GET', `/v1/categories/${ids.category}`)).data)

    const payee = await ok(full, 'upsert_payee', { externalId: 'pay-cafe', name: 'Corner Café', categoryId: ids.category })
    expect(payee.operation).toBe('created')
    ids.payee = payee.data.id

    const tx = await ok(full, 'upsert_transaction', { externalId: 'tx-1', accountId: ids.account, amount: 12.5, date: '2026-11-20', payeeId: ids.payee })
    expect(tx.operation).toBe('created')
    expect(tx.data).toMatchObject({ amount: 12.5, categoryId: ids.category, payeeId: ids.payee })
    ids.tx = tx.data.id
    expect(tx.data).toEqual((await rest(server, owner.key, 'GET', `/v1/transactions/${ids.tx}`)).data)
    // The balance moved in the same write, and the payee's totals with it.
    expect((await rest(server, owner.key, 'GET', `/v1/accounts/${ids.account}`)).data.balance).toBe(988)
    expect((await rest(server, owner.key, 'GET', `/v1/payees/${ids.payee}`)).data).toMatchObject({ transactionCount: 1, totalSpent: 12.5 })
  })

  test('update_transaction changes the fields sent, as PATCH does', async () => {
    const updated = await ok(full, 'update_transaction', { transactionId: ids.tx, note: 'lunch with Rui', amount: 14 })
    expect(updated.data).toMatchObject({ id: ids.tx, note: 'lunch with Rui', amount: 14, externalId: 'tx-1' })
    expect(updated.data).toEqual((await rest(server, owner.key, 'GET', `/v1/transactions/${ids.tx}`)).data)
    const cleared = await ok(full, 'update_transaction', { transactionId: ids.tx, note: null })
    expect(cleared.data.note).toBeNull()
  })

  test('the read tools answer what their REST routes answer', async () => {
    await rest(server, owner.key, 'POST', '/v1/transactions/upsert', {
      externalId: 'tx-salary',
      accountId: ids.account,
      amount: -2500,
      date: '2026-11-01',
      note: 'salary',
    })

    const context = await ok(full, 'get_context')
    const restContext = await rest(server, owner.key, 'GET', '/v1/agent/context?systemCategories=summary&payeeLimit=20&recentTransactionLimit=20')
    expect(context.data.serverTime).toBeNumber()
    expect({ ...context.data, serverTime: 0 }).toEqual({ ...restContext.data, serverTime: 0 })
    expect(context.data.accounts.map((a: Json) => a.id)).toEqual([ids.account])

    expect(await ok(full, 'list_accounts')).toEqual(await rest(server, owner.key, 'GET', '/v1/accounts'))

    const categories = await ok(full, 'list_categories')
    expect(categories).toEqual(await rest(server, owner.key, 'GET', '/v1/categories?limit=50'))
    expect(await ok(full, 'list_categories', { type: 'expense', limit: 5 })).toEqual(
      await rest(server, owner.key, 'GET', '/v1/categories?type=expense&limit=5'),
    )

    const payees = await ok(full, 'find_payees', { q: 'CORNER cafe' })
    expect(payees.data.map((p: Json) => p.id)).toEqual([ids.payee])
    expect(payees).toEqual(await rest(server, owner.key, 'GET', `/v1/payees?q=${encodeURIComponent('CORNER cafe')}`))

    const search = await ok(full, 'search_transactions', { accountId: ids.account })
    expect(search.data.map((t: Json) => t.externalId)).toEqual(['tx-1', 'tx-salary'])
    expect(search).toEqual(await rest(server, owner.key, 'GET', `/v1/transactions?accountId=${ids.account}`))
    const page = await ok(full, 'search_transactions', { limit: 1 })
    expect(page.hasMore).toBe(true)
    const next = await ok(full, 'search_transactions', { limit: 1, cursor: page.nextCursor })
    expect(next).toEqual(await rest(server, owner.key, 'GET', `/v1/transactions?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`))
    expect(await ok(full, 'search_transactions', { from: '2026-11-10', to: '2026-11-30' })).toEqual(
      await rest(server, owner.key, 'GET', '/v1/transactions?from=2026-11-10&to=2026-11-30'),
    )

    expect(await ok(full, 'get_transaction', { transactionId: ids.tx })).toEqual(await rest(server, owner.key, 'GET', `/v1/transactions/${ids.tx}`))

    const changes = await ok(full, 'get_changes')
    expect(changes).toEqual(await rest(server, owner.key, 'GET', '/v1/changes?limit=50'))
    expect(changes.data.map((c: Json) => c.id)).toEqual(expect.arrayContaining([ids.account, ids.category, ids.payee, ids.tx]))
    const later = await ok(full, 'get_changes', { cursor: changes.nextCursor, resources: 'transactions' })
    expect(later).toEqual(await rest(server, owner.key, 'GET', `/v1/changes?limit=50&resources=transactions&cursor=${encodeURIComponent(changes.nextCursor)}`))
    expect(later.data).toEqual([])
  })

  test('a read tool refuses an argument it does not know, as its REST route refuses the query parameter', async () => {
    // A misspelt filter must not come back as an unfiltered list the agent takes for filtered.
    const problem = await toolError(full, 'search_transactions', { account_id: ids.account }, 'validation_failed', 422)
    expect(problem.detail).toContain('account_id')
    await toolError(full, 'list_accounts', { includeArchive: true }, 'validation_failed', 422)
    await toolError(full, 'get_transaction', { transactionId: ids.tx, expand: 'payee' }, 'validation_failed', 422)
    await toolError(full, 'delete_transaction', { id: ids.tx }, 'validation_failed', 422)
    const missing = await toolError(full, 'get_transaction', {}, 'validation_failed', 422)
    expect(missing.detail).toContain('transactionId')
    await toolError(full, 'get_transaction', { transactionId: 7 }, 'validation_failed', 422)
    await toolError(full, 'get_transaction', { transactionId: 'tx_nope' }, 'not_found', 404)
    await toolError(full, 'list_accounts', { limit: 0 }, 'validation_failed', 422)
    expect((await rest(server, owner.key, 'GET', `/v1/transactions/${ids.tx}`)).data.id).toBe(ids.tx)
  })
})

describe('writes', () => {
  let accountId: string

  beforeAll(async () => {
    accountId = (await rest(server, owner.key, 'POST', '/v1/accounts', { name: 'Writes', type: 'bank', balance: 0, currency: 'EUR' })).data.id
  })

  test('a repeated identical upsert_transaction is one row; the second call reports updated with the same data', async () => {
    const input = { externalId: 'bank-4711', accountId, amount: 42.1, date: '2026-11-18', payeeName: 'Pingo Doce', note: 'weekly shop' }
    const first = await ok(full, 'upsert_transaction', input)
    const second = await ok(full, 'upsert_transaction', input)
    expect(first.operation).toBe('created')
    expect(second.operation).toBe('updated')
    expect(second.data).toEqual(first.data)
    const rows = (await rest(server, owner.key, 'GET', '/v1/transactions?externalId=bank-4711')).data
    expect(rows).toHaveLength(1)
    expect(rows[0]).toEqual(first.data)
    expect((await rest(server, owner.key, 'GET', `/v1/accounts/${accountId}`)).data.balance).toBe(-42.1)
    const payees = (await rest(server, owner.key, 'GET', '/v1/payees?q=pingo')).data
    expect(payees).toHaveLength(1)
    expect(payees[0]).toMatchObject({ transactionCount: 1, totalSpent: 42.1 })
  })

  test('a route error is a tool error carrying the problem', async () => {
    const problem = await toolError(
      full,
      'upsert_transaction',
      { externalId: 'bad-ref', accountId: 'acct_doesnotexist', amount: 1, date: '2026-11-18' },
      'invalid_reference',
      422,
    )
    expect(problem.detail).toContain('accountId')
    await toolError(full, 'upsert_transaction', { externalId: 'bad-shape', accountId, amount: 1.123456789, date: '2026-11-18' }, 'validation_failed', 422)
    await toolError(full, 'upsert_transaction', { externalId: 'bad-field', accountId, amount: 1, date: '2026-11-18', colour: 'red' }, 'validation_failed', 422)
    await toolError(
      full,
      'upsert_transaction',
      { externalId: 'bad-rule', accountId, amount: 1, date: '2026-11-18', payeeId: null, payeeName: 'X' },
      'rule_violation',
      422,
    )
    expect((await rest(server, owner.key, 'GET', '/v1/transactions?externalId=bad-ref')).data).toEqual([])
  })

  test('a read-only key cannot call a write tool: it is not listed and the call is an MCP error', async () => {
    const readOnly = await server.key(owner.id, { scopes: READ_SCOPES })
    const client = await connect(server, readOnly.key)
    try {
      let error: unknown
      try {
        await client.callTool({ name: 'upsert_transaction', arguments: { externalId: 'ro-1', accountId, amount: 1, date: '2026-11-18' } })
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(Error)
      expect((error as { code?: number }).code).toBe(-32602)
      expect(String((error as Error).message)).toContain('upsert_transaction')
    } finally {
      await client.close()
    }
    expect((await rest(server, owner.key, 'GET', '/v1/transactions?externalId=ro-1')).data).toEqual([])
  })
})

describe('two-step tools', () => {
  let accountId: string
  let client: Client

  beforeAll(async () => {
    accountId = (await rest(server, owner.key, 'POST', '/v1/accounts', { name: 'Confirm', type: 'bank', balance: 100, currency: 'EUR' })).data.id
    client = full
  })

  async function transaction(externalId: string, amount = 10): Promise<Json> {
    return (await rest(server, owner.key, 'POST', '/v1/transactions/upsert', { externalId, accountId, amount, date: '2026-11-19' })).data
  }

  async function plan(name: string, args: Record<string, unknown>): Promise<Json> {
    const answer = await call(client, name, args)
    expect(answer.isError).toBe(false)
    expect(answer.text.split('\n')[0]).toStartWith('Plan only, nothing changed.')
    expect(JSON.parse(answer.text.split('\n').slice(1).join('\n'))).toEqual(answer.structured)
    expect(Object.keys(answer.structured).sort()).toEqual(['confirmToken', 'expiresAt', 'plan', 'target'])
    expect(answer.structured.confirmToken).toMatch(/^cfm_/)
    expect(answer.structured.expiresAt).toBeGreaterThan(Date.now() + CONFIRM_TTL_MS - 60_000)
    return answer.structured
  }

  test('delete_transaction: the plan deletes nothing; a stale or foreign token is refused; the token deletes and leaves a tombstone', async () => {
    const tx = await transaction('del-1')
    const other = await transaction('del-2')
    const first = await plan('delete_transaction', { transactionId: tx.id })
    expect(first.target).toEqual(tx)
    expect((await server.request('GET', `/v1/transactions/${tx.id}`, { key: owner.key })).status).toBe(200)

    // A token planned for another transaction does not delete this one.
    const forOther = await plan('delete_transaction', { transactionId: other.id })
    await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: forOther.confirmToken }, 'confirmation_required', 409)
    // A token from the other two-step tool is not a delete token.
    const archivePlan = await plan('archive_account', { accountId })
    await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: archivePlan.confirmToken }, 'confirmation_required', 409)

    // The transaction changes between plan and confirmation: the plan is void.
    await rest(server, owner.key, 'PATCH', `/v1/transactions/${tx.id}`, { note: 'changed by someone else' })
    const stale = await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: first.confirmToken }, 'confirmation_required', 409)
    expect(stale.detail).toContain('changed')
    expect((await server.request('GET', `/v1/transactions/${tx.id}`, { key: owner.key })).status).toBe(200)
    expect((await server.request('GET', `/v1/transactions/${other.id}`, { key: owner.key })).status).toBe(200)

    // An expired token (made here, in the server's own process, five minutes and more ago).
    const tenant = server.platform.tenants.get(owner.id)
    const expired = issueConfirmToken(owner.id, 'delete_transaction', tx.id, entityVersion(tenant, 'transaction', tx.id), Date.now() - CONFIRM_TTL_MS - 1000)
    const late = await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: expired.confirmToken }, 'confirmation_required', 409)
    expect(late.detail).toContain('expired')
    await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: 'cfm_not_a_token' }, 'confirmation_required', 409)
    // A token that is not a string is refused as such, not taken for a call without one (a new plan).
    for (const wrong of [12345, true, { token: first.confirmToken }]) {
      const refused = await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: wrong }, 'validation_failed', 422)
      expect(refused.detail).toContain('confirmToken')
    }
    expect((await server.request('GET', `/v1/transactions/${tx.id}`, { key: owner.key })).status).toBe(200)

    const balanceBefore = (await rest(server, owner.key, 'GET', `/v1/accounts/${accountId}`)).data.balance
    const fresh = await plan('delete_transaction', { transactionId: tx.id })
    const current = (await rest(server, owner.key, 'GET', `/v1/transactions/${tx.id}`)).data
    expect(fresh.target).toEqual(current)
    const deleted = await ok(client, 'delete_transaction', { transactionId: tx.id, confirmToken: fresh.confirmToken })
    expect(deleted).toEqual({ data: current })
    expectProblem(await server.request('GET', `/v1/transactions/${tx.id}`, { key: owner.key }), 404, 'not_found')
    expect((await rest(server, owner.key, 'GET', `/v1/accounts/${accountId}`)).data.balance).toBe(balanceBefore + 10)

    const feed = (await rest(server, owner.key, 'GET', '/v1/changes?resources=transactions&limit=500')).data as Json[]
    expect(feed.find((change) => change.id === tx.id)).toMatchObject({ resource: 'transaction', op: 'delete', externalId: 'del-1', data: null })

    // The same token again: the transaction is gone (its version moved), nothing else happens.
    await toolError(client, 'delete_transaction', { transactionId: tx.id, confirmToken: fresh.confirmToken }, 'confirmation_required', 409)
    await toolError(client, 'delete_transaction', { transactionId: tx.id }, 'not_found', 404)
    expect((await server.request('GET', `/v1/transactions/${other.id}`, { key: owner.key })).status).toBe(200)
  })

  test('archive_account: the plan archives nothing; a stale token is refused; the token archives', async () => {
    const archivable = (await rest(server, owner.key, 'POST', '/v1/accounts', { name: 'Old savings', type: 'bank', balance: 5, currency: 'EUR' })).data
    const first = await plan('archive_account', { accountId: archivable.id })
    expect(first.target).toEqual(archivable)
    expect((await rest(server, owner.key, 'GET', `/v1/accounts/${archivable.id}`)).data.isArchived).toBe(false)

    const forOther = await plan('archive_account', { accountId })
    await toolError(client, 'archive_account', { accountId: archivable.id, confirmToken: forOther.confirmToken }, 'confirmation_required', 409)
    await rest(server, owner.key, 'PATCH', `/v1/accounts/${archivable.id}`, { notes: 'renamed meanwhile' })
    await toolError(client, 'archive_account', { accountId: archivable.id, confirmToken: first.confirmToken }, 'confirmation_required', 409)
    expect((await rest(server, owner.key, 'GET', `/v1/accounts/${archivable.id}`)).data.isArchived).toBe(false)

    const fresh = await plan('archive_account', { accountId: archivable.id })
    const archived = await ok(client, 'archive_account', { accountId: archivable.id, confirmToken: fresh.confirmToken })
    const stored = (await rest(server, owner.key, 'GET', `/v1/accounts/${archivable.id}`)).data
    expect(archived).toEqual({ data: stored })
    expect(stored).toMatchObject({ isArchived: true, balance: 5, notes: 'renamed meanwhile' })
    expect((await ok(client, 'list_accounts')).data.map((a: Json) => a.id)).not.toContain(archivable.id)
    expect((await ok(client, 'list_accounts', { includeArchived: true })).data.map((a: Json) => a.id)).toContain(archivable.id)
    // The other account was never archived.
    expect((await rest(server, owner.key, 'GET', `/v1/accounts/${accountId}`)).data.isArchived).toBe(false)
  })

  test('import_transactions: a dry run writes nothing and returns a token; the token imports those items and no others', async () => {
    const items = [
      { externalId: 'imp-1', accountId, amount: 3.2, date: '2026-11-10', payeeName: 'Padaria' },
      { externalId: 'imp-2', accountId, amount: -50, date: '2026-11-11', note: 'refund' },
    ]
    const changesBefore = (await rest(server, owner.key, 'GET', '/v1/changes?limit=500')).data.length
    const dry = await call(client, 'import_transactions', { items })
    expect(dry.isError).toBe(false)
    expect(dry.text.split('\n')[0]).toStartWith('Dry run only, nothing written.')
    expect(dry.structured.summary).toEqual({ created: 2, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 })
    expect(dry.structured.data.map((item: Json) => item.operation)).toEqual(['created', 'created'])
    expect(dry.structured.confirmToken).toMatch(/^cfm_/)
    for (const item of items) expect((await rest(server, owner.key, 'GET', `/v1/transactions?externalId=${item.externalId}`)).data).toEqual([])
    expect((await rest(server, owner.key, 'GET', '/v1/changes?limit=500')).data.length).toBe(changesBefore)

    // The token is for these items: other items (one changed amount) are refused, nothing written.
    const altered = [items[0], { ...items[1], amount: -5000 }]
    await toolError(client, 'import_transactions', { items: altered, confirmToken: dry.structured.confirmToken }, 'confirmation_required', 409)
    await toolError(client, 'import_transactions', { items, ifDeleted: 'skip', confirmToken: dry.structured.confirmToken }, 'confirmation_required', 409)
    for (const item of items) expect((await rest(server, owner.key, 'GET', `/v1/transactions?externalId=${item.externalId}`)).data).toEqual([])

    const done = await ok(client, 'import_transactions', { items, confirmToken: dry.structured.confirmToken })
    expect(done.summary).toEqual({ created: 2, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 })
    for (const [index, item] of items.entries()) {
      const rows = (await rest(server, owner.key, 'GET', `/v1/transactions?externalId=${item.externalId}`)).data
      expect(rows).toHaveLength(1)
      expect(rows[0]).toEqual(done.data[index].data)
    }

    // The same items again: the dry run says unchanged; a batch with a failing item gets no token.
    const again = await call(client, 'import_transactions', { items })
    expect(again.structured.data.map((item: Json) => item.operation)).toEqual(['unchanged', 'unchanged'])
    const failing = await call(client, 'import_transactions', {
      items: [...items, { externalId: 'imp-3', accountId: 'acct_nope', amount: 1, date: '2026-11-12' }],
    })
    expect(failing.isError).toBe(false)
    expect(failing.structured.summary.failed).toBe(1)
    expect(failing.structured.confirmToken).toBeUndefined()
    expect(failing.text.split('\n')[0]).toContain('would fail')
    expect((await rest(server, owner.key, 'GET', '/v1/transactions?externalId=imp-3')).data).toEqual([])
  })

  test('import_transactions: a token acts once, and not on a ledger changed since its dry run; ifDeleted "recreate" is the default spelt out', async () => {
    const items = [{ externalId: 'once-1', accountId, amount: 7.5, date: '2026-11-12' }]
    const dry = await call(client, 'import_transactions', { items })
    // The default spelt out is the same import as the dry run's.
    expect((await ok(client, 'import_transactions', { items, ifDeleted: 'recreate', confirmToken: dry.structured.confirmToken })).summary.created).toBe(1)
    // Used: the import itself changed the ledger, so the token is void.
    await toolError(client, 'import_transactions', { items, confirmToken: dry.structured.confirmToken }, 'confirmation_required', 409)

    // Deleted after a new dry run (which said "unchanged"): its token would have recreated it unseen.
    const again = await call(client, 'import_transactions', { items })
    expect(again.structured.data[0].operation).toBe('unchanged')
    const [row] = (await rest(server, owner.key, 'GET', '/v1/transactions?externalId=once-1')).data
    await rest(server, owner.key, 'DELETE', `/v1/transactions/${row.id}`)
    await toolError(client, 'import_transactions', { items, confirmToken: again.structured.confirmToken }, 'confirmation_required', 409)
    expect((await rest(server, owner.key, 'GET', '/v1/transactions?externalId=once-1')).data).toEqual([])
  })
})

describe('the gate in front of /mcp', () => {
  test('a query parameter on /mcp is refused 422, as on any route that takes none', async () => {
    const res = await sendRaw(server.url, '/mcp?debug=1', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify(INITIALIZE),
    })
    expect(expectProblem(res, 422, 'validation_failed').detail).toContain("'debug'")
  })

  test('null for a list tool’s limit is refused like any wrong type, not taken for the default', async () => {
    const answer = await call(full, 'list_accounts', { limit: null })
    expect(answer.isError).toBe(true)
    expect(answer.structured.code).toBe('validation_failed')
  })

  test('a foreign Origin is refused with 403 origin_not_allowed; no Origin (not a browser) passes', async () => {
    const res = await post(server, INITIALIZE, { authorization: `Bearer ${owner.key}`, origin: 'https://evil.example' })
    expect(expectProblem(res, 403, 'origin_not_allowed').detail).toContain('MCP_ALLOWED_ORIGINS')
    expect((await post(server, INITIALIZE, { authorization: `Bearer ${owner.key}` })).status).toBe(200)
  })

  test('an Origin listed in MCP_ALLOWED_ORIGINS works', async () => {
    const allowing = await startTestServer({ env: { MCP_ALLOWED_ORIGINS: 'https://agent.example/, http://localhost:5173' } })
    try {
      const other = await allowing.owner()
      const client = await connect(allowing, other.key, { headers: { origin: 'https://agent.example' } })
      expect((await client.listTools()).tools).toHaveLength(ALL_TOOLS.length)
      await client.close()
      expect((await post(allowing, INITIALIZE, { authorization: `Bearer ${other.key}`, origin: 'http://localhost:5173' })).status).toBe(200)
      expectProblem(await post(allowing, INITIALIZE, { authorization: `Bearer ${other.key}`, origin: 'https://agent.example.evil' }), 403, 'origin_not_allowed')
    } finally {
      await allowing.stop()
    }
  })

  test('no key → 401 with WWW-Authenticate; a bad key → 401; a free-tier owner → 403 pro_tier_required', async () => {
    const none = await post(server, INITIALIZE)
    expectProblem(none, 401, 'unauthorized')
    expect(none.headers.get('www-authenticate')).toStartWith('Bearer')
    expectProblem(await post(server, INITIALIZE, { authorization: 'Bearer pfk_nope_nope' }), 401, 'unauthorized')
    const free = await server.owner({ name: 'Free', tier: 'free' })
    expectProblem(await post(server, INITIALIZE, { authorization: `Bearer ${free.key}` }), 403, 'pro_tier_required')
  })

  test('every /mcp response of an SDK session carries X-Request-Id and the rate-limit headers', async () => {
    const seen: Response[] = []
    const client = await connect(server, owner.key, { seen })
    await client.listTools()
    await client.callTool({ name: 'list_accounts', arguments: {} })
    await client.callTool({ name: 'get_transaction', arguments: { transactionId: 'tx_missing' } })
    await client.ping()
    await client.close()
    expect(seen.length).toBeGreaterThanOrEqual(6)
    expect(new Set(seen.map((res) => res.status))).toContain(202) // the initialized notification
    for (const res of seen) expectGateHeaders(res.headers)
    expect(new Set(seen.map((res) => res.headers.get('x-request-id'))).size).toBe(seen.length)
  })

  test('one MCP request counts once against the rate limit, whatever it runs inside', async () => {
    const counted = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '1000', RATE_LIMIT_PER_DAY: '100000' } })
    try {
      const other = await counted.owner()
      const auth = { authorization: `Bearer ${other.key}` }
      const account = (await counted.request('POST', '/v1/accounts', { key: other.key, body: { name: 'A', type: 'bank', balance: 0, currency: 'EUR' } })).json
        .data
      const tx = (await counted.request('POST', '/v1/transactions', { key: other.key, body: { accountId: account.id, amount: 1, date: '2026-11-01' } })).json
        .data
      const messages: unknown[] = [
        INITIALIZE,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_context', arguments: {} } },
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'delete_transaction', arguments: { transactionId: tx.id } } },
        {
          jsonrpc: '2.0',
          id: 5,
          method: 'tools/call',
          params: { name: 'import_transactions', arguments: { items: [{ externalId: 'c-1', accountId: account.id, amount: 1, date: '2026-11-01' }] } },
        },
        {
          jsonrpc: '2.0',
          id: 6,
          method: 'tools/call',
          params: { name: 'upsert_transaction', arguments: { externalId: 'c-2', accountId: account.id, amount: 2, date: '2026-11-02' } },
        },
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'upsert_transaction', arguments: { externalId: 'c-3', accountId: 'acct_nope', amount: 2, date: '2026-11-02' } },
        },
        { jsonrpc: '2.0', id: 8, method: 'ping' },
      ]
      let previous: number | undefined
      for (const message of messages) {
        const res = await post(counted, message, auth)
        expect(res.status).toBeLessThan(300)
        expectGateHeaders(res.headers)
        const remaining = Number(res.headers.get('x-ratelimit-remaining-day'))
        if (previous !== undefined) expect(remaining).toBe(previous - 1)
        previous = remaining
      }
      const me = await counted.request('GET', '/v1/me', { key: other.key })
      expect(Number(me.headers.get('x-ratelimit-remaining-day'))).toBe((previous as number) - 1)
    } finally {
      await counted.stop()
    }
  })
})

describe('pfin mcp (stdio bridge)', () => {
  test('round-trips through the SDK client: initialize, list tools, call a tool', async () => {
    const client = await bridgeClient(server.url, owner.key)
    try {
      expect(client.getServerVersion()?.name).toBe('pfin')
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(ALL_TOOLS)
      const result = (await client.callTool({ name: 'list_accounts', arguments: {} })) as { structuredContent?: Json; isError?: boolean }
      expect(result.isError).toBeFalsy()
      expect(result.structuredContent).toEqual(await rest(server, owner.key, 'GET', '/v1/accounts'))
      const failed = (await client.callTool({ name: 'get_transaction', arguments: { transactionId: 'tx_missing' } })) as {
        structuredContent?: Json
        isError?: boolean
      }
      expect(failed.isError).toBe(true)
      expect(failed.structuredContent.code).toBe('not_found')
    } finally {
      await client.close()
    }
  })

  test('a bad key is a JSON-RPC error for each request, not a crash', async () => {
    const refused = expect(bridgeClient(server.url, 'pfk_wrong_key')).rejects.toThrow(/unauthorized/)

    // The same, byte for byte: every request gets its error line; the bridge stays up until stdin ends.
    const bridge = Bun.spawn([process.execPath, 'src/main.ts', 'mcp'], {
      cwd: ROOT,
      env: { ...process.env, PFIN_URL: server.url, PFIN_API_KEY: 'pfk_wrong_key' },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const lines = lineReader(bridge.stdout)
    bridge.stdin.write(`${JSON.stringify(INITIALIZE)}\n`)
    bridge.stdin.flush()
    expect(JSON.parse(await lines.next())).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: expect.stringContaining('unauthorized') } })
    bridge.stdin.write('{"jsonrpc":"2.0","id":"two","method":"tools/list"}\nnot json\nnull\n')
    bridge.stdin.flush()
    const answers = [JSON.parse(await lines.next()), JSON.parse(await lines.next()), JSON.parse(await lines.next())]
    expect(answers).toContainEqual(expect.objectContaining({ id: 'two', error: expect.objectContaining({ code: -32000 }) }))
    expect(answers).toContainEqual(expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32700 }) }))
    expect(answers).toContainEqual(expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32600 }) }))
    bridge.stdin.end()
    expect(await bridge.exited).toBe(0)
    await refused
  })

  test('PFIN_URL keeps its path (pfin behind a proxy under /pfin) and may name /mcp itself; an unreachable server is an error', async () => {
    // A reverse proxy serving pfin under /pfin/ and nothing else.
    const proxy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      async fetch(request) {
        const url = new URL(request.url)
        if (!url.pathname.startsWith('/pfin/')) return new Response('not here', { status: 404 })
        const headers = new Headers(request.headers)
        headers.delete('host')
        return fetch(server.url + url.pathname.slice('/pfin'.length), { method: request.method, headers, body: await request.arrayBuffer() })
      },
    })
    try {
      const viaProxy = async (base: string) => {
        const client = await bridgeClient(base, owner.key)
        try {
          expect((await client.listTools()).tools).toHaveLength(ALL_TOOLS.length)
        } finally {
          await client.close()
        }
      }
      await Promise.all([
        viaProxy(`http://127.0.0.1:${proxy.port}/pfin`),
        viaProxy(`http://127.0.0.1:${proxy.port}/pfin/mcp`),
        // A URL where something else answers (here the proxy's own 404 page) is an error, not a silence.
        expect(bridgeClient(`http://127.0.0.1:${proxy.port}/elsewhere`, owner.key)).rejects.toThrow(/HTTP 404/),
      ])
    } finally {
      await proxy.stop(true)
    }
    await expect(bridgeClient(`http://127.0.0.1:${proxy.port}`, owner.key)).rejects.toThrow(/cannot be reached/)
  })

  test('without PFIN_API_KEY it explains itself and exits 2', async () => {
    const env: Record<string, string | undefined> = { ...process.env, PFIN_URL: server.url }
    delete env.PFIN_API_KEY
    const bridge = Bun.spawn([process.execPath, 'src/main.ts', 'mcp'], { cwd: ROOT, env, stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
    expect(await bridge.exited).toBe(2)
    expect(await new Response(bridge.stderr).text()).toContain('PFIN_API_KEY')
    expect(await new Response(bridge.stdout).text()).toBe('')
  })
})

describe('result size', () => {
  test('list tools at their default limit stay far below 25,000 tokens with 250 transactions stored', async () => {
    const heavy = await server.owner({ name: 'Heavy' })
    const account = (await rest(server, heavy.key, 'POST', '/v1/accounts', { name: 'Everyday', type: 'bank', balance: 0, currency: 'EUR' })).data
    const items = Array.from({ length: 250 }, (_, i) => ({
      externalId: `bulk-${i}`,
      accountId: account.id,
      amount: (((i % 40) + 1) * 137) / 100,
      date: `2026-${String((i % 11) + 1).padStart(2, '0')}-${String((i % 27) + 1).padStart(2, '0')}`,
      payeeName: `Merchant number ${i % 60}`,
      categoryId: 'cat_sys_groceries',
      note: `card payment ${i}, reference ${crypto.randomUUID()}`,
    }))
    const batch = await server.request('POST', '/v1/transactions/batch', { key: heavy.key, body: { items } })
    expect(batch.text).toStartWith('{"data"')
    expect(batch.json.summary.created).toBe(250)

    const client = await connect(server, heavy.key)
    try {
      const sizes: Record<string, number> = {}
      for (const name of ['search_transactions', 'get_changes', 'find_payees', 'list_categories', 'list_accounts', 'get_context']) {
        const answer = await call(client, name)
        expect(answer.isError).toBe(false)
        sizes[name] = Math.ceil(answer.text.length / 4)
        if (['search_transactions', 'get_changes', 'find_payees'].includes(name)) expect(answer.structured.data).toHaveLength(50)
      }
      const { get_context: context, ...lists } = sizes
      // Far below: under half of the 25,000-token budget agents work with.
      expect(Math.max(...Object.values(lists))).toBeLessThan(12_500)
      // The context bundle (50 payees, 50 transactions, every category) is the largest answer.
      expect(context).toBeLessThan(25_000)
      console.log(`estimated tokens (characters / 4) at default limits: ${JSON.stringify(sizes)}`)
    } finally {
      await client.close()
    }
  })
})

/** An SDK client on `pfin mcp` run as a process (the bridge closes with the client, also when connecting fails). */
async function bridgeClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'desktop-agent', version: '1.0.0' })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['src/main.ts', 'mcp'],
    cwd: ROOT,
    env: { PFIN_URL: url, PFIN_API_KEY: key },
    stderr: 'pipe',
  })
  try {
    await client.connect(transport)
  } catch (error) {
    await client.close()
    throw error
  }
  return client
}

/** Reads a process's stdout line by line. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  return {
    async next(): Promise<string> {
      for (;;) {
        const newline = buffered.indexOf('\n')
        if (newline >= 0) {
          const line = buffered.slice(0, newline)
          buffered = buffered.slice(newline + 1)
          return line
        }
        const { value, done } = await reader.read()
        if (done) throw new Error(`stdout ended; left: ${buffered}`)
        buffered += decoder.decode(value, { stream: true })
      }
    },
  }
}

describe('get_context over MCP', () => {
  test('carries the feed position REST sends as X-Changes-Cursor, and defaults to 20 payees and 20 transactions', async () => {
    const server = await startUnthrottledServer()
    try {
      const owner = await server.owner()
      const account = (await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })).json
        .data
      const items = Array.from({ length: 30 }, (_, i) => ({
        externalId: `ctx-${i}`,
        accountId: account.id,
        amount: 1,
        date: '2026-11-20',
        payeeName: `Payee ${i}`,
      }))
      expect((await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items } })).status).toBe(200)
      const client = new Client({ name: 'ctx', version: '1' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${owner.key}` } } }),
      )
      const result = await client.callTool({ name: 'get_context', arguments: {} })
      const body = result.structuredContent as { data: { payees: unknown[]; recentTransactions: unknown[] }; changesCursor: string }
      expect(body.data.payees).toHaveLength(20)
      expect(body.data.recentTransactions).toHaveLength(20)
      expect(body.changesCursor).toStartWith('chg_')
      await server.request('POST', '/v1/transactions/upsert', { key: owner.key, body: { ...items[0], amount: 2 } })
      const since = await server.request('GET', `/v1/changes?cursor=${body.changesCursor}&resources=transactions`, { key: owner.key })
      expect(since.json.data.map((change: { externalId: string }) => change.externalId)).toEqual(['ctx-0'])
      await client.close()
    } finally {
      await server.stop()
    }
  }, 30_000)
})

describe('splits and tags over MCP (CONTRACT §17, §21, §22)', () => {
  test('upsert_transaction takes legs and tag names; update_transaction refuses an amount without legs; list_tags and upsert_tag are REST’s', async () => {
    const someone = await server.owner({ country: 'PT' })
    const client = await connect(server, someone.key)
    try {
      const descriptions = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool.description ?? '']))
      for (const name of ['upsert_transaction', 'update_transaction']) expect(descriptions[name]).toContain('sum exactly to the transaction’s `amount`')
      expect(descriptions.import_transactions).toContain('splits and tags')
      const account = await ok(client, 'upsert_account', { externalId: 'main', name: 'Main', type: 'bank', balance: 100, currency: 'EUR' })
      const tx = await ok(client, 'upsert_transaction', {
        externalId: 'receipt-1',
        accountId: account.data.id,
        amount: 0.3,
        date: '2026-11-20',
        tagNames: ['Lisbon 2026'],
        splits: [
          { amount: 0.1, categoryId: 'cat_sys_groceries' },
          { amount: 0.2, categoryId: 'cat_sys_coffee' },
        ],
      })
      expect(tx.data).toMatchObject({ hasSplits: true, splitMode: 'category', categoryId: null })
      expect(tx.data.splits.map((leg: Json) => leg.amount)).toEqual([0.1, 0.2])
      expect(tx.data).toEqual((await rest(server, someone.key, 'GET', `/v1/transactions/${tx.data.id}`)).data)
      const refused = await toolError(client, 'update_transaction', { transactionId: tx.data.id, amount: 0.4 }, 'rule_violation', 422)
      expect(refused.detail).toBe('amount: this transaction is split; send splits that sum to the new amount')
      const tags = await ok(client, 'list_tags')
      expect(tags).toEqual(await rest(server, someone.key, 'GET', '/v1/tags?limit=50'))
      expect(tags.data.map((tag: Json) => tag.name)).toEqual(['Lisbon 2026'])
      const tag = await ok(client, 'upsert_tag', { externalId: 'work', name: 'Work' })
      expect(tag.operation).toBe('created')
      const retagged = await ok(client, 'update_transaction', { transactionId: tx.data.id, tagIds: [tag.data.id] })
      expect(retagged.data.tagIds).toEqual([tag.data.id])
      expect(await ok(client, 'search_transactions', { tagId: tag.data.id })).toEqual(
        await rest(server, someone.key, 'GET', `/v1/transactions?tagId=${tag.data.id}&limit=50`),
      )
    } finally {
      await client.close()
    }
  })
})
