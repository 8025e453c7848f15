import { afterAll, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  type Change,
  createPfinClient,
  isPfinError,
  MONEY_FIELDS,
  type Model,
  PfinError,
  type PfinErrorCode,
  PROBLEM_CODES,
  parseExact,
  quoteMoneyNumbers,
  type RetryEvent,
  stringifyExact,
} from '../../clients/typescript/src/index.ts'
import { buildDocument, SCHEMA_FILE } from '../../clients/typescript/scripts/generate.ts'
import { renderSchema } from '../../clients/typescript/scripts/render.ts'
import { startTestServer, startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * The TypeScript client in clients/typescript works as its README says, against real pfin servers.
 * The package build (tsc → dist, then loaded by Node) runs in the background from the start.
 */

const ROOT = join(import.meta.dir, '..', '..')
const CLIENT_DIR = join(ROOT, 'clients', 'typescript')
const BUILD_DIR = join(ROOT, '.tmp', `ts-client-build-${crypto.randomUUID()}`)

let server: TestServer
let owner: { id: string; key: string }
let build: Promise<{ code: number; output: string }>

function spawnText(cmd: string[], cwd: string): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  return Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]).then(([out, err, code]) => ({
    code,
    output: out + err,
  }))
}

beforeAll(async () => {
  mkdirSync(BUILD_DIR, { recursive: true })
  // The package as it would be published: its own tsconfig (DOM types, no Bun types) emitting dist/.
  build = spawnText(['bunx', 'tsc', '-p', join(CLIENT_DIR, 'tsconfig.json'), '--outDir', BUILD_DIR], ROOT)
  server = await startUnthrottledServer()
  owner = await server.owner()
})
afterAll(async () => {
  await build.catch(() => {})
  await server?.stop()
  rmSync(BUILD_DIR, { recursive: true, force: true })
})

/** A fetch that records what it sends. */
function recordingFetch() {
  const sent: { method: string; path: string; key: string | null }[] = []
  const fetch = async (request: Request) => {
    const url = new URL(request.url)
    sent.push({ method: request.method, path: url.pathname + url.search, key: request.headers.get('idempotency-key') })
    return globalThis.fetch(request)
  }
  return { sent, fetch }
}

async function newAccount(client: ReturnType<typeof createPfinClient>, name: string, balance = 0, currency = 'EUR') {
  const { data } = await client.post('/v1/accounts', { body: { name, type: 'bank', balance, currency } })
  return data
}

describe('generated types', () => {
  test('src/schema.ts is what the served /openapi.json generates now (run `bun run client:generate` when this fails)', async () => {
    const plain = await startTestServer()
    try {
      const res = await plain.request('GET', '/openapi.json')
      expect(res.status).toBe(200)
      // The generator builds the document in-process; it must be the one a server serves.
      expect(await buildDocument()).toEqual(res.json)
      const expected = await renderSchema(res.json)
      const current = readFileSync(SCHEMA_FILE, 'utf8')
      if (current !== expected) throw new Error(`${SCHEMA_FILE} is out of date: run \`bun run client:generate\` and commit it`)
    } finally {
      await plain.stop()
    }
  }, 20_000)

  test('PROBLEM_CODES is every code the document lists, CONTRACT §6 storage and feed codes included', async () => {
    const res = await server.request('GET', '/openapi.json')
    expect([...PROBLEM_CODES].sort()).toEqual([...res.json.components.schemas.Problem.properties.code.enum].sort())
    const codes: PfinErrorCode[] = ['cursor_expired', 'insufficient_storage', 'storage_unavailable', 'unexpected_response']
    expect(codes.slice(0, 3).every((c) => (PROBLEM_CODES as readonly string[]).includes(c))).toBe(true)
  })

  test('type probes: Idempotency-Key optional, money typed by exactDecimals (checked by tsc)', () => {
    const plain = createPfinClient({ baseUrl: server.url, apiKey: owner.key })
    const exact = createPfinClient({ baseUrl: server.url, apiKey: owner.key, exactDecimals: true })
    const probes = async () => {
      // No Idempotency-Key needed: the client makes one.
      const a = await plain.post('/v1/accounts', { body: { name: 'n', type: 'bank', balance: 1, currency: 'EUR' } })
      const n: number = a.data.balance
      // @ts-expect-error money is a number without exactDecimals
      await plain.post('/v1/accounts', { body: { name: 'n', type: 'bank', balance: '1', currency: 'EUR' } })
      const b = await exact.post('/v1/accounts', { body: { name: 'n', type: 'bank', balance: '1.10', currency: 'EUR' } })
      const s: string = b.data.balance
      // @ts-expect-error money is a string with exactDecimals
      const wrong: number = b.data.balance
      // @ts-expect-error date is required
      await plain.post('/v1/transactions', { body: { accountId: 'acct_x', amount: 1 } })
      for await (const t of exact.paginate('/v1/transactions', { query: { accountId: 'acct_x' } })) {
        const amount: string = t.amount
        void amount
      }
      // @ts-expect-error /v1/me is not a list
      plain.paginate('/v1/me')
      const txn: Model<'Transaction', true> = (await exact.get('/v1/transactions/{transactionId}', { params: { path: { transactionId: 'txn_x' } } })).data
      return [n, s, wrong, txn]
    }
    expect(typeof probes).toBe('function')
  })
})

describe('against a real server', () => {
  test('create, transfer, upsert: every write carries an Idempotency-Key', async () => {
    const { sent, fetch } = recordingFetch()
    const client = createPfinClient({ baseUrl: server.url, apiKey: owner.key, fetch })
    const checking = await newAccount(client, 'Checking', 1000)
    const usd = await newAccount(client, 'Dollars', 0, 'USD')
    expect(checking).toMatchObject({ name: 'Checking', balance: 1000, currency: 'EUR' })

    const { data: expense } = await client.post('/v1/transactions', {
      body: { accountId: checking.id, amount: 12.9, date: '2026-11-21', payeeName: 'Pingo Doce' },
    })
    expect(expense).toMatchObject({ amount: 12.9, isTransfer: false })
    const { data: transfer } = await client.post('/v1/transactions', {
      body: { accountId: checking.id, amount: 100, date: '2026-11-21', isTransfer: true, transferToAccountId: usd.id, exchangeRate: 1.0842 },
    })
    expect(transfer).toMatchObject({ isTransfer: true, transferToAccountId: usd.id, destinationAmount: 108.42, exchangeRate: 1.0842 })

    const upsert = (amount: number) =>
      client.POST('/v1/transactions/upsert', { body: { externalId: 'bank-1', accountId: checking.id, amount, date: '2026-11-20', note: 'salary' } })
    const first = await upsert(-2500)
    const second = await upsert(-2600)
    expect([first.response.status, second.response.status]).toEqual([201, 200])
    expect(second.data?.data).toMatchObject({ id: first.data?.data.id, amount: -2600 })

    const { data: after } = await client.get('/v1/accounts/{accountId}', { params: { path: { accountId: checking.id } } })
    expect(after.balance).toBe(1000 - 12.9 - 100 + 2600)
    const { data: dollars } = await client.get('/v1/accounts/{accountId}', { params: { path: { accountId: usd.id } } })
    expect(dollars.balance).toBe(108.42)

    const writes = sent.filter((r) => r.method === 'POST' || r.method === 'PATCH')
    expect(writes.length).toBe(6)
    expect(writes.every((r) => typeof r.key === 'string' && r.key.length > 0)).toBe(true)
    expect(new Set(writes.map((r) => r.key)).size).toBe(6)
    expect(sent.filter((r) => r.method === 'GET').every((r) => r.key === null)).toBe(true)

    // A key the caller gives is the one sent.
    const patched = await client.PATCH('/v1/transactions/{transactionId}', {
      params: { path: { transactionId: expense.id }, header: { 'Idempotency-Key': 'my-own-key-1' } },
      body: { note: 'groceries' },
    })
    expect(patched.data?.data.note).toBe('groceries')
    expect(sent.at(-1)?.key).toBe('my-own-key-1')
  })

  test('batch import (dry run, then for real), then paging through 300 transactions', async () => {
    const { sent, fetch } = recordingFetch()
    const client = createPfinClient({ baseUrl: server.url, apiKey: owner.key, fetch })
    const account = await newAccount(client, 'Imported')
    const items = Array.from({ length: 300 }, (_, i) => ({
      externalId: `imp-${i}`,
      accountId: account.id,
      amount: i + 0.25,
      date: `2026-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
    }))
    const dry = await client.transactions.batch(items, { dryRun: true })
    expect(dry.summary).toEqual({ created: 300, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 })
    const real = await client.transactions.batch(items)
    expect(real.summary.created).toBe(300)
    const again = await client.transactions.batch(items)
    expect(again.summary.unchanged).toBe(300)

    const before = sent.length
    const seen: Model<'Transaction'>[] = []
    for await (const t of client.paginate('/v1/transactions', { query: { accountId: account.id, limit: 70 } })) seen.push(t)
    expect(seen.length).toBe(300)
    expect(new Set(seen.map((t) => t.id)).size).toBe(300)
    expect(new Set(seen.map((t) => t.externalId))).toEqual(new Set(items.map((i) => i.externalId)))
    // newest first
    expect(seen.map((t) => t.date)).toEqual([...seen.map((t) => t.date)].sort().reverse())
    expect(sent.length - before).toBe(5) // 70 × 4 + 20
    expect(sent.slice(before + 1).every((r) => r.path.includes('cursor='))).toBe(true)

    // Stops early without fetching more when the loop breaks.
    let n = 0
    const mark = sent.length
    for await (const _ of client.paginate('/v1/transactions', { query: { accountId: account.id, limit: 10 } })) if (++n === 3) break
    expect(sent.length - mark).toBe(1)

    // A failing item: the whole batch is refused, the item named.
    const bad = await client.transactions
      .batch([...items.slice(0, 2), { ...items[2], externalId: 'imp-bad', amount: 1.123456789 }] as typeof items)
      .catch((e) => e)
    expect(bad).toBeInstanceOf(PfinError)
    expect(bad).toMatchObject({ status: 422, code: 'validation_failed' })
    expect(bad.detail).toStartWith('items[2].amount')
  })

  test('a sync loop over /v1/changes sees creates, updates and a delete (tombstone with externalId)', async () => {
    const { key } = await server.owner()
    const client = createPfinClient({ baseUrl: server.url, apiKey: key })
    const account = await newAccount(client, 'Synced', 50)
    const { data: a } = await client.post('/v1/transactions/upsert', { body: { externalId: 'sync-a', accountId: account.id, amount: 5, date: '2026-11-01' } })
    const { data: b } = await client.post('/v1/transactions/upsert', { body: { externalId: 'sync-b', accountId: account.id, amount: 7, date: '2026-11-02' } })

    // The local mirror a sync client keeps.
    const mirror = new Map<string, Change['data']>()
    let saved: string | undefined
    const feed = client.changes({ limit: 2 })
    const sync = async () => {
      let pages = 0
      for await (const page of feed) {
        pages++
        for (const change of page.data) {
          if (change.op === 'delete') mirror.delete(`${change.resource}:${change.id}`)
          else mirror.set(`${change.resource}:${change.id}`, change.data)
        }
        saved = page.nextCursor
      }
      return pages
    }
    expect(await sync()).toBeGreaterThanOrEqual(2)
    expect(feed.cursor).toBe(saved)
    expect(mirror.get(`transaction:${a.id}`)).toMatchObject({ amount: 5, externalId: 'sync-a' })
    expect(mirror.get(`account:${account.id}`)).toMatchObject({ balance: 50 - 12 })
    const payees = [...mirror.keys()].filter((k) => k.startsWith('payee:'))
    expect(payees).toEqual([])

    // Caught up: one empty page, same position.
    expect(await sync()).toBe(1)

    await client.patch('/v1/transactions/{transactionId}', { params: { path: { transactionId: a.id } }, body: { amount: 6 } })
    const { data: deleted } = await client.delete('/v1/transactions/{transactionId}', { params: { path: { transactionId: b.id } } })
    expect(deleted.id).toBe(b.id)

    // A new feed object from the saved cursor (as after a restart) sees just what changed.
    const resumed = client.changes({ cursor: saved })
    const changes: Change[] = []
    for await (const page of resumed) changes.push(...page.data)
    expect(changes.map((c) => `${c.resource}:${c.op}`).sort()).toEqual(['account:upsert', 'transaction:delete', 'transaction:upsert'])
    const tombstone = changes.find((c) => c.op === 'delete')
    expect(tombstone).toMatchObject({ resource: 'transaction', id: b.id, externalId: 'sync-b', data: null })
    expect(changes.find((c) => c.resource === 'account')?.data).toMatchObject({ balance: 50 - 6 })

    // resources= narrows the kinds.
    const onlyAccounts: Change[] = []
    for await (const page of client.changes({ resources: ['accounts'] })) onlyAccounts.push(...page.data)
    expect(onlyAccounts.map((c) => c.resource)).toEqual(['account'])

    // A page whose loop body throws is not passed: the next iteration fetches it again.
    const strict = client.changes({ cursor: saved })
    await expect(
      (async () => {
        for await (const _ of strict) throw new Error('apply failed')
      })(),
    ).rejects.toThrow('apply failed')
    expect(strict.cursor).toBe(saved)
  })

  test('410 cursor_expired surfaces as a typed error, and reset() resyncs (TOMBSTONE_RETENTION_DAYS=0)', async () => {
    const purging = await startTestServer({ env: { TOMBSTONE_RETENTION_DAYS: '0', RATE_LIMIT_PER_MINUTE: '100000' } })
    try {
      const { key } = await purging.owner()
      const client = createPfinClient({ baseUrl: purging.url, apiKey: key })
      const account = await newAccount(client, 'Short memory', 10)
      const { data: t } = await client.post('/v1/transactions', { body: { accountId: account.id, amount: 1, date: '2026-11-01' } })
      const feed = client.changes()
      for await (const _ of feed) {
      }
      const cursor = feed.cursor
      expect(cursor).toStartWith('chg_')

      await client.delete('/v1/transactions/{transactionId}', { params: { path: { transactionId: t.id } } })
      await Bun.sleep(5) // the tombstone is now older than a retention of 0 days
      const error = await (async () => {
        for await (const _ of feed) {
        }
      })().catch((e) => e)
      expect(isPfinError(error, 'cursor_expired')).toBe(true)
      expect(error).toMatchObject({ status: 410, code: 'cursor_expired', type: 'urn:pfin:problem:cursor_expired', title: 'Cursor expired' })
      expect(error.detail).toContain('resync')
      expect(error.requestId).toStartWith('req_')
      expect(feed.cursor).toBe(cursor)

      feed.reset()
      const all: Change[] = []
      for await (const page of feed) all.push(...page.data)
      expect(all.map((c) => `${c.resource}:${c.id}`)).toEqual([`account:${account.id}`])
      expect(all[0]?.data).toMatchObject({ balance: 10 })
      expect(feed.cursor).not.toBe(cursor)
    } finally {
      await purging.stop()
    }
  })

  test('errors are PfinError with the problem fields; the result objects of GET/POST keep them typed', async () => {
    const client = createPfinClient({ baseUrl: server.url, apiKey: owner.key, exactDecimals: true })
    // INT64_MAX / 10^8: beyond the money range (|value| ≤ 92233720368), so 422.
    const error = await client
      .post('/v1/accounts', { body: { name: 'Too rich', type: 'bank', balance: '92233720368.54775807', currency: 'EUR' } })
      .catch((e) => e)
    expect(error).toBeInstanceOf(PfinError)
    expect(error).toMatchObject({
      name: 'PfinError',
      status: 422,
      code: 'validation_failed',
      title: 'Validation failed',
      type: 'urn:pfin:problem:validation_failed',
    })
    expect(error.detail).toContain('balance')
    expect(error.requestId).toBe(error.response.headers.get('x-request-id'))
    expect(error.message).toContain('validation_failed')

    const missing = await client.GET('/v1/accounts/{accountId}', { params: { path: { accountId: 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' } } })
    expect(missing.error).toMatchObject({ status: 404, code: 'not_found' })
    const notFound = await client.get('/v1/accounts/{accountId}', { params: { path: { accountId: 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b' } } }).catch((e) => e)
    expect(isPfinError(notFound, 'not_found')).toBe(true)

    const badKey = createPfinClient({ baseUrl: server.url, apiKey: 'pfk_nope_nope' })
    const unauthorized = await badKey.get('/v1/me').catch((e) => e)
    expect(unauthorized).toMatchObject({ status: 401, code: 'unauthorized' })

    // Not a pfin problem body (a proxy's page): still a PfinError, code unexpected_response.
    const proxied = createPfinClient({
      baseUrl: server.url,
      apiKey: owner.key,
      retries: 0,
      fetch: async () => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
    })
    const gateway = await proxied.get('/v1/me').catch((e) => e)
    expect(gateway).toMatchObject({ status: 502, code: 'unexpected_response', requestId: null })
    expect(gateway.detail).toContain('Bad gateway')
    // A problem code this client does not know (a newer server) is not passed off as a known one.
    const newer = createPfinClient({
      baseUrl: server.url,
      apiKey: owner.key,
      fetch: async () =>
        new Response(
          JSON.stringify({
            type: 'urn:pfin:problem:brand_new',
            title: 'Brand new',
            detail: 'x: something new',
            status: 422,
            code: 'brand_new',
            request_id: 'req_1',
          }),
          {
            status: 422,
            headers: { 'content-type': 'application/problem+json' },
          },
        ),
    })
    expect(await newer.get('/v1/me').catch((e) => e)).toMatchObject({
      status: 422,
      code: 'unexpected_response',
      detail: 'brand_new: x: something new',
      requestId: 'req_1',
      title: 'Brand new',
    })
  })

  test('a retry after a lost response reuses the Idempotency-Key: replayed, one row written', async () => {
    const { key } = await server.owner()
    const attempts: { key: string | null; status: number }[] = []
    let dropped = false
    const events: RetryEvent[] = []
    const client = createPfinClient({
      baseUrl: server.url,
      apiKey: key,
      retries: { baseDelayMs: 10 },
      onRetry: (event) => events.push(event),
      fetch: async (request) => {
        const response = await globalThis.fetch(request)
        if (request.method === 'POST') attempts.push({ key: request.headers.get('idempotency-key'), status: response.status })
        if (request.method === 'POST' && new URL(request.url).pathname === '/v1/transactions' && !dropped) {
          // The server handled it; the answer is lost on the way back.
          dropped = true
          await response.text()
          throw new TypeError('fetch failed: connection reset')
        }
        return response
      },
    })
    const account = await newAccount(client, 'Flaky network', 100)
    const created = await client.POST('/v1/transactions', { body: { accountId: account.id, amount: 30, date: '2026-11-21', note: 'once' } })
    expect(created.response.status).toBe(201)
    expect(created.response.headers.get('idempotent-replayed')).toBe('true')
    const txnAttempts = attempts.slice(1)
    expect(txnAttempts.length).toBe(2)
    expect(txnAttempts[0]?.key).toBeString()
    expect(txnAttempts[1]?.key).toBe(txnAttempts[0]?.key ?? 'none')
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ method: 'POST', attempt: 1, reason: 'network', idempotencyKey: txnAttempts[0]?.key })

    const rows: Model<'Transaction'>[] = []
    for await (const t of client.paginate('/v1/transactions', { query: { accountId: account.id } })) rows.push(t)
    expect(rows.map((t) => t.note)).toEqual(['once'])
    const { data } = await client.get('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })
    expect(data.balance).toBe(70)
  })

  test('exact decimals: 92233720367.99999999 round-trips as a string, sent as a bare JSON number', async () => {
    const { key } = await server.owner()
    const bodies: string[] = []
    const exact = createPfinClient({
      baseUrl: server.url,
      apiKey: key,
      exactDecimals: true,
      fetch: async (request) => {
        if (request.method === 'POST') bodies.push(await request.clone().text())
        return globalThis.fetch(request)
      },
    })
    const plain = createPfinClient({ baseUrl: server.url, apiKey: key })
    const TOP = '92233720367.99999999' // more digits than a double holds: as a number it reads 92233720368
    expect(Number(TOP)).toBe(92233720368)

    const { data: account } = await exact.post('/v1/accounts', { body: { name: 'Exact', type: 'bank', balance: TOP, currency: 'EUR' } })
    expect(bodies[0]).toContain(`"balance":${TOP},`)
    expect(account.balance).toBe(TOP)
    const { data: again } = await exact.get('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })
    expect(again.balance).toBe(TOP)
    expect((await plain.get('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })).data.balance).toBe(92233720368)

    const { data: tiny } = await exact.post('/v1/transactions', {
      body: { accountId: account.id, amount: '0.00000001', date: '2026-11-21', payeeName: 'Exact Shop' },
    })
    expect(tiny.amount).toBe('0.00000001')
    expect((await exact.get('/v1/accounts/{accountId}', { params: { path: { accountId: account.id } } })).data.balance).toBe('92233720367.99999998')
    // Numbers still work, and come back as strings.
    const { data: other } = await exact.post('/v1/accounts', { body: { name: 'Other', type: 'bank', balance: 0, currency: 'USD' } })
    expect(other.balance).toBe('0')
    const { data: transfer } = await exact.post('/v1/transactions', {
      body: { accountId: account.id, amount: '10.00000001', date: '2026-11-21', isTransfer: true, transferToAccountId: other.id, exchangeRate: '1.08420000' },
    })
    expect(transfer).toMatchObject({ amount: '10.00000001', exchangeRate: '1.08420000', destinationAmount: '10.84200001' })

    // Everywhere: lists, the feed, payees; and every value equals the source-text reviver's reading.
    const listed = []
    for await (const t of exact.paginate('/v1/transactions', { query: { accountId: account.id } })) listed.push(t.amount)
    expect(listed.sort()).toEqual(['0.00000001', '10.00000001'])
    const { data: payees } = await exact.get('/v1/payees', { params: { query: { q: 'exact shop' } } })
    expect(payees[0]?.totalSpent).toBe('0.00000001')
    const feed: Change<true>[] = []
    for await (const page of exact.changes({ resources: ['accounts'] })) feed.push(...page.data)
    expect(feed.map((c) => (c.data as Model<'Account', true>).balance)).toContain('92233720357.99999997')

    const res = await server.request('GET', '/v1/changes', { key })
    const reviver = JSON.parse(res.text, (k, v, ctx?: { source?: string }) =>
      (MONEY_FIELDS as readonly string[]).includes(k) && typeof v === 'number' ? ctx?.source : v,
    )
    expect(parseExact(res.text)).toEqual(reviver)
    expect(reviver.data.length).toBeGreaterThan(3)

    // A string that is not a decimal is refused before anything is sent.
    const sentBefore = bodies.length
    await expect(exact.post('/v1/accounts', { body: { name: 'x', type: 'bank', balance: '1,5', currency: 'EUR' } })).rejects.toThrow(TypeError)
    expect(bodies.length).toBe(sentBefore)
  })

  test('budgets (CONTRACT §27): put with a key the client makes and reuses, exact money in plans and figures, the feed', async () => {
    const { key } = await server.owner({ defaultCurrency: 'EUR' })
    const sent: { method: string; key: string | null; body: string }[] = []
    const exact = createPfinClient({
      baseUrl: server.url,
      apiKey: key,
      exactDecimals: true,
      fetch: async (request) => {
        sent.push({ method: request.method, key: request.headers.get('idempotency-key'), body: await request.clone().text() })
        return globalThis.fetch(request)
      },
    })
    const { data: account } = await exact.post('/v1/accounts', { body: { name: 'Budget', type: 'bank', balance: '0', currency: 'EUR' } })
    await exact.post('/v1/transactions', { body: { accountId: account.id, amount: '0.1', date: '2026-03-02', categoryId: 'cat_sys_groceries' } })
    await exact.post('/v1/transactions', { body: { accountId: account.id, amount: '0.2', date: '2026-03-03', categoryId: 'cat_sys_groceries' } })
    const { data: plan } = await exact.put('/v1/budgets/{month}/categories/{categoryId}', {
      params: { path: { month: '2026-03', categoryId: 'cat_sys_groceries' } },
      body: { planned: '92233720367.99999999' },
    })
    expect(plan.categories).toEqual([{ categoryId: 'cat_sys_groceries', planned: '92233720367.99999999', note: null }])
    const put = sent.find((request) => request.method === 'PUT')
    expect(put?.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(put?.body).toBe('{"planned":92233720367.99999999}')
    const { data: budget } = await exact.get('/v1/budgets/{month}', { params: { path: { month: '2026-03' } } })
    expect(budget.categories[0]).toMatchObject({ spent: '0.3', remaining: '92233720367.69999999' })
    expect(budget.totals).toEqual({ plannedExpense: '92233720367.99999999', spentExpense: '0.3', plannedIncome: '0', receivedIncome: '0' })
    const feed: Change<true>[] = []
    for await (const page of exact.changes({ resources: ['budgets'] })) feed.push(...page.data)
    expect(feed.map((change) => [change.resource, change.id])).toEqual([['budget', '2026-03']])
    expect((feed[0]?.data as Model<'BudgetPlan', true> | undefined)?.categories[0]?.planned).toBe('92233720367.99999999')
  })

  test('exact JSON helpers: only money keys, strings and escapes respected', () => {
    const text = '{"amount":1.10,"note":"\\"amount\\":2.5","n":{"balance":-0.00000001,"seq":12},"list":[{"totalSpent":0}],"amounts":3}'
    expect(quoteMoneyNumbers(text)).toBe(
      '{"amount":"1.10","note":"\\"amount\\":2.5","n":{"balance":"-0.00000001","seq":12},"list":[{"totalSpent":"0"}],"amounts":3}',
    )
    expect(stringifyExact({ amount: '1.10', b: [undefined, 1], c: undefined, d: new Date(0), exchangeRate: 2n })).toBe(
      '{"amount":1.10,"b":[null,1],"d":"1970-01-01T00:00:00.000Z","exchangeRate":2}',
    )
    expect(() => stringifyExact({ amount: '1e' })).toThrow(TypeError)
    expect(() => stringifyExact({ amount: 'NaN' })).toThrow(TypeError)
  })
})

describe('retries', () => {
  test('429: waits Retry-After, then succeeds (a limit of 2 a minute, 0.9 s before the minute ends)', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_PER_DAY: '1000' } })
    const { key } = await limited.owner()
    // The server reads the clock through Date. Stopped at 0.9 s before a minute ends while the
    // limit is used up (however slow the machine), then running on: Retry-After is 1 s, not up to 60.
    const at = Math.ceil((Date.now() + 2_000) / 60_000) * 60_000 - 900
    setSystemTime(new Date(at))
    let ticker: ReturnType<typeof setInterval> | undefined
    try {
      const events: RetryEvent[] = []
      const client = createPfinClient({ baseUrl: limited.url, apiKey: key, onRetry: (e) => events.push(e) })
      await client.get('/v1/me')
      await client.POST('/v1/accounts', { body: { name: 'Limited', type: 'bank', balance: 0, currency: 'EUR' } })
      const started = performance.now()
      ticker = setInterval(() => setSystemTime(new Date(at + (performance.now() - started))), 5)
      const third = await client.POST('/v1/accounts', { body: { name: 'Limited 2', type: 'bank', balance: 0, currency: 'EUR' } })
      const elapsed = performance.now() - started
      expect(third.response.status).toBe(201)
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({ reason: 429, attempt: 1, delayMs: 1000 })
      expect(elapsed).toBeGreaterThanOrEqual(990)
      expect(third.response.headers.get('idempotent-replayed')).toBeNull()

      // With no wait allowed, the 429 surfaces as a typed error carrying Retry-After.
      await client.get('/v1/me')
      const impatient = createPfinClient({ baseUrl: limited.url, apiKey: key, retries: { maxTotalWaitMs: 0 } })
      const error = await impatient.get('/v1/me').catch((e) => e)
      expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' })
      expect(error.retryAfter).toBeGreaterThanOrEqual(1)
    } finally {
      clearInterval(ticker)
      setSystemTime()
      await limited.stop()
    }
  }, 15_000)

  /** A fetch that answers from a script, recording the keys it saw. */
  function scripted(responses: (() => Response | Promise<Response>)[]) {
    const keys: (string | null)[] = []
    let i = 0
    const fetch = async (request: Request) => {
      keys.push(request.headers.get('idempotency-key'))
      await request.arrayBuffer()
      const next = responses[Math.min(i++, responses.length - 1)]
      if (!next) throw new Error('no script')
      return next()
    }
    return { keys, fetch, calls: () => i }
  }
  const problem =
    (status: number, code: string, headers: Record<string, string> = {}) =>
    () =>
      new Response(JSON.stringify({ type: `urn:pfin:problem:${code}`, title: code, detail: code, status, code, request_id: 'req_x' }), {
        status,
        headers: { 'content-type': 'application/problem+json', ...headers },
      })
  const ok = () => new Response(JSON.stringify({ data: { id: 'acct_x' } }), { status: 201, headers: { 'content-type': 'application/json' } })
  const body = { name: 'x', type: 'bank' as const, balance: 0, currency: 'EUR' }

  test('409 idempotency_key_in_progress and 503 are retried with the same key; other 409s are not', async () => {
    const s = scripted([problem(409, 'idempotency_key_in_progress', { 'retry-after': '0' }), problem(503, 'storage_unavailable', { 'retry-after': '0' }), ok])
    const client = createPfinClient({ baseUrl: 'http://pfin.invalid', apiKey: 'k', fetch: s.fetch })
    expect(await client.post('/v1/accounts', { body })).toEqual({ data: { id: 'acct_x' } } as never)
    expect(s.calls()).toBe(3)
    expect(new Set(s.keys).size).toBe(1)

    const reused = scripted([problem(409, 'idempotency_key_reused'), ok])
    const other = createPfinClient({ baseUrl: 'http://pfin.invalid', apiKey: 'k', fetch: reused.fetch })
    expect(await other.post('/v1/accounts', { body }).catch((e) => e.code)).toBe('idempotency_key_reused')
    expect(reused.calls()).toBe(1)
  })

  test('bounded: at most `max` retries; 4xx and 507 are not retried; DELETE is not retried after a network error', async () => {
    const failing = scripted([problem(500, 'internal_error')])
    const client = createPfinClient({ baseUrl: 'http://pfin.invalid', apiKey: 'k', fetch: failing.fetch, retries: { max: 2, baseDelayMs: 1 } })
    expect(await client.post('/v1/accounts', { body }).catch((e) => e.code)).toBe('internal_error')
    expect(failing.calls()).toBe(3)
    expect(new Set(failing.keys).size).toBe(1)

    for (const [status, code] of [
      [422, 'validation_failed'],
      [507, 'insufficient_storage'],
    ] as const) {
      const s = scripted([problem(status, code)])
      const c = createPfinClient({ baseUrl: 'http://pfin.invalid', apiKey: 'k', fetch: s.fetch, retries: { baseDelayMs: 1 } })
      expect(await c.post('/v1/accounts', { body }).catch((e) => e.code)).toBe(code)
      expect(s.calls()).toBe(1)
    }

    let deletes = 0
    const flaky = createPfinClient({
      baseUrl: 'http://pfin.invalid',
      apiKey: 'k',
      retries: { baseDelayMs: 1 },
      fetch: async () => {
        deletes++
        throw new TypeError('network down')
      },
    })
    await expect(flaky.delete('/v1/transactions/{transactionId}', { params: { path: { transactionId: 'txn_x' } } })).rejects.toThrow('network down')
    expect(deletes).toBe(1)
    // A GET is retried after a network error, and the error surfaces once the retries are spent.
    await expect(flaky.get('/v1/me')).rejects.toThrow('network down')
    expect(deletes).toBe(1 + 4)
  })
})

describe('the package', () => {
  test('builds with its own tsconfig (no Bun types) and the built ESM loads in Node', async () => {
    const result = await build
    if (result.code !== 0) throw new Error(`tsc -p clients/typescript failed:\n${result.output}`)
    const dts = readFileSync(join(BUILD_DIR, 'index.d.ts'), 'utf8')
    expect(dts).toContain("from './schema.js'")
    expect(dts).not.toMatch(/from '\.\/[a-z]+\.ts'/)
    const manifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8'))
    // A checkout points at the sources (no build needed to install it); a packed tarball at dist/ (install.test.ts).
    expect(manifest).toMatchObject({ name: '@pfin/client', type: 'module', license: 'MIT', types: './src/index.ts', main: './src/index.ts' })
    expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch'])
    const script = `import('${join(BUILD_DIR, 'index.js')}').then(async (m) => {
      const c = m.createPfinClient({ baseUrl: ${JSON.stringify(server.url)}, apiKey: ${JSON.stringify(owner.key)}, exactDecimals: true })
      const me = await c.get('/v1/me')
      const e = await c.get('/v1/accounts/acct_x').catch((e) => e)
      console.log(JSON.stringify({ me: me.data.id, error: e instanceof m.PfinError && e.code }))
    })`
    const node = await spawnText(['node', '-e', script], ROOT)
    if (node.code !== 0) throw new Error(`node could not use the built package:\n${node.output}`)
    expect(JSON.parse(node.output.trim())).toEqual({ me: owner.id, error: 'not_found' })
  }, 20_000)
})
