import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PRESETS } from '../../src/modules/categories/presets.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { type Cat, createCategory, listAll } from './helpers.ts'

/** GET /v1/categories: order (system categories first), keyset pages (CONTRACT §9), filters. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const globalPresets = PRESETS.filter((p) => p.countries === null)

describe('list', () => {
  test('order: system first in preset order, then custom oldest first; default limit 50', async () => {
    const owner = await server.owner()
    const custom: Cat[] = []
    for (let i = 0; i < 12; i++) custom.push(await createCategory(server, owner.key, { name: `C${i}` }))
    const first = await server.request('GET', '/v1/categories', { key: owner.key })
    expect(first.status).toBe(200)
    expect(Object.keys(first.json).sort()).toEqual(['data', 'hasMore', 'nextCursor'])
    const total = globalPresets.length + custom.length
    expect(first.json.data.length).toBe(Math.min(50, total))
    expect(first.json.hasMore).toBe(total > 50)
    const all = await listAll(server, owner.key)
    expect(all.map((c) => c.id)).toEqual([...globalPresets.map((p) => `cat_sys_${p.presetKey}`), ...custom.map((c) => c.id)])
  })

  test('walking pages of 3 returns every category exactly once, in order, also while others insert', async () => {
    const owner = await server.owner({ country: 'US' })
    for (let i = 0; i < 7; i++) await createCategory(server, owner.key, { name: `Before ${i}`, parentId: i % 2 ? 'cat_sys_income' : undefined })
    const start = await listAll(server, owner.key)

    // quiet walk
    const quiet = await listAll(server, owner.key, '', 3)
    expect(quiet).toEqual(start)

    // walk while inserting a category after every page
    const seen: Cat[] = []
    const inserted: Cat[] = []
    let cursor: string | null = null
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(200)
      const res = await server.request('GET', `/v1/categories?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key: owner.key })
      expect(res.status).toBe(200)
      expect(res.json.data.length).toBeLessThanOrEqual(3)
      seen.push(...res.json.data)
      if (!res.json.hasMore) break
      cursor = res.json.nextCursor
      if (inserted.length < 10) inserted.push(await createCategory(server, owner.key, { name: `During ${inserted.length}` }))
    }
    const ids = seen.map((c) => c.id)
    expect(new Set(ids).size).toBe(ids.length)
    const end = await listAll(server, owner.key)
    // nothing skipped or repeated: what was there at the start, then what was added, in list order
    expect(ids).toEqual(end.map((c) => c.id))
    expect(ids).toEqual([...start.map((c) => c.id), ...inserted.map((c) => c.id)])
  })

  test('filters: type, parentId, includeArchived, combined with pages', async () => {
    const owner = await server.owner({ country: 'BR' })
    const side = await createCategory(server, owner.key, { name: 'Side gigs', type: 'income', parentId: 'cat_sys_income' })
    const tips = await createCategory(server, owner.key, { name: 'Tips', type: 'income', parentId: side.id })
    const old = await createCategory(server, owner.key, { name: 'Old job', type: 'income', parentId: 'cat_sys_income' })
    const toys = await createCategory(server, owner.key, { name: 'Toys', type: 'expense' })
    const untyped = await createCategory(server, owner.key, { name: 'Misc' })
    await server.request('DELETE', `/v1/categories/${old.id}`, { key: owner.key })

    const brIncome = PRESETS.filter((p) => p.type === 'income' && (p.countries === null || p.countries.includes('BR'))).map((p) => `cat_sys_${p.presetKey}`)
    const income = await listAll(server, owner.key, 'type=income', 2)
    expect(income.map((c) => c.id)).toEqual([...brIncome, side.id, tips.id])
    for (const c of income) expect(c.type).toBe('income')

    const expense = await listAll(server, owner.key, 'type=expense')
    expect(expense.every((c) => c.type === 'expense')).toBe(true)
    expect(expense.some((c) => c.id === toys.id)).toBe(true)
    expect(expense.some((c) => c.id === untyped.id)).toBe(false)

    const children = await listAll(server, owner.key, 'parentId=cat_sys_income', 2)
    const systemChildren = PRESETS.filter((p) => p.parentKey === 'income' && (p.countries === null || p.countries.includes('BR'))).map(
      (p) => `cat_sys_${p.presetKey}`,
    )
    expect(children.map((c) => c.id)).toEqual([...systemChildren, side.id])
    const withArchived = await listAll(server, owner.key, 'parentId=cat_sys_income&includeArchived=true')
    expect(withArchived.map((c) => c.id)).toEqual([...systemChildren, side.id, old.id])
    expect((await listAll(server, owner.key, `parentId=${side.id}`)).map((c) => c.id)).toEqual([tips.id])
    expect((await listAll(server, owner.key, `parentId=${side.id}&type=expense`)).length).toBe(0)
    expect((await listAll(server, owner.key, 'parentId=cat_sys_unknown')).length).toBe(0)
    expect((await listAll(server, owner.key, 'includeArchived=false')).some((c) => c.id === old.id)).toBe(false)
    expect((await listAll(server, owner.key, 'includeArchived=true')).some((c) => c.id === old.id)).toBe(true)
  })

  test('a cursor from a filtered list continues that list', async () => {
    const owner = await server.owner()
    for (let i = 0; i < 5; i++) await createCategory(server, owner.key, { name: `E${i}`, type: 'expense' })
    const expected = await listAll(server, owner.key, 'type=expense')
    const paged = await listAll(server, owner.key, 'type=expense', 1)
    expect(paged).toEqual(expected)
  })
})
