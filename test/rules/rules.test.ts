import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, expectReplayOf, listPages, startTestServer, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { type Json, ledger, newRule, RULE_FIELDS, when } from './helpers.ts'

/** CONTRACT §23: the rules resource — its routes, what a rule may say, its order, the feed, the context, the cap. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

describe('the resource', () => {
  test('create, read, list, change, delete; defaults; money exact; Location', async () => {
    const { key, coffee } = await ledger(server)
    // Sent as text: a double cannot hold 12345678901.23456789, and the rule must keep it exactly.
    const res = await server.request('POST', '/v1/rules', {
      key,
      body: `{"name":" Big coffee ","externalId":" r-1 ","conditions":[{"field":"originalDescription","op":"contains","value":" Starbucks "},{"field":"amount","op":"between","value":0.00000001,"valueTo":12345678901.23456789}],"actions":[{"set":"categoryId","value":"${coffee}"}]}`,
    })
    expect(res.status).toBe(201)
    const rule = res.json.data
    expect(Object.keys(rule)).toEqual(RULE_FIELDS)
    expect(rule.id).toMatch(/^rul_[0-9a-f]{32}$/)
    expect(res.headers.get('location')).toBe(`/v1/rules/${rule.id}`)
    expect(rule).toMatchObject({ name: 'Big coffee', externalId: 'r-1', priority: 100, isActive: true, match: 'all', stopProcessing: false })
    expect(rule.conditions).toEqual([
      { field: 'originalDescription', op: 'contains', value: 'Starbucks', valueTo: null },
      { field: 'amount', op: 'between', value: 0.00000001, valueTo: 12345678901.234568 },
    ])
    // Money in a rule reads back as exactly the decimal sent.
    expect(res.text).toContain('"value":0.00000001')
    expect(res.text).toContain('"valueTo":12345678901.23456789')
    expect(rule.actions).toEqual([{ set: 'categoryId', value: coffee }])
    expect((await server.request('GET', `/v1/rules/${rule.id}`, { key })).json.data).toEqual(rule)
    expect((await server.request('GET', '/v1/rules', { key })).json).toEqual({ data: [rule], nextCursor: null, hasMore: false })

    const changed = await server.request('PATCH', `/v1/rules/${rule.id}`, { key, body: { priority: 5, isActive: false, match: 'any', stopProcessing: true } })
    expect(changed.status).toBe(200)
    expect(changed.json.data).toEqual({ ...rule, priority: 5, isActive: false, match: 'any', stopProcessing: true, updatedAt: changed.json.data.updatedAt })
    expect(changed.json.data.updatedAt).toBeGreaterThanOrEqual(rule.updatedAt)
    // conditions and actions replace the lists
    const replaced = await server.request('PATCH', `/v1/rules/${rule.id}`, {
      key,
      body: { conditions: [{ field: 'note', op: 'isEmpty', value: null, valueTo: null }], actions: [{ set: 'note', value: 'check me' }] },
    })
    expect(replaced.json.data.conditions).toEqual([{ field: 'note', op: 'isEmpty', value: null, valueTo: null }])
    expect(replaced.json.data.actions).toEqual([{ set: 'note', value: 'check me' }])

    const deleted = await server.request('DELETE', `/v1/rules/${rule.id}`, { key })
    expect(deleted.status).toBe(200)
    expect(deleted.json.data).toEqual(replaced.json.data)
    expectProblem(await server.request('GET', `/v1/rules/${rule.id}`, { key }), 404, 'not_found')
    expectProblem(await server.request('DELETE', `/v1/rules/${rule.id}`, { key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', '/v1/rules/rul_nope', { key, body: { name: 'x' } }), 404, 'not_found')
  })

  test('a rule read back is a valid body: PATCH with what GET returned changes nothing', async () => {
    const { key, account } = await ledger(server)
    const rule = await newRule(server, key, {
      name: 'Every shape',
      conditions: [
        { field: 'payeeName', op: 'oneOf', value: ['Lidl', 'Aldi'] },
        { field: 'amount', op: 'oneOf', value: [1.5, -2] },
        { field: 'amount', op: 'is', value: 12.9 },
        { field: 'accountId', op: 'oneOf', value: [account] },
        { field: 'note', op: 'matches', value: 'a?c*' },
        { field: 'originalDescription', op: 'isEmpty' },
      ],
      actions: [{ set: 'tagNames', value: ['Food', 'Weekly'] }],
    })
    const { id: _id, createdAt: _createdAt, updatedAt: _updatedAt, ...body } = rule
    const again = await server.request('PATCH', `/v1/rules/${rule.id}`, { key, body })
    expect(again.status).toBe(200)
    expect(again.json.data).toEqual(rule)
  })

  test('upsert by externalId creates, then updates; an externalId held by another rule is 409', async () => {
    const { key, coffee } = await ledger(server)
    const body = { externalId: 'coffee-rule', ...when('payeeName', 'is', 'Starbucks', 'categoryId', coffee) }
    const created = await server.request('POST', '/v1/rules/upsert', { key, body })
    expect(created.status).toBe(201)
    expect(created.json.operation).toBe('created')
    expect(created.headers.get('location')).toBe(`/v1/rules/${created.json.data.id}`)
    const updated = await server.request('POST', '/v1/rules/upsert', { key, body: { ...body, name: 'Coffee shops', priority: 7 } })
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ operation: 'updated', data: { id: created.json.data.id, name: 'Coffee shops', priority: 7 } })
    const other = await newRule(server, key, { ...when('note', 'contains', 'x', 'note', 'y'), externalId: 'other' })
    expectProblem(await server.request('PATCH', `/v1/rules/${other.id}`, { key, body: { externalId: 'coffee-rule' } }), 409, 'external_id_conflict')
    expectProblem(
      await server.request('POST', '/v1/rules', { key, body: { ...when('note', 'contains', 'x', 'note', 'y'), externalId: 'other' } }),
      409,
      'external_id_conflict',
    )
  })

  test('listed in the order they run: priority, then creation; keyset pages', async () => {
    const { key } = await ledger(server)
    const made: Json[] = []
    for (const priority of [50, 10, 50, 0, 10, 1_000_000]) made.push(await newRule(server, key, { ...when('note', 'contains', 'x', 'note', 'y'), priority }))
    const expected = [...made].sort((a, b) => a.priority - b.priority || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
    expect((await listPages(server, key, '/v1/rules', {}, 2)).map((rule: Json) => rule.id)).toEqual(expected.map((rule) => rule.id))
    expectProblem(await server.request('GET', '/v1/rules?cursor=bm9wZQ', { key }), 422, 'validation_failed')
    // a tag list's cursor is not a rule list's
    const tagCursor = Buffer.from(JSON.stringify([1, 2, 'tag_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'])).toString('base64url')
    expectProblem(await server.request('GET', `/v1/rules?cursor=${tagCursor}`, { key }), 422, 'validation_failed')
  })
})

describe('what a rule may say (each refusal changes nothing)', () => {
  const refusals: [string, (ids: { account: string; coffee: string }) => Json, number, string, string][] = [
    [
      'an operator the field does not take',
      () => when('note', 'between', 1, 'note', 'x'),
      422,
      'validation_failed',
      "conditions[0].op: 'between' does not apply to note",
    ],
    [
      'contains on an amount',
      () => when('amount', 'contains', 1, 'note', 'x'),
      422,
      'validation_failed',
      "conditions[0].op: 'contains' does not apply to amount",
    ],
    ['matches on an account', ({ account }) => when('accountId', 'matches', account, 'note', 'x'), 422, 'validation_failed', 'accountId takes is, oneOf'],
    ['text for an amount', () => when('amount', 'is', '12', 'note', 'x'), 422, 'validation_failed', 'conditions[0].value must be a number'],
    ['a number for text', () => when('note', 'is', 12, 'note', 'x'), 422, 'validation_failed', 'conditions[0].value must be text'],
    ['a list without oneOf', () => when('note', 'is', ['a'], 'note', 'x'), 422, 'validation_failed', 'must not be a list'],
    ['oneOf without a list', () => when('note', 'oneOf', 'a', 'note', 'x'), 422, 'validation_failed', 'must be a list for oneOf'],
    ['a value for isEmpty', () => when('note', 'isEmpty', 'a', 'note', 'x'), 422, 'validation_failed', 'isEmpty takes no value'],
    [
      'no value for contains',
      () => when('note', 'contains', undefined, 'note', 'x'),
      422,
      'validation_failed',
      'conditions[0].value: is required for contains',
    ],
    [
      'valueTo without between',
      () => ({ ...when('amount', 'is', 1, 'note', 'x'), conditions: [{ field: 'amount', op: 'is', value: 1, valueTo: 2 }] }),
      422,
      'validation_failed',
      'only between takes valueTo',
    ],
    ['between without valueTo', () => when('amount', 'between', 1, 'note', 'x'), 422, 'validation_failed', 'valueTo: is required for between'],
    [
      'between upside down',
      () => ({ ...when('amount', 'between', 5, 'note', 'x'), conditions: [{ field: 'amount', op: 'between', value: 5, valueTo: 4.99 }] }),
      422,
      'validation_failed',
      'valueTo must be at least value',
    ],
    [
      'an amount with 9 decimals',
      () => when('amount', 'is', 0.123456789, 'note', 'x'),
      422,
      'validation_failed',
      'conditions[0].value must have at most 8 decimal places',
    ],
    [
      'an amount in a list beyond the range',
      () => when('amount', 'oneOf', [1, 92233720369], 'note', 'x'),
      422,
      'validation_failed',
      'conditions[0].value[1] must be between',
    ],
    [
      'text with nothing left once normalized',
      () => when('note', 'contains', ' \u0301 ', 'note', 'x'),
      422,
      'validation_failed',
      'conditions[0].value must contain',
    ],
    ['an unknown field', () => when('memo', 'is', 'a', 'note', 'x'), 422, 'validation_failed', "field 'conditions[0].field' must be one of"],
    ['an unknown action', () => when('note', 'is', 'a', 'amount', 'x'), 422, 'validation_failed', "field 'actions[0].set' must be one of"],
    ['no conditions', () => ({ name: 'x', conditions: [], actions: [{ set: 'note', value: 'x' }] }), 422, 'validation_failed', 'conditions'],
    [
      'an account that is not yours',
      () => when('accountId', 'is', 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', 'note', 'x'),
      422,
      'invalid_reference',
      'conditions[0].value',
    ],
    [
      'a category that is not yours',
      () => when('note', 'is', 'a', 'categoryId', 'cat_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
      422,
      'invalid_reference',
      'actions[0].value',
    ],
    [
      'a system category of another country',
      () => when('note', 'is', 'a', 'categoryId', 'cat_sys_thirteenth_salary'),
      422,
      'invalid_reference',
      'actions[0].value',
    ],
    ['tag names as text', () => when('note', 'is', 'a', 'tagNames', 'Food'), 422, 'validation_failed', 'actions[0].value must be a list of tag names'],
    ['a category as a list', () => when('note', 'is', 'a', 'categoryId', ['x']), 422, 'validation_failed', 'actions[0].value must be text for categoryId'],
    ['a blank payee name', () => when('note', 'is', 'a', 'payeeName', '   '), 422, 'validation_failed', 'actions[0].value must contain letters or digits'],
    ['a payee name over 200 characters', () => when('note', 'is', 'a', 'payeeName', 'p'.repeat(201)), 422, 'validation_failed', 'at most 200 characters'],
    [
      'two actions on one field',
      ({ coffee }) => ({
        name: 'x',
        conditions: [{ field: 'note', op: 'is', value: 'a' }],
        actions: [
          { set: 'categoryId', value: coffee },
          { set: 'categoryId', value: coffee },
        ],
      }),
      422,
      'validation_failed',
      'actions[1].set: categoryId is already set by actions[0]',
    ],
  ]

  test.each(refusals)('%s', async (_label, body, status, code, detail) => {
    const ids = await ledger(server, { country: 'US' })
    const res = await server.request('POST', '/v1/rules', { key: ids.key, body: body(ids) })
    expectProblem(res, status, code)
    expect(res.json.detail).toContain(detail)
    expect((await server.request('GET', '/v1/rules', { key: ids.key })).json.data).toEqual([])
  })

  test('an archived category or tag → 422 rule_violation when saved; a live one is fine', async () => {
    const { key, coffee, groceries } = await ledger(server)
    await server.request('DELETE', `/v1/categories/${coffee}`, { key })
    const archived = await server.request('POST', '/v1/rules', { key, body: when('note', 'is', 'a', 'categoryId', coffee) })
    expectProblem(archived, 422, 'rule_violation')
    expect(archived.json.detail).toContain('archived')
    const tag = await server.request('POST', '/v1/tags', { key, body: { name: 'Old trip' } })
    await server.request('DELETE', `/v1/tags/${tag.json.data.id}`, { key })
    expectProblem(await server.request('POST', '/v1/rules', { key, body: when('note', 'is', 'a', 'tagNames', ['OLD TRIP']) }), 422, 'rule_violation')
    // the same check on PATCH and upsert
    const rule = await newRule(server, key, when('note', 'is', 'a', 'categoryId', groceries))
    expectProblem(
      await server.request('PATCH', `/v1/rules/${rule.id}`, { key, body: { actions: [{ set: 'categoryId', value: coffee }] } }),
      422,
      'rule_violation',
    )
    expectProblem(
      await server.request('POST', '/v1/rules/upsert', { key, body: { externalId: 'u', ...when('note', 'is', 'a', 'categoryId', coffee) } }),
      422,
      'rule_violation',
    )
    expect((await server.request('GET', `/v1/rules/${rule.id}`, { key })).json.data).toEqual(rule)
  })

  test('a system category the owner sees is a valid action', async () => {
    const { key } = await ledger(server, { country: 'PT' })
    const rule = await newRule(server, key, when('note', 'is', 'a', 'categoryId', 'cat_sys_thirteenth_salary'))
    expect(rule.actions).toEqual([{ set: 'categoryId', value: 'cat_sys_thirteenth_salary' }])
  })
})

describe('scopes and idempotency', () => {
  test('transactions:read lists and reads rules; writing needs transactions:write', async () => {
    const { owner, key } = await ledger(server)
    const rule = await newRule(server, key, when('note', 'is', 'a', 'note', 'b'))
    const reader = await server.key(owner.id, { scopes: ['transactions:read'] })
    expect((await server.request('GET', '/v1/rules', { key: reader.key })).status).toBe(200)
    expect((await server.request('GET', `/v1/rules/${rule.id}`, { key: reader.key })).status).toBe(200)
    expectProblem(await server.request('POST', '/v1/rules', { key: reader.key, body: when('note', 'is', 'a', 'note', 'b') }), 403, 'insufficient_scope')
    expectProblem(await server.request('DELETE', `/v1/rules/${rule.id}`, { key: reader.key }), 403, 'insufficient_scope')
    const accounts = await server.key(owner.id, { scopes: ['accounts:read'] })
    expectProblem(await server.request('GET', '/v1/rules', { key: accounts.key }), 403, 'insufficient_scope')
  })

  test('a create retried with its Idempotency-Key replays byte for byte and makes one rule', async () => {
    const { key } = await ledger(server)
    const body = when('note', 'is', 'a', 'note', 'b')
    const first = await server.request('POST', '/v1/rules', { key, body, idempotencyKey: 'rule-once' })
    const again = await server.request('POST', '/v1/rules', { key, body, idempotencyKey: 'rule-once' })
    expectReplayOf(again, first)
    expect((await server.request('GET', '/v1/rules', { key })).json.data).toHaveLength(1)
  })

  test('another owner’s rule is 404, and never listed', async () => {
    const mine = await ledger(server)
    const theirs = await ledger(server)
    const rule = await newRule(server, theirs.key, when('note', 'is', 'a', 'note', 'b'))
    expectProblem(await server.request('GET', `/v1/rules/${rule.id}`, { key: mine.key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', `/v1/rules/${rule.id}`, { key: mine.key, body: { name: 'mine' } }), 404, 'not_found')
    expect((await server.request('GET', '/v1/rules', { key: mine.key })).json.data).toEqual([])
  })
})

describe('the change feed and the agent context', () => {
  test('rules enter the feed as resource rule (resources=rules, transactions:read); a deletion leaves a tombstone', async () => {
    const { owner, key } = await ledger(server)
    const start = (await server.request('GET', '/v1/changes?resources=rules', { key })).json.nextCursor
    const rule = await newRule(server, key, { ...when('note', 'is', 'a', 'note', 'b'), externalId: 'feed-rule' })
    const page = await server.request('GET', `/v1/changes?resources=rules&cursor=${start}`, { key })
    expect(page.json.data).toEqual([
      { seq: expect.any(Number), resource: 'rule', id: rule.id, op: 'upsert', changedAt: expect.any(Number), externalId: 'feed-rule', data: rule },
    ])
    // A PATCH that changes nothing adds nothing.
    const after = page.json.nextCursor
    await server.request('PATCH', `/v1/rules/${rule.id}`, { key, body: { name: rule.name } })
    expect((await server.request('GET', `/v1/changes?resources=rules&cursor=${after}`, { key })).json.data).toEqual([])
    await server.request('DELETE', `/v1/rules/${rule.id}`, { key })
    const gone = await server.request('GET', `/v1/changes?resources=rules&cursor=${after}`, { key })
    expect(gone.json.data).toEqual([
      { seq: expect.any(Number), resource: 'rule', id: rule.id, op: 'delete', changedAt: expect.any(Number), externalId: 'feed-rule', data: null },
    ])
    // Read with transactions:read, like tags; a key without it may not ask for rules.
    const reader = await server.key(owner.id, { scopes: ['transactions:read'] })
    expect((await server.request('GET', '/v1/changes?resources=rules', { key: reader.key })).status).toBe(200)
    const payees = await server.key(owner.id, { scopes: ['payees:read'] })
    expectProblem(await server.request('GET', '/v1/changes?resources=rules', { key: payees.key }), 403, 'insufficient_scope')
    const all = await server.request('GET', '/v1/changes', { key: payees.key })
    expect(all.json.data.filter((change: Json) => change.resource === 'rule')).toEqual([])
  })

  test('the agent context carries the active rules in run order; inactive ones with includeArchived', async () => {
    const { key } = await ledger(server)
    const late = await newRule(server, key, { ...when('note', 'is', 'a', 'note', 'b'), priority: 9 })
    const early = await newRule(server, key, { ...when('note', 'is', 'a', 'note', 'b'), priority: 1 })
    const paused = await newRule(server, key, { ...when('note', 'is', 'a', 'note', 'b'), priority: 5, isActive: false })
    expect((await server.request('GET', '/v1/agent/context', { key })).json.data.rules).toEqual([early, late])
    expect((await server.request('GET', '/v1/agent/context?includeArchived=true', { key })).json.data.rules).toEqual([early, paused, late])
  })
})

describe('OWNER_MAX_RULES', () => {
  test('past the cap → 409 limit_reached naming the setting; deleting one makes room', async () => {
    const capped = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '100000', OWNER_MAX_RULES: '2' } })
    try {
      const owner = await capped.owner()
      const body = when('note', 'is', 'a', 'note', 'b')
      const first = await newRule(capped, owner.key, body)
      await newRule(capped, owner.key, body)
      const third = await capped.request('POST', '/v1/rules', { key: owner.key, body })
      expectProblem(third, 409, 'limit_reached')
      expect(third.json.detail).toContain('OWNER_MAX_RULES')
      expectProblem(await capped.request('POST', '/v1/rules/upsert', { key: owner.key, body: { ...body, externalId: 'x' } }), 409, 'limit_reached')
      await capped.request('DELETE', `/v1/rules/${first.id}`, { key: owner.key })
      expect((await capped.request('POST', '/v1/rules', { key: owner.key, body })).status).toBe(201)
    } finally {
      await capped.stop()
    }
  })
})
