import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { Scope } from '../../src/platform/scopes.ts'
import { mcpAnswerText, sendRaw, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * CONTRACT §17 and §26, the tools agents asked for: update_account (a rename never touches the
 * balance), update_category, update_payee, bulk_update_transactions (at once up to 20 items,
 * above that a dry run and a confirm token), search_transactions' uncategorized, text and amount
 * arguments, spending_summary; every argument described and every tool's output declared (the
 * SDK client checks each result against it); get_context small for an empty ledger; and each new
 * tool hidden from, and refused to, a key without its REST twin's scope.
 */

setDefaultTimeout(30_000)

// biome-ignore lint/suspicious/noExplicitAny: tool results are JSON
type Json = any

const ALL_SCOPES: Scope[] = [
  'me:read',
  'accounts:read',
  'accounts:write',
  'transactions:read',
  'transactions:write',
  'categories:read',
  'categories:write',
  'payees:read',
  'payees:write',
]

let server: TestServer
let owner: { id: string; key: string }
let client: Client
let accountId: string

async function connect(key: string): Promise<Client> {
  const made = new Client({ name: 'agent-tools-test', version: '1.0.0' })
  await made.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return made
}

async function call(name: string, args: Record<string, unknown> = {}, using = client) {
  const result = (await using.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: Json; content: { text: string }[] }
  return { isError: result.isError === true, body: result.structuredContent, text: result.content[0]?.text ?? '' }
}

async function ok(name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const answer = await call(name, args)
  if (answer.isError) throw new Error(`${name} failed: ${answer.text}`)
  return answer.body
}

async function rest(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await server.request(method, path, { key: owner.key, body })
  if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status}: ${res.text}`)
  return res.json
}

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ name: 'Ana Silva', country: 'PT', defaultCurrency: 'EUR' })
  client = await connect(owner.key)
  accountId = (await rest('POST', '/v1/accounts', { name: 'Main', type: 'bank', balance: 1000, currency: 'EUR' })).data.id
})
afterAll(async () => {
  await client?.close()
  await server?.stop()
})

describe('what tools/list shows', () => {
  test('every argument of every tool has a description, and every tool declares an object outputSchema', async () => {
    const { tools } = await client.listTools()
    // Every scope: the tools of this issue and those of rules, budgets, imports and schedules.
    expect(tools.length).toBe(30)
    for (const tool of tools) {
      const properties = (tool.inputSchema as Json).properties as Record<string, Json>
      for (const [name, schema] of Object.entries(properties)) {
        expect({ tool: tool.name, name, described: typeof schema.description === 'string' && schema.description.length > 10 }).toEqual({
          tool: tool.name,
          name,
          described: true,
        })
      }
      expect({ tool: tool.name, type: (tool.outputSchema as Json)?.type }).toEqual({ tool: tool.name, type: 'object' })
    }
  })

  test('a raw POST /mcp with both Accept types gets one JSON answer and no session', async () => {
    const res = await sendRaw(server.url, '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_accounts', arguments: { limit: 1 } } }),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.headers.get('mcp-session-id')).toBeNull()
    expect(res.json.result.structuredContent.data[0].id).toBe(accountId)
    // Without text/event-stream in Accept the transport refuses (406): the docs say to send both.
    const single = await sendRaw(server.url, '/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(single.status).toBe(406)
  })
})

describe('get_context', () => {
  test('for an empty ledger it is small: system categories summarised as id, fullName and type', async () => {
    const empty = await server.owner({ name: 'Empty', country: 'PT' })
    const answer = JSON.parse(
      await mcpAnswerText(server, empty.key, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_context', arguments: {} } })),
    )
    const text = answer.result.content[0].text as string
    // Measured: 3.9 KB with the summary, 12 KB with every system category whole (as before this change).
    expect(text.length).toBeLessThan(5_000)
    const data = answer.result.structuredContent.data
    expect(data.categories).toEqual([])
    expect(data.systemCategorySummary.length).toBeGreaterThan(30)
    expect(data.systemCategorySummary[0]).toEqual({ id: expect.stringMatching(/^cat_sys_/), fullName: expect.any(String), type: expect.anything() })
    // Asked for, every category comes whole, as REST gives it by default.
    const full = JSON.parse(
      await mcpAnswerText(
        server,
        empty.key,
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_context', arguments: { systemCategories: 'full' } } }),
      ),
    )
    const rest = (await server.request('GET', '/v1/agent/context?payeeLimit=20&recentTransactionLimit=20', { key: empty.key })).json.data
    expect({ ...full.result.structuredContent.data, serverTime: 0 }).toEqual({ ...rest, serverTime: 0 })
    expect(rest.systemCategorySummary).toBeNull()
  })
})

describe('update tools', () => {
  test('update_account renames without touching the balance; balance only when sent', async () => {
    await rest('POST', '/v1/transactions', { accountId, amount: 12.5, date: '2026-11-01' })
    const renamed = await ok('update_account', { accountId, name: 'Everyday', color: '#2a9d8f' })
    expect(renamed.data).toMatchObject({ name: 'Everyday', color: '#2a9d8f', balance: 987.5 })
    expect(renamed).toEqual(await rest('GET', `/v1/accounts/${accountId}`))
    expect((await ok('update_account', { accountId, balance: 990 })).data.balance).toBe(990)
    expect((await ok('update_account', { accountId, color: null })).data).toMatchObject({ color: null, balance: 990, name: 'Everyday' })
    const wrong = await call('update_account', { accountId: 'acct_nope', name: 'x' })
    expect(wrong.isError).toBe(true)
    expect(wrong.body.code).toBe('not_found')
  })

  test('update_category and update_payee change the fields sent, as PATCH does', async () => {
    const category = (await rest('POST', '/v1/categories', { name: 'Hobbies', type: 'expense' })).data
    const moved = await ok('update_category', { categoryId: category.id, name: 'Garden', parentId: null, color: '#0a0' })
    expect(moved.data).toMatchObject({ name: 'Garden', color: '#0a0', type: 'expense', fullName: 'Garden' })
    expect(moved).toEqual(await rest('GET', `/v1/categories/${category.id}`))
    const system = await call('update_category', { categoryId: 'cat_sys_groceries', name: 'Mine' })
    expect(system.body.code).toBe('system_category_read_only')
    const payee = (await rest('POST', '/v1/payees', { name: 'Pingo Doce' })).data
    const updated = await ok('update_payee', { payeeId: payee.id, aliases: ['PINGO DOCE LISBOA'], categoryId: category.id })
    expect(updated.data).toMatchObject({ name: 'Pingo Doce', aliases: ['PINGO DOCE LISBOA'], categoryId: category.id })
    expect(updated).toEqual(await rest('GET', `/v1/payees/${payee.id}`))
  })
})

describe('search_transactions and spending_summary', () => {
  let groceries: Json

  beforeAll(async () => {
    const pingo = (await rest('POST', '/v1/payees', { name: 'Café Lisboa', aliases: ['CAFE LX'] })).data.id
    groceries = await rest('POST', '/v1/transactions', { accountId, amount: 42.1, date: '2026-10-02', categoryId: 'cat_sys_groceries', note: 'Weekly SHOP' })
    await rest('POST', '/v1/transactions', { accountId, amount: 3.2, date: '2026-10-03', payeeId: pingo })
    await rest('POST', '/v1/transactions', { accountId, amount: -1500, date: '2026-10-05', note: 'salário' })
    await rest('POST', '/v1/transactions', { accountId, amount: 0.00000001, date: '2026-10-06' })
  })

  test('uncategorized, text and amounts are REST’s categoryId=none, q and minAmount/maxAmount, money exact as a number or a string', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ uncategorized: true }, 'categoryId=none'],
      [{ text: 'cafe' }, 'q=cafe'],
      [{ text: 'SALARIO' }, 'q=SALARIO'],
      [{ text: 'shop', minAmount: 40 }, 'q=shop&minAmount=40'],
      [{ minAmount: 0.00000001, maxAmount: '0.00000001' }, 'minAmount=0.00000001&maxAmount=0.00000001'],
      [{ maxAmount: -100 }, 'maxAmount=-100'],
      [{ uncategorized: true, from: '2026-10-01', to: '2026-10-31', limit: 2 }, 'categoryId=none&from=2026-10-01&to=2026-10-31&limit=2'],
      [{ uncategorized: false }, 'limit=50'],
    ]
    for (const [args, query] of cases) {
      const answer = await ok('search_transactions', args)
      expect({ args, answer }).toEqual({ args, answer: await rest('GET', `/v1/transactions?${query}${query.includes('limit=') ? '' : '&limit=50'}`) })
    }
    expect((await ok('search_transactions', { minAmount: 0.00000001, maxAmount: 0.00000001 })).data).toHaveLength(1)
    expect((await ok('search_transactions', { text: 'shop' })).data.map((t: Json) => t.id)).toEqual([groceries.data.id])
  })

  test('refused: uncategorized with categoryId, a money value that is not one, an empty text', async () => {
    for (const [args, word] of [
      [{ uncategorized: true, categoryId: 'cat_sys_groceries' }, 'not both'],
      [{ minAmount: 1.123456789 }, 'decimal places'],
      [{ maxAmount: '1e3' }, 'maxAmount'],
      [{ text: '' }, 'text'],
    ] as const) {
      const answer = await call('search_transactions', args)
      expect(answer.isError).toBe(true)
      expect(answer.body.code).toBe('validation_failed')
      expect(answer.body.detail).toContain(word)
    }
  })

  test('spending_summary is REST’s report, 50 groups unless asked', async () => {
    const answer = await ok('spending_summary', { groupBy: 'category', from: '2026-10-01', to: '2026-10-31' })
    expect(answer).toEqual(await rest('GET', '/v1/reports/spending?groupBy=category&from=2026-10-01&to=2026-10-31&limit=50'))
    expect(answer.data.groups.find((g: Json) => g.key === 'cat_sys_groceries')).toMatchObject({ spent: 42.1, currency: 'EUR' })
    const months = await ok('spending_summary', { groupBy: 'month', from: '2026-01-01', to: '2026-12-31', limit: 1, accountId })
    expect(months.data).toMatchObject({ groupBy: 'month', accountId, groups: [{ key: '2026-10' }], omittedGroups: 1 })
  })
})

describe('bulk_update_transactions', () => {
  async function make(count: number, note = 'bulk'): Promise<string[]> {
    const items = Array.from({ length: count }, (_, i) => ({
      externalId: `${note}-${crypto.randomUUID()}-${i}`,
      accountId,
      amount: 1,
      date: '2026-09-01',
      note,
    }))
    return (await rest('POST', '/v1/transactions/batch', { items })).data.map((item: Json) => item.data.id)
  }

  test('up to 20 items act at once, as their PATCHes would', async () => {
    const ids = await make(20)
    const answer = await ok('bulk_update_transactions', { patch: { categoryId: 'cat_sys_groceries' }, items: ids.map((transactionId) => ({ transactionId })) })
    expect(answer.summary).toEqual({ updated: 20, unchanged: 0, failed: 0 })
    expect(answer.confirmToken).toBeUndefined()
    for (const id of ids) expect((await rest('GET', `/v1/transactions/${id}`)).data.categoryId).toBe('cat_sys_groceries')
  })

  test('above 20: a dry run and a token first (nothing written), then the token applies exactly those items, once', async () => {
    const ids = await make(25)
    const args = { patch: { note: 'reviewed' }, items: ids.map((transactionId, i) => ({ transactionId, ...(i === 0 ? { patch: { amount: 2 } } : {}) })) }
    const plan = await call('bulk_update_transactions', args)
    expect(plan.isError).toBe(false)
    expect(plan.text).toStartWith('Dry run only, nothing written')
    expect(plan.body.summary).toEqual({ updated: 25, unchanged: 0, failed: 0 })
    expect(plan.body.data[0].data).toMatchObject({ id: ids[0], note: 'reviewed', amount: 2 })
    expect(plan.body.confirmToken).toStartWith('cfm_')
    expect((await rest('GET', `/v1/transactions/${ids[0]}`)).data).toMatchObject({ note: 'bulk', amount: 1 })
    // Another set of items, or another patch, is not what the token was made for.
    const other = await call('bulk_update_transactions', { ...args, patch: { note: 'other' }, confirmToken: plan.body.confirmToken })
    expect(other.body.code).toBe('confirmation_required')
    const done = await ok('bulk_update_transactions', { ...args, confirmToken: plan.body.confirmToken })
    expect(done.summary).toEqual({ updated: 25, unchanged: 0, failed: 0 })
    expect((await rest('GET', `/v1/transactions/${ids[0]}`)).data).toMatchObject({ note: 'reviewed', amount: 2 })
    // The items changed (by the token itself): it does not act again.
    const again = await call('bulk_update_transactions', { ...args, confirmToken: plan.body.confirmToken })
    expect(again.body.code).toBe('confirmation_required')
  })

  test('a token is void once one of its transactions changed; a dry run with failures gives no token', async () => {
    const ids = await make(21)
    const args = { patch: { note: 'later' }, items: ids.map((transactionId) => ({ transactionId })) }
    const plan = await ok('bulk_update_transactions', args)
    await rest('PATCH', `/v1/transactions/${ids[7]}`, { note: 'changed meanwhile' })
    const stale = await call('bulk_update_transactions', { ...args, confirmToken: plan.confirmToken })
    expect(stale.body.code).toBe('confirmation_required')
    expect((await rest('GET', `/v1/transactions/${ids[0]}`)).data.note).toBe('bulk')
    const failing = await call('bulk_update_transactions', { ...args, items: [...args.items, { transactionId: 'txn_gone' }] })
    expect(failing.isError).toBe(false)
    expect(failing.text).toStartWith('Dry run: 1 item(s) would fail')
    expect(failing.body.confirmToken).toBeUndefined()
    expect(failing.body.data.at(-1).errors[0]).toMatchObject({ field: 'transactionId', code: 'invalid_reference' })
  })
})

describe('scopes: each new tool needs its REST twin’s', () => {
  const NEEDS: [tool: string, scope: Scope, args: Record<string, unknown>][] = [
    ['update_account', 'accounts:write', { accountId: 'acct_x', name: 'x' }],
    ['update_category', 'categories:write', { categoryId: 'cat_x', name: 'x' }],
    ['update_payee', 'payees:write', { payeeId: 'pay_x', name: 'x' }],
    ['bulk_update_transactions', 'transactions:write', { items: [{ transactionId: 'txn_x' }] }],
    ['search_transactions', 'transactions:read', { uncategorized: true }],
    ['spending_summary', 'transactions:read', { groupBy: 'month', from: '2026-01-01', to: '2026-01-31' }],
  ]
  for (const [tool, scope, args] of NEEDS) {
    test(`${tool} without ${scope}: not listed, and a call is the MCP error -32602`, async () => {
      const key = (await server.key(owner.id, { scopes: ALL_SCOPES.filter((other) => other !== scope) })).key
      const limited = await connect(key)
      try {
        expect((await limited.listTools()).tools.map((listed) => listed.name)).not.toContain(tool)
        let error: unknown
        try {
          await limited.callTool({ name: tool, arguments: args })
        } catch (caught) {
          error = caught
        }
        expect((error as { code?: number }).code).toBe(-32602)
      } finally {
        await limited.close()
      }
      // With the scope, the same key shape lists it.
      const allowed = (await server.key(owner.id, { scopes: ALL_SCOPES })).key
      const reply = JSON.parse(await mcpAnswerText(server, allowed, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })))
      expect(reply.result.tools.map((listed: Json) => listed.name)).toContain(tool)
    })
  }
})
