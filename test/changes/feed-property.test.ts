import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { startUnthrottledServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { drain, expectSameState, type FeedClient, type Json, KINDS, type Kind, listedState, newClient, pullPage } from './helpers.ts'

/**
 * CONTRACT §15, as a property over a real server: whatever an owner's clients write — creates,
 * PATCHes, upserts and archives of accounts, custom categories (moves, renames, type changes),
 * payees, and transactions (payeeName, transfers, deletes, batches) — a sync client that pages
 * GET /v1/changes from its stored cursor at random page sizes, in between the writes, and applies
 * every page to an empty map (upsert → set, delete → remove) holds exactly what the list routes
 * return, object by object: balances, payee totals, category fullName/depth, transactions'
 * categoryType included. Every page is checked on the way (pullPage): seqs strictly increase,
 * never repeat. A second client reads only some kinds (`resources=`) and must match those lists.
 *
 * FEED_PROPERTY_RUNS (default 80), FEED_PROPERTY_SEED and FEED_PROPERTY_ACTIONS (max actions per
 * run, default 60) make it run longer locally:
 *   FEED_PROPERTY_RUNS=300 FEED_PROPERTY_SEED=$RANDOM bun test test/changes/feed-property.test.ts
 */

const RUNS = Number(process.env.FEED_PROPERTY_RUNS ?? 80)
const SEED = process.env.FEED_PROPERTY_SEED === undefined ? undefined : Number(process.env.FEED_PROPERTY_SEED)
const MAX_ACTIONS = Number(process.env.FEED_PROPERTY_ACTIONS ?? 60)

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

// ---------------------------------------------------------------------------------------------
// Actions. References (`pick`) are small numbers resolved against what exists when the action
// runs, so every generated sequence means something and shrinks well.

const SYSTEM = ['cat_sys_groceries', 'cat_sys_food_drinks', 'cat_sys_salary', 'cat_sys_income']
const NAMES = ['Food', 'Fun', 'Bills', 'Home']
const PAYEE_NAMES = ['Pingo Doce', 'pingo doce', 'Lidl', 'EDP', 'Galp', 'Café Ñandú']
const DATES = ['2026-01-05', '2026-02-10', '2026-02-10', '2026-03-01']

const pick = fc.nat(20)
const cents = fc.oneof(fc.integer({ min: -200_000, max: 200_000 }), fc.constantFrom(1, 5, 10, 99, 100))
const positiveCents = fc.integer({ min: 1, max: 150_000 })
/** A category reference: none, a system one, or one of the owner's. */
const categoryRef = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('system' as const), n: pick }),
  fc.record({ kind: fc.constant('custom' as const), n: pick }),
)
/** A payee reference: none, by name (found or created), or by id. */
const payeeRef = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.record({ kind: fc.constant('name' as const), n: pick }),
  fc.record({ kind: fc.constant('id' as const), n: pick }),
)
const transfer = fc.option(fc.record({ to: pick, rate: fc.option(fc.constantFrom(1, 1.0842, 0.5, 3), { nil: undefined }) }), { nil: undefined, freq: 3 })

const txnFields = fc.record({
  account: pick,
  cents,
  date: fc.constantFrom(...DATES),
  payee: payeeRef,
  category: categoryRef,
  transfer,
  note: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
})

const actionArb = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant('account.create' as const), usd: fc.boolean(), cents, ext: fc.option(fc.nat(3), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('account.upsert' as const), ext: fc.nat(3), name: fc.nat(3), cents, usd: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('account.patch' as const),
      n: pick,
      name: fc.option(fc.nat(3), { nil: undefined }),
      cents: fc.option(cents, { nil: undefined }),
      favourite: fc.option(fc.boolean(), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('account.archive' as const), n: pick }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('category.create' as const),
      name: fc.nat(3),
      parent: categoryRef,
      type: fc.option(fc.constantFrom('expense', 'income'), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('category.upsert' as const),
      ext: fc.nat(3),
      name: fc.nat(3),
      parent: categoryRef,
      type: fc.option(fc.constantFrom('expense', 'income'), { nil: undefined }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('category.patch' as const),
      n: pick,
      name: fc.option(fc.nat(3), { nil: undefined }),
      parent: fc.option(categoryRef, { nil: undefined }),
      type: fc.option(fc.constantFrom('expense', 'income', null), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('category.archive' as const), n: pick }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('payee.create' as const), name: fc.nat(PAYEE_NAMES.length - 1), category: categoryRef }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('payee.upsert' as const), ext: fc.nat(2), name: fc.nat(PAYEE_NAMES.length - 1), category: categoryRef }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('payee.patch' as const),
      n: pick,
      name: fc.option(fc.nat(PAYEE_NAMES.length - 1), { nil: undefined }),
      category: fc.option(categoryRef, { nil: undefined }),
    }),
  },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('txn.create' as const), fields: txnFields, ext: fc.option(fc.nat(5), { nil: undefined }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('txn.upsert' as const), fields: txnFields, ext: fc.nat(5) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('txn.patch' as const),
      n: pick,
      cents: fc.option(positiveCents, { nil: undefined }),
      account: fc.option(pick, { nil: undefined }),
      payee: fc.option(payeeRef, { nil: undefined }),
      category: fc.option(categoryRef, { nil: undefined }),
      note: fc.option(fc.constantFrom('a', 'b', null), { nil: undefined }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('txn.delete' as const), n: pick }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('txn.batch' as const),
      items: fc.array(fc.record({ fields: txnFields, ext: fc.nat(7) }), { minLength: 1, maxLength: 5 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('feed.page' as const),
      client: fc.nat(1),
      limit: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 40 }), fc.constant(500)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('feed.sync' as const), client: fc.nat(1) }) },
)
type Action = typeof actionArb extends fc.Arbitrary<infer A> ? A : never

const scenarioArb = fc.record({
  actions: fc.array(actionArb, { minLength: 1, maxLength: MAX_ACTIONS, size: 'max' }),
  // The second client's kinds: any non-empty subset.
  kinds: fc.subarray([...KINDS], { minLength: 1 }),
})

// ---------------------------------------------------------------------------------------------
// Running an action against the server, tracking what exists from the answers.

interface World {
  key: string
  accounts: string[]
  categories: string[]
  payees: string[]
  txns: string[]
  clients: FeedClient[]
  log: string[]
}

/** Answers by status over all runs, to see that the actions mostly do something. */
const statuses = new Map<string, number>()

const at = <T>(items: T[], n: number): T | undefined => (items.length === 0 ? undefined : items[n % items.length])
const money = (c: number) => c / 100

function categoryId(world: World, ref: { kind: 'none' | 'system' | 'custom'; n?: number }): string | null | undefined {
  if (ref.kind === 'none') return null
  if (ref.kind === 'system') return SYSTEM[(ref.n ?? 0) % SYSTEM.length]
  return at(world.categories, ref.n ?? 0)
}

type TxnFields = typeof txnFields extends fc.Arbitrary<infer F> ? F : never

function txnBody(world: World, fields: TxnFields): Record<string, unknown> | undefined {
  const accountId = at(world.accounts, fields.account)
  if (!accountId) return undefined
  const body: Record<string, unknown> = { accountId, date: fields.date }
  if (fields.transfer) {
    const to = at(world.accounts, fields.account + 1 + fields.transfer.to)
    body.amount = money(Math.max(1, Math.abs(fields.cents)))
    body.isTransfer = true
    body.transferToAccountId = to
    if (fields.transfer.rate !== undefined) body.exchangeRate = fields.transfer.rate
    else body.destinationAmount = money(Math.max(1, Math.abs(fields.cents)) + 7)
  } else {
    body.amount = money(fields.cents)
    const category = categoryId(world, fields.category)
    if (category) body.categoryId = category
  }
  if (fields.payee.kind === 'name') body.payeeName = PAYEE_NAMES[fields.payee.n % PAYEE_NAMES.length]
  if (fields.payee.kind === 'id') {
    const payeeId = at(world.payees, fields.payee.n)
    if (payeeId) body.payeeId = payeeId
  }
  if (fields.note !== undefined) body.note = fields.note
  return body
}

/** Remembers the ids an answer shows, so later actions can refer to them. */
function learn(world: World, res: TestResponse): void {
  if (res.status >= 300 || !res.json?.data) return
  const items: Json[] = Array.isArray(res.json.data) ? res.json.data.map((item: Json) => item.data).filter(Boolean) : [res.json.data]
  for (const item of items) {
    const id: string = item.id
    const list = id.startsWith('acct_') ? world.accounts : id.startsWith('cat_') ? world.categories : id.startsWith('pay_') ? world.payees : world.txns
    if (!list.includes(id)) list.push(id)
    if (id.startsWith('txn_') && item.payeeId && !world.payees.includes(item.payeeId)) world.payees.push(item.payeeId)
  }
}

async function write(world: World, method: string, path: string, body?: unknown): Promise<TestResponse> {
  const res = await server.request(method, path, { key: world.key, body })
  const outcome = `${res.status}${res.status >= 400 ? ` ${res.json?.code}` : ''}`
  world.log.push(`${method} ${path} ${body === undefined ? '' : JSON.stringify(body)} → ${outcome}`)
  statuses.set(outcome, (statuses.get(outcome) ?? 0) + 1)
  // A refused write is fine (rules, conflicts); a server error never is.
  if (res.status >= 500) throw new Error(`${method} ${path} → ${res.status}: ${res.text}`)
  learn(world, res)
  return res
}

async function run(world: World, action: Action, kinds: Kind[]): Promise<void> {
  switch (action.t) {
    case 'account.create':
      await write(world, 'POST', '/v1/accounts', {
        name: `Acct ${world.accounts.length}`,
        type: 'bank',
        balance: money(action.cents),
        currency: action.usd ? 'USD' : 'EUR',
        ...(action.ext === undefined ? {} : { externalId: `acct-${action.ext}-${world.accounts.length}` }),
      })
      return
    case 'account.upsert':
      await write(world, 'POST', '/v1/accounts/upsert', {
        externalId: `acct-up-${action.ext}`,
        name: NAMES[action.name],
        type: 'bank',
        balance: money(action.cents),
        currency: action.usd ? 'USD' : 'EUR',
      })
      return
    case 'account.patch': {
      const id = at(world.accounts, action.n)
      if (!id) return
      const body: Record<string, unknown> = {}
      if (action.name !== undefined) body.name = NAMES[action.name]
      if (action.cents !== undefined) body.balance = money(action.cents)
      if (action.favourite !== undefined) body.isFavourite = action.favourite
      await write(world, 'PATCH', `/v1/accounts/${id}`, body)
      return
    }
    case 'account.archive': {
      const id = at(world.accounts, action.n)
      if (id) await write(world, 'DELETE', `/v1/accounts/${id}`)
      return
    }
    case 'category.create':
    case 'category.upsert': {
      const body: Record<string, unknown> = { name: NAMES[action.name] }
      const parentId = categoryId(world, action.parent)
      if (parentId) body.parentId = parentId
      if (action.type) body.type = action.type
      if (action.t === 'category.upsert') body.externalId = `cat-up-${action.ext}`
      await write(world, 'POST', action.t === 'category.upsert' ? '/v1/categories/upsert' : '/v1/categories', body)
      return
    }
    case 'category.patch': {
      const id = at(world.categories, action.n)
      if (!id) return
      const body: Record<string, unknown> = {}
      if (action.name !== undefined) body.name = NAMES[action.name]
      if (action.parent !== undefined) {
        const parentId = categoryId(world, action.parent)
        if (parentId !== undefined) body.parentId = parentId
      }
      if (action.type !== undefined) body.type = action.type
      await write(world, 'PATCH', `/v1/categories/${id}`, body)
      return
    }
    case 'category.archive': {
      const id = at(world.categories, action.n)
      if (id) await write(world, 'DELETE', `/v1/categories/${id}`)
      return
    }
    case 'payee.create':
    case 'payee.upsert': {
      const body: Record<string, unknown> = { name: PAYEE_NAMES[action.name] }
      const category = categoryId(world, action.category)
      if (category) body.categoryId = category
      if (action.t === 'payee.upsert') body.externalId = `pay-up-${action.ext}`
      await write(world, 'POST', action.t === 'payee.upsert' ? '/v1/payees/upsert' : '/v1/payees', body)
      return
    }
    case 'payee.patch': {
      const id = at(world.payees, action.n)
      if (!id) return
      const body: Record<string, unknown> = {}
      if (action.name !== undefined) body.name = PAYEE_NAMES[action.name]
      if (action.category !== undefined) body.categoryId = categoryId(world, action.category) ?? null
      await write(world, 'PATCH', `/v1/payees/${id}`, body)
      return
    }
    case 'txn.create':
    case 'txn.upsert': {
      const body = txnBody(world, action.fields)
      if (!body) return
      if (action.t === 'txn.upsert') body.externalId = `txn-up-${action.ext}`
      else if (action.ext !== undefined) body.externalId = `txn-new-${action.ext}-${world.txns.length}`
      await write(world, 'POST', action.t === 'txn.upsert' ? '/v1/transactions/upsert' : '/v1/transactions', body)
      return
    }
    case 'txn.patch': {
      const id = at(world.txns, action.n)
      if (!id) return
      const body: Record<string, unknown> = {}
      if (action.cents !== undefined) body.amount = money(action.cents)
      if (action.account !== undefined) body.accountId = at(world.accounts, action.account)
      if (action.payee?.kind === 'none') body.payeeId = null
      if (action.payee?.kind === 'name') body.payeeName = PAYEE_NAMES[action.payee.n % PAYEE_NAMES.length]
      if (action.payee?.kind === 'id') body.payeeId = at(world.payees, action.payee.n) ?? null
      if (action.category !== undefined) body.categoryId = categoryId(world, action.category) ?? null
      if (action.note !== undefined) body.note = action.note
      await write(world, 'PATCH', `/v1/transactions/${id}`, body)
      return
    }
    case 'txn.delete': {
      const id = at(world.txns, action.n)
      if (!id) return
      const res = await write(world, 'DELETE', `/v1/transactions/${id}`)
      if (res.status === 200) world.txns.splice(world.txns.indexOf(id), 1)
      return
    }
    case 'txn.batch': {
      const items: Record<string, unknown>[] = []
      const seen = new Set<number>()
      for (const item of action.items) {
        const body = txnBody(world, item.fields)
        if (!body || seen.has(item.ext)) continue
        seen.add(item.ext)
        items.push({ ...body, externalId: `txn-up-${item.ext}` })
      }
      if (items.length) await write(world, 'POST', '/v1/transactions/batch', { items })
      return
    }
    case 'feed.page': {
      const client = world.clients[action.client] as FeedClient
      const page = await pullPage(server, world.key, client, action.limit)
      world.log.push(`feed client ${action.client} limit ${action.limit} → ${page.changes.length}${page.hasMore ? ' (more)' : ''}`)
      return
    }
    case 'feed.sync': {
      const client = world.clients[action.client] as FeedClient
      await drain(server, world.key, client, 37)
      const listed = await listedState(server, world.key, action.client === 0 ? KINDS : kinds)
      expectSameState(client.copy, listed, `client ${action.client} after a sync`)
      world.log.push(`sync client ${action.client}: ${client.copy.size} objects agree`)
      return
    }
  }
}

test(
  'applying the change feed, paged at random sizes between random writes, rebuilds exactly what the lists return',
  async () => {
    let runs = 0
    let actionsRun = 0
    let pages = 0
    let objects = 0
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ actions, kinds }) => {
        runs += 1
        const owner = await server.owner({ name: 'Feed Property', country: 'PT' })
        const world: World = { key: owner.key, accounts: [], categories: [], payees: [], txns: [], clients: [newClient(), newClient(kinds as Kind[])], log: [] }
        try {
          for (const action of actions) await run(world, action, kinds as Kind[])
          actionsRun += actions.length
          // At the end both clients catch up from where they stand, and a new client reads it all.
          const everything = await listedState(server, world.key)
          await drain(server, world.key, world.clients[0] as FeedClient)
          expectSameState((world.clients[0] as FeedClient).copy, everything, 'the sync client')
          const second = world.clients[1] as FeedClient
          await drain(server, world.key, second)
          expectSameState(second.copy, await listedState(server, world.key, kinds as Kind[]), `the client of ${kinds.join(',')}`)
          const fresh = newClient()
          await drain(server, world.key, fresh, 500)
          expectSameState(fresh.copy, everything, 'a client starting now')
          pages += (world.clients[0]?.pages ?? 0) + second.pages
          objects += everything.size
        } catch (error) {
          throw new Error(`${(error as Error).message}\nrun log:\n  ${world.log.slice(-60).join('\n  ')}`)
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: process.env.FEED_PROPERTY_SHRINK === undefined, verbose: 1 },
    )
    console.log(
      `feed property: ${runs} runs, ${actionsRun} actions, ${pages} feed pages, ${objects} objects compared at the end; answers ${[...statuses].map(([status, n]) => `${status} ×${n}`).join(', ')}`,
    )
    expect(runs).toBeGreaterThanOrEqual(RUNS)
  },
  { timeout: 60_000 + RUNS * 4_000 },
)
