import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PRESETS } from '../../src/modules/categories/presets.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createCategory, getCategory, listAll, snapshot } from './helpers.ts'

/** Custom categories: fields, upsert, idempotent replays, system categories, archiving, bad input, owner isolation. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const FIELDS = [
  'id',
  'externalId',
  'name',
  'icon',
  'color',
  'type',
  'parentId',
  'depth',
  'fullName',
  'presetKey',
  'isArchived',
  'isSystem',
  'countries',
  'updatedAt',
]

describe('custom categories: fields', () => {
  test('every field round-trips through create, get and list', async () => {
    const owner = await server.owner({ country: 'US' })
    const res = await server.request('POST', '/v1/categories', {
      key: owner.key,
      body: { name: '  Farmers market ', externalId: ' ext-1 ', icon: ' carrot ', color: '#27AE60', type: 'expense', parentId: 'cat_sys_groceries' },
    })
    expect(res.status).toBe(201)
    const created = res.json.data
    expect(Object.keys(res.json)).toEqual(['data'])
    expect(Object.keys(created).sort()).toEqual([...FIELDS].sort())
    expect(created.id).toMatch(/^cat_[0-9a-f]{32}$/)
    expect(res.headers.get('location')).toBe(`/v1/categories/${created.id}`)
    expect(created).toEqual({
      id: created.id,
      externalId: 'ext-1',
      name: 'Farmers market',
      icon: 'carrot',
      color: '#27AE60',
      type: 'expense',
      parentId: 'cat_sys_groceries',
      depth: 2,
      fullName: 'Food & Drinks / Groceries / Farmers market',
      presetKey: null,
      isArchived: false,
      isSystem: false,
      countries: null,
      updatedAt: created.updatedAt,
    })
    expect(created.updatedAt).toBeGreaterThan(0)
    expect(await getCategory(server, owner.key, created.id)).toEqual(created)
    const list = await listAll(server, owner.key)
    expect(list[list.length - 1]).toEqual(created)
  })

  test('defaults: only a name', async () => {
    const owner = await server.owner()
    const created = await createCategory(server, owner.key, { name: 'Pets' })
    expect(created).toMatchObject({ externalId: null, icon: null, color: null, type: null, parentId: null, depth: 0, fullName: 'Pets', presetKey: null })
  })

  test('PATCH changes every field, and null clears the nullable ones', async () => {
    const owner = await server.owner()
    const parent = await createCategory(server, owner.key, { name: 'Kids' })
    const cat = await createCategory(server, owner.key, { name: 'School', externalId: 'e1', icon: 'book', color: '#111111', type: 'expense' })

    const changed = await server.request('PATCH', `/v1/categories/${cat.id}`, {
      key: owner.key,
      body: { name: ' School fees ', externalId: 'e2', icon: 'pencil', color: '#222222', type: 'income', parentId: parent.id },
    })
    expect(changed.status).toBe(200)
    expect(changed.json.data).toEqual({
      ...cat,
      name: 'School fees',
      externalId: 'e2',
      icon: 'pencil',
      color: '#222222',
      type: 'income',
      parentId: parent.id,
      depth: 1,
      fullName: 'Kids / School fees',
      updatedAt: changed.json.data.updatedAt,
    })
    expect(changed.json.data.updatedAt).toBeGreaterThanOrEqual(cat.updatedAt)
    expect(await getCategory(server, owner.key, cat.id)).toEqual(changed.json.data)

    const cleared = await server.request('PATCH', `/v1/categories/${cat.id}`, {
      key: owner.key,
      body: { externalId: null, icon: null, color: null, type: null, parentId: null },
    })
    expect(cleared.status).toBe(200)
    expect(cleared.json.data).toEqual({
      ...cat,
      name: 'School fees',
      fullName: 'School fees',
      externalId: null,
      icon: null,
      color: null,
      type: null,
      updatedAt: cleared.json.data.updatedAt,
    })
    expect(await getCategory(server, owner.key, cat.id)).toEqual(cleared.json.data)

    const empty = await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body: {} })
    expect(empty.status).toBe(200)
    expect(empty.json.data).toEqual(cleared.json.data)
  })

  test('externalId is unique per owner: create and PATCH conflicts are 409', async () => {
    const owner = await server.owner()
    const a = await createCategory(server, owner.key, { name: 'A', externalId: 'dup' })
    const b = await createCategory(server, owner.key, { name: 'B' })
    const before = snapshot(server, owner.id)
    expectProblem(await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'C', externalId: ' dup' } }), 409, 'external_id_conflict')
    expectProblem(await server.request('PATCH', `/v1/categories/${b.id}`, { key: owner.key, body: { externalId: 'dup' } }), 409, 'external_id_conflict')
    expect(snapshot(server, owner.id)).toEqual(before)
    // PATCHing a category with its own externalId is fine
    const same = await server.request('PATCH', `/v1/categories/${a.id}`, { key: owner.key, body: { externalId: 'dup', name: 'A2' } })
    expect(same.status).toBe(200)
    // once cleared, the externalId is free again
    await server.request('PATCH', `/v1/categories/${a.id}`, { key: owner.key, body: { externalId: null } })
    const taken = await server.request('PATCH', `/v1/categories/${b.id}`, { key: owner.key, body: { externalId: 'dup' } })
    expect(taken.status).toBe(200)
    expect(taken.json.data.externalId).toBe('dup')
    // another owner may use the same externalId
    const other = await server.owner()
    expect((await createCategory(server, other.key, { name: 'X', externalId: 'dup' })).externalId).toBe('dup')
  })
})

describe('upsert', () => {
  test('creates (201 + Location), then updates (200) keeping fields not sent', async () => {
    const owner = await server.owner()
    const first = await server.request('POST', '/v1/categories/upsert', {
      key: owner.key,
      body: { externalId: 'sync-1', name: 'Gym', icon: 'dumbbell', type: 'expense', parentId: 'cat_sys_health' },
    })
    expect(first.status).toBe(201)
    expect(first.json.operation).toBe('created')
    const created = first.json.data
    expect(first.headers.get('location')).toBe(`/v1/categories/${created.id}`)
    expect(created).toMatchObject({
      externalId: 'sync-1',
      name: 'Gym',
      icon: 'dumbbell',
      type: 'expense',
      parentId: 'cat_sys_health',
      fullName: 'Health / Gym',
      depth: 1,
    })

    const second = await server.request('POST', '/v1/categories/upsert', {
      key: owner.key,
      body: { externalId: ' sync-1 ', name: 'Gym & Sports', color: '#00FF00' },
    })
    expect(second.status).toBe(200)
    expect(second.json.operation).toBe('updated')
    expect(second.headers.get('location')).toBeNull()
    expect(second.json.data).toEqual({
      ...created,
      name: 'Gym & Sports',
      color: '#00FF00',
      fullName: 'Health / Gym & Sports',
      updatedAt: second.json.data.updatedAt,
    })
    expect((await listAll(server, owner.key)).filter((c) => !c.isSystem)).toEqual([second.json.data])
  })

  test('an archived match is updated and stays archived', async () => {
    const owner = await server.owner()
    const cat = await createCategory(server, owner.key, { name: 'Old', externalId: 'arch' })
    expect((await server.request('DELETE', `/v1/categories/${cat.id}`, { key: owner.key })).status).toBe(200)
    const res = await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'arch', name: 'Older' } })
    expect(res.status).toBe(200)
    expect(res.json.operation).toBe('updated')
    expect(res.json.data).toMatchObject({ id: cat.id, name: 'Older', isArchived: true })
  })

  test('upsert applies the hierarchy rules too', async () => {
    const owner = await server.owner({ country: 'DE' })
    expectProblem(
      await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'x', name: 'X', parentId: 'cat_sys_contribution_401k' } }),
      422,
      'invalid_reference',
    )
    const cat = (await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'x', name: 'X' } })).json.data
    expectProblem(
      await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'x', name: 'X', parentId: cat.id } }),
      422,
      'rule_violation',
    )
  })
})

describe('idempotency', () => {
  test('a replayed POST returns the same body with Idempotent-Replayed and creates nothing more', async () => {
    const owner = await server.owner()
    const key = crypto.randomUUID()
    const body = { name: 'Hobbies', type: 'expense' }
    const first = await server.request('POST', '/v1/categories', { key: owner.key, body, idempotencyKey: key })
    expect(first.status).toBe(201)
    const again = await server.request('POST', '/v1/categories', { key: owner.key, body, idempotencyKey: key })
    expect(again.status).toBe(201)
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.headers.get('location')).toBe(first.headers.get('location'))
    expect(again.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'))
    expect((await listAll(server, owner.key)).filter((c) => !c.isSystem).length).toBe(1)
    // same key, other body → 409
    expectProblem(
      await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Other' }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
  })

  test('PATCH, upsert and a stored rule_violation replay too', async () => {
    const owner = await server.owner()
    const cat = await createCategory(server, owner.key, { name: 'A' })
    const patchKey = crypto.randomUUID()
    const p1 = await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body: { name: 'B' }, idempotencyKey: patchKey })
    await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body: { name: 'C' } })
    const p2 = await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body: { name: 'B' }, idempotencyKey: patchKey })
    expect(p2.text).toBe(p1.text)
    expect(p2.headers.get('idempotent-replayed')).toBe('true')
    expect((await getCategory(server, owner.key, cat.id)).name).toBe('C')

    const upKey = crypto.randomUUID()
    const u1 = await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'u', name: 'U' }, idempotencyKey: upKey })
    const u2 = await server.request('POST', '/v1/categories/upsert', { key: owner.key, body: { externalId: 'u', name: 'U' }, idempotencyKey: upKey })
    expect(u1.status).toBe(201)
    expect(u2.status).toBe(201)
    expect(u2.text).toBe(u1.text)
    expect(u2.headers.get('idempotent-replayed')).toBe('true')

    const cycleKey = crypto.randomUUID()
    const c1 = await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body: { parentId: cat.id }, idempotencyKey: cycleKey })
    expectProblem(c1, 422, 'rule_violation')
    const c2 = await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body: { parentId: cat.id }, idempotencyKey: cycleKey })
    expect(c2.status).toBe(422)
    expect(c2.text).toBe(c1.text)
    expect(c2.headers.get('idempotent-replayed')).toBe('true')
  })
})

describe('system categories', () => {
  const visibleIds = (list: { id: string }[]) => new Set(list.map((c) => c.id))

  test('visible per the owner’s country', async () => {
    const us = await server.owner({ country: 'US' })
    const de = await server.owner({ country: 'DE' })
    const br = await server.owner({ country: 'BR' })
    const pt = await server.owner({ country: 'PT' })
    const none = await server.owner({ country: null })
    const usIds = visibleIds(await listAll(server, us.key))
    const deIds = visibleIds(await listAll(server, de.key))
    const brIds = visibleIds(await listAll(server, br.key))
    const ptIds = visibleIds(await listAll(server, pt.key))
    const noneIds = visibleIds(await listAll(server, none.key))

    expect(usIds.has('cat_sys_contribution_401k')).toBe(true)
    expect(usIds.has('cat_sys_kirchensteuer')).toBe(false)
    expect(usIds.has('cat_sys_pix_fees')).toBe(false)
    expect(deIds.has('cat_sys_kirchensteuer')).toBe(true)
    expect(deIds.has('cat_sys_contribution_401k')).toBe(false)
    expect(brIds.has('cat_sys_pix_fees')).toBe(true)
    expect(brIds.has('cat_sys_thirteenth_salary')).toBe(true)
    expect(ptIds.has('cat_sys_thirteenth_salary')).toBe(true)
    expect(ptIds.has('cat_sys_pix_fees')).toBe(false)
    const global = PRESETS.filter((p) => p.countries === null).map((p) => `cat_sys_${p.presetKey}`)
    expect([...noneIds]).toEqual(global)
    for (const id of global) for (const ids of [usIds, deIds, brIds, ptIds]) expect(ids.has(id)).toBe(true)

    // one not meant for the owner is absent on every route
    expectProblem(await server.request('GET', '/v1/categories/cat_sys_contribution_401k', { key: de.key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', '/v1/categories/cat_sys_contribution_401k', { key: de.key, body: { name: 'x' } }), 404, 'not_found')
    expectProblem(await server.request('DELETE', '/v1/categories/cat_sys_contribution_401k', { key: de.key }), 404, 'not_found')
    expectProblem(
      await server.request('POST', '/v1/categories', { key: de.key, body: { name: 'x', parentId: 'cat_sys_contribution_401k' } }),
      422,
      'invalid_reference',
    )
    expect((await getCategory(server, us.key, 'cat_sys_contribution_401k')).fullName).toBe('Savings & Investments / 401(k) contribution')
    // a US owner may hang a category below it
    expect((await createCategory(server, us.key, { name: 'Roth', parentId: 'cat_sys_contribution_401k' })).fullName).toBe(
      'Savings & Investments / 401(k) contribution / Roth',
    )
  })

  test('are read-only: PATCH and DELETE are 403 and change nothing', async () => {
    const owner = await server.owner({ country: 'US' })
    const before = snapshot(server, owner.id)
    for (const id of ['cat_sys_groceries', 'cat_sys_food_drinks', 'cat_sys_contribution_401k']) {
      expectProblem(await server.request('PATCH', `/v1/categories/${id}`, { key: owner.key, body: { name: 'Mine now' } }), 403, 'system_category_read_only')
      expectProblem(await server.request('PATCH', `/v1/categories/${id}`, { key: owner.key, body: {} }), 403, 'system_category_read_only')
      expectProblem(await server.request('DELETE', `/v1/categories/${id}`, { key: owner.key }), 403, 'system_category_read_only')
    }
    expect(snapshot(server, owner.id)).toEqual(before)
  })
})

describe('archiving', () => {
  test('DELETE archives the category and its subtree; the default list hides them', async () => {
    const owner = await server.owner()
    const a = await createCategory(server, owner.key, { name: 'A' })
    const b = await createCategory(server, owner.key, { name: 'B', parentId: a.id })
    const c = await createCategory(server, owner.key, { name: 'C', parentId: b.id })
    const sibling = await createCategory(server, owner.key, { name: 'S' })
    const underSystem = await createCategory(server, owner.key, { name: 'Under groceries', parentId: 'cat_sys_groceries' })

    const res = await server.request('DELETE', `/v1/categories/${a.id}`, { key: owner.key })
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual({ ...a, isArchived: true, updatedAt: res.json.data.updatedAt })
    const archived = [res.json.data]
    for (const cat of [b, c]) {
      const below = await getCategory(server, owner.key, cat.id)
      // Archived with their ancestor: a change of theirs (CONTRACT §25).
      expect(below).toEqual({ ...cat, isArchived: true, updatedAt: below.updatedAt })
      expect(below.updatedAt).toBeGreaterThanOrEqual(cat.updatedAt)
      archived.push(below)
    }
    expect((await getCategory(server, owner.key, sibling.id)).isArchived).toBe(false)

    const active = (await listAll(server, owner.key)).filter((x) => !x.isSystem).map((x) => x.id)
    expect(active).toEqual([sibling.id, underSystem.id])
    const all = (await listAll(server, owner.key, 'includeArchived=true')).filter((x) => !x.isSystem)
    expect(all).toEqual([...archived, sibling, underSystem])

    // again: 200, unchanged
    const again = await server.request('DELETE', `/v1/categories/${a.id}`, { key: owner.key })
    expect(again.status).toBe(200)
    expect(again.text).toBe(res.text)

    // archiving a leaf leaves the parent alone; system parents are untouched
    expect((await server.request('DELETE', `/v1/categories/${underSystem.id}`, { key: owner.key })).json.data.isArchived).toBe(true)
    expect((await getCategory(server, owner.key, 'cat_sys_groceries')).isArchived).toBe(false)
  })

  test('unknown and malformed ids are 404', async () => {
    const owner = await server.owner()
    for (const id of ['cat_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', 'nonsense', 'cat_sys_nope']) {
      expectProblem(await server.request('GET', `/v1/categories/${id}`, { key: owner.key }), 404, 'not_found')
      expectProblem(await server.request('DELETE', `/v1/categories/${id}`, { key: owner.key }), 404, 'not_found')
      expectProblem(await server.request('PATCH', `/v1/categories/${id}`, { key: owner.key, body: { name: 'x' } }), 404, 'not_found')
    }
  })
})

describe('bad input is 422 validation_failed and changes nothing', () => {
  test('bodies', async () => {
    const owner = await server.owner()
    const cat = await createCategory(server, owner.key, { name: 'Base', externalId: 'base' })
    const before = snapshot(server, owner.id)
    const creates: unknown[] = [
      { name: 'X', isArchived: true },
      { name: 'X', countries: ['US'] },
      { name: 'X', presetKey: 'mine' },
      { name: 'x'.repeat(201) },
      { name: '' },
      { name: '   ' },
      { name: null },
      { name: 42 },
      {},
      { name: 'X', type: 'spending' },
      { name: 'X', type: null },
      { name: 'X', parentId: null },
      { name: 'X', externalId: '' },
      { name: 'X', externalId: 'e'.repeat(201) },
      { name: 'X', icon: 'i'.repeat(201) },
      { name: 'X', color: 7 },
      [],
    ]
    for (const body of creates) {
      const res = await server.request('POST', '/v1/categories', { key: owner.key, body })
      expectProblem(res, 422, 'validation_failed')
    }
    const unknown = expectProblem(
      await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'X', colour: 'red' } }),
      422,
      'validation_failed',
    )
    expect(unknown.detail).toContain('colour')
    const tooLong = expectProblem(await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'x'.repeat(201) } }), 422, 'validation_failed')
    expect(tooLong.detail).toContain('name')
    const badType = expectProblem(
      await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'X', type: 'spending' } }),
      422,
      'validation_failed',
    )
    expect(badType.detail).toContain('type')

    const patches: unknown[] = [{ name: null }, { name: '' }, { isSystem: true }, { type: 'both' }, { depth: 2 }, { fullName: 'x' }, { externalId: '' }]
    for (const body of patches) {
      expectProblem(await server.request('PATCH', `/v1/categories/${cat.id}`, { key: owner.key, body }), 422, 'validation_failed')
    }
    const upserts: unknown[] = [{ name: 'X' }, { externalId: 'base' }, { externalId: null, name: 'X' }, { externalId: 'base', name: 'X', extra: 1 }]
    for (const body of upserts) {
      expectProblem(await server.request('POST', '/v1/categories/upsert', { key: owner.key, body }), 422, 'validation_failed')
    }
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('query parameters', async () => {
    const owner = await server.owner()
    await createCategory(server, owner.key, { name: 'Base' })
    const before = snapshot(server, owner.id)
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=-1',
      'limit=abc',
      'limit=1.5',
      'cursor=not-a-cursor',
      `cursor=${Buffer.from('["a"]').toString('base64url')}`,
      `cursor=${Buffer.from('[0,"x","y"]').toString('base64url')}`,
      'cursor=',
      'type=spending',
      'includeArchived=maybe',
      'sort=name',
    ]) {
      const res = await server.request('GET', `/v1/categories?${query}`, { key: owner.key })
      expectProblem(res, 422, 'validation_failed')
    }
    expect(snapshot(server, owner.id)).toEqual(before)
  })

  test('scopes: a read-only key cannot write, a key without categories scopes cannot read', async () => {
    const owner = await server.owner({ scopes: ['categories:read'] })
    expect((await server.request('GET', '/v1/categories', { key: owner.key })).status).toBe(200)
    expectProblem(await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'X' } }), 403, 'insufficient_scope')
    expectProblem(await server.request('DELETE', '/v1/categories/cat_sys_groceries', { key: owner.key }), 403, 'insufficient_scope')
    const other = await server.key(owner.id, { scopes: ['accounts:read'] })
    expectProblem(await server.request('GET', '/v1/categories/cat_sys_groceries', { key: other.key }), 403, 'insufficient_scope')
  })
})

describe('two owners are isolated', () => {
  test('another owner’s category is 404 everywhere, absent from lists and no valid parent', async () => {
    const alice = await server.owner({ country: 'US' })
    const bob = await server.owner({ country: 'US' })
    const mine = await createCategory(server, alice.key, { name: 'Alice only', externalId: 'shared-ext' })
    const bobBefore = snapshot(server, bob.id)

    expectProblem(await server.request('GET', `/v1/categories/${mine.id}`, { key: bob.key }), 404, 'not_found')
    expectProblem(await server.request('PATCH', `/v1/categories/${mine.id}`, { key: bob.key, body: { name: 'Bob' } }), 404, 'not_found')
    expectProblem(await server.request('DELETE', `/v1/categories/${mine.id}`, { key: bob.key }), 404, 'not_found')
    expectProblem(await server.request('POST', '/v1/categories', { key: bob.key, body: { name: 'B', parentId: mine.id } }), 422, 'invalid_reference')
    expect(snapshot(server, bob.id)).toEqual(bobBefore)
    const bobList = await listAll(server, bob.key, 'includeArchived=true')
    expect(bobList.some((c) => c.id === mine.id)).toBe(false)
    expect((await listAll(server, bob.key, `parentId=${mine.id}`)).length).toBe(0)

    // Bob's upsert with Alice's externalId makes Bob's own category
    const up = await server.request('POST', '/v1/categories/upsert', { key: bob.key, body: { externalId: 'shared-ext', name: 'Bob only' } })
    expect(up.status).toBe(201)
    expect(up.json.data.id).not.toBe(mine.id)
    expect(await getCategory(server, alice.key, mine.id)).toEqual(mine)
  })
})
