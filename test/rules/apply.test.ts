import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, expectReplayOf, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, getTxn, snapshot } from '../transactions/helpers.ts'
import { type Json, ledger, newRule, post, when } from './helpers.ts'

/** A transaction without its updatedAt, which each trial or applied change stamps anew. */
const untimed = ({ updatedAt: _updatedAt, ...rest }: Json) => rest
const untimedJson = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/"updatedAt":\d+,?/g, ''))

/**
 * CONTRACT §23: one rule over stored transactions — `POST /v1/rules/test` shows exactly what
 * `POST /v1/rules/{id}/apply` writes and writes nothing; apply fills only empty fields unless told
 * to overwrite, is atomic and bounded, enters each change in the feed once, and replays.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const txn = async (key: string, body: Json) => (await post(server, key, '/v1/transactions', body)).data
const feedCursor = async (key: string) => (await server.request('GET', '/v1/changes', { key })).json.nextCursor as string
const changesSince = async (key: string, cursor: string) => (await server.request('GET', `/v1/changes?limit=500&cursor=${cursor}`, { key })).json.data as Json[]

/** An owner with a coffee rule and a month of transactions: matching ones (empty, user-categorized, split), and others. */
async function month() {
  const ids = await ledger(server)
  const { key, account, coffee, groceries } = ids
  const tag = (await post(server, key, '/v1/tags', { name: 'Caffeine' })).data
  const rule = await newRule(server, key, {
    name: 'coffee',
    conditions: [{ field: 'originalDescription', op: 'matches', value: '*starbucks*' }],
    actions: [
      { set: 'categoryId', value: coffee },
      { set: 'note', value: 'coffee' },
      { set: 'tagNames', value: ['caffeine'] },
    ],
  })
  const t = {
    empty: await txn(key, { accountId: account, amount: 4.5, date: '2026-03-02', originalDescription: 'POS STARBUCKS 1' }),
    userSet: await txn(key, {
      accountId: account,
      amount: 5,
      date: '2026-03-03',
      originalDescription: 'Starbucks 2',
      categoryId: groceries,
      note: 'with a friend',
    }),
    split: await txn(key, {
      accountId: account,
      amount: 10,
      date: '2026-03-04',
      originalDescription: 'STARBUCKS beans',
      splits: [
        { amount: 6, categoryId: groceries },
        { amount: 4, categoryId: coffee },
      ],
    }),
    already: await txn(key, {
      accountId: account,
      amount: 3,
      date: '2026-03-05',
      originalDescription: 'starbucks 3',
      categoryId: coffee,
      note: 'coffee',
      tagIds: [tag.id],
    }),
    other: await txn(key, { accountId: account, amount: 50, date: '2026-03-06', originalDescription: 'PINGO DOCE' }),
    outside: await txn(key, { accountId: account, amount: 4, date: '2026-04-01', originalDescription: 'STARBUCKS 4' }),
  }
  return { ...ids, tag: tag.id as string, rule, t }
}

const MARCH = { from: '2026-03-01', to: '2026-03-31' }

describe('rules test and rules apply', () => {
  test('test shows exactly what apply then writes, and writes nothing itself', async () => {
    const { owner, key, rule, t, coffee, tag } = await month()
    const before = snapshot(server, owner.id)
    const cursor = await feedCursor(key)
    const shown = await post(server, key, '/v1/rules/test', { ruleId: rule.id, ...MARCH })
    expect(snapshot(server, owner.id)).toEqual(before)
    expect(await changesSince(key, cursor)).toEqual([])
    expect(shown.summary).toEqual({ scanned: 5, matched: 4, changed: 3 })
    expect(shown.hasMore).toBe(false)
    // Newest first, as the transaction list: split (03-04), userSet (03-03), empty (03-02).
    expect(shown.data.map((change: Json) => change.before.id)).toEqual([t.split.id, t.userSet.id, t.empty.id])
    for (const change of shown.data) expect(change.before).toEqual(await getTxn(server, key, change.before.id))
    const [split, userSet, empty] = shown.data
    // overwrite: false — only empty fields are filled: the user's category and note stay; the split gets no category.
    // updatedAt aside: `test` shows the time of its own trial change (CONTRACT §25), apply stamps its own.
    expect(untimed(userSet.after)).toEqual(untimed({ ...userSet.before, tagIds: [tag] }))
    expect(untimed(split.after)).toEqual(untimed({ ...split.before, note: 'coffee', tagIds: [tag] }))
    expect(untimed(empty.after)).toEqual(untimed({ ...empty.before, categoryId: coffee, categoryType: 'expense', note: 'coffee', tagIds: [tag] }))

    const applied = await post(server, key, `/v1/rules/${rule.id}/apply`, MARCH)
    expect(applied).toEqual({ data: { ruleId: rule.id, ...shown.summary, transactionIds: shown.data.map((change: Json) => change.after.id) } })
    for (const change of shown.data) expect(untimed(await getTxn(server, key, change.after.id))).toEqual(untimed(change.after))
    // The transactions outside the range, or not matched, are as they were.
    expect(await getTxn(server, key, t.outside.id)).toEqual(t.outside)
    expect(await getTxn(server, key, t.other.id)).toEqual(t.other)
    expect(await getTxn(server, key, t.already.id)).toEqual(t.already)
  })

  test('a user-set category survives apply; overwrite: true replaces it (and still skips a split’s category)', async () => {
    const { key, rule, t, coffee, groceries } = await month()
    await post(server, key, `/v1/rules/${rule.id}/apply`, { ...MARCH, overwrite: false })
    // Regression: apply without overwrite never replaces what the user chose.
    expect(await getTxn(server, key, t.userSet.id)).toMatchObject({ categoryId: groceries, note: 'with a friend' })
    const forced = await post(server, key, `/v1/rules/${rule.id}/apply`, { ...MARCH, overwrite: true })
    expect(forced.data.transactionIds).toEqual([t.userSet.id])
    expect(await getTxn(server, key, t.userSet.id)).toMatchObject({ categoryId: coffee, note: 'coffee' })
    expect(await getTxn(server, key, t.split.id)).toMatchObject({ categoryId: null, hasSplits: true })
  })

  test('each change enters the change feed once; applying again changes nothing', async () => {
    const { key, rule, t } = await month()
    const cursor = await feedCursor(key)
    const applied = await post(server, key, `/v1/rules/${rule.id}/apply`, MARCH)
    const changes = await changesSince(key, cursor)
    const transactions = changes.filter((change) => change.resource === 'transaction').map((change) => change.id)
    expect(transactions.sort()).toEqual([...applied.data.transactionIds].sort())
    expect(new Set(transactions).size).toBe(transactions.length)
    // The tag's count moved: it is a change of the tag too (CONTRACT §15), once.
    expect(changes.filter((change) => change.resource === 'tag')).toHaveLength(1)
    const later = await feedCursor(key)
    const again = await post(server, key, `/v1/rules/${rule.id}/apply`, MARCH)
    expect(again.data).toMatchObject({ scanned: 5, matched: 4, changed: 0, transactionIds: [] })
    expect(await changesSince(key, later)).toEqual([])
    expect(await getTxn(server, key, t.other.id)).toEqual(t.other)
  })

  test('apply replays byte for byte with its Idempotency-Key and runs once', async () => {
    const { key, rule } = await month()
    const first = await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: MARCH, idempotencyKey: 'apply-once' })
    const cursor = await feedCursor(key)
    const again = await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: MARCH, idempotencyKey: 'apply-once' })
    expectReplayOf(again, first)
    expect(await changesSince(key, cursor)).toEqual([])
    expectProblem(
      await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: { ...MARCH, overwrite: true }, idempotencyKey: 'apply-once' }),
      409,
      'idempotency_key_reused',
    )
  })

  test('test takes a rule not yet saved (as POST /v1/rules takes it), or a saved inactive one; it stops at limit changes', async () => {
    const { key, rule, coffee } = await month()
    const { name: _name, id: _id, createdAt: _createdAt, updatedAt: _updatedAt, externalId: _externalId, ...saved } = rule
    const inline = await post(server, key, '/v1/rules/test', { rule: saved, ...MARCH })
    const byId = await post(server, key, '/v1/rules/test', { ruleId: rule.id, ...MARCH })
    expect(untimedJson(inline)).toEqual(untimedJson(byId))
    const one = await post(server, key, '/v1/rules/test', { ruleId: rule.id, ...MARCH, limit: 1 })
    expect(untimedJson(one.data)).toEqual(untimedJson(byId.data.slice(0, 1)))
    // Newest first: 03-06 (no match), 03-05 (matched, nothing to change), 03-04 (changed), then it stops before 03-03.
    expect(one).toMatchObject({ summary: { scanned: 3, matched: 2, changed: 1 }, hasMore: true })
    await server.request('PATCH', `/v1/rules/${rule.id}`, { key, body: { isActive: false } })
    expect(untimedJson(await post(server, key, '/v1/rules/test', { ruleId: rule.id, ...MARCH }))).toEqual(untimedJson(byId))
    // A payee a rule creates is shown, and gone after the test.
    const payees = (await server.request('GET', '/v1/payees', { key })).json.data
    const named = await post(server, key, '/v1/rules/test', { rule: when('originalDescription', 'contains', 'pingo', 'payeeName', 'Pingo Doce'), ...MARCH })
    expect(named.data[0].after.payeeId).toMatch(/^pay_/)
    expect((await server.request('GET', '/v1/payees', { key })).json.data).toEqual(payees)
    expect(coffee).toBeTruthy()
  })

  test('the range and the account bound a run', async () => {
    const { key, rule, account, t } = await month()
    const card = await createAccount(server, key, { name: 'Card' })
    const onCard = await txn(key, { accountId: card.id, amount: 2, date: '2026-03-10', originalDescription: 'STARBUCKS card' })
    const cardOnly = await post(server, key, '/v1/rules/test', { ruleId: rule.id, ...MARCH, accountId: card.id })
    expect(cardOnly.summary).toEqual({ scanned: 1, matched: 1, changed: 1 })
    expect(cardOnly.data[0].before.id).toBe(onCard.id)
    const april = await post(server, key, `/v1/rules/${rule.id}/apply`, { from: '2026-04-01', to: '2026-04-01', accountId: account })
    expect(april.data.transactionIds).toEqual([t.outside.id])
    const upsideDown = await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: { from: '2026-03-31', to: '2026-03-01' } })
    expectProblem(upsideDown, 422, 'rule_violation')
    expect(upsideDown.json.detail).toContain('before from')
    expectProblem(await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: { ...MARCH, accountId: 'acct_nope' } }), 422, 'invalid_reference')
    expectProblem(await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: { from: '2026-02-30', to: '2026-03-01' } }), 422, 'validation_failed')
  })

  test('rule or ruleId, one of the two; unknown rules are 404; an inline rule is checked as a saved one', async () => {
    const { key, rule } = await month()
    const both = await server.request('POST', '/v1/rules/test', { key, body: { rule: when('note', 'is', 'a', 'note', 'b'), ruleId: rule.id, ...MARCH } })
    expectProblem(both, 422, 'rule_violation')
    expectProblem(await server.request('POST', '/v1/rules/test', { key, body: MARCH }), 422, 'rule_violation')
    expectProblem(await server.request('POST', '/v1/rules/test', { key, body: { ruleId: 'rul_nope', ...MARCH } }), 404, 'not_found')
    expectProblem(await server.request('POST', '/v1/rules/rul_nope/apply', { key, body: MARCH }), 404, 'not_found')
    const bad = await server.request('POST', '/v1/rules/test', { key, body: { rule: when('note', 'between', 1, 'note', 'b'), ...MARCH } })
    expectProblem(bad, 422, 'validation_failed')
    // Named where it stands in this request: under rule.
    expect(bad.json.detail).toStartWith("rule.conditions[0].op: 'between' does not apply to note")
  })

  test('scopes: test reads (transactions:read), apply writes (transactions:write)', async () => {
    const { owner, rule } = await month()
    const reader = await server.key(owner.id, { scopes: ['transactions:read'] })
    expect((await server.request('POST', '/v1/rules/test', { key: reader.key, body: { ruleId: rule.id, ...MARCH } })).status).toBe(200)
    expectProblem(await server.request('POST', `/v1/rules/${rule.id}/apply`, { key: reader.key, body: MARCH }), 403, 'insufficient_scope')
  })

  test('apply is atomic: a change that fails at the end (a payee total out of range) leaves every transaction as it was', async () => {
    const { owner, key } = await ledger(server)
    const a = await createAccount(server, key, { name: 'A' })
    const b = await createAccount(server, key, { name: 'B' })
    await txn(key, { accountId: a.id, amount: 90000000000, date: '2026-03-01', originalDescription: 'HUGE' })
    await txn(key, { accountId: b.id, amount: 90000000000, date: '2026-03-02', originalDescription: 'HUGE' })
    const rule = await newRule(server, key, when('originalDescription', 'is', 'huge', 'payeeName', 'Huge Payee'))
    const before = snapshot(server, owner.id)
    const res = await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: MARCH })
    expectProblem(res, 422, 'rule_violation')
    expect(res.json.detail).toContain('range')
    expect(snapshot(server, owner.id)).toEqual(before)
    // A test makes and undoes each change on its own: it shows both, and cannot see what they add up to.
    const shown = await post(server, key, '/v1/rules/test', { ruleId: rule.id, ...MARCH })
    expect(shown.summary).toEqual({ scanned: 2, matched: 2, changed: 2 })
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('a range holding more than 5,000 transactions is refused whole; 5,000 are applied', async () => {
    const { key, account, coffee } = await ledger(server)
    const rule = await newRule(server, key, when('amount', 'is', 1, 'categoryId', coffee))
    for (let batch = 0; batch < 10; batch++) {
      const items = Array.from({ length: 500 }, (_, i) => ({ externalId: `n-${batch}-${i}`, accountId: account, amount: 1, date: '2026-05-01' }))
      await post(server, key, '/v1/transactions/batch', { items })
    }
    const full = await post(server, key, `/v1/rules/${rule.id}/apply`, { from: '2026-05-01', to: '2026-05-01' })
    expect(full.data).toMatchObject({ scanned: 5_000, matched: 5_000, changed: 5_000 })
    // Regression: a test of 5,000 updates that all change nothing commits alone and undoes each
    // update at once, so no savepoint grows (SQLite's in-memory statement journal made one big
    // savepoint quadratic: ~15 s here).
    const started = performance.now()
    const idle = await post(server, key, '/v1/rules/test', { ruleId: rule.id, from: '2026-05-01', to: '2026-05-01', overwrite: true })
    console.log(`rules test over 5,000 no-op updates: ${(performance.now() - started).toFixed(0)} ms`)
    expect(idle).toEqual({ data: [], summary: { scanned: 5_000, matched: 5_000, changed: 0 }, hasMore: false })
    expect(performance.now() - started).toBeLessThan(5_000)
    await txn(key, { accountId: account, amount: 1, date: '2026-05-01' })
    const over = await server.request('POST', `/v1/rules/${rule.id}/apply`, { key, body: { from: '2026-05-01', to: '2026-05-01', overwrite: true } })
    expectProblem(over, 422, 'rule_violation')
    expect(over.json.detail).toContain('more than 5,000 transactions')
    // A test reads the same range and is refused the same way.
    expectProblem(
      await server.request('POST', '/v1/rules/test', { key, body: { ruleId: rule.id, from: '2026-05-01', to: '2026-05-01' } }),
      422,
      'rule_violation',
    )
  }, 60_000)
})
