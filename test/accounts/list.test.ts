import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestResponse, type TestServer } from '../support/harness.ts'
import { createAccount, type Json, listAll } from './helpers.ts'

/** GET /v1/accounts: keyset pages (CONTRACT §9), order, query validation. */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

const inListOrder = (items: Json[]) =>
  items.every((item, i) => {
    const prev = items[i - 1]
    return prev === undefined || prev.createdAt < item.createdAt || (prev.createdAt === item.createdAt && prev.id < item.id)
  })

describe('pages', () => {
  test('limit=2 walks every account once, oldest first, with a correct envelope', async () => {
    const owner = await server.owner()
    const created: Json[] = []
    for (let i = 0; i < 7; i++) created.push(await createAccount(server, owner.key, { name: `A${i}` }))

    const seen: Json[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const res = await server.request('GET', `/v1/accounts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: owner.key })
      expect(res.status).toBe(200)
      pages++
      const last = pages === 4
      expect(res.json.data).toHaveLength(last ? 1 : 2)
      expect(res.json.hasMore).toBe(!last)
      expect(res.json.nextCursor === null).toBe(last)
      seen.push(...res.json.data)
      cursor = res.json.nextCursor
    } while (cursor)
    expect(pages).toBe(4)
    expect(seen).toEqual(created)
    expect(inListOrder(seen)).toBe(true)
  })

  test('an exact multiple of the limit ends with hasMore false and no empty extra page', async () => {
    const owner = await server.owner()
    for (let i = 0; i < 4; i++) await createAccount(server, owner.key, { name: `B${i}` })
    const first = await server.request('GET', '/v1/accounts?limit=2', { key: owner.key })
    const second = await server.request('GET', `/v1/accounts?limit=2&cursor=${first.json.nextCursor}`, { key: owner.key })
    expect(second.json.data).toHaveLength(2)
    expect(second.json.hasMore).toBe(false)
    expect(second.json.nextCursor).toBeNull()
  })

  test('an empty list and the default page size of 50', async () => {
    const owner = await server.owner()
    const empty = await server.request('GET', '/v1/accounts', { key: owner.key })
    expect(empty.json).toEqual({ data: [], nextCursor: null, hasMore: false })
    await Promise.all(Array.from({ length: 53 }, (_, i) => createAccount(server, owner.key, { name: `C${i}` })))
    const page = await server.request('GET', '/v1/accounts', { key: owner.key })
    expect(page.json.data).toHaveLength(50)
    expect(page.json.hasMore).toBe(true)
    const max = await server.request('GET', '/v1/accounts?limit=200', { key: owner.key })
    expect(max.json.data).toHaveLength(53)
    expect(inListOrder(max.json.data)).toBe(true)
  })

  test('no account is repeated or skipped while new ones are inserted between (and during) page fetches', async () => {
    const owner = await server.owner()
    const initial: Json[] = []
    for (let i = 0; i < 9; i++) initial.push(await createAccount(server, owner.key, { name: `D${i}` }))

    const seen: Json[] = []
    const inserted: Json[] = []
    let cursor: string | null = null
    for (let pages = 0; pages < 100; pages++) {
      const [res]: [TestResponse, unknown] = await Promise.all([
        server.request('GET', `/v1/accounts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: owner.key }),
        createAccount(server, owner.key, { name: `during ${pages}` }).then((a) => inserted.push(a)),
      ])
      expect(res.status).toBe(200)
      seen.push(...res.json.data)
      if (pages < 3) inserted.push(await createAccount(server, owner.key, { name: `between ${pages}` }))
      cursor = res.json.nextCursor
      if (!cursor) break
    }
    const ids = seen.map((a) => a.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const account of initial) expect(ids).toContain(account.id)
    expect(inListOrder(seen)).toBe(true)
    // Every insert is newer than every account already listed, so the walk reaches all of them
    // except possibly those racing the very last page.
    const final = await listAll(server, owner.key, '/v1/accounts')
    expect(final.length).toBe(initial.length + inserted.length)
    expect(ids).toEqual(final.map((a: Json) => a.id).slice(0, ids.length))
  })

  test('archiving the last account of a page before the next fetch skips nothing', async () => {
    const owner = await server.owner()
    const all: Json[] = []
    for (let i = 0; i < 6; i++) all.push(await createAccount(server, owner.key, { name: `F${i}` }))
    const first = await server.request('GET', '/v1/accounts?limit=2', { key: owner.key })
    expect(first.json.data.map((a: Json) => a.name)).toEqual(['F0', 'F1'])
    await server.request('DELETE', `/v1/accounts/${all[1].id}`, { key: owner.key })
    const second = await server.request('GET', `/v1/accounts?limit=2&cursor=${first.json.nextCursor}`, { key: owner.key })
    expect(second.json.data.map((a: Json) => a.name)).toEqual(['F2', 'F3'])
  })

  test('includeArchived pages keep their own filter', async () => {
    const owner = await server.owner()
    const all: Json[] = []
    for (let i = 0; i < 6; i++) all.push(await createAccount(server, owner.key, { name: `E${i}` }))
    for (const account of [all[1], all[2], all[4]]) await server.request('DELETE', `/v1/accounts/${account.id}`, { key: owner.key })
    const active = await listAll(server, owner.key, '/v1/accounts', {}, 1)
    expect(active.map((a: Json) => a.name)).toEqual(['E0', 'E3', 'E5'])
    const everything = await listAll(server, owner.key, '/v1/accounts', { includeArchived: 'true' }, 2)
    expect(everything.map((a: Json) => [a.name, a.isArchived])).toEqual([
      ['E0', false],
      ['E1', true],
      ['E2', true],
      ['E3', false],
      ['E4', true],
      ['E5', false],
    ])
  })
})

describe('bad query parameters → 422', () => {
  test('limit out of range or not an integer, bad cursors, unknown parameters', async () => {
    const owner = await server.owner()
    await createAccount(server, owner.key)
    await createAccount(server, owner.key)
    const transactionCursor = Buffer.from(JSON.stringify(['2025-01-01', 1, 'txn_x'])).toString('base64url')
    const queries = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['cursor=', 'cursor'],
      ['cursor=not-a-cursor', 'cursor'],
      ['cursor=%21%21%21', 'cursor'],
      [`cursor=${transactionCursor}`, 'cursor'],
      [`cursor=${Buffer.from('{"createdAt":1}').toString('base64url')}`, 'cursor'],
      ['sort=name', 'sort'],
    ]
    for (const [query, parameter] of queries) {
      const res = await server.request('GET', `/v1/accounts?${query}`, { key: owner.key })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain(parameter as string)
    }
    for (const limit of ['1', '200']) expect((await server.request('GET', `/v1/accounts?limit=${limit}`, { key: owner.key })).status).toBe(200)
  })
})
