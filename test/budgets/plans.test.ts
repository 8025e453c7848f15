import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { cliJson } from '../cli/cli.ts'
import { expectProblem, expectReplayOf, serverWithOwner } from '../support/harness.ts'
import { createAccount, createTxn, type Json, rawNumbers } from '../transactions/helpers.ts'
import { getBudget, line, planCategory, planMonth } from './helpers.ts'

/**
 * CONTRACT §27 plans: setting one amount and a whole month, copyFrom, archived and unknown
 * categories, the owner's currency, Idempotency-Key on PUT (optional, honoured when sent), and
 * budgets in the change feed.
 */

// Some tests run the admin CLI as a process.
setDefaultTimeout(30_000)

const { server } = serverWithOwner()

const GROCERIES = 'cat_sys_groceries'
const RESTAURANTS = 'cat_sys_restaurants'
const GIFTS = 'cat_sys_gifts_donations'
const EDUCATION = 'cat_sys_education'
const SALARY = 'cat_sys_salary'

async function fresh(fields: Json = { defaultCurrency: 'EUR', country: 'PT' }) {
  const made = await server.owner(fields)
  return { ...made, key: made.key }
}

const put = (key: string, path: string, body: Json, idempotencyKey?: string) =>
  server.request('PUT', path, { key, body, headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey } })

async function customCategory(key: string, body: Json = {}): Promise<string> {
  const res = await server.request('POST', '/v1/categories', { key, body: { name: `Custom ${crypto.randomUUID()}`, type: 'expense', ...body } })
  if (res.status !== 201) throw new Error(res.text)
  return res.json.data.id
}

async function feed(key: string, cursor?: string): Promise<Json> {
  const res = await server.request('GET', `/v1/changes?resources=budgets${cursor ? `&cursor=${cursor}` : ''}`, { key })
  if (res.status !== 200) throw new Error(res.text)
  return res.json
}

describe('one category: PUT /v1/budgets/{month}/categories/{categoryId}', () => {
  test('sets, replaces (a note not sent is cleared) and removes with 0; the answer is the month’s plan', async () => {
    const { key } = await fresh()
    const res = await put(key, `/v1/budgets/2026-05/categories/${GROCERIES}`, { planned: 250.5, note: '  for two  ' })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ data: { month: '2026-05', currency: 'EUR', categories: [{ categoryId: GROCERIES, planned: 250.5, note: 'for two' }] } })
    await planCategory(server, key, '2026-05', RESTAURANTS, { planned: 80 })
    expect((await planCategory(server, key, '2026-05', GROCERIES, { planned: 300 })).categories).toEqual([
      { categoryId: GROCERIES, planned: 300, note: null },
      { categoryId: RESTAURANTS, planned: 80, note: null },
    ])
    const removed = await planCategory(server, key, '2026-05', GROCERIES, { planned: 0, note: 'ignored' })
    expect(removed.categories).toEqual([{ categoryId: RESTAURANTS, planned: 80, note: null }])
    const budget = await getBudget(server, key, '2026-05')
    expect(budget.categories.map((c: Json) => [c.categoryId, c.planned])).toEqual([[RESTAURANTS, 80]])
    // Removing what is not planned is no change, and answers the plan all the same.
    expect((await planCategory(server, key, '2026-05', EDUCATION, { planned: 0 })).categories).toHaveLength(1)
  })

  test('system and custom categories alike; income is planned negative', async () => {
    const { key } = await fresh()
    const custom = await customCategory(key)
    await planCategory(server, key, '2026-05', custom, { planned: 12 })
    const plan = await planCategory(server, key, '2026-05', SALARY, { planned: -3000 })
    expect(plan.categories.map((c: Json) => [c.categoryId, c.planned])).toEqual([
      [SALARY, -3000],
      [custom, 12],
    ])
    expect((await getBudget(server, key, '2026-05')).totals).toMatchObject({ plannedExpense: 12, plannedIncome: -3000 })
  })

  test('an unknown category, another owner’s, or a system one not meant for the owner’s country → 422 invalid_reference', async () => {
    const { key } = await fresh()
    const other = await fresh()
    const theirs = await customCategory(other.key)
    for (const id of ['cat_nope', theirs, 'cat_sys_kirchensteuer']) {
      const problem = expectProblem(await put(key, `/v1/budgets/2026-05/categories/${id}`, { planned: 1 }), 422, 'invalid_reference')
      expect(problem.detail).toContain('categoryId')
    }
    expect((await getBudget(server, key, '2026-05')).categories).toEqual([])
  })

  test('an archived category takes no new amount (422 rule_violation), but its plan can be removed', async () => {
    const { key } = await fresh()
    const custom = await customCategory(key)
    await planCategory(server, key, '2026-05', custom, { planned: 40 })
    await server.request('DELETE', `/v1/categories/${custom}`, { key })
    const problem = expectProblem(await put(key, `/v1/budgets/2026-06/categories/${custom}`, { planned: 40 }), 422, 'rule_violation')
    expect(problem.detail).toContain('archived')
    expectProblem(await put(key, `/v1/budgets/2026-05/categories/${custom}`, { planned: 41 }), 422, 'rule_violation')
    // The same amount again changes nothing; 0 removes it.
    expect((await planCategory(server, key, '2026-05', custom, { planned: 40 })).categories).toEqual([{ categoryId: custom, planned: 40, note: null }])
    expect((await planCategory(server, key, '2026-05', custom, { planned: 0 })).categories).toEqual([])
  })

  test('bad bodies: 422 validation_failed naming the field, nothing written', async () => {
    const { key } = await fresh()
    for (const [body, words] of [
      [{}, "'planned' is required"],
      [{ planned: '12' }, "'planned'"],
      [{ planned: 1.123456789 }, 'planned must have at most 8 decimal places'],
      [{ planned: 92233720369 }, 'planned must be between'],
      [{ planned: 1, notes: 'x' }, "'notes' is not allowed (did you mean 'note'?)"],
      [{ planned: 1, note: 'x'.repeat(2001) }, "'note'"],
    ] as [Json, string][]) {
      const problem = expectProblem(await put(key, `/v1/budgets/2026-05/categories/${GROCERIES}`, body), 422, 'validation_failed')
      expect(problem.detail).toContain(words)
    }
    expectProblem(await put(key, `/v1/budgets/2026-5/categories/${GROCERIES}`, { planned: 1 }), 422, 'validation_failed')
    expect((await getBudget(server, key, '2026-05')).categories).toEqual([])
  })
})

describe('the whole month: PUT /v1/budgets/{month}', () => {
  test('the month holds exactly the categories sent, in category order', async () => {
    const { key } = await fresh()
    await planCategory(server, key, '2026-07', EDUCATION, { planned: 99 })
    const plan = await planMonth(server, key, '2026-07', {
      categories: [
        { categoryId: RESTAURANTS, planned: 0.00000001 },
        { categoryId: GROCERIES, planned: 400, note: 'market' },
        { categoryId: GIFTS, planned: 0 },
      ],
    })
    expect(plan).toEqual({
      month: '2026-07',
      currency: 'EUR',
      categories: [
        { categoryId: GROCERIES, planned: 400, note: 'market' },
        { categoryId: RESTAURANTS, planned: 0.00000001, note: null },
      ],
    })
    expect((await planMonth(server, key, '2026-07', { categories: [] })).categories).toEqual([])
  })

  test('a category named twice → 422 rule_violation naming where; an unknown one → invalid_reference; nothing written', async () => {
    const { key } = await fresh()
    await planCategory(server, key, '2026-07', EDUCATION, { planned: 99 })
    const twice = {
      categories: [
        { categoryId: GROCERIES, planned: 1 },
        { categoryId: RESTAURANTS, planned: 2 },
        { categoryId: GROCERIES, planned: 3 },
      ],
    }
    expect(expectProblem(await put(key, '/v1/budgets/2026-07', twice), 422, 'rule_violation').detail).toStartWith('categories[2].categoryId')
    const unknown = {
      categories: [
        { categoryId: GROCERIES, planned: 1 },
        { categoryId: 'cat_nope', planned: 2 },
      ],
    }
    expect(expectProblem(await put(key, '/v1/budgets/2026-07', unknown), 422, 'invalid_reference').detail).toStartWith('categories[1].categoryId')
    const digits = {
      categories: [
        { categoryId: GROCERIES, planned: 1 },
        { categoryId: GIFTS, planned: 0.000000001 },
      ],
    }
    expect(expectProblem(await put(key, '/v1/budgets/2026-07', digits), 422, 'validation_failed').detail).toStartWith('categories[1].planned')
    expectProblem(await put(key, '/v1/budgets/2026-07', { copyFrom: '2026-06' }), 422, 'validation_failed')
    expectProblem(await put(key, '/v1/budgets/2026-07', { categories: [], copyFrom: '2026-6' }), 422, 'validation_failed')
    expect((await getBudget(server, key, '2026-07')).categories.map((c: Json) => [c.categoryId, c.planned])).toEqual([[EDUCATION, 99]])
  })

  test('copyFrom copies exactly, then the categories sent replace or remove entries; again, nothing changes', async () => {
    const { key } = await fresh()
    await planMonth(server, key, '2026-08', {
      categories: [
        { categoryId: GROCERIES, planned: 333.33333333, note: 'odd' },
        { categoryId: RESTAURANTS, planned: 0.1 },
        { categoryId: GIFTS, planned: 0.2 },
        { categoryId: SALARY, planned: -2999.99999999 },
      ],
    })
    const body = {
      copyFrom: '2026-08',
      categories: [
        { categoryId: GIFTS, planned: 0 },
        { categoryId: EDUCATION, planned: 12.5 },
        { categoryId: RESTAURANTS, planned: 0.2 },
      ],
    }
    const first = await put(key, '/v1/budgets/2026-09', body)
    expect(first.status).toBe(200)
    expect(first.json.data.categories).toEqual([
      { categoryId: GROCERIES, planned: 333.33333333, note: 'odd' },
      { categoryId: RESTAURANTS, planned: 0.2, note: null },
      { categoryId: EDUCATION, planned: 12.5, note: null },
      { categoryId: SALARY, planned: -2999.99999999, note: null },
    ])
    expect(rawNumbers(first.text, 'planned')).toEqual(['333.33333333', '0.2', '12.5', '-2999.99999999'])
    // Idempotent: the same request again answers the same plan and the feed does not move.
    const before = await feed(key)
    const again = await put(key, '/v1/budgets/2026-09', body)
    expect(again.text).toBe(first.text)
    expect((await feed(key, before.nextCursor)).data).toEqual([])
    // The source month is untouched.
    expect((await getBudget(server, key, '2026-08')).categories.map((c: Json) => c.planned)).toEqual([333.33333333, 0.1, 0.2, -2999.99999999])
    expect((await getBudget(server, key, '2026-09')).totals).toEqual({
      plannedExpense: 346.03333333,
      spentExpense: 0,
      plannedIncome: -2999.99999999,
      receivedIncome: 0,
    })
  })

  test('copyFrom the month itself keeps what is not named (a merge); copyFrom a month with no plan → 422', async () => {
    const { key } = await fresh()
    await planMonth(server, key, '2026-08', {
      categories: [
        { categoryId: GROCERIES, planned: 100 },
        { categoryId: RESTAURANTS, planned: 50 },
      ],
    })
    const merged = await planMonth(server, key, '2026-08', { copyFrom: '2026-08', categories: [{ categoryId: RESTAURANTS, planned: 60 }] })
    expect(merged.categories.map((c: Json) => [c.categoryId, c.planned])).toEqual([
      [GROCERIES, 100],
      [RESTAURANTS, 60],
    ])
    const problem = expectProblem(await put(key, '/v1/budgets/2026-09', { copyFrom: '2025-01', categories: [] }), 422, 'rule_violation')
    expect(problem.detail).toContain('copyFrom: 2025-01 has no planned amounts')
  })

  test('copyFrom leaves archived categories out; a whole month may send an archived category back unchanged, not changed', async () => {
    const { key } = await fresh()
    const custom = await customCategory(key)
    await planMonth(server, key, '2026-08', {
      categories: [
        { categoryId: GROCERIES, planned: 100 },
        { categoryId: custom, planned: 7 },
      ],
    })
    await server.request('DELETE', `/v1/categories/${custom}`, { key })
    expect((await planMonth(server, key, '2026-09', { copyFrom: '2026-08', categories: [] })).categories).toEqual([
      { categoryId: GROCERIES, planned: 100, note: null },
    ])
    // The plan as read, sent back: accepted.
    const asRead = [
      { categoryId: GROCERIES, planned: 120 },
      { categoryId: custom, planned: 7 },
    ]
    expect((await planMonth(server, key, '2026-08', { categories: asRead })).categories).toHaveLength(2)
    const changed = [{ categoryId: custom, planned: 8 }]
    expect(expectProblem(await put(key, '/v1/budgets/2026-08', { categories: changed }), 422, 'rule_violation').detail).toStartWith('categories[0].categoryId')
    expectProblem(await put(key, '/v1/budgets/2026-10', { categories: [{ categoryId: custom, planned: 7 }] }), 422, 'rule_violation')
  })
})

describe('the owner’s currency', () => {
  test('no defaultCurrency → 422 rule_violation for reading and planning', async () => {
    const { key } = await fresh({ defaultCurrency: null })
    for (const res of [
      await server.request('GET', '/v1/budgets/2026-05', { key }),
      await server.request('GET', '/v1/budgets?from=2026-01&to=2026-02', { key }),
      await put(key, `/v1/budgets/2026-05/categories/${GROCERIES}`, { planned: 1 }),
      await put(key, '/v1/budgets/2026-05', { categories: [] }),
    ]) {
      expect(expectProblem(res, 422, 'rule_violation').detail).toContain('defaultCurrency')
    }
  })

  test('a month keeps the currency it was planned in; after the owner’s changes, only a whole-month PUT plans it anew', async () => {
    const { key, id } = await fresh()
    const euros = (await createAccount(server, key, { currency: 'EUR' })).id
    const dollars = (await createAccount(server, key, { currency: 'USD' })).id
    await createTxn(server, key, { accountId: euros, amount: 10, date: '2026-05-02', categoryId: GROCERIES })
    await createTxn(server, key, { accountId: dollars, amount: 20, date: '2026-05-02', categoryId: GROCERIES })
    await planMonth(server, key, '2026-05', {
      categories: [
        { categoryId: GROCERIES, planned: 100 },
        { categoryId: GIFTS, planned: 5 },
      ],
    })
    await planMonth(server, key, '2026-04', { categories: [{ categoryId: GROCERIES, planned: 90 }] })
    // Another process changes the owner: a running server sees it within a second.
    await cliJson(server.dataDir, 'owner', 'update', '--owner', id, '--currency', 'USD')
    await Bun.sleep(50)
    const may = await getBudget(server, key, '2026-05')
    expect([may.currency, line(may, GROCERIES).spent, line(may, GROCERIES).otherCurrencies]).toEqual(['EUR', 10, [{ currency: 'USD', spent: 20 }]])
    expect((await getBudget(server, key, '2026-06')).currency).toBe('USD')
    const problem = expectProblem(await put(key, `/v1/budgets/2026-05/categories/${RESTAURANTS}`, { planned: 1 }), 422, 'rule_violation')
    expect(problem.detail).toContain('planned in EUR')
    // Removing an amount is fine, and leaves the rest in euros.
    expect(await planCategory(server, key, '2026-05', GIFTS, { planned: 0 })).toEqual({
      month: '2026-05',
      currency: 'EUR',
      categories: [{ categoryId: GROCERIES, planned: 100, note: null }],
    })
    // Copying a month planned in euros into dollars would convert: refused.
    expect(expectProblem(await put(key, '/v1/budgets/2026-06', { copyFrom: '2026-04', categories: [] }), 422, 'rule_violation').detail).toContain(
      'never converted',
    )
    const replanned = await planMonth(server, key, '2026-05', { categories: [{ categoryId: GROCERIES, planned: 120 }] })
    expect(replanned.currency).toBe('USD')
    const after = await getBudget(server, key, '2026-05')
    expect([after.currency, line(after, GROCERIES).spent, line(after, GROCERIES).otherCurrencies]).toEqual(['USD', 20, [{ currency: 'EUR', spent: 10 }]])
  })
})

describe('Idempotency-Key on PUT (optional, honoured when sent)', () => {
  test('sent: the answer is stored and replayed byte for byte; the same key with another body → 409', async () => {
    const { key } = await fresh()
    const path = `/v1/budgets/2026-05/categories/${GROCERIES}`
    const first = await put(key, path, { planned: 10 }, 'put-1')
    await planCategory(server, key, '2026-05', GROCERIES, { planned: 20 })
    const replay = await put(key, path, { planned: 10 }, 'put-1')
    expectReplayOf(replay, first)
    expect((await getBudget(server, key, '2026-05')).categories[0].planned).toBe(20)
    expectProblem(await put(key, path, { planned: 11 }, 'put-1'), 409, 'idempotency_key_reused')
    expectProblem(await put(key, '/v1/budgets/2026-05', { categories: [] }, 'put-1'), 409, 'idempotency_key_reused')
  })

  test('a refusal is stored and replayed like an answer; validation_failed is not', async () => {
    const { key } = await fresh()
    const refused = await put(key, '/v1/budgets/2026-05/categories/cat_nope', { planned: 1 }, 'put-2')
    expectProblem(refused, 422, 'invalid_reference')
    expectReplayOf(await put(key, '/v1/budgets/2026-05/categories/cat_nope', { planned: 1 }, 'put-2'), refused)
    expectProblem(await put(key, `/v1/budgets/2026-05/categories/${GROCERIES}`, { planned: 'x' }, 'put-3'), 422, 'validation_failed')
    expect((await put(key, `/v1/budgets/2026-05/categories/${GROCERIES}`, { planned: 1 }, 'put-3')).status).toBe(200)
  })

  test('not sent: the PUT runs, and sent again changes nothing more; a blank key → 400', async () => {
    const { key } = await fresh()
    const path = '/v1/budgets/2026-05'
    const body = { categories: [{ categoryId: GROCERIES, planned: 10 }] }
    const first = await put(key, path, body)
    const second = await put(key, path, body)
    expect([first.status, second.status]).toEqual([200, 200])
    expect(second.headers.get('idempotent-replayed')).toBeNull()
    expect(second.json).toEqual(first.json)
    expectProblem(await put(key, path, body, '   '), 400, 'idempotency_key_invalid')
    expectProblem(await put(key, path, body, 'é'), 400, 'idempotency_key_invalid')
  })
})

describe('budgets in the change feed', () => {
  test('resource budget, id the month, data the plan; a write that changes nothing adds nothing', async () => {
    const { key } = await fresh()
    const start = await feed(key)
    expect(start.data).toEqual([])
    await planCategory(server, key, '2026-05', GROCERIES, { planned: 10, note: 'n' })
    await planCategory(server, key, '2026-05', RESTAURANTS, { planned: 5 })
    await planMonth(server, key, '2026-06', { categories: [{ categoryId: GIFTS, planned: 1 }] })
    const page = await feed(key, start.nextCursor)
    expect(page.data.map((c: Json) => [c.resource, c.id, c.op, c.externalId])).toEqual([
      ['budget', '2026-05', 'upsert', null],
      ['budget', '2026-06', 'upsert', null],
    ])
    expect(page.data[0].data).toEqual(await planCategory(server, key, '2026-05', GROCERIES, { planned: 10, note: 'n' }))
    // The same amount and note again: nothing moves.
    expect((await feed(key, page.nextCursor)).data).toEqual([])
    await planCategory(server, key, '2026-05', GROCERIES, { planned: 0 })
    const removed = await feed(key, page.nextCursor)
    expect(removed.data.map((c: Json) => [c.id, c.data.categories])).toEqual([['2026-05', [{ categoryId: RESTAURANTS, planned: 5, note: null }]]])
    // Every kind together: budgets come with the rest by default.
    const all = await server.request('GET', '/v1/changes', { key })
    expect(all.json.data.filter((c: Json) => c.resource === 'budget').map((c: Json) => c.id)).toEqual(['2026-06', '2026-05'])
  })

  test('read with budgets:read: a key without it neither gets budgets nor may name them', async () => {
    const { key, id } = await fresh()
    await planCategory(server, key, '2026-05', GROCERIES, { planned: 10 })
    const noBudgets = await server.key(id, { scopes: ['accounts:read'] })
    expect((await server.request('GET', '/v1/changes', { key: noBudgets.key })).json.data.some((c: Json) => c.resource === 'budget')).toBe(false)
    expectProblem(await server.request('GET', '/v1/changes?resources=budgets', { key: noBudgets.key }), 403, 'insufficient_scope')
    const onlyBudgets = await server.key(id, { scopes: ['budgets:read'] })
    const res = await server.request('GET', '/v1/changes', { key: onlyBudgets.key })
    expect(res.status).toBe(200)
    expect(res.json.data.map((c: Json) => c.resource)).toEqual(['budget'])
  })
})

describe('ETag of a month’s budget (CONTRACT §25, §27)', () => {
  // Pins that the computed answer's tag follows every figure: a new transaction changes spent
  // without touching the plan, and must not be hidden behind a 304.
  test('GET answers an ETag and 304 to it; a plan change or a new transaction gives a new tag', async () => {
    const owner = await fresh()
    const month = '2026-03'
    await planCategory(server, owner.key, month, GROCERIES, { planned: 100 })
    const path = `/v1/budgets/${month}`
    const first = await server.request('GET', path, { key: owner.key })
    const etag = first.headers.get('etag') as string
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
    const again = await server.request('GET', path, { key: owner.key, headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect(again.headers.get('etag')).toBe(etag)

    const account = await createAccount(server, owner.key, { currency: 'EUR' })
    await createTxn(server, owner.key, { accountId: account.id, amount: 7, date: `${month}-10`, categoryId: GROCERIES })
    const spent = await server.request('GET', path, { key: owner.key, headers: { 'if-none-match': etag } })
    expect(spent.status).toBe(200)
    const afterSpent = spent.headers.get('etag') as string
    expect(afterSpent).not.toBe(etag)

    await planCategory(server, owner.key, month, GROCERIES, { planned: 120 })
    const replanned = await server.request('GET', path, { key: owner.key, headers: { 'if-none-match': afterSpent } })
    expect(replanned.status).toBe(200)
    expect(replanned.headers.get('etag')).not.toBe(afterSpent)
  })
})
