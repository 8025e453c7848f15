import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, listPages, startTestServer, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, createTxn, type Json, listAll, patchTxn, snapshot } from '../transactions/helpers.ts'

/** CONTRACT §22: the tags resource, tags on transactions, the tag filter, the feed, the context, the cap. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const TAG_FIELDS = ['id', 'externalId', 'name', 'color', 'isArchived', 'transactionCount', 'createdAt', 'updatedAt']

async function setup() {
  const owner = await server.owner()
  const account = await createAccount(server, owner.key)
  return { owner, key: owner.key, account: account.id as string }
}

async function newTag(key: string, body: Json): Promise<Json> {
  const res = await server.request('POST', '/v1/tags', { key, body })
  if (res.status !== 201) throw new Error(`tag create: ${res.status} ${res.text}`)
  return res.json.data
}

const tagById = async (key: string, id: string) => (await server.request('GET', `/v1/tags/${id}`, { key })).json.data

describe('the resource', () => {
  test('create, read, list, rename, archive (twice), restore', async () => {
    const { key } = await setup()
    const res = await server.request('POST', '/v1/tags', { key, body: { name: ' Lisbon 2026 ', color: '#e07a5f', externalId: 'trip-1' } })
    expect(res.status).toBe(201)
    const tag = res.json.data
    expect(Object.keys(tag)).toEqual(TAG_FIELDS)
    expect(tag).toMatchObject({ name: 'Lisbon 2026', color: '#e07a5f', externalId: 'trip-1', isArchived: false, transactionCount: 0 })
    expect(tag.id).toMatch(/^tag_[0-9a-f]{32}$/)
    expect(res.headers.get('location')).toBe(`/v1/tags/${tag.id}`)
    expect(await tagById(key, tag.id)).toEqual(tag)
    const renamed = (await server.request('PATCH', `/v1/tags/${tag.id}`, { key, body: { name: 'Lisbon trip', color: null } })).json.data
    expect(renamed).toMatchObject({ name: 'Lisbon trip', color: null })
    const first = await server.request('DELETE', `/v1/tags/${tag.id}`, { key })
    const second = await server.request('DELETE', `/v1/tags/${tag.id}`, { key })
    expect([first.status, second.status]).toEqual([200, 200])
    expect(first.json.data).toEqual({ ...renamed, isArchived: true, updatedAt: first.json.data.updatedAt })
    expect(second.json.data).toEqual(first.json.data)
    expect((await server.request('GET', '/v1/tags', { key })).json.data).toEqual([])
    expect((await server.request('GET', '/v1/tags?includeArchived=true', { key })).json.data).toEqual([first.json.data])
    const restored = (await server.request('PATCH', `/v1/tags/${tag.id}`, { key, body: { isArchived: false } })).json.data
    expect(restored.isArchived).toBe(false)
    expectProblem(await server.request('GET', '/v1/tags/tag_nope', { key }), 404, 'not_found')
  })

  test('names are unique once normalized: 409 tag_exists on create, rename and upsert', async () => {
    const { key } = await setup()
    const tag = await newTag(key, { name: 'Café Lisboa' })
    const other = await newTag(key, { name: 'Porto' })
    const dup = await server.request('POST', '/v1/tags', { key, body: { name: 'CAFE  lisboa' } })
    expectProblem(dup, 409, 'tag_exists')
    expect(dup.json.detail).toContain(tag.id)
    expectProblem(await server.request('PATCH', `/v1/tags/${other.id}`, { key, body: { name: 'cafe lisboa' } }), 409, 'tag_exists')
    expectProblem(await server.request('POST', '/v1/tags/upsert', { key, body: { externalId: 'x', name: 'Café Lisboa' } }), 409, 'tag_exists')
    // Renaming a tag to another spelling of its own name is fine.
    expect((await server.request('PATCH', `/v1/tags/${tag.id}`, { key, body: { name: 'CAFÉ LISBOA' } })).status).toBe(200)
    expectProblem(await server.request('POST', '/v1/tags', { key, body: { name: '\u0301\u0301' } }), 422, 'validation_failed')
  })

  test('upsert by externalId creates, then updates; an archived match stays archived unless told', async () => {
    const { key } = await setup()
    const created = await server.request('POST', '/v1/tags/upsert', { key, body: { externalId: 'ext-1', name: 'Work' } })
    expect(created.status).toBe(201)
    expect(created.json.operation).toBe('created')
    await server.request('DELETE', `/v1/tags/${created.json.data.id}`, { key })
    const updated = await server.request('POST', '/v1/tags/upsert', { key, body: { externalId: 'ext-1', name: 'Work trips' } })
    expect(updated.status).toBe(200)
    expect(updated.json).toMatchObject({ operation: 'updated', data: { id: created.json.data.id, name: 'Work trips', isArchived: true } })
    const restored = await server.request('POST', '/v1/tags/upsert', { key, body: { externalId: 'ext-1', name: 'Work trips', isArchived: false } })
    expect(restored.json.data.isArchived).toBe(false)
    const holder = await newTag(key, { name: 'Other', externalId: 'ext-2' })
    expectProblem(await server.request('PATCH', `/v1/tags/${holder.id}`, { key, body: { externalId: 'ext-1' } }), 409, 'external_id_conflict')
  })

  test('the list pages by keyset, oldest first', async () => {
    const { key } = await setup()
    const made: Json[] = []
    for (let i = 0; i < 7; i++) made.push(await newTag(key, { name: `t${i}` }))
    expect(await listPages(server, key, '/v1/tags', {}, 3)).toEqual(made)
    const page = (await server.request('GET', '/v1/tags?limit=3', { key })).json
    expectProblem(await server.request('GET', `/v1/payees?cursor=${page.nextCursor}`, { key }), 422, 'validation_failed')
  })

  test('tags use the transaction scopes', async () => {
    const { owner } = await setup()
    const reader = await server.key(owner.id, { scopes: ['transactions:read'] })
    const payeesOnly = await server.key(owner.id, { scopes: ['payees:read', 'payees:write'] })
    expect((await server.request('GET', '/v1/tags', { key: reader.key })).status).toBe(200)
    expectProblem(await server.request('POST', '/v1/tags', { key: reader.key, body: { name: 'x' } }), 403, 'insufficient_scope')
    expectProblem(await server.request('GET', '/v1/tags', { key: payeesOnly.key }), 403, 'insufficient_scope')
    expectProblem(await server.request('GET', '/v1/changes?resources=tags', { key: payeesOnly.key }), 403, 'insufficient_scope')
    expect((await server.request('GET', '/v1/changes?resources=tags', { key: reader.key })).status).toBe(200)
  })
})

describe('tags on transactions', () => {
  test('tagIds in the order given, repeats once; replaced by a list, cleared by [], kept when absent; counts exact', async () => {
    const { key, account } = await setup()
    const [a, b, c] = [await newTag(key, { name: 'a' }), await newTag(key, { name: 'b' }), await newTag(key, { name: 'c' })]
    const txn = await createTxn(server, key, { accountId: account, amount: 1, date: '2026-03-01', tagIds: [b.id, a.id, b.id] })
    expect(txn.tagIds).toEqual([b.id, a.id])
    expect((await tagById(key, b.id)).transactionCount).toBe(1)
    expect((await patchTxn(server, key, txn.id, { note: 'kept' })).tagIds).toEqual([b.id, a.id])
    expect((await patchTxn(server, key, txn.id, { tagIds: [c.id, a.id] })).tagIds).toEqual([c.id, a.id])
    expect([(await tagById(key, a.id)).transactionCount, (await tagById(key, b.id)).transactionCount, (await tagById(key, c.id)).transactionCount]).toEqual([
      1, 0, 1,
    ])
    expect((await patchTxn(server, key, txn.id, { tagIds: [] })).tagIds).toEqual([])
    expect((await tagById(key, a.id)).transactionCount).toBe(0)
    await patchTxn(server, key, txn.id, { tagIds: [a.id] })
    expect((await server.request('DELETE', `/v1/transactions/${txn.id}`, { key })).json.data.tagIds).toEqual([a.id])
    expect((await tagById(key, a.id)).transactionCount).toBe(0)
  })

  test('unknown ids, both lists, more than 20, an archived tag on a new transaction: refused, nothing written', async () => {
    const { owner, key, account } = await setup()
    const live = await newTag(key, { name: 'live' })
    const old = await newTag(key, { name: 'old' })
    const kept = await createTxn(server, key, { accountId: account, amount: 1, date: '2026-03-01', tagIds: [old.id] })
    await server.request('DELETE', `/v1/tags/${old.id}`, { key })
    const before = snapshot(server, owner.id)
    const base = { accountId: account, amount: 1, date: '2026-03-01' }
    const unknown = await server.request('POST', '/v1/transactions', { key, body: { ...base, tagIds: [live.id, 'tag_nope'] } })
    expectProblem(unknown, 422, 'invalid_reference')
    expect(unknown.json.detail).toBe('tagIds[1]: "tag_nope" does not refer to one of your records')
    const both = await server.request('POST', '/v1/transactions', { key, body: { ...base, tagIds: [], tagNames: ['x'] } })
    expectProblem(both, 422, 'rule_violation')
    expect(both.json.detail).toBe('Send tagIds or tagNames, not both')
    const many = await server.request('POST', '/v1/transactions', { key, body: { ...base, tagNames: Array.from({ length: 21 }, (_, i) => `n${i}`) } })
    expectProblem(many, 422, 'validation_failed')
    const archived = await server.request('POST', '/v1/transactions', { key, body: { ...base, tagIds: [old.id] } })
    expectProblem(archived, 422, 'rule_violation')
    expect(archived.json.detail).toStartWith(`tagIds[0]: tag "old" (${old.id}) is archived`)
    const byName = await server.request('POST', '/v1/transactions', { key, body: { ...base, tagNames: ['OLD'] } })
    expectProblem(byName, 422, 'rule_violation')
    expect(byName.json.detail).toStartWith('tagNames[0]: tag "old"')
    expect(snapshot(server, owner.id)).toEqual(before)
    // The transaction that has it keeps it, through any change that keeps it.
    expect((await patchTxn(server, key, kept.id, { tagIds: [old.id, live.id], note: 'x' })).tagIds).toEqual([old.id, live.id])
    expect((await tagById(key, old.id)).transactionCount).toBe(1)
  })

  test('tagNames find by normalized name or create, once per name', async () => {
    const { key, account } = await setup()
    const trip = await newTag(key, { name: 'Lisbon 2026' })
    const txn = await createTxn(server, key, { accountId: account, amount: 1, date: '2026-03-01', tagNames: ['lisbon  2026', 'Food', 'FOOD'] })
    const tags = (await server.request('GET', '/v1/tags', { key })).json.data
    expect(tags.map((tag: Json) => tag.name)).toEqual(['Lisbon 2026', 'Food'])
    expect(txn.tagIds).toEqual([trip.id, tags[1].id])
  })

  test('tagNames create a tag once under concurrent requests', async () => {
    const { key, account } = await setup()
    const writes = Array.from({ length: 24 }, (_, i) =>
      server.request('POST', '/v1/transactions', {
        key,
        body: { accountId: account, amount: 1, date: '2026-03-01', tagNames: [i % 2 ? 'Conference' : 'conference '] },
      }),
    )
    const answers = await Promise.all(writes)
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 201))
    const tags = (await server.request('GET', '/v1/tags', { key })).json.data
    expect(tags).toHaveLength(1)
    expect(tags[0].transactionCount).toBe(24)
    expect(new Set(answers.map((res) => res.json.data.tagIds[0]))).toEqual(new Set([tags[0].id]))
  })

  test('tagId filters, combines with the other filters, and pages by keyset while rows are written', async () => {
    const { key, account } = await setup()
    const other = (await createAccount(server, key, { name: 'Card' })).id
    const trip = await newTag(key, { name: 'trip' })
    const made: Json[] = []
    for (let i = 0; i < 24; i++) {
      const tagged = i % 2 === 0
      made.push(
        await createTxn(server, key, {
          accountId: i % 3 === 0 ? other : account,
          amount: 1,
          date: `2026-06-${String(1 + (i % 5)).padStart(2, '0')}`,
          ...(tagged ? { tagIds: [trip.id] } : {}),
          ...(i % 4 === 0 ? { categoryId: 'cat_sys_groceries' } : {}),
        }),
      )
    }
    const tagged = made.filter((_, i) => i % 2 === 0)
    const listed = await listAll(server, key, `tagId=${trip.id}`)
    expect(new Set(listed.map((t) => t.id))).toEqual(new Set(tagged.map((t) => t.id)))
    expect((await listAll(server, key, `tagId=${trip.id}`, 5)).map((t) => t.id)).toEqual(listed.map((t) => t.id))
    const onCard = await listAll(server, key, `tagId=${trip.id}&accountId=${other}`)
    expect(new Set(onCard.map((t) => t.id))).toEqual(new Set(made.filter((_, i) => i % 2 === 0 && i % 3 === 0).map((t) => t.id)))
    const groceries = await listAll(server, key, `tagId=${trip.id}&categoryId=cat_sys_groceries&from=2026-06-02`)
    expect(groceries.every((t) => t.categoryId === 'cat_sys_groceries' && t.date >= '2026-06-02' && t.tagIds.includes(trip.id))).toBe(true)
    expect(await listAll(server, key, 'tagId=tag_nope')).toEqual([])

    const seen: string[] = []
    let cursor: string | null = null
    let n = 0
    do {
      const page: Json = (
        await server.request('GET', `/v1/transactions?tagId=${trip.id}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key })
      ).json
      seen.push(...page.data.map((t: Json) => t.id))
      cursor = page.nextCursor
      await createTxn(server, key, { accountId: account, amount: 1, date: n++ % 2 ? '2026-07-01' : '2026-01-01', tagIds: [trip.id] })
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    for (const t of tagged) expect(seen).toContain(t.id)
    // A changed date moves the row in the tag's order too.
    const moved = await patchTxn(server, key, tagged[0].id, { date: '2027-01-01' })
    expect((await server.request('GET', `/v1/transactions?tagId=${trip.id}&limit=1`, { key })).json.data[0]).toEqual(moved)
  })
})

describe('the feed and the context', () => {
  test('resource tag in the feed; a transaction’s tags in its data; a count that moves is a change of the tag', async () => {
    const { key, account } = await setup()
    const start = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    const tag = await newTag(key, { name: 'feed' })
    const txn = await createTxn(server, key, { accountId: account, amount: 1, date: '2026-03-01', tagIds: [tag.id] })
    const changes = (await server.request('GET', `/v1/changes?cursor=${start}&resources=tags,transactions`, { key })).json.data
    // The write that gave the tag its first transaction is the tag's latest change: it comes after the transaction.
    expect(changes.map((change: Json) => `${change.resource}:${change.id}`)).toEqual([`transaction:${txn.id}`, `tag:${tag.id}`])
    expect(changes[1].data).toEqual(await tagById(key, tag.id))
    expect(changes[1].data.transactionCount).toBe(1)
    expect(changes[0].data.tagIds).toEqual([tag.id])
  })

  test('the agent context carries every live tag, archived ones with includeArchived', async () => {
    const { key } = await setup()
    const live = await newTag(key, { name: 'live' })
    const gone = await newTag(key, { name: 'gone' })
    await server.request('DELETE', `/v1/tags/${gone.id}`, { key })
    expect((await server.request('GET', '/v1/agent/context', { key })).json.data.tags).toEqual([live])
    const all = (await server.request('GET', '/v1/agent/context?includeArchived=true', { key })).json.data.tags
    expect(all.map((tag: Json) => tag.id)).toEqual([live.id, gone.id])
  })
})

describe('OWNER_MAX_TAGS', () => {
  test('past the cap a new tag is 409 limit_reached, naming tagNames[i] when a transaction makes it; existing names still work', async () => {
    const capped = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '100000', OWNER_MAX_TAGS: '2' } })
    try {
      const owner = await capped.owner()
      const account = (await capped.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'A', type: 'bank', balance: 0, currency: 'EUR' } })).json
        .data.id
      const base = { accountId: account, amount: 1, date: '2026-03-01' }
      expect((await capped.request('POST', '/v1/tags', { key: owner.key, body: { name: 'one' } })).status).toBe(201)
      expect((await capped.request('POST', '/v1/transactions', { key: owner.key, body: { ...base, tagNames: ['two'] } })).status).toBe(201)
      const third = await capped.request('POST', '/v1/tags', { key: owner.key, body: { name: 'three' } })
      expectProblem(third, 409, 'limit_reached')
      expect(third.json.detail).toContain('OWNER_MAX_TAGS')
      const byName = await capped.request('POST', '/v1/transactions', { key: owner.key, body: { ...base, tagNames: ['one', 'three'] } })
      expectProblem(byName, 409, 'limit_reached')
      expect(byName.json.detail).toStartWith('tagNames[1]: this owner already has 2 tags')
      expect((await capped.request('POST', '/v1/transactions', { key: owner.key, body: { ...base, tagNames: ['ONE', 'two'] } })).status).toBe(201)
      const batch = await capped.request('POST', '/v1/transactions/batch', {
        key: owner.key,
        body: {
          items: [
            { externalId: 'a', ...base },
            { externalId: 'b', ...base, tagNames: ['four'] },
          ],
        },
      })
      expectProblem(batch, 409, 'limit_reached')
      expect(batch.json.detail).toStartWith('items[1].tagNames[0]:')
    } finally {
      await capped.stop()
    }
  })
})
