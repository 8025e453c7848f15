import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { SCOPES, type Scope } from '../../src/platform/scopes.ts'
import { cli, cliJson, expectUsageError } from '../cli/cli.ts'
import { expectProblem, serverWithOwner, type TestServer } from '../support/harness.ts'
import { createAccount, createTxn, type Json } from '../transactions/helpers.ts'
import { getBudget, planCategory } from './helpers.ts'

/**
 * Who may read and plan budgets (CONTRACT §2, §27): the budgets scopes on every route, keys
 * given scopes by `key update` while a server runs, the agent context's `budget`, and the MCP
 * tools get_budget and set_budget held against their REST routes.
 */

// The key update tests run the admin CLI as a process.
setDefaultTimeout(30_000)

const { server, owner } = serverWithOwner({ owner: { defaultCurrency: 'EUR', country: 'PT' } })

const GROCERIES = 'cat_sys_groceries'
const FIVE_READS: Scope[] = ['me:read', 'accounts:read', 'categories:read', 'payees:read', 'transactions:read']
const thisMonth = () => new Date().toISOString().slice(0, 7)

describe('scopes', () => {
  test('reading needs budgets:read and planning budgets:write: 403 insufficient_scope otherwise', async () => {
    const reader = await server.key(owner.id, { scopes: ['budgets:read'] })
    const others = await server.key(owner.id, { scopes: [...FIVE_READS, 'accounts:write', 'transactions:write', 'categories:write', 'payees:write'] })
    const path = `/v1/budgets/2026-05/categories/${GROCERIES}`
    for (const [key, method, route, body] of [
      [others.key, 'GET', '/v1/budgets/2026-05'],
      [others.key, 'GET', '/v1/budgets?from=2026-01&to=2026-02'],
      [others.key, 'PUT', path, { planned: 1 }],
      [reader.key, 'PUT', path, { planned: 1 }],
      [reader.key, 'PUT', '/v1/budgets/2026-05', { categories: [] }],
    ] as [string, string, string, Json?][]) {
      const problem = expectProblem(await server.request(method, route, { key, body }), 403, 'insufficient_scope')
      expect(problem.detail).toContain(method === 'GET' ? 'budgets:read' : 'budgets:write')
    }
    expect((await server.request('GET', '/v1/budgets/2026-05', { key: reader.key })).status).toBe(200)
    // Scope comes before the body and the month are looked at (CONTRACT §6 order).
    expectProblem(await server.request('PUT', '/v1/budgets/bad', { key: reader.key, body: '{' }), 403, 'insufficient_scope')
  })

  test('/v1/me lists the budgets scopes of a key made with every scope', async () => {
    const me = await server.request('GET', '/v1/me', { key: owner.key })
    expect(me.json.data.scopes).toEqual(expect.arrayContaining(['budgets:read', 'budgets:write', 'schedules:read', 'schedules:write']))
  })
})

describe('key update --scopes beside a running server', () => {
  test('a key made before budgets is refused, then honoured within a second of key update', async () => {
    const old = await server.key(owner.id, { scopes: FIVE_READS })
    // Verified once, so the server holds it in its cache: the update must reach a cached key.
    expectProblem(await server.request('GET', '/v1/budgets/2026-05', { key: old.key }), 403, 'insufficient_scope')
    const updated = await cliJson(server.dataDir, 'key', 'update', old.id, '--scopes', [...FIVE_READS, 'budgets:read'].join(','))
    const done = performance.now()
    expect(updated).toEqual({ id: old.id, scopes: [...FIVE_READS, 'budgets:read'], previousScopes: FIVE_READS })
    let status = 0
    while (performance.now() - done < 1000) {
      status = (await server.request('GET', '/v1/budgets/2026-05', { key: old.key })).status
      if (status === 200) break
      await Bun.sleep(10)
    }
    expect(status).toBe(200)
    expect((await server.request('GET', '/v1/me', { key: old.key })).json.data.scopes).toContain('budgets:read')
    // And narrowed again the same way: the next requests are refused.
    await cliJson(server.dataDir, 'key', 'update', old.id, '--scopes', 'me:read')
    const narrowed = performance.now()
    while (performance.now() - narrowed < 1000 && (await server.request('GET', '/v1/budgets/2026-05', { key: old.key })).status === 200) await Bun.sleep(10)
    expectProblem(await server.request('GET', '/v1/budgets/2026-05', { key: old.key }), 403, 'insufficient_scope')
  })

  test('--all-scopes gives every scope; bad arguments and dead keys exit 2 and change nothing', async () => {
    const key = await server.key(owner.id, { scopes: ['me:read'] })
    expect((await cliJson(server.dataDir, 'key', 'update', key.id, '--all-scopes')).scopes).toEqual([...SCOPES])
    const dir = server.dataDir
    for (const [args, pattern] of [
      [[key.id], /--scopes s1,s2 or --all-scopes/],
      [[key.id, '--scopes', 'me:read,budgets:plan'], /unknown scope budgets:plan/],
      [[key.id, '--scopes', 'me:read,,budgets:read'], /empty item/],
      [[key.id, '--scopes', 'me:read,me:read'], /more than once/],
      [[key.id, '--scopes', 'me:read', '--all-scopes'], /not both/],
      [[key.id, '--scope', 'me:read'], /did you mean --scopes/],
      [['key_00000000000000000000000000000000', '--all-scopes'], /no active key/],
      [[], /usage/],
    ] as [string[], RegExp][]) {
      expectUsageError(await cli(dir, 'key', 'update', ...args, '--json'), pattern)
    }
    await cliJson(dir, 'key', 'revoke', key.id)
    expectUsageError(await cli(dir, 'key', 'update', key.id, '--all-scopes', '--json'), /no active key/)
    const listed = (await cliJson(dir, 'key', 'list', '--owner', owner.id)).keys.find((k: Json) => k.id === key.id)
    expect(listed.scopes).toEqual([...SCOPES])
  })
})

describe('the agent context', () => {
  test('carries this month’s budget with budgets:read, null without', async () => {
    const account = (await createAccount(server, owner.key)).id
    await createTxn(server, owner.key, { accountId: account, amount: 12.34, date: `${thisMonth()}-01`, categoryId: GROCERIES })
    await planCategory(server, owner.key, thisMonth(), GROCERIES, { planned: 100 })
    const withBudgets = await server.request('GET', '/v1/agent/context', { key: owner.key })
    expect(withBudgets.json.data.budget).toEqual(await getBudget(server, owner.key, thisMonth()))
    expect(withBudgets.json.data.budget.categories[0]).toMatchObject({ categoryId: GROCERIES, planned: 100, spent: 12.34 })
    const fiveReads = await server.key(owner.id, { scopes: FIVE_READS })
    const without = await server.request('GET', '/v1/agent/context', { key: fiveReads.key })
    expect(without.status).toBe(200)
    expect(without.json.data.budget).toBeNull()
  })

  test('null for an owner without a defaultCurrency, instead of refusing the whole context', async () => {
    const plain = await server.owner({ defaultCurrency: null })
    const res = await server.request('GET', '/v1/agent/context', { key: plain.key })
    expect(res.status).toBe(200)
    expect(res.json.data.budget).toBeNull()
  })
})

async function mcp(test: TestServer, key: string): Promise<Client> {
  const client = new Client({ name: 'pfin-budget-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${test.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return client
}

async function callTool(client: Client, name: string, args: Json): Promise<{ isError: boolean; structured: Json; text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] }
  return { isError: result.isError === true, structured: result.structuredContent, text: result.content[0]?.text ?? '' }
}

describe('MCP: get_budget and set_budget', () => {
  test('each runs its REST route: the same answers, exact money, the same refusals', async () => {
    const made = await server.owner({ defaultCurrency: 'EUR', country: 'PT' })
    const client = await mcp(server, made.key)
    try {
      const set = await callTool(client, 'set_budget', { month: '2026-05', categoryId: GROCERIES, planned: 0.1, note: 'agent' })
      expect(set.isError).toBe(false)
      expect(set.structured).toEqual({ data: { month: '2026-05', currency: 'EUR', categories: [{ categoryId: GROCERIES, planned: 0.1, note: 'agent' }] } })
      expect(set.text).toBe(JSON.stringify(set.structured))
      const again = await callTool(client, 'set_budget', { month: '2026-05', categoryId: GROCERIES, planned: 0.1, note: 'agent' })
      expect(again.structured).toEqual(set.structured)
      const got = await callTool(client, 'get_budget', { month: '2026-05', includeUnplanned: true })
      expect(got.structured).toEqual({ data: await getBudget(server, made.key, '2026-05', '?includeUnplanned=true') })
      const refused = await callTool(client, 'set_budget', { month: '2026-05', categoryId: 'cat_nope', planned: 1 })
      expect([refused.isError, refused.structured.code, refused.structured.status]).toEqual([true, 'invalid_reference', 422])
      const badMonth = await callTool(client, 'get_budget', { month: '2026-13' })
      expect([badMonth.isError, badMonth.structured.code]).toEqual([true, 'validation_failed'])
      expect(badMonth.structured.detail).toContain("argument 'month'")
      const digits = await callTool(client, 'set_budget', { month: '2026-05', categoryId: GROCERIES, planned: 0.123456789 })
      expect([digits.isError, digits.structured.code]).toEqual([true, 'validation_failed'])
    } finally {
      await client.close()
    }
  })

  test('listed only for keys with the budgets scopes', async () => {
    const reader = await server.key(owner.id, { scopes: ['budgets:read'] })
    const writer = await server.key(owner.id, { scopes: ['budgets:write'] })
    for (const [key, tools] of [
      [reader.key, ['get_changes', 'get_budget']],
      [writer.key, ['set_budget']],
    ] as [string, string[]][]) {
      const client = await mcp(server, key)
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(tools)
      } finally {
        await client.close()
      }
    }
  })
})
