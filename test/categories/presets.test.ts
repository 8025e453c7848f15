import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { PRESETS, presetSeedSql, systemCategoryId } from '../../src/modules/categories/presets.ts'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { listAll } from './helpers.ts'

/** The system category preset: its shape, the seed migration generated from it, and the same rows in every owner's file. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const SEED_FILE = join(import.meta.dir, '../../drizzle/tenant/0001_seed_system_categories.sql')

describe('the system category preset', () => {
  test('is about 40 categories on two levels with stable ids and snake_case keys', () => {
    expect(PRESETS.length).toBeGreaterThanOrEqual(35)
    expect(PRESETS.length).toBeLessThanOrEqual(50)
    const keys = new Set(PRESETS.map((p) => p.presetKey))
    expect(keys.size).toBe(PRESETS.length)
    for (const preset of PRESETS) {
      expect(preset.presetKey).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/)
      if (preset.parentKey !== null) {
        const parent = PRESETS.find((p) => p.presetKey === preset.parentKey)
        expect(parent).toBeDefined()
        expect(parent?.parentKey).toBeNull()
        // a country-specific preset hangs below one everybody sees
        expect(parent?.countries).toBeNull()
        // parents come first, so the seed never points forward
        expect(PRESETS.indexOf(parent as (typeof PRESETS)[number])).toBeLessThan(PRESETS.indexOf(preset))
      }
      if (preset.countries !== null) for (const c of preset.countries) expect(c).toMatch(/^[A-Z]{2}$/)
    }
    const countrySpecific = PRESETS.filter((p) => p.countries !== null).map((p) => p.presetKey)
    expect(countrySpecific).toEqual(expect.arrayContaining(['contribution_401k', 'pix_fees', 'thirteenth_salary', 'kirchensteuer']))
  })

  test('the seed migration is the SQL generated from the TS list', () => {
    expect(migrations.some((m) => m.tag === '0001_seed_system_categories')).toBe(true)
    expect(readFileSync(SEED_FILE, 'utf8')).toContain(presetSeedSql())
  })

  test('a new owner file holds exactly the preset rows', async () => {
    const owner = await server.owner()
    const rows = server.platform.tenants
      .get(owner.id)
      .sqlite.query<Record<string, unknown>, []>('SELECT * FROM categories WHERE is_system = 1 ORDER BY created_at')
      .all()
    expect(rows.length).toBe(PRESETS.length)
    rows.forEach((row, index) => {
      const preset = PRESETS[index]
      if (!preset) throw new Error('more rows than presets')
      expect(row).toEqual({
        id: systemCategoryId(preset.presetKey),
        external_id: null,
        name: preset.name,
        icon: preset.icon,
        color: preset.color,
        type: preset.type,
        parent_id: preset.parentKey === null ? null : systemCategoryId(preset.parentKey),
        preset_key: preset.presetKey,
        is_archived: 0n,
        is_system: 1n,
        countries: preset.countries === null ? null : JSON.stringify(preset.countries),
        created_at: BigInt(index),
        // Fixed, as the preset is: the same small number (CONTRACT §25).
        updated_at: BigInt(index),
      })
    })
  })

  test('every owner gets the same ids, listed first in preset order', async () => {
    const a = await server.owner({ country: 'BR' })
    const b = await server.owner({ country: 'BR' })
    const listA = await listAll(server, a.key)
    const listB = await listAll(server, b.key)
    expect(listA).toEqual(listB)
    const expected = PRESETS.filter((p) => p.countries === null || p.countries.includes('BR'))
    expect(listA.map((c) => c.id)).toEqual(expected.map((p) => `cat_sys_${p.presetKey}`))
    for (const cat of listA) {
      expect(cat.isSystem).toBe(true)
      expect(cat.externalId).toBeNull()
      expect(cat.isArchived).toBe(false)
    }
    const groceries = listA.find((c) => c.id === 'cat_sys_groceries')
    expect(groceries).toEqual({
      id: 'cat_sys_groceries',
      externalId: null,
      name: 'Groceries',
      icon: 'shopping-basket',
      color: '#E67E22',
      type: 'expense',
      parentId: 'cat_sys_food_drinks',
      depth: 1,
      fullName: 'Food & Drinks / Groceries',
      presetKey: 'groceries',
      isArchived: false,
      isSystem: true,
      countries: null,
      updatedAt: PRESETS.findIndex((preset) => preset.presetKey === 'groceries'),
    })
    const salary = listA.find((c) => c.id === 'cat_sys_thirteenth_salary')
    expect(salary).toMatchObject({ type: 'income', parentId: 'cat_sys_income', fullName: 'Income / 13th salary', countries: ['BR', 'PT'] })
  })
})
