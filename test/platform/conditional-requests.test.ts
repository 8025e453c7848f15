import { beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, RATE_LIMIT_HEADERS, serverWithOwner, type TestResponse } from '../support/harness.ts'

/**
 * Safe concurrent edits (CONTRACT §25), for every kind of resource: each single-resource answer
 * carries a strong ETag that changes with every change of the resource; GET honours If-None-Match
 * (304, no body); PATCH and DELETE honour If-Match: a stale tag is 412 `precondition_failed` with
 * the current tag, and nothing is written (not the row, not the feed); `*` matches any existing
 * resource; a weak tag never matches. A replayed write replays its ETag; a 412 is not stored.
 */

const { server, owner } = serverWithOwner()

let accountId = ''
beforeAll(async () => {
  const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Base', type: 'bank', balance: 100, currency: 'EUR' } })
  accountId = res.json.data.id
})

interface Kind {
  name: string
  path: string
  create: () => Record<string, unknown>
  patch: Record<string, unknown>
  /** What a DELETE leaves: archived, or gone. */
  deletes: 'archives' | 'removes' | 'none'
  /** A text field later writes change (default externalId; import presets have none). */
  mark?: string
}

const KINDS: Kind[] = [
  {
    name: 'account',
    path: '/v1/accounts',
    create: () => ({ name: 'Card', type: 'card', balance: 0, currency: 'EUR' }),
    patch: { name: 'Card 2' },
    deletes: 'archives',
  },
  { name: 'category', path: '/v1/categories', create: () => ({ name: 'Hobbies', type: 'expense' }), patch: { name: 'Hobbies 2' }, deletes: 'archives' },
  { name: 'payee', path: '/v1/payees', create: () => ({ name: `Shop ${crypto.randomUUID()}` }), patch: { isMerchant: true }, deletes: 'none' },
  { name: 'tag', path: '/v1/tags', create: () => ({ name: `Trip ${crypto.randomUUID()}` }), patch: { color: '#123456' }, deletes: 'archives' },
  {
    name: 'rule',
    path: '/v1/rules',
    create: () => ({ name: 'Coffee', conditions: [{ field: 'note', op: 'contains', value: 'coffee' }], actions: [{ set: 'note', value: 'coffee' }] }),
    patch: { priority: 5 },
    deletes: 'removes',
  },
  {
    name: 'transaction',
    path: '/v1/transactions',
    create: () => ({ accountId, amount: 12.5, date: '2026-11-21', payeeName: 'Bakery', tagNames: ['Food'] }),
    patch: { note: 'bread' },
    deletes: 'removes',
  },
  {
    name: 'import preset',
    path: '/v1/import-presets',
    create: () => ({ name: 'Bank CSV', columns: { date: 'Date', amount: 'Amount' } }),
    patch: { skipRows: 2 },
    mark: 'name',
    deletes: 'removes',
  },
]

const STRONG_TAG = /^"[A-Za-z0-9_-]{22}"$/

async function created(kind: Kind): Promise<{ id: string; etag: string; data: Record<string, unknown> }> {
  const res = await server.request('POST', kind.path, { key: owner.key, body: kind.create() })
  expect(res.status).toBe(201)
  const etag = res.headers.get('etag') as string
  expect(etag).toMatch(STRONG_TAG)
  return { id: res.json.data.id, etag, data: res.json.data }
}

const get = (path: string, headers: Record<string, string> = {}) => server.request('GET', path, { key: owner.key, headers })

/** The owner's feed position: a refused write must not move it. */
async function feedEnd(): Promise<string> {
  let cursor = ''
  for (;;) {
    const res = await server.request('GET', `/v1/changes?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { key: owner.key })
    cursor = res.json.nextCursor
    if (!res.json.hasMore) return cursor
  }
}

function expectNotModified(res: TestResponse, etag: string) {
  expect(res.status).toBe(304)
  expect(res.text).toBe('')
  expect(res.headers.get('etag')).toBe(etag)
  expect(res.headers.get('content-type')).toBeNull()
  expect(res.headers.get('cache-control')).toBe('no-store')
  expect(res.headers.get('x-request-id')).toMatch(/^req_/)
  for (const name of RATE_LIMIT_HEADERS) expect(res.headers.has(name)).toBe(true)
}

for (const kind of KINDS) {
  describe(kind.name, () => {
    test('the ETag of a create is the ETag GET gives; If-None-Match with it (strong, weak or *) is 304, another tag 200', async () => {
      const { id, etag, data } = await created(kind)
      const read = await get(`${kind.path}/${id}`)
      expect(read.status).toBe(200)
      expect(read.json.data).toEqual(data)
      expect(read.headers.get('etag')).toBe(etag)
      expectNotModified(await get(`${kind.path}/${id}`, { 'if-none-match': etag }), etag)
      expectNotModified(await get(`${kind.path}/${id}`, { 'if-none-match': `"nope", W/${etag}` }), etag)
      expectNotModified(await get(`${kind.path}/${id}`, { 'if-none-match': '*' }), etag)
      const other = await get(`${kind.path}/${id}`, { 'if-none-match': '"not-this-one"' })
      expect(other.status).toBe(200)
      expect(other.json.data).toEqual(data)
    })

    test('PATCH with a stale If-Match: 412 with the current ETag, nothing written, the feed unmoved', async () => {
      const { id, etag } = await created(kind)
      const first = await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: kind.patch, headers: { 'if-match': etag } })
      expect(first.status).toBe(200)
      const current = first.headers.get('etag') as string
      expect(current).toMatch(STRONG_TAG)
      expect(current).not.toBe(etag)
      const before = await get(`${kind.path}/${id}`)
      expect(before.headers.get('etag')).toBe(current)
      const position = await feedEnd()

      // A second client, still holding the first version, changes it back.
      const stale = await server.request('PATCH', `${kind.path}/${id}`, {
        key: owner.key,
        body: { ...kind.patch, [kind.mark ?? 'externalId']: 'stale-write' },
        headers: { 'if-match': etag },
      })
      const problem = expectProblem(stale, 412, 'precondition_failed')
      expect(problem.detail).toContain('ETag')
      expect(stale.headers.get('etag')).toBe(current)
      const after = await get(`${kind.path}/${id}`)
      expect(after.text).toBe(before.text)
      expect(after.headers.get('etag')).toBe(current)
      const feed = await server.request('GET', `/v1/changes?cursor=${position}`, { key: owner.key })
      expect(feed.json.data).toEqual([])
    })

    test('If-Match: a weak tag never matches (strong comparison); * matches; a list with the current tag matches', async () => {
      const { id, etag } = await created(kind)
      expectProblem(
        await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: kind.patch, headers: { 'if-match': `W/${etag}` } }),
        412,
        'precondition_failed',
      )
      const listed = await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: kind.patch, headers: { 'if-match': `"old", ${etag}` } })
      expect(listed.status).toBe(200)
      const any = await server.request('PATCH', `${kind.path}/${id}`, {
        key: owner.key,
        body: { [kind.mark ?? 'externalId']: `any-${id}` },
        headers: { 'if-match': '*' },
      })
      expect(any.status).toBe(200)
      expect(any.headers.get('etag')).not.toBe(listed.headers.get('etag'))
    })

    test('a missing resource is 404 whatever If-Match says', async () => {
      const missing = `${kind.path}/${kind.name.slice(0, 3)}_00000000000000000000000000000000`
      expectProblem(await server.request('PATCH', missing, { key: owner.key, body: kind.patch, headers: { 'if-match': '*' } }), 404, 'not_found')
      expectProblem(await get(missing, { 'if-none-match': '*' }), 404, 'not_found')
    })

    test('a replayed PATCH replays its ETag byte for byte, though the resource changed since; a 412 is not stored', async () => {
      const { id, etag } = await created(kind)
      const key = crypto.randomUUID()
      // Refused under this key: not kept, so the same key may be used again with the right tag.
      expectProblem(
        await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: kind.patch, idempotencyKey: key, headers: { 'if-match': '"stale"' } }),
        412,
        'precondition_failed',
      )
      const done = await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: kind.patch, idempotencyKey: key, headers: { 'if-match': etag } })
      expect(done.status).toBe(200)
      expect(done.headers.get('idempotent-replayed')).toBeNull()
      await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: { [kind.mark ?? 'externalId']: `later-${id}` } })
      // The retry (its If-Match now stale) gets the stored answer, ETag and all, and writes nothing.
      const replay = await server.request('PATCH', `${kind.path}/${id}`, {
        key: owner.key,
        body: kind.patch,
        idempotencyKey: key,
        headers: { 'if-match': etag },
      })
      expect(replay.status).toBe(200)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.text).toBe(done.text)
      expect(replay.headers.get('etag')).toBe(done.headers.get('etag'))
      expect((await get(`${kind.path}/${id}`)).json.data[kind.mark ?? 'externalId']).toBe(`later-${id}`)
    })

    if (kind.deletes !== 'none') {
      test(`DELETE honours If-Match: stale → 412 and nothing ${kind.deletes === 'archives' ? 'archived' : 'deleted'}; current → 200`, async () => {
        const { id, etag } = await created(kind)
        await server.request('PATCH', `${kind.path}/${id}`, { key: owner.key, body: kind.patch })
        const current = (await get(`${kind.path}/${id}`)).headers.get('etag') as string
        const stale = await server.request('DELETE', `${kind.path}/${id}`, { key: owner.key, headers: { 'if-match': etag } })
        expectProblem(stale, 412, 'precondition_failed')
        expect(stale.headers.get('etag')).toBe(current)
        const still = await get(`${kind.path}/${id}`)
        expect(still.status).toBe(200)
        expect(still.headers.get('etag')).toBe(current)
        if (kind.deletes === 'archives') expect(still.json.data.isArchived).toBe(false)
        const deleted = await server.request('DELETE', `${kind.path}/${id}`, { key: owner.key, headers: { 'if-match': current } })
        expect(deleted.status).toBe(200)
        if (kind.deletes === 'archives') {
          expect(deleted.json.data.isArchived).toBe(true)
          expect(deleted.headers.get('etag')).not.toBe(current)
          expect((await get(`${kind.path}/${id}`)).headers.get('etag')).toBe(deleted.headers.get('etag'))
        } else {
          // Gone: the answer is the resource as it was, and its tag.
          expect(deleted.headers.get('etag')).toBe(current)
          expect((await get(`${kind.path}/${id}`)).status).toBe(404)
        }
      })
    }
  })
}

describe('what the tag follows', () => {
  test('a change that follows from another write (a balance, a payee’s totals, a tag’s count) is a new ETag of that resource', async () => {
    const account = await get(`/v1/accounts/${accountId}`)
    const payee = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Followed' } })
    const tag = await server.request('POST', '/v1/tags', { key: owner.key, body: { name: 'Followed tag' } })
    await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: { accountId, amount: 1, date: '2026-11-20', payeeId: payee.json.data.id, tagIds: [tag.json.data.id] },
    })
    for (const [before, path] of [
      [account, `/v1/accounts/${accountId}`],
      [payee, `/v1/payees/${payee.json.data.id}`],
      [tag, `/v1/tags/${tag.json.data.id}`],
    ] as const) {
      const after = await get(path, { 'if-none-match': before.headers.get('etag') as string })
      expect(after.status).toBe(200)
      expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'))
      expect(after.json.data.updatedAt).toBeGreaterThanOrEqual(before.json.data.updatedAt)
    }
  })

  test('two writes in the same instant get different tags: the tag is of the content, not of the time', async () => {
    const tag = await server.request('POST', '/v1/tags', { key: owner.key, body: { name: 'Same instant' } })
    const path = `/v1/tags/${tag.json.data.id}`
    // Sent together, they commit in one database transaction (CONTRACT §14): one clock reading apart at most.
    const [a, b] = await Promise.all([
      server.request('PATCH', path, { key: owner.key, body: { color: 'red' } }),
      server.request('PATCH', path, { key: owner.key, body: { color: 'blue' } }),
    ])
    expect(a.status).toBe(200)
    expect(b.status).toBe(200)
    expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'))
    // Whichever committed last is what GET shows, with its tag.
    const now = await get(path)
    const last = now.json.data.color === a.json.data.color ? a : b
    expect(now.headers.get('etag')).toBe(last.headers.get('etag'))
  })

  test('a PATCH that changes nothing keeps the tag; an upsert answers the same tag GET gives', async () => {
    const made = await server.request('POST', '/v1/tags/upsert', { key: owner.key, body: { externalId: 'etag-upsert', name: 'Upserted' } })
    expect(made.status).toBe(201)
    const path = `/v1/tags/${made.json.data.id}`
    expect((await get(path)).headers.get('etag')).toBe(made.headers.get('etag'))
    const same = await server.request('POST', '/v1/tags/upsert', { key: owner.key, body: { externalId: 'etag-upsert', name: 'Upserted' } })
    expect(same.status).toBe(200)
    expect(same.headers.get('etag')).toBe(made.headers.get('etag'))
    const nothing = await server.request('PATCH', path, { key: owner.key, body: {} })
    expect(nothing.headers.get('etag')).toBe(made.headers.get('etag'))
  })

  test('a system category has a tag and answers 304, though it never changes', async () => {
    const first = await get('/v1/categories/cat_sys_groceries')
    expect(first.headers.get('etag')).toMatch(STRONG_TAG)
    expectNotModified(
      await get('/v1/categories/cat_sys_groceries', { 'if-none-match': first.headers.get('etag') as string }),
      first.headers.get('etag') as string,
    )
  })
})

describe('GET /v1/me', () => {
  test('carries an ETag and answers 304 to it', async () => {
    const me = await get('/v1/me')
    const etag = me.headers.get('etag') as string
    expect(etag).toMatch(STRONG_TAG)
    expectNotModified(await get('/v1/me', { 'if-none-match': etag }), etag)
    expect((await get('/v1/me', { 'if-none-match': '"other"' })).status).toBe(200)
  })
})

describe('lists and the feed', () => {
  test('carry no ETag, ignore If-None-Match, and hold updatedAt in each object, as GET shows it', async () => {
    const list = await get('/v1/accounts', { 'if-none-match': '*' })
    expect(list.status).toBe(200)
    expect(list.headers.get('etag')).toBeNull()
    const one = await get(`/v1/accounts/${accountId}`)
    expect(list.json.data.find((a: { id: string }) => a.id === accountId)).toEqual(one.json.data)
    const feed = await get('/v1/changes?resources=accounts&limit=500')
    const change = feed.json.data.find((c: { id: string }) => c.id === accountId)
    expect(change.data).toEqual(one.json.data)
    expect(typeof change.data.updatedAt).toBe('number')
  })
})
