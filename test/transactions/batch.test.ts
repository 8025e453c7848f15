import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, sendRaw, startTestServer, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { rawNumber, units } from './helpers.ts'
import { drain, expectSameState, type FeedClient, type Json, listedState, newClient } from '../changes/helpers.ts'

/**
 * POST /v1/transactions/batch (CONTRACT §16) over a real server: all or nothing (the failing
 * item named, nothing written — balances, payee totals, lists and the feed as they were),
 * idempotent replays byte for byte, the limits (500 items, 4 MiB here and 1 MiB elsewhere),
 * duplicate externalIds, ifDeleted, dry runs that report every item, re-imports that change
 * nothing, exact money, and one count against the rate limit.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const MiB = 1024 * 1024
const UNITS_PER_CENT = 1_000_000n

/** Cents as the decimal a client sends: 1234 → "12.34", -5 → "-0.05". */
function decimal(cents: bigint): string {
  const negative = cents < 0n
  const abs = negative ? -cents : cents
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`
}

/** A JSON body whose amounts are written exactly as `decimal` spells them (never through a double). */
function bodyText(batch: { items: Record<string, unknown>[]; dryRun?: boolean; ifDeleted?: string }): string {
  return JSON.stringify(batch, (_key, value) => (typeof value === 'bigint' ? JSON.rawJSON(decimal(value)) : value))
}

async function post(key: string, path: string, body: unknown, idempotencyKey?: string) {
  return server.request('POST', path, { key, body: typeof body === 'string' ? body : bodyText(body as never), idempotencyKey })
}

async function ok(key: string, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await server.request(method, path, { key, body })
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${res.text}`)
  return res.json.data
}

async function setup(opts: { country?: string } = {}) {
  const owner = await server.owner({ country: opts.country ?? 'PT' })
  const key = owner.key
  const a = await ok(key, 'POST', '/v1/accounts', { name: 'Checking', type: 'bank', balance: 1000, currency: 'EUR' })
  const b = await ok(key, 'POST', '/v1/accounts', { name: 'Savings', type: 'bank', balance: 50.25, currency: 'EUR' })
  const shop = await ok(key, 'POST', '/v1/payees', { name: 'Shop' })
  await ok(key, 'POST', '/v1/transactions', { accountId: a.id, amount: 10, date: '2026-01-01', payeeId: shop.id, externalId: 'before-1' })
  return { ...owner, a, b, shop }
}

/** Everything a failed batch must leave as it was: the lists (balances and payee totals included) and the feed's position. */
async function observe(key: string) {
  const client = newClient()
  await drain(server, key, client)
  return { lists: await listedState(server, key), cursor: client.cursor as string }
}

async function expectNothingWritten(key: string, before: { lists: Map<string, Json>; cursor: string }) {
  expectSameState(before.lists, await listedState(server, key), 'the data before the failed batch')
  const res = await server.request('GET', `/v1/changes?cursor=${before.cursor}`, { key })
  expect(res.status).toBe(200)
  expect(res.json.data).toEqual([])
}

const item = (accountId: string, n: number, extra: Record<string, unknown> = {}) => ({
  externalId: `imp-${n}`,
  accountId,
  amount: BigInt(100 + n),
  date: '2026-02-01',
  payeeName: `Payee ${n % 7}`,
  ...extra,
})

describe('all or nothing', () => {
  test('item 499 invalid: 422 naming items[499], and nothing of the 499 valid items before it is written', async () => {
    const { key, a } = await setup()
    const before = await observe(key)
    const good = Array.from({ length: 499 }, (_, n) => item(a.id, n))
    const cases: [string, Record<string, unknown>, number, string, string][] = [
      ['a wrong type (checked before the handler)', { ...item(a.id, 499), amount: 'ten' }, 422, 'validation_failed', 'items[499].amount'],
      ['an unknown field', { ...item(a.id, 499), colour: 'red' }, 422, 'validation_failed', 'items[499].colour'],
      [
        'an account that is not the owner’s (found while applying)',
        item('acct_0190000000007000800000000000dead', 499),
        422,
        'invalid_reference',
        'items[499].accountId',
      ],
      ['a transfer without a destination', item(a.id, 499, { isTransfer: true, payeeName: undefined }), 422, 'rule_violation', 'items[499]'],
      ['an unknown category', item(a.id, 499, { categoryId: 'cat_nope' }), 422, 'invalid_reference', 'items[499].categoryId'],
      ['payeeId and payeeName together', item(a.id, 499, { payeeId: null }), 422, 'rule_violation', 'items[499]'],
      ['too many decimals', { ...item(a.id, 499), amount: JSON.rawJSON('1.123456789') }, 422, 'validation_failed', 'items[499].amount'],
    ]
    for (const [label, bad, status, code, prefix] of cases) {
      const res = await post(key, '/v1/transactions/batch', { items: [...good, bad] })
      const problem = expectProblem(res, status, code)
      if (!problem.detail.startsWith(prefix)) throw new Error(`${label}: detail ${JSON.stringify(problem.detail)} does not start with ${prefix}`)
      await expectNothingWritten(key, before)
    }
  })

  test('a batch that would push a balance out of range is refused whole', async () => {
    const { key, a } = await setup()
    const before = await observe(key)
    const items = [item(a.id, 1, { amount: -92_233_720_000n * 100n }), item(a.id, 2, { amount: -92_233_720_000n * 100n })]
    const problem = expectProblem(await post(key, '/v1/transactions/batch', { items }), 422, 'rule_violation')
    expect(problem.detail).toStartWith('items')
    await expectNothingWritten(key, before)
  })

  test('1–500 items: 0 and 501 → 422 validation_failed, nothing written', async () => {
    const { key, a } = await setup()
    const before = await observe(key)
    // The detail says what the field must be, fewer items included.
    expect(expectProblem(await post(key, '/v1/transactions/batch', { items: [] }), 422, 'validation_failed').detail).toBe(
      "field 'items' must be an array of 1 to 500 items",
    )
    const tooMany = Array.from({ length: 501 }, (_, n) => item(a.id, n))
    const problem = expectProblem(await post(key, '/v1/transactions/batch', { items: tooMany }), 422, 'validation_failed')
    expect(problem.detail).toContain('items')
    expectProblem(await post(key, '/v1/transactions/batch', { items: tooMany, dryRun: true }), 422, 'validation_failed')
    for (const body of ['{"items":[{}],"extra":1}', '{"items":[{}],"ifDeleted":"maybe"}', '{"items":{}}', '[]']) {
      expectProblem(await post(key, '/v1/transactions/batch', body), 422, 'validation_failed')
    }
    await expectNothingWritten(key, before)
  })

  test('the same externalId twice in one body → 422 rule_violation naming both, nothing written (also once trimmed, also in a dry run)', async () => {
    const { key, a } = await setup()
    const before = await observe(key)
    for (const [second, dryRun] of [
      ['imp-3', false],
      ['  imp-3 ', false],
      ['imp-3', true],
    ] as const) {
      const items = [item(a.id, 1), item(a.id, 2), item(a.id, 3), item(a.id, 4, { externalId: second })]
      const problem = expectProblem(await post(key, '/v1/transactions/batch', { items, dryRun }), 422, 'rule_violation')
      expect(problem.detail).toStartWith('items[3].externalId')
      expect(problem.detail).toContain('items[2]')
    }
    await expectNothingWritten(key, before)
  })
})

describe('idempotency', () => {
  test('a replay with the same Idempotency-Key is byte-identical with Idempotent-Replayed: true, and writes nothing more', async () => {
    const { key, a } = await setup()
    const body = bodyText({ items: Array.from({ length: 50 }, (_, n) => item(a.id, n)) })
    const first = await post(key, '/v1/transactions/batch', body, 'import-2026-02')
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const after = await observe(key)
    const again = await post(key, '/v1/transactions/batch', body, 'import-2026-02')
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.text).toBe(first.text)
    expect(again.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'))
    await expectNothingWritten(key, after)
    // The same key with another body is refused.
    expectProblem(await post(key, '/v1/transactions/batch', bodyText({ items: [item(a.id, 1)] }), 'import-2026-02'), 409, 'idempotency_key_reused')

    // A batch refused by the handler is an answer too: stored and replayed.
    const bad = bodyText({ items: [item(a.id, 900), item('acct_0190000000007000800000000000dead', 901)] })
    const refused = await post(key, '/v1/transactions/batch', bad, 'import-bad')
    expectProblem(refused, 422, 'invalid_reference')
    const replayed = await post(key, '/v1/transactions/batch', bad, 'import-bad')
    expect(replayed.text).toBe(refused.text)
    expect(replayed.headers.get('idempotent-replayed')).toBe('true')
  })

  test('re-running the same import (a new key) reports every item unchanged and adds nothing to the feed', async () => {
    const { key, a, b } = await setup()
    const items = Array.from({ length: 120 }, (_, n) =>
      n % 10 === 0
        ? item(a.id, n, { isTransfer: true, transferToAccountId: b.id, payeeName: undefined, note: 'move' })
        : item(n % 3 ? a.id : b.id, n, { time: '12:30', categoryId: 'cat_sys_groceries' }),
    )
    const first = await ok(key, 'POST', '/v1/transactions/batch', bodyText({ items }))
    expect(first.every((r: Json) => r.operation === 'created')).toBe(true)
    const before = await observe(key)
    const res = await post(key, '/v1/transactions/batch', { items })
    expect(res.status).toBe(200)
    expect(res.json.summary).toEqual({ created: 0, updated: 0, unchanged: 120, matched: 0, skippedDeleted: 0, failed: 0 })
    expect(res.json.data.map((r: Json) => r.data)).toEqual(first.map((r: Json) => r.data))
    await expectNothingWritten(key, before)
    // A dry run of it says the same.
    const dry = await post(key, '/v1/transactions/batch', { items, dryRun: true })
    expect(dry.json.summary).toEqual({ created: 0, updated: 0, unchanged: 120, matched: 0, skippedDeleted: 0, failed: 0 })
    // One item changed: one updated, the rest unchanged, and only it (and its account) in the feed.
    const changed = items.map((it, n) => (n === 5 ? { ...it, note: 'edited' } : it))
    const third = await post(key, '/v1/transactions/batch', { items: changed })
    expect(third.json.summary).toEqual({ created: 0, updated: 1, unchanged: 119, matched: 0, skippedDeleted: 0, failed: 0 })
    expect(third.json.data[5].operation).toBe('updated')
    const feed = await server.request('GET', `/v1/changes?cursor=${before.cursor}`, { key })
    expect(feed.json.data.map((c: Json) => c.id)).toEqual([first[5].data.id])
  })
})

describe('ifDeleted', () => {
  test('"skip" reports skipped_deleted for a deleted externalId and does not bring it back; the default recreates it', async () => {
    const { key, a } = await setup()
    const created = await ok(key, 'POST', '/v1/transactions/batch', bodyText({ items: [item(a.id, 1), item(a.id, 2)] }))
    await ok(key, 'DELETE', `/v1/transactions/${created[0].data.id}`)

    const items = [item(a.id, 1), item(a.id, 2, { note: 'changed' }), item(a.id, 3)]
    const dry = await post(key, '/v1/transactions/batch', { items, ifDeleted: 'skip', dryRun: true })
    expect(dry.json.data.map((r: Json) => r.operation)).toEqual(['skipped_deleted', 'updated', 'created'])
    const skip = await post(key, '/v1/transactions/batch', { items, ifDeleted: 'skip' })
    expect(skip.status).toBe(200)
    expect(skip.json.data.map((r: Json) => [r.operation, r.externalId, r.data === null])).toEqual([
      ['skipped_deleted', 'imp-1', true],
      ['updated', 'imp-2', false],
      ['created', 'imp-3', false],
    ])
    expect(skip.json.summary).toEqual({ created: 1, updated: 1, unchanged: 0, matched: 0, skippedDeleted: 1, failed: 0 })
    expect((await ok(key, 'GET', '/v1/transactions?externalId=imp-1')).length).toBe(0)

    const recreate = await post(key, '/v1/transactions/batch', { items })
    expect(recreate.json.data.map((r: Json) => r.operation)).toEqual(['created', 'unchanged', 'unchanged'])
    const back = await ok(key, 'GET', '/v1/transactions?externalId=imp-1')
    expect(back.length).toBe(1)
    expect(back[0].id).not.toBe(created[0].data.id)
    // Once it exists again, "skip" updates it like any other.
    const again = await post(key, '/v1/transactions/batch', { items: [item(a.id, 1, { note: 'x' })], ifDeleted: 'skip' })
    expect(again.json.data[0].operation).toBe('updated')
  })
})

describe('dry run', () => {
  test('reports every item — its would-be operation, or all of its errors — with summary.failed, and writes nothing', async () => {
    const { key, a, b } = await setup()
    await ok(key, 'POST', '/v1/transactions/batch', bodyText({ items: [item(a.id, 1), item(a.id, 2)] }))
    const before = await observe(key)
    const items: unknown[] = [
      item(a.id, 10), // created
      { externalId: 'bad-schema', accountId: a.id, amount: 'x', date: '2026-13-45', colour: 'red' }, // three schema errors
      item(a.id, 1), // unchanged
      item(a.id, 2, { amount: 5n }), // updated
      item('acct_0190000000007000800000000000dead', 11), // invalid_reference
      item(a.id, 12, { isTransfer: true, payeeName: undefined }), // rule_violation
      { accountId: a.id, amount: 1, date: '2026-02-01' }, // externalId missing
      item(a.id, 13, { transferToAccountId: b.id, isTransfer: true, payeeName: undefined }), // created (transfer)
      item(a.id, 14, { payeeName: 'Payee 10' }), // created, with the payee item 0's name made in this very run
      'not an object',
    ]
    const res = await post(key, '/v1/transactions/batch', { items, dryRun: true })
    expect(res.status).toBe(200)
    const data = res.json.data
    expect(data.map((r: Json) => r.index)).toEqual(items.map((_, i) => i))
    expect(data.map((r: Json) => r.operation)).toEqual(['created', null, 'unchanged', 'updated', null, null, null, 'created', 'created', null])
    expect(data.every((r: Json) => r.data === null)).toBe(true)
    expect(data.map((r: Json) => r.externalId)).toEqual(['imp-10', 'bad-schema', 'imp-1', 'imp-2', 'imp-11', 'imp-12', null, 'imp-13', 'imp-14', null])
    expect(res.json.summary).toEqual({ created: 3, updated: 1, unchanged: 1, matched: 0, skippedDeleted: 0, failed: 5 })

    const fieldsOf = (i: number) => data[i].errors.map((e: Json) => e.field).sort()
    expect(fieldsOf(1)).toEqual(['amount', 'colour', 'date'])
    expect(data[1].errors.every((e: Json) => e.code === 'validation_failed' && e.detail.length > 0)).toBe(true)
    expect(data[4].errors).toEqual([{ field: 'accountId', code: 'invalid_reference', detail: expect.any(String) }])
    expect(data[5].errors).toEqual([{ field: null, code: 'rule_violation', detail: expect.any(String) }])
    expect(fieldsOf(6)).toEqual(['externalId'])
    expect(data[9].errors.length).toBeGreaterThan(0)
    for (const i of [0, 2, 3, 7, 8]) expect(data[i].errors).toEqual([])

    await expectNothingWritten(key, before)
    expect((await ok(key, 'GET', '/v1/payees?q=payee')).map((p: Json) => p.name).sort()).toEqual(['Payee 1', 'Payee 2'])
  })

  test('an item that made a new payee and then failed takes the payee with it; the next item naming it makes it again', async () => {
    const { key, a } = await setup()
    const items = [
      // Resolves (creates) "Brand New Shop", then fails on its category: rolled back, payee and all.
      item(a.id, 20, { payeeName: 'Brand New Shop', categoryId: 'cat_0190000000007000800000000000dead' }),
      item(a.id, 21, { payeeName: 'Brand New Shop' }),
      item(a.id, 22, { payeeName: 'brand new shop' }),
    ]
    const res = await post(key, '/v1/transactions/batch', { items, dryRun: true })
    expect(res.status).toBe(200)
    expect(res.json.data.map((r: Json) => [r.operation, r.errors.map((e: Json) => e.code)])).toEqual([
      [null, ['invalid_reference']],
      ['created', []],
      ['created', []],
    ])
    expect(await ok(key, 'GET', '/v1/payees?q=brand')).toEqual([])
  })
})

describe('shared reads', () => {
  test('items naming one new payee share it: one payee, its totals counting every item', async () => {
    const { key, a } = await setup()
    const items = Array.from({ length: 30 }, (_, n) => item(a.id, 100 + n, { payeeName: n % 2 ? 'Corner Bakery' : ' corner  BAKERY ' }))
    const res = await post(key, '/v1/transactions/batch', { items })
    expect(res.status).toBe(200)
    const payees = await ok(key, 'GET', '/v1/payees?q=corner')
    expect(payees).toHaveLength(1)
    expect(payees[0].transactionCount).toBe(30)
    expect(new Set(res.json.data.map((r: Json) => r.data.payeeId))).toEqual(new Set([payees[0].id]))
  })
})

describe('money and the feed', () => {
  test('balances and payee totals are exact (integer cents) after 500 items and after re-importing them changed; the feed follows every item', async () => {
    const { key, a, b, shop } = await setup()
    const client: FeedClient = newClient()
    await drain(server, key, client)
    // Exact expectations, in cents.
    const balances = new Map<string, bigint>([
      [a.id, 100_000n - 1_000n],
      [b.id, 5_025n],
    ])
    const payees = new Map<string, { count: number; spent: bigint }>([['Shop', { count: 1, spent: 1_000n }]])
    const stored = new Map<string, { account: string; to: string | null; cents: bigint; credit: bigint; payee: string | null }>()
    const apply = (t: { account: string; to: string | null; cents: bigint; credit: bigint; payee: string | null }, sign: bigint) => {
      balances.set(t.account, (balances.get(t.account) ?? 0n) - t.cents * sign)
      if (t.to) balances.set(t.to, (balances.get(t.to) ?? 0n) + t.credit * sign)
      if (t.payee) {
        const p = payees.get(t.payee) ?? { count: 0, spent: 0n }
        p.count += Number(sign)
        if (!t.to && t.cents > 0n) p.spent += t.cents * sign
        payees.set(t.payee, p)
      }
    }
    let seed = 7
    const rnd = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed % n
    }
    const PAYEES = ['Shop', 'Pingo Doce', 'Lidl', 'EDP', 'Galp']
    const makeItems = (round: number) =>
      Array.from({ length: 500 }, (_, n) => {
        const externalId = `exact-${n}`
        const transfer = rnd(10) === 0
        const account = rnd(2) === 0 ? a.id : b.id
        const cents = transfer ? BigInt(1 + rnd(50_000)) : BigInt(rnd(5) === 0 ? -(1 + rnd(300_000)) : 1 + rnd(99_999))
        const payee = rnd(4) === 0 ? null : (PAYEES[rnd(PAYEES.length)] as string)
        const to = transfer ? (account === a.id ? b.id : a.id) : null
        const credit = transfer ? cents + BigInt(rnd(3)) : 0n
        const body: Record<string, unknown> = {
          externalId,
          accountId: account,
          amount: cents,
          date: `2026-03-${String(1 + (n % 28)).padStart(2, '0')}`,
          note: `round ${round}`,
        }
        // An upsert keeps what it is not sent: say what this item is not.
        if (payee) body.payeeName = payee
        else body.payeeId = null
        if (transfer) Object.assign(body, { isTransfer: true, transferToAccountId: to, destinationAmount: credit })
        else Object.assign(body, { isTransfer: false, transferToAccountId: null })
        return { body, effect: { account, to, cents, credit, payee } }
      })

    for (const round of [1, 2]) {
      const batch = makeItems(round)
      const res = await post(key, '/v1/transactions/batch', { items: batch.map((x) => x.body) })
      if (res.status !== 200) throw new Error(`round ${round}: ${res.status} ${res.text}`)
      expect(res.json.summary).toEqual(
        round === 1
          ? { created: 500, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 }
          : { created: 0, updated: 500, unchanged: 0, matched: 0, skippedDeleted: 0, failed: 0 },
      )
      for (const { body, effect } of batch) {
        const previous = stored.get(body.externalId as string)
        if (previous) apply(previous, -1n)
        apply(effect, 1n)
        stored.set(body.externalId as string, effect)
      }
      // Every item's answer is the transaction as stored, with its amount as sent.
      const amounts = res.text.match(/"amount":-?[0-9.]+/g)?.map((m) => units(m.slice(9))) ?? []
      expect(amounts).toEqual(batch.map((x) => (x.body.amount as bigint) * UNITS_PER_CENT))

      for (const [id, cents] of balances) {
        const got = await server.request('GET', `/v1/accounts/${id}`, { key })
        expect(`${id} ${units(rawNumber(got.text, 'balance'))}`).toBe(`${id} ${cents * UNITS_PER_CENT}`)
      }
      const listedPayees = await ok(key, 'GET', '/v1/payees?limit=200')
      for (const [name, totals] of payees) {
        const p = listedPayees.find((x: Json) => x.name === name)
        expect({ name, count: p.transactionCount, spent: units(String(p.totalSpent)) }).toEqual({
          name,
          count: totals.count,
          spent: totals.spent * UNITS_PER_CENT,
        })
      }
      expect(listedPayees.find((x: Json) => x.id === shop.id).transactionCount).toBe(payees.get('Shop')?.count)

      // The feed: every item, its accounts and payees, and the copy equals the lists.
      const changes = await drain(server, key, client, 300)
      const ids = new Set(changes.map((c: Json) => c.id))
      for (const result of res.json.data) expect(ids.has(result.data.id)).toBe(true)
      expect(changes.filter((c: Json) => c.resource === 'transaction').length).toBe(500)
      expectSameState(client.copy, await listedState(server, key))
      for (const result of res.json.data) expect(client.copy.get(`transaction:${result.data.id}`)).toEqual(result.data)
    }
  })
})

describe('limits', () => {
  test('a body between 1 MiB and 4 MiB is accepted here (and exactly 4 MiB), above 4 MiB → 413; other routes still 413 above 1 MiB', async () => {
    const { key, a } = await setup()
    const note = 'n'.repeat(2000)
    const items = Array.from({ length: 500 }, (_, n) => ({ ...item(a.id, n), note }))
    const base = bodyText({ items })
    expect(base.length).toBeGreaterThan(MiB)
    const padded = (size: number) => {
      const text = `${base.slice(0, -1)}${' '.repeat(size - base.length)}}`
      expect(Buffer.byteLength(text)).toBe(size)
      return text
    }
    const send = (path: string, body: string) =>
      sendRaw(server.url, path, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body,
      })

    const real = await send('/v1/transactions/batch', base)
    expect(real.status).toBe(200)
    expect(real.json.summary.created).toBe(500)
    const three = await send('/v1/transactions/batch', padded(3 * MiB))
    expect(three.status).toBe(200)
    expect(three.json.summary.unchanged).toBe(500)
    expect((await send('/v1/transactions/batch', padded(4 * MiB))).status).toBe(200)
    const over = expectProblem(await send('/v1/transactions/batch', padded(4 * MiB + 1)), 413, 'payload_too_large')
    expect(over.detail).toContain(String(4 * MiB))

    const one = JSON.stringify({ externalId: 'big', accountId: a.id, amount: 1, date: '2026-02-01' })
    const onePadded = (size: number) => `${one.slice(0, -1)}${' '.repeat(size - one.length)}}`
    expect((await send('/v1/transactions/upsert', onePadded(MiB))).status).toBe(201)
    for (const path of ['/v1/transactions/upsert', '/v1/transactions', '/v1/accounts']) {
      expectProblem(await send(path, onePadded(MiB + 1)), 413, 'payload_too_large')
    }
  })

  test('a batch counts once against the rate limit, dry run or not', async () => {
    const limited = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '1000', RATE_LIMIT_PER_DAY: '100000' } })
    try {
      const { key } = await limited.owner()
      const account = (await limited.request('POST', '/v1/accounts', { key, body: { name: 'A', type: 'bank', balance: 1, currency: 'EUR' } })).json.data
      const remaining = (res: { headers: Headers }) => [
        Number(res.headers.get('x-ratelimit-remaining-minute')),
        Number(res.headers.get('x-ratelimit-remaining-day')),
      ]
      const items = Array.from({ length: 500 }, (_, n) => ({ externalId: `rl-${n}`, accountId: account.id, amount: 1, date: '2026-02-01' }))
      for (const dryRun of [false, true]) {
        // Retried if a UTC minute began in between (the minute window restarts).
        for (let attempt = 0; ; attempt++) {
          const [minute0, day0] = remaining(await limited.request('GET', '/v1/me', { key }))
          const batch = await limited.request('POST', '/v1/transactions/batch', { key, body: { items, dryRun } })
          expect(batch.status).toBe(200)
          const [minute1, day1] = remaining(batch)
          expect(day1).toBe((day0 as number) - 1)
          if (minute1 === (minute0 as number) - 1 || attempt > 2) {
            expect(minute1).toBe((minute0 as number) - 1)
            break
          }
        }
      }
    } finally {
      await limited.stop()
    }
  })
})
