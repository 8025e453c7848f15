import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, createTxn, type Json, listAll, newestFirst } from './helpers.ts'

/** CONTRACT §9 for transactions: order, filters, keyset pages (also under concurrent inserts), bad parameters. */

let server: TestServer
let owner: { id: string; key: string }
let accounts: string[]
let payees: string[]
let customCategory: string
/** Every transaction of the owner, as created. */
const all: Json[] = []

const CATEGORIES = () => ['cat_sys_groceries', 'cat_sys_salary', customCategory]
const DATES = ['2025-12-31', '2026-01-01', '2026-01-15', '2026-02-01', '2026-02-28', '2026-03-01']

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ country: 'US' })
  accounts = []
  for (const name of ['A', 'B', 'C']) accounts.push((await createAccount(server, owner.key, { name })).id)
  payees = []
  for (const name of ['P0', 'P1']) payees.push((await server.request('POST', '/v1/payees', { key: owner.key, body: { name } })).json.data.id)
  customCategory = (await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Custom' } })).json.data.id
  // 45 transactions over a few dates (many on the same date), some transfers, some with externalIds
  for (let i = 0; i < 45; i++) {
    const body: Record<string, unknown> = {
      accountId: accounts[i % 3],
      amount: (i % 7) + 1,
      date: DATES[(i * 5) % DATES.length],
    }
    if (i % 4 === 0) body.categoryId = CATEGORIES()[i % 3]
    if (i % 3 === 1) body.payeeId = payees[i % 2]
    if (i % 5 === 0) body.externalId = `ext-${i}`
    if (i % 6 === 2) Object.assign(body, { isTransfer: true, transferToAccountId: accounts[(i + 1 + (i % 4 === 0 ? 1 : 0)) % 3] })
    all.push(await createTxn(server, owner.key, body))
  }
  // a couple created in parallel (likely within the same millisecond)
  all.push(...(await Promise.all([0, 1, 2, 3].map(() => createTxn(server, owner.key, { accountId: accounts[0], amount: 1, date: '2026-01-15' })))))
})
afterAll(() => server.stop())

describe('order', () => {
  test('date desc, then createdAt desc, then id', async () => {
    const listed = await listAll(server, owner.key)
    expect(listed.length).toBe(all.length)
    expect(listed).toEqual([...all].sort(newestFirst))
    // every page size gives the same sequence
    for (const limit of [1, 2, 3, 7, 50]) expect((await listAll(server, owner.key, '', limit)).map((t) => t.id)).toEqual(listed.map((t) => t.id))
  })

  test('the default page is 50 and the envelope is complete', async () => {
    const res = await server.request('GET', '/v1/transactions', { key: owner.key })
    expect(res.status).toBe(200)
    expect(Object.keys(res.json).sort()).toEqual(['data', 'hasMore', 'nextCursor'])
    expect(res.json.data.length).toBe(Math.min(50, all.length))
    expect(res.json.hasMore).toBe(all.length > 50)
    const small = await server.request('GET', '/v1/transactions?limit=200', { key: owner.key })
    expect(small.json).toMatchObject({ hasMore: false, nextCursor: null })
  })
})

describe('filters', () => {
  const cases: [string, () => string, (t: Json) => boolean][] = [
    ['accountId (source)', () => `accountId=${accounts[0]}`, (t) => t.accountId === accounts[0] || t.transferToAccountId === accounts[0]],
    [
      'accountId (source or transfer destination)',
      () => `accountId=${accounts[1]}`,
      (t) => t.accountId === accounts[1] || t.transferToAccountId === accounts[1],
    ],
    ['categoryId (system)', () => 'categoryId=cat_sys_groceries', (t) => t.categoryId === 'cat_sys_groceries'],
    ['categoryId (custom)', () => `categoryId=${customCategory}`, (t) => t.categoryId === customCategory],
    ['payeeId', () => `payeeId=${payees[1]}`, (t) => t.payeeId === payees[1]],
    ['from (inclusive)', () => 'from=2026-02-01', (t) => t.date >= '2026-02-01'],
    ['to (inclusive)', () => 'to=2026-01-15', (t) => t.date <= '2026-01-15'],
    ['from and to (one day)', () => 'from=2026-01-15&to=2026-01-15', (t) => t.date === '2026-01-15'],
    ['from after to', () => 'from=2026-03-01&to=2026-01-01', () => false],
    ['externalId', () => 'externalId=ext-10', (t) => t.externalId === 'ext-10'],
    ['an unknown externalId', () => 'externalId=nope', () => false],
    [
      'accountId + from + to',
      () => `accountId=${accounts[2]}&from=2026-01-01&to=2026-02-28`,
      (t) => (t.accountId === accounts[2] || t.transferToAccountId === accounts[2]) && t.date >= '2026-01-01' && t.date <= '2026-02-28',
    ],
    ['categoryId + payeeId', () => `categoryId=${CATEGORIES()[1]}&payeeId=${payees[0]}`, (t) => t.categoryId === CATEGORIES()[1] && t.payeeId === payees[0]],
    [
      'accountId + payeeId',
      () => `accountId=${accounts[1]}&payeeId=${payees[0]}`,
      (t) => (t.accountId === accounts[1] || t.transferToAccountId === accounts[1]) && t.payeeId === payees[0],
    ],
    [
      'accountId + categoryId + to',
      () => `accountId=${accounts[0]}&categoryId=${CATEGORIES()[0]}&to=2026-02-01`,
      (t) => (t.accountId === accounts[0] || t.transferToAccountId === accounts[0]) && t.categoryId === CATEGORIES()[0] && t.date <= '2026-02-01',
    ],
  ]
  for (const [what, query, keep] of cases) {
    test(what, async () => {
      const expected = all.filter(keep).sort(newestFirst)
      expect(await listAll(server, owner.key, query())).toEqual(expected)
      // the same filter in small pages walks every match exactly once
      expect((await listAll(server, owner.key, query(), 2)).map((t) => t.id)).toEqual(expected.map((t) => t.id))
    })
  }

  test('sanity: the data set exercises every filter', () => {
    expect(all.some((t) => t.isTransfer && t.transferToAccountId === accounts[1])).toBe(true)
    expect(all.filter((t) => t.categoryId === customCategory).length).toBeGreaterThan(1)
    expect(all.filter((t) => t.payeeId === payees[1]).length).toBeGreaterThan(1)
    expect(all.filter((t) => t.externalId === 'ext-10').length).toBe(1)
  })
})

describe('pagination while others write', () => {
  test('limit=3 walks every transaction exactly once while newer and older ones are inserted between pages', async () => {
    const o = await server.owner()
    const acct = (await createAccount(server, o.key)).id
    const initial: Json[] = []
    for (let i = 0; i < 20; i++) initial.push(await createTxn(server, o.key, { accountId: acct, amount: 1, date: `2026-01-${String((i % 10) + 10)}` }))
    /** Rows inserted during the walk, each with the last row the walk had returned when it was inserted. */
    const inserted: { row: Json; after: Json; final: boolean }[] = []
    const seen: Json[] = []
    let cursor: string | null = null
    for (let pages = 0; pages < 100; pages++) {
      const res = await server.request('GET', `/v1/transactions?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { key: o.key })
      expect(res.status).toBe(200)
      expect(res.json.data.length).toBeLessThanOrEqual(3)
      seen.push(...res.json.data)
      const last = res.json.data[res.json.data.length - 1]
      if (!last) break
      // between pages: one far newer, one far older, one on the date of the page's last item
      for (const date of ['2030-01-01', `2000-01-${String((pages % 28) + 1).padStart(2, '0')}`, last.date]) {
        inserted.push({ row: await createTxn(server, o.key, { accountId: acct, amount: 1, date }), after: last, final: !res.json.hasMore })
      }
      if (!res.json.hasMore) break
      cursor = res.json.nextCursor
    }
    const ids = seen.map((t) => t.id)
    expect(new Set(ids).size).toBe(ids.length) // nothing repeated
    for (const t of initial) expect(ids).toContain(t.id) // nothing skipped
    // a row inserted behind the walk's position is reached; one inserted ahead of it is not
    let reached = 0
    for (const { row, after, final } of inserted) {
      const behind = newestFirst(after, row) < 0
      const expected = behind && !final
      if (expected) reached++
      if (ids.includes(row.id) !== expected) throw new Error(`row ${row.date} inserted after ${after.date}: seen ${!expected}, expected ${expected}`)
    }
    expect(reached).toBeGreaterThan(3)
    // the sequence is in list order
    expect(seen).toEqual([...seen].sort(newestFirst))
  })

  test('pages stay exact under truly concurrent inserts, also with the accountId filter', async () => {
    const o = await server.owner()
    const a = (await createAccount(server, o.key, { name: 'A' })).id
    const b = (await createAccount(server, o.key, { name: 'B' })).id
    const initial: Json[] = []
    for (let i = 0; i < 24; i++) {
      const body: Record<string, unknown> = { accountId: i % 2 ? a : b, amount: 1, date: `2026-02-${String((i % 12) + 10)}` }
      if (i % 4 === 1) Object.assign(body, { accountId: b, isTransfer: true, transferToAccountId: a })
      initial.push(await createTxn(server, o.key, body))
    }
    for (const query of ['', `accountId=${a}`]) {
      const seen: Json[] = []
      let cursor: string | null = null
      for (let pages = 0; pages < 200; pages++) {
        const params = new URLSearchParams(query)
        params.set('limit', '3')
        if (cursor) params.set('cursor', cursor)
        const inserts = [0, 1, 2].map((j) =>
          createTxn(server, o.key, {
            accountId: j === 2 ? b : a,
            amount: 1,
            date: j === 0 ? '2031-01-01' : '2026-02-15',
            ...(j === 2 ? { isTransfer: true, transferToAccountId: a } : {}),
          }),
        )
        const [res] = await Promise.all([server.request('GET', `/v1/transactions?${params}`, { key: o.key }), ...inserts])
        expect(res.status).toBe(200)
        seen.push(...res.json.data)
        if (!res.json.hasMore) break
        cursor = res.json.nextCursor
      }
      const ids = seen.map((t) => t.id)
      expect(new Set(ids).size).toBe(ids.length)
      const relevant = query ? initial.filter((t) => t.accountId === a || t.transferToAccountId === a) : initial
      for (const t of relevant) expect(ids).toContain(t.id)
      expect(seen).toEqual([...seen].sort(newestFirst))
    }
  })
})

describe('bad parameters → 422 validation_failed', () => {
  let payeeCursor: string
  beforeAll(async () => {
    const res = await server.request('GET', '/v1/payees?limit=1', { key: owner.key })
    payeeCursor = res.json.nextCursor
    expect(typeof payeeCursor).toBe('string')
  })
  const bad = [
    'limit=0',
    'limit=201',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'limit=',
    'cursor=garbage',
    'cursor=',
    `cursor=${Buffer.from('["2026-01-01","x","y"]').toString('base64url')}`,
    `cursor=${Buffer.from('[1,2]').toString('base64url')}`,
    'from=2026-02-30',
    'from=2026-1-1',
    'to=yesterday',
    'to=2026-13-01',
    'from=',
    'externalId=',
    'unknown=1',
  ]
  for (const query of bad) {
    test(query || '(empty)', async () => {
      expectProblem(await server.request('GET', `/v1/transactions?${query}`, { key: owner.key }), 422, 'validation_failed')
    })
  }
  test("another list's cursor", async () => {
    expectProblem(await server.request('GET', `/v1/transactions?cursor=${payeeCursor}`, { key: owner.key }), 422, 'validation_failed')
  })
  test('the detail names the parameter', async () => {
    expect(expectProblem(await server.request('GET', '/v1/transactions?limit=0', { key: owner.key }), 422, 'validation_failed').detail).toContain('limit')
    expect(expectProblem(await server.request('GET', '/v1/transactions?cursor=zzz', { key: owner.key }), 422, 'validation_failed').detail).toContain('cursor')
    expect(expectProblem(await server.request('GET', '/v1/transactions?from=2026-02-30', { key: owner.key }), 422, 'validation_failed').detail).toContain(
      'from',
    )
  })
  test('the edges are accepted: limit=1 and limit=200', async () => {
    expect((await server.request('GET', '/v1/transactions?limit=1', { key: owner.key })).json.data.length).toBe(1)
    expect((await server.request('GET', '/v1/transactions?limit=200', { key: owner.key })).status).toBe(200)
  })
})
