import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { type Json, listAll } from '../accounts/helpers.ts'

/** CONTRACT §24: the import-presets resource, its rules, scopes, the change feed and the agent context. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const FIELDS = [
  'id',
  'name',
  'delimiter',
  'headerRow',
  'skipRows',
  'skipFooterRows',
  'decimalSeparator',
  'dateFormat',
  'amountPositiveIs',
  'columns',
  'createdAt',
  'updatedAt',
]
const ING = { date: 'Datum', amount: 'Bedrag (EUR)', indicator: 'Af Bij', payee: 'Naam / Omschrijving', description: 'Mededelingen' }
const ROLES = ['date', 'amount', 'inflow', 'outflow', 'indicator', 'payee', 'description', 'note', 'externalId', 'currency']
/** A preset shows every role, null where unmapped. */
const shown = (columns: Json) => Object.fromEntries(ROLES.map((role) => [role, columns[role] ?? null]))

describe('the resource', () => {
  test('create with defaults, read, list, change, delete (then 404)', async () => {
    const { key } = await server.owner()
    const res = await server.request('POST', '/v1/import-presets', { key, body: { name: ' ING NL ', columns: ING, dateFormat: 'YYYYMMDD' } })
    expect(res.status).toBe(201)
    const preset = res.json.data
    expect(Object.keys(preset)).toEqual(FIELDS)
    expect(preset).toMatchObject({
      name: 'ING NL',
      delimiter: null,
      headerRow: true,
      skipRows: 0,
      skipFooterRows: null,
      decimalSeparator: null,
      dateFormat: 'YYYYMMDD',
      amountPositiveIs: 'income',
      columns: shown(ING),
    })
    expect(preset.id).toMatch(/^imp_[0-9a-f]{32}$/)
    expect(res.headers.get('location')).toBe(`/v1/import-presets/${preset.id}`)
    expect((await server.request('GET', `/v1/import-presets/${preset.id}`, { key })).json.data).toEqual(preset)
    const changed = await server.request('PATCH', `/v1/import-presets/${preset.id}`, {
      key,
      body: { delimiter: ';', skipRows: 2, dateFormat: null, columns: { date: 1, amount: 3 } },
    })
    expect(changed.status).toBe(200)
    expect(changed.json.data).toEqual({
      ...preset,
      delimiter: ';',
      skipRows: 2,
      dateFormat: null,
      columns: shown({ date: 1, amount: 3 }),
      updatedAt: changed.json.data.updatedAt,
    })
    // A change moves updatedAt on (CONTRACT §25); a new preset's is its createdAt.
    expect(preset.updatedAt).toBe(preset.createdAt)
    expect(changed.json.data.updatedAt).toBeGreaterThanOrEqual(preset.createdAt)
    // What a preset shows can be sent back as it is: null roles are not mapped.
    const again = await server.request('PATCH', `/v1/import-presets/${preset.id}`, { key, body: { columns: changed.json.data.columns } })
    expect(again.json.data).toEqual(changed.json.data)
    expect(await listAll(server, key, '/v1/import-presets')).toEqual([changed.json.data])
    const deleted = await server.request('DELETE', `/v1/import-presets/${preset.id}`, { key })
    expect(deleted.json.data).toEqual(changed.json.data)
    expectProblem(await server.request('GET', `/v1/import-presets/${preset.id}`, { key }), 404, 'not_found')
    expectProblem(await server.request('DELETE', `/v1/import-presets/${preset.id}`, { key }), 404, 'not_found')
  })

  test('a layout’s rules: a date column, one form of the amount, positions without a header, a real date format', async () => {
    const { key } = await server.owner()
    const post = (body: Json) => server.request('POST', '/v1/import-presets', { key, body: { name: 'x', ...body } })
    expect((await post({ columns: { amount: 'Amount' } })).json.detail).toBe('columns.date: the date column is required')
    expect((await post({ columns: { date: 'Date' } })).json.detail).toContain('name the amount')
    expect((await post({ columns: { date: 'Date', amount: 'A', inflow: 'In', outflow: 'Out' } })).json.detail).toContain('not both')
    expect((await post({ columns: { date: 'Date', inflow: 'In' } })).json.detail).toContain('inflow and outflow go together')
    expect((await post({ columns: { date: 'Date', indicator: 'D/C', inflow: 'In', outflow: 'Out' } })).json.detail).toContain('indicator')
    expectProblem(await post({ headerRow: false, columns: { date: 1, amount: 'Amount' } }), 422, 'rule_violation')
    expect((await post({ dateFormat: 'DD/DD/YYYY' })).json).toMatchObject({ code: 'validation_failed', detail: expect.stringContaining('dateFormat') })
    expectProblem(await post({ delimiter: '"' }), 422, 'validation_failed')
    expectProblem(await post({ columns: { date: 0, amount: 1 } }), 422, 'validation_failed')
    expectProblem(await post({ columns: { date: 'Date', amount: 'Amount', category: 'Cat' } }), 422, 'validation_failed')
    // A PATCH is checked against the preset it makes.
    const ok = await post({ columns: { date: 'Date', amount: 'Amount' } })
    expect(ok.status).toBe(201)
    expectProblem(await server.request('PATCH', `/v1/import-presets/${ok.json.data.id}`, { key, body: { headerRow: false } }), 422, 'rule_violation')
  })

  test('transactions:read reads and transactions:write writes; another owner’s preset is 404', async () => {
    const owner = await server.owner()
    const reader = await server.key(owner.id, { scopes: ['transactions:read'] })
    const writer = await server.key(owner.id, { scopes: ['accounts:read'] })
    const made = await server.request('POST', '/v1/import-presets', { key: owner.key, body: { name: 'mine' } })
    expect((await server.request('GET', '/v1/import-presets', { key: reader.key })).status).toBe(200)
    expectProblem(await server.request('POST', '/v1/import-presets', { key: reader.key, body: { name: 'no' } }), 403, 'insufficient_scope')
    expectProblem(await server.request('GET', '/v1/import-presets', { key: writer.key }), 403, 'insufficient_scope')
    const other = await server.owner()
    expectProblem(await server.request('GET', `/v1/import-presets/${made.json.data.id}`, { key: other.key }), 404, 'not_found')
  })

  test('lists are keyset-paged, oldest first', async () => {
    const { key } = await server.owner()
    for (const name of ['a', 'b', 'c']) await server.request('POST', '/v1/import-presets', { key, body: { name } })
    const first = await server.request('GET', '/v1/import-presets?limit=2', { key })
    expect(first.json.data.map((p: Json) => p.name)).toEqual(['a', 'b'])
    const second = await server.request('GET', `/v1/import-presets?limit=2&cursor=${first.json.nextCursor}`, { key })
    expect([second.json.data.map((p: Json) => p.name), second.json.hasMore]).toEqual([['c'], false])
    expectProblem(await server.request('GET', '/v1/import-presets?cursor=bm9wZQ', { key }), 422, 'validation_failed')
  })
})

describe('feed and context', () => {
  test('a preset is in the change feed as import_preset (upsert, then a delete tombstone) and in the agent context', async () => {
    const { key } = await server.owner()
    const made = (await server.request('POST', '/v1/import-presets', { key, body: { name: 'Sparkasse', delimiter: ';' } })).json.data
    const feed = await server.request('GET', '/v1/changes?resources=import_presets', { key })
    expect(feed.json.data).toEqual([expect.objectContaining({ resource: 'import_preset', id: made.id, op: 'upsert', externalId: null, data: made })])
    const context = await server.request('GET', '/v1/agent/context', { key })
    expect(context.json.data.importPresets).toEqual([made])
    // The same PATCH twice: the second changes nothing, so the feed does not move.
    await server.request('PATCH', `/v1/import-presets/${made.id}`, { key, body: { skipRows: 1 } })
    const cursor = (await server.request('GET', '/v1/changes', { key })).json.nextCursor
    await server.request('PATCH', `/v1/import-presets/${made.id}`, { key, body: { skipRows: 1 } })
    expect((await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })).json.data).toEqual([])
    await server.request('DELETE', `/v1/import-presets/${made.id}`, { key })
    const after = await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })
    expect(after.json.data).toEqual([expect.objectContaining({ resource: 'import_preset', id: made.id, op: 'delete', data: null })])
  })

  test('a key without transactions:read cannot ask the feed for presets', async () => {
    const owner = await server.owner()
    const key = await server.key(owner.id, { scopes: ['accounts:read'] })
    expectProblem(await server.request('GET', '/v1/changes?resources=import_presets', { key: key.key }), 403, 'insufficient_scope')
  })
})
