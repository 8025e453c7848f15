import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { importTransactions } from '../../src/modules/transactions/batch.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { getTxn } from '../transactions/helpers.ts'
import { type Json, ledger, newRule, when } from './helpers.ts'

/**
 * CONTRACT §23: rules on create, upsert and batch writes — only when the body says
 * `applyRules: true`, in priority order, later rules seeing earlier results, `stopProcessing`,
 * text compared without case or accents, and never over a field the request set.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const create = async (key: string, body: Json) => {
  const res = await server.request('POST', '/v1/transactions', { key, body })
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`)
  return res
}

describe('applyRules is off unless asked for', () => {
  test('without applyRules (or with false) nothing runs: the answer is v1’s with rulesApplied: null beside data', async () => {
    const { key, account, coffee } = await ledger(server)
    await newRule(server, key, when('originalDescription', 'contains', 'starbucks', 'categoryId', coffee))
    const body = { accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'STARBUCKS 123' }
    const plain = await create(key, body)
    const off = await create(key, { ...body, applyRules: false })
    for (const res of [plain, off]) {
      // Regression: a write that did not ask for rules runs none: its category stays empty, and rulesApplied is null, not [].
      expect(Object.keys(res.json)).toEqual(['data', 'rulesApplied'])
      expect(res.json.rulesApplied).toBeNull()
      expect(res.json.data.categoryId).toBeNull()
    }
    const strip = (text: string) => text.replace(/"(id|createdAt|updatedAt)":("[^"]*"|\d+)/g, '')
    expect(strip(off.text)).toBe(strip(plain.text))
    const upsert = await server.request('POST', '/v1/transactions/upsert', { key, body: { ...body, externalId: 'u-1' } })
    expect(upsert.json).toMatchObject({ operation: 'created', rulesApplied: null, data: { categoryId: null } })
    const batch = await server.request('POST', '/v1/transactions/batch', { key, body: { items: [{ ...body, externalId: 'b-1' }] } })
    expect(Object.keys(batch.json.data[0])).toEqual(['index', 'externalId', 'operation', 'data', 'errors', 'rulesApplied'])
    expect(batch.json.data[0]).toMatchObject({ rulesApplied: null, data: { categoryId: null } })
  })

  test('an inactive rule never runs', async () => {
    const { key, account, coffee } = await ledger(server)
    await newRule(server, key, { ...when('note', 'is', 'flat white', 'categoryId', coffee), isActive: false })
    const res = await create(key, { accountId: account, amount: 3, date: '2026-03-01', note: 'Flat White', applyRules: true })
    expect(res.json).toEqual({ data: expect.objectContaining({ categoryId: null }), rulesApplied: [] })
  })
})

describe('what rules fill in', () => {
  test('create: the rule fills the category and says so; rulesApplied is beside data', async () => {
    const { key, account, coffee } = await ledger(server)
    const rule = await newRule(server, key, when('originalDescription', 'contains', 'starbucks', 'categoryId', coffee))
    const res = await create(key, { accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'POS STARBUCKS 0042 LISBOA', applyRules: true })
    expect(Object.keys(res.json)).toEqual(['data', 'rulesApplied'])
    expect(res.json.rulesApplied).toEqual([rule.id])
    expect(res.json.data).toMatchObject({ categoryId: coffee, categoryType: 'expense', originalDescription: 'POS STARBUCKS 0042 LISBOA' })
    expect(await getTxn(server, key, res.json.data.id)).toEqual(res.json.data)
  })

  test('a field the request set is never overwritten: categoryId, categoryId: null, payee, note, tags', async () => {
    const { key, account, coffee, groceries } = await ledger(server)
    const rule = await newRule(server, key, {
      name: 'everything',
      conditions: [{ field: 'originalDescription', op: 'contains', value: 'shop' }],
      actions: [
        { set: 'categoryId', value: coffee },
        { set: 'payeeName', value: 'Rule Payee' },
        { set: 'note', value: 'rule note' },
        { set: 'tagNames', value: ['rule tag'] },
      ],
    })
    const base = { accountId: account, amount: 10, date: '2026-03-01', originalDescription: 'SHOP 1', applyRules: true }
    const mine = await create(key, { ...base, categoryId: groceries, payeeName: 'My Payee', note: 'my note', tagNames: ['mine'] })
    expect(mine.json.rulesApplied).toEqual([rule.id])
    const tags = (await server.request('GET', '/v1/tags', { key })).json.data
    expect(mine.json.data).toMatchObject({ categoryId: groceries, note: 'my note', tagIds: [tags.find((t: Json) => t.name === 'mine').id] })
    expect((await server.request('GET', `/v1/payees/${mine.json.data.payeeId}`, { key })).json.data.name).toBe('My Payee')
    // An explicit null is a value the caller chose.
    const cleared = await create(key, { ...base, categoryId: null, note: null, payeeId: null, tagIds: [] })
    expect(cleared.json.data).toMatchObject({ categoryId: null, note: null, payeeId: null, tagIds: [] })
    // Nothing sent: the rule fills every field.
    const filled = await create(key, base)
    expect(filled.json.data).toMatchObject({ categoryId: coffee, note: 'rule note' })
    expect((await server.request('GET', `/v1/payees/${filled.json.data.payeeId}`, { key })).json.data.name).toBe('Rule Payee')
    const ruleTag = (await server.request('GET', '/v1/tags', { key })).json.data.find((t: Json) => t.name === 'rule tag')
    expect(filled.json.data.tagIds).toEqual([ruleTag.id])
  })

  test('by ascending priority, then creation; later rules see what earlier ones set, and overwrite it; stopProcessing ends the run', async () => {
    const { key, account, coffee, groceries } = await ledger(server)
    // Made in an order unlike their priorities.
    const category = await newRule(server, key, { ...when('payeeName', 'is', 'starbucks', 'categoryId', coffee), priority: 20 })
    const payee = await newRule(server, key, { ...when('originalDescription', 'startsWith', 'sbux', 'payeeName', 'Starbucks'), priority: 10 })
    const sameTier = await newRule(server, key, {
      name: 'small',
      conditions: [{ field: 'amount', op: 'between', value: 0, valueTo: 100 }],
      actions: [{ set: 'note', value: 'small' }],
      priority: 20,
    })
    const res = await create(key, { accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'SBUX 42', applyRules: true })
    expect(res.json.rulesApplied).toEqual([payee.id, category.id, sameTier.id])
    expect(res.json.data).toMatchObject({ categoryId: coffee, note: 'small' })

    // A later rule overwrites what an earlier one set ...
    const override = await newRule(server, key, { ...when('payeeName', 'is', 'Starbucks', 'categoryId', groceries), priority: 30 })
    const overridden = await create(key, { accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'SBUX 43', applyRules: true })
    expect(overridden.json.rulesApplied).toEqual([payee.id, category.id, sameTier.id, override.id])
    expect(overridden.json.data.categoryId).toBe(groceries)
    // ... unless an earlier one stops the run.
    await server.request('PATCH', `/v1/rules/${category.id}`, { key, body: { stopProcessing: true } })
    const stopped = await create(key, { accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'SBUX 44', applyRules: true })
    expect(stopped.json.rulesApplied).toEqual([payee.id, category.id])
    expect(stopped.json.data).toMatchObject({ categoryId: coffee, note: null })
  })

  test('text is compared without case or accents, as payee names are', async () => {
    const { key, account, coffee } = await ledger(server)
    const rules = [
      await newRule(server, key, when('originalDescription', 'contains', 'café', 'note', 'contains')),
      await newRule(server, key, when('originalDescription', 'startsWith', 'CREME', 'tagNames', ['starts'])),
      await newRule(server, key, when('originalDescription', 'endsWith', 'ﬁnal', 'categoryId', coffee)),
      await newRule(server, key, when('originalDescription', 'matches', 'crème*cafe?lisbon*', 'payeeName', 'Glob')),
    ]
    const res = await create(key, {
      accountId: account,
      amount: 2,
      date: '2026-03-01',
      originalDescription: 'Crème brûlée  CAFE LISBON final',
      applyRules: true,
    })
    expect(res.json.rulesApplied).toEqual(rules.map((rule) => rule.id))
    expect(res.json.data).toMatchObject({ note: 'contains', categoryId: coffee })
    const none = await create(key, { accountId: account, amount: 2, date: '2026-03-01', originalDescription: 'Creme brulee', applyRules: true })
    expect(none.json.rulesApplied).toEqual([rules[1].id])
  })

  test('match all or any; amounts (signed, between inclusive, oneOf); accounts; isEmpty', async () => {
    const { key, account } = await ledger(server)
    const other = (await server.request('POST', '/v1/accounts', { key, body: { name: 'Card', type: 'card', balance: 0, currency: 'EUR' } })).json.data.id
    const all = await newRule(server, key, {
      name: 'all',
      conditions: [
        { field: 'amount', op: 'between', value: 10, valueTo: 20 },
        { field: 'accountId', op: 'is', value: account },
      ],
      actions: [{ set: 'tagNames', value: ['all'] }],
    })
    const any = await newRule(server, key, {
      name: 'any',
      match: 'any',
      conditions: [
        { field: 'amount', op: 'oneOf', value: [-100, 0.01] },
        { field: 'accountId', op: 'oneOf', value: [other] },
      ],
      actions: [{ set: 'tagNames', value: ['any'] }],
    })
    const empty = await newRule(server, key, {
      name: 'empty',
      conditions: [{ field: 'note', op: 'isEmpty' }],
      actions: [{ set: 'tagNames', value: ['empty'] }],
    })
    const applied = async (accountId: string, amount: number, note?: string) =>
      (await create(key, { accountId, amount, date: '2026-03-01', applyRules: true, ...(note ? { note } : {}) })).json.rulesApplied
    expect(await applied(account, 10, 'x')).toEqual([all.id])
    expect(await applied(account, 20, 'x')).toEqual([all.id])
    expect(await applied(account, 20.00000001, 'x')).toEqual([])
    expect(await applied(account, 9.99999999, 'x')).toEqual([])
    expect(await applied(account, -100, 'x')).toEqual([any.id]) // income is negative: -100 is not 100
    expect(await applied(account, 100, 'x')).toEqual([])
    expect(await applied(other, 15, 'x')).toEqual([any.id])
    expect(await applied(account, 0.01)).toEqual([any.id, empty.id])
  })

  test('tags from several rules add up, each once, by normalized name; an archived tag is left out, and the write still succeeds', async () => {
    const { key, account } = await ledger(server)
    await newRule(server, key, when('note', 'contains', 'trip', 'tagNames', ['Lisbon 2026', 'Travel']))
    await newRule(server, key, when('note', 'contains', 'trip', 'tagNames', ['TRAVEL', 'Food']))
    const res = await create(key, { accountId: account, amount: 30, date: '2026-03-01', note: 'trip dinner', applyRules: true })
    const tags = (await server.request('GET', '/v1/tags', { key })).json.data
    expect(tags.map((tag: Json) => tag.name)).toEqual(['Lisbon 2026', 'Travel', 'Food'])
    expect(res.json.data.tagIds).toEqual(tags.map((tag: Json) => tag.id))
    await server.request('DELETE', `/v1/tags/${tags[1].id}`, { key })
    const later = await create(key, { accountId: account, amount: 30, date: '2026-03-02', note: 'trip lunch', applyRules: true })
    expect(later.json.data.tagIds).toEqual([tags[0].id, tags[2].id])
  })

  test('a split transaction gets no category from a rule (its legs hold them); the other actions apply', async () => {
    const { key, account, coffee, groceries } = await ledger(server)
    await newRule(server, key, {
      name: 'split',
      conditions: [{ field: 'note', op: 'is', value: 'receipt' }],
      actions: [
        { set: 'categoryId', value: coffee },
        { set: 'payeeName', value: 'Market' },
      ],
    })
    const res = await create(key, {
      accountId: account,
      amount: 10,
      date: '2026-03-01',
      note: 'receipt',
      splits: [
        { amount: 6, categoryId: groceries },
        { amount: 4, categoryId: coffee },
      ],
      applyRules: true,
    })
    expect(res.json.data).toMatchObject({ categoryId: null, hasSplits: true })
    expect(res.json.data.payeeId).toMatch(/^pay_/)
  })

  test('a payee a rule names is found by name or alias, and its default category fills only what no rule set', async () => {
    const { key, account, coffee, groceries } = await ledger(server)
    const payee = (await server.request('POST', '/v1/payees', { key, body: { name: 'Pingo Doce', aliases: ['PD LISBOA'], categoryId: groceries } })).json.data
    await newRule(server, key, when('originalDescription', 'contains', 'pingo', 'payeeName', 'pd lisboa'))
    // A later rule sees the payee under its own name, not the alias the first rule wrote.
    const byName = await newRule(server, key, { ...when('payeeName', 'is', 'Pingo Doce', 'note', 'seen by name'), priority: 200 })
    const res = await create(key, { accountId: account, amount: 20, date: '2026-03-01', originalDescription: 'COMPRA PINGO DOCE', applyRules: true })
    expect(res.json.data).toMatchObject({ payeeId: payee.id, categoryId: groceries, note: 'seen by name' })
    expect(res.json.rulesApplied).toContain(byName.id)
    await newRule(server, key, when('originalDescription', 'contains', 'cafe', 'categoryId', coffee))
    const both = await create(key, { accountId: account, amount: 2, date: '2026-03-01', originalDescription: 'PINGO DOCE CAFE', applyRules: true })
    expect(both.json.data).toMatchObject({ payeeId: payee.id, categoryId: coffee })
  })

  test('a category a rule sets is checked as a sent one: an archived category is still usable on transactions', async () => {
    const { key, account, coffee } = await ledger(server)
    await newRule(server, key, when('note', 'is', 'espresso', 'categoryId', coffee))
    await server.request('DELETE', `/v1/categories/${coffee}`, { key })
    const res = await create(key, { accountId: account, amount: 1, date: '2026-03-01', note: 'espresso', applyRules: true })
    expect(res.json.data.categoryId).toBe(coffee)
  })
})

describe('upsert and batch', () => {
  test('an upsert that updates fills only what the stored transaction leaves empty; the same upsert again is unchanged', async () => {
    const { key, account, coffee, groceries } = await ledger(server)
    const body = { externalId: 'bank-1', accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'STARBUCKS', applyRules: true }
    const first = await server.request('POST', '/v1/transactions/upsert', { key, body: { ...body, applyRules: false } })
    expect(first.json.data.categoryId).toBeNull()
    // The user categorizes it by hand; then a rule appears; then the bank sends the row again.
    await server.request('PATCH', `/v1/transactions/${first.json.data.id}`, { key, body: { categoryId: groceries } })
    const rule = await newRule(server, key, {
      name: 'coffee',
      conditions: [{ field: 'originalDescription', op: 'contains', value: 'starbucks' }],
      actions: [
        { set: 'categoryId', value: coffee },
        { set: 'note', value: 'coffee' },
      ],
    })
    const again = await server.request('POST', '/v1/transactions/upsert', { key, body })
    expect(again.status).toBe(200)
    expect(again.json).toMatchObject({ operation: 'updated', rulesApplied: [rule.id], data: { categoryId: groceries, note: 'coffee' } })
    const cursor = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    const third = await server.request('POST', '/v1/transactions/upsert', { key, body })
    expect(third.json).toEqual({ operation: 'updated', data: again.json.data, rulesApplied: [rule.id] })
    expect((await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })).json.data).toEqual([])
  })

  test('batch: each item reports rulesApplied, a dry run the same as the real run; failed and skipped items []', async () => {
    const { key, account, coffee } = await ledger(server)
    const rule = await newRule(server, key, when('originalDescription', 'contains', 'starbucks', 'categoryId', coffee))
    const items = [
      { externalId: 'b-1', accountId: account, amount: 4.5, date: '2026-03-01', originalDescription: 'STARBUCKS 1' },
      { externalId: 'b-2', accountId: account, amount: 9, date: '2026-03-01', originalDescription: 'OTHER' },
      { externalId: 'b-3', accountId: account, amount: 5, date: '2026-03-01', originalDescription: 'starbucks 3', categoryId: null },
    ]
    const dry = await server.request('POST', '/v1/transactions/batch', { key, body: { items, applyRules: true, dryRun: true } })
    const real = await server.request('POST', '/v1/transactions/batch', { key, body: { items, applyRules: true } })
    expect(real.status).toBe(200)
    expect(real.json.data.map((item: Json) => item.rulesApplied)).toEqual([[rule.id], [], [rule.id]])
    expect(dry.json.data.map((item: Json) => item.rulesApplied)).toEqual([[rule.id], [], [rule.id]])
    expect(real.json.data.map((item: Json) => item.data.categoryId)).toEqual([coffee, null, null])

    const failing = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: {
        items: [
          { ...items[0], externalId: 'b-4' },
          { ...items[1], externalId: 'b-5', accountId: 'acct_nope' },
        ],
        applyRules: true,
        dryRun: true,
      },
    })
    expect(failing.json.data.map((item: Json) => [item.operation, item.rulesApplied])).toEqual([
      ['created', [rule.id]],
      [null, []],
    ])
    // The atomic run names the item as ever, and writes nothing.
    const refused = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { items: [{ ...items[1], externalId: 'b-5', accountId: 'acct_nope' }], applyRules: true },
    })
    expectProblem(refused, 422, 'invalid_reference')
    expect(refused.json.detail).toStartWith('items[0].accountId')
  })

  test('applyRules is the batch’s, not an item’s', async () => {
    const { key, account } = await ledger(server)
    const res = await server.request('POST', '/v1/transactions/batch', {
      key,
      body: { items: [{ externalId: 'x', accountId: account, amount: 1, date: '2026-03-01', applyRules: true }] },
    })
    expectProblem(res, 422, 'validation_failed')
    expect(res.json.detail).toContain('items[0].applyRules: is not allowed')
  })

  test('an importer’s fallbacks (the exported batch option): a rule wins over them, and they fill what nothing else sets', async () => {
    const { owner, key, account, coffee } = await ledger(server)
    const rule = await newRule(server, key, {
      name: 'sbux',
      conditions: [{ field: 'originalDescription', op: 'contains', value: 'sbux' }],
      actions: [
        { set: 'payeeName', value: 'Starbucks' },
        { set: 'categoryId', value: coffee },
      ],
    })
    const tenant = server.platform.tenants.get(owner.id)
    const items = [
      { externalId: 'f-1', accountId: account, amount: 3, date: '2026-03-01', originalDescription: 'SBUX 1' },
      { externalId: 'f-2', accountId: account, amount: 3, date: '2026-03-01', originalDescription: 'KIOSK 9' },
    ]
    const fallbacks = [{ payeeName: 'SBUX 1' }, { payeeName: 'KIOSK 9', note: 'from the bank' }]
    const result = importTransactions(tenant, null, { items, applyRules: true }, { fallbacks })
    expect(result.data.map((item) => item.rulesApplied)).toEqual([[rule.id], []])
    const payees = (await server.request('GET', '/v1/payees', { key })).json.data
    const nameOf = (id: string) => payees.find((payee: Json) => payee.id === id)?.name
    expect(nameOf(result.data[0]?.data?.payeeId as string)).toBe('Starbucks')
    expect(nameOf(result.data[1]?.data?.payeeId as string)).toBe('KIOSK 9')
    expect(result.data[1]?.data?.note).toBe('from the bank')
    // The same rows again: the stored transactions keep what they hold, and nothing changes.
    const again = importTransactions(tenant, null, { items, applyRules: true }, { fallbacks })
    expect(again.summary).toEqual({ created: 0, updated: 0, unchanged: 2, matched: 0, skippedDeleted: 0, failed: 0 })
  })
})
