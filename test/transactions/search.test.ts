import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { LIST_BOUNDS } from '../../src/modules/transactions/list.ts'
import { normalizeName } from '../../src/modules/payees/normalize.ts'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { createAccount, createTxn, type Json, listAll, newestFirst, patchTxn, units } from './helpers.ts'

/**
 * CONTRACT §9 and §26: the transaction list's `categoryId=none`, `q` (note, bank description, legs'
 * notes, payee names and aliases) and `minAmount`/`maxAmount`
 * filters find exactly what they promise, alone and with the other filters, on every path a
 * page can take (the few matches of a text search read through the FTS5 index; a walk that tests
 * each row; a walk cut short by its bound, whose pages still add up to the whole answer), and the
 * search text follows every write.
 */

let server: TestServer
let owner: { id: string; key: string }
let accounts: string[]
const payees: Record<string, Json> = {}
let custom: string
/** Every transaction, as the server last answered it. */
const all = new Map<string, Json>()

const DEFAULT_BOUNDS = { ...LIST_BOUNDS }
afterEach(() => Object.assign(LIST_BOUNDS, DEFAULT_BOUNDS))

async function txn(body: Record<string, unknown>) {
  const created = await createTxn(server, owner.key, { accountId: accounts[0], date: '2026-03-01', amount: 10, ...body })
  all.set(created.id, created)
  return created
}

beforeAll(async () => {
  server = await startUnthrottledServer()
  owner = await server.owner({ country: 'PT' })
  accounts = [(await createAccount(server, owner.key, { name: 'A' })).id, (await createAccount(server, owner.key, { name: 'B' })).id]
  for (const [name, aliases] of [
    ['Café Central', ['CAFE CNTRL LISBOA']],
    ['Pingo Doce', []],
    ['Ｇａｓ Ｓｔａｔｉｏｎ', []],
  ] as const) {
    const res = await server.request('POST', '/v1/payees', { key: owner.key, body: { name, aliases } })
    payees[name] = res.json.data
  }
  custom = (await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Hobbies' } })).json.data.id
  const cafe = payees['Café Central'].id
  const pingo = payees['Pingo Doce'].id
  const gas = payees['Ｇａｓ Ｓｔａｔｉｏｎ'].id
  await txn({ note: 'Lunch at the CAFÉ', categoryId: 'cat_sys_groceries', date: '2026-01-05' })
  await txn({ note: 'rent  march', date: '2026-01-31', amount: 800 })
  await txn({ payeeId: cafe, amount: 3.5, date: '2026-02-01' })
  await txn({ payeeId: pingo, categoryId: custom, amount: 42.42, date: '2026-02-01' })
  await txn({ payeeId: gas, amount: 60, note: 'ｆｕｌｌ width', date: '2026-02-10' })
  await txn({ amount: -2500, note: 'salary', categoryId: 'cat_sys_salary', date: '2026-02-28' })
  await txn({ amount: -0.00000001, date: '2026-02-28' })
  await txn({ amount: 0.00000001, date: '2026-02-28', note: 'tiny' })
  await txn({ isTransfer: true, transferToAccountId: accounts[1], amount: 100, note: 'to savings', date: '2026-03-02' })
  // Split: one leg without a category, one leg naming Pingo Doce with a note.
  await txn({
    amount: 30,
    date: '2026-03-03',
    splits: [
      { amount: 20, note: 'Gift for mom' },
      { amount: 10, categoryId: 'cat_sys_groceries', payeeId: pingo },
    ],
  })
  // Split with every leg categorized.
  await txn({
    amount: 15,
    date: '2026-03-04',
    note: 'market',
    splits: [
      { amount: 5, categoryId: 'cat_sys_groceries' },
      { amount: 10, categoryId: custom },
    ],
  })
  await txn({ accountId: accounts[1], amount: 12.5, date: '2026-03-05' })
  // The bank's own text (§23) is searched as the note is.
  await txn({ amount: 7.2, date: '2026-03-05', originalDescription: 'COMPRA 4412 CAFÉ DO PAÇO LX', note: 'breakfast' })
  // Many of the same date: paging inside one date.
  for (let i = 0; i < 8; i++) await txn({ amount: i + 1, note: i % 2 === 0 ? `coffee ${i}` : null, date: '2026-03-06', payeeId: i % 3 === 0 ? cafe : null })
})
afterAll(() => server.stop())

/** The payee names and aliases of a transaction (its own and its legs'), normalized. */
function payeeTexts(t: Json): string[] {
  const ids = [t.payeeId, ...t.splits.map((leg: Json) => leg.payeeId)].filter(Boolean)
  return Object.values(payees)
    .filter((payee) => ids.includes(payee.id))
    .flatMap((payee) => [payee.normalizedName, ...payee.aliases.map(normalizeName)])
}

const matchesText = (t: Json, q: string) => {
  const needle = normalizeName(q)
  const texts = [t.note, t.originalDescription, ...t.splits.map((leg: Json) => leg.note)].filter((text) => text !== null).map(normalizeName)
  return [...texts, ...payeeTexts(t)].some((text) => text.includes(needle))
}
const uncategorized = (t: Json) => (t.hasSplits ? t.splits.some((leg: Json) => leg.categoryId === null) : t.categoryId === null && !t.isTransfer)

/** FTS5's own check of the index against its content table (it throws "malformed" on any difference). */
function expectIndexInStep(): void {
  const db = server.platform.tenants.get(owner.id).sqlite
  expect(() => db.run("INSERT INTO transaction_search_fts (transaction_search_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow()
}

function expected(predicate: (t: Json) => boolean): string[] {
  return [...all.values()]
    .filter(predicate)
    .sort(newestFirst)
    .map((t) => t.id)
}

async function ids(query: string, limit = 200): Promise<string[]> {
  return (await listAll(server, owner.key, query, limit)).map((t: Json) => t.id)
}

describe('categoryId=none', () => {
  test('finds the unsplit, non-transfer transactions without a category, and the split ones with a leg without one', async () => {
    const want = expected(uncategorized)
    expect(want.length).toBeGreaterThan(5)
    expect(await ids('categoryId=none')).toEqual(want)
    for (const limit of [1, 2, 5]) expect(await ids('categoryId=none', limit)).toEqual(want)
    // The transfer and the fully categorized split are not among them; the split with a bare leg is.
    const listed = (await listAll(server, owner.key, 'categoryId=none')).map((t: Json) => t.note)
    expect(listed).not.toContain('to savings')
    expect(listed).not.toContain('market')
    expect([...all.values()].find((t) => t.hasSplits && t.splits.some((leg: Json) => leg.categoryId === null))?.id).toBeOneOf(want)
  })

  test('combines with the other filters, whichever index the page walks', async () => {
    const tag = (await server.request('POST', '/v1/tags', { key: owner.key, body: { name: 'reviewed' } })).json.data.id
    const tagged = [...all.values()].filter((t) => t.amount === 3 || t.note === 'rent  march').map((t) => t.id)
    for (const id of tagged) all.set(id, await patchTxn(server, owner.key, id, { tagIds: [tag] }))
    const cases: [string, (t: Json) => boolean][] = [
      [`accountId=${accounts[1]}`, (t) => t.accountId === accounts[1] || t.transferToAccountId === accounts[1]],
      ['from=2026-02-01&to=2026-02-28', (t) => t.date >= '2026-02-01' && t.date <= '2026-02-28'],
      [`payeeId=${payees['Café Central'].id}`, (t) => t.payeeId === payees['Café Central'].id],
      [`tagId=${tag}`, (t) => t.tagIds.includes(tag)],
      ['minAmount=5', (t) => units(t.amount) >= units(5)],
    ]
    for (const [query, predicate] of cases) {
      const want = expected((t) => uncategorized(t) && predicate(t))
      expect(await ids(`categoryId=none&${query}`)).toEqual(want)
      expect(await ids(`categoryId=none&${query}`, 1)).toEqual(want)
    }
  })
})

describe('q', () => {
  const QUERIES = [
    'cafe',
    'CAFÉ',
    'café central',
    'cntrl lisb',
    'gift for',
    'ping',
    'full width',
    'gas station',
    'rent march',
    'coffee',
    'co',
    'É',
    'zzz',
    'for mom',
  ]

  test('finds the note, a leg’s note and the payee’s name or alias (its own or a leg’s), ignoring case, accents, compatibility forms and spaces', async () => {
    for (const q of QUERIES) expect({ q, ids: await ids(`q=${encodeURIComponent(q)}`) }).toEqual({ q, ids: expected((t) => matchesText(t, q)) })
    // A sample of what that means.
    expect((await ids('q=cafe')).length).toBe(expected((t) => matchesText(t, 'cafe')).length)
    expect(await ids('q=zzz')).toEqual([])
    expect(await ids('q=PA%C3%87O%20LX')).toEqual(expected((t) => t.originalDescription === 'COMPRA 4412 CAFÉ DO PAÇO LX'))
    expect((await ids('q=paco%20lx')).length).toBe(1)
    expect(await ids(`q=${encodeURIComponent('Ｆｕｌｌ')}`)).toEqual(expected((t) => t.note === 'ｆｕｌｌ width'))
  })

  test('no match spans two texts of one transaction', async () => {
    const t = await txn({ note: 'alpha', splits: [{ amount: 4, note: 'beta' }, { amount: 6 }], amount: 10 })
    expect(await ids('q=alpha%20beta')).toEqual([])
    expect(await ids('q=alpha')).toContain(t.id)
    expect(await ids('q=beta')).toContain(t.id)
  })

  test('every path gives the same answer: the index, a walk that tests every row, and a walk cut into short pages', async () => {
    for (const q of QUERIES) {
      const want = expected((t) => matchesText(t, q))
      LIST_BOUNDS.textMatches = -1 // never the index
      expect(await ids(`q=${encodeURIComponent(q)}`, 2)).toEqual(want)
      LIST_BOUNDS.walk = 3
      expect(await ids(`q=${encodeURIComponent(q)}`, 2)).toEqual(want)
      Object.assign(LIST_BOUNDS, DEFAULT_BOUNDS)
    }
  })

  test('a page cut short by the bound says so: fewer items than asked, hasMore and a cursor after the rows it tested', async () => {
    LIST_BOUNDS.textMatches = -1
    LIST_BOUNDS.walk = 4
    const res = await server.request('GET', '/v1/transactions?q=zzz&limit=50', { key: owner.key })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ data: [], hasMore: true })
    expect(typeof res.json.nextCursor).toBe('string')
    // Walked to the end: every page short or empty, and the last one says there is no more.
    let pages = 0
    let cursor: string | null = res.json.nextCursor
    while (cursor) {
      const next = await server.request('GET', `/v1/transactions?q=zzz&limit=50&cursor=${cursor}`, { key: owner.key })
      expect(next.json.data).toEqual([])
      cursor = next.json.nextCursor
      pages++
    }
    expect(pages).toBe(Math.ceil(all.size / 4) - 1)
  })

  test('combines with the other filters', async () => {
    const cafe = payees['Café Central'].id
    const cases: [string, (t: Json) => boolean][] = [
      [`accountId=${accounts[0]}`, (t) => t.accountId === accounts[0] || t.transferToAccountId === accounts[0]],
      ['categoryId=none', uncategorized],
      ['categoryId=cat_sys_groceries', (t) => t.categoryId === 'cat_sys_groceries' || t.splits.some((leg: Json) => leg.categoryId === 'cat_sys_groceries')],
      [`payeeId=${cafe}`, (t) => t.payeeId === cafe],
      ['from=2026-03-01', (t) => t.date >= '2026-03-01'],
      ['maxAmount=5', (t) => units(t.amount) <= units(5)],
    ]
    for (const q of ['cafe', 'co', 'mom', 'ping']) {
      for (const [query, predicate] of cases) {
        const want = expected((t) => matchesText(t, q) && predicate(t))
        expect({ q, query, ids: await ids(`q=${q}&${query}`, 1) }).toEqual({ q, query, ids: want })
        LIST_BOUNDS.textMatches = -1
        LIST_BOUNDS.walk = 2
        expect({ q, query, ids: await ids(`q=${q}&${query}`, 1) }).toEqual({ q, query, ids: want })
        Object.assign(LIST_BOUNDS, DEFAULT_BOUNDS)
      }
    }
  })

  // Pins CONTRACT §9's bound on a second id filter: a payee's walk that tests the account on each
  // row (or a category's that tests the payee, …) stops after LIST_BOUNDS.walk rows, and following
  // nextCursor still gives exactly every match.
  test('two id filters at once: the same answer with the bound at 2 rows a walk as without it', async () => {
    const cafe = payees['Café Central'].id
    const pingo = payees['Pingo Doce'].id
    const [first, second] = accounts as [string, string]
    const onAccount = (id: string) => (t: Json) => t.accountId === id || t.transferToAccountId === id
    const ofPayee = (id: string) => (t: Json) => t.payeeId === id || t.splits.some((leg: Json) => leg.payeeId === id)
    const inCategory = (id: string) => (t: Json) => t.categoryId === id || t.splits.some((leg: Json) => leg.categoryId === id)
    const cases: [string, (t: Json) => boolean][] = [
      [`payeeId=${cafe}&accountId=${first}`, (t) => ofPayee(cafe)(t) && onAccount(first)(t)],
      [`payeeId=${pingo}&accountId=${second}`, (t) => ofPayee(pingo)(t) && onAccount(second)(t)],
      [`categoryId=cat_sys_groceries&payeeId=${pingo}`, (t) => inCategory('cat_sys_groceries')(t) && ofPayee(pingo)(t)],
      [`categoryId=${custom}&accountId=${first}`, (t) => inCategory(custom)(t) && onAccount(first)(t)],
      [`categoryId=none&accountId=${second}`, (t) => uncategorized(t) && onAccount(second)(t)],
      [
        `accountId=${first}&from=2026-02-01&to=2026-03-05&payeeId=${cafe}`,
        (t) => onAccount(first)(t) && ofPayee(cafe)(t) && t.date >= '2026-02-01' && t.date <= '2026-03-05',
      ],
    ]
    for (const [query, predicate] of cases) {
      const want = expected(predicate)
      expect({ query, ids: await ids(query, 1) }).toEqual({ query, ids: want })
      LIST_BOUNDS.walk = 2
      expect({ query, ids: await ids(query, 1) }).toEqual({ query, ids: want })
      expect({ query, ids: await ids(query, 3) }).toEqual({ query, ids: want })
      Object.assign(LIST_BOUNDS, DEFAULT_BOUNDS)
    }
    // A walk cut short says so: the account has no Café rows among the payee's first 2, an empty page with more to come.
    LIST_BOUNDS.walk = 2
    const short = await server.request('GET', `/v1/transactions?payeeId=${cafe}&accountId=${second}&limit=50`, { key: owner.key })
    expect(short.json).toMatchObject({ data: [], hasMore: true })
  })

  test('follows every write: a changed note, changed legs, a deletion, a renamed payee', async () => {
    const t = await txn({ note: 'Quarterly Dentist' })
    expect(await ids('q=dentist')).toEqual([t.id])
    all.set(t.id, await patchTxn(server, owner.key, t.id, { note: 'orthodontist' }))
    expect(await ids('q=quarterly')).toEqual([])
    expect(await ids('q=orthodontist')).toEqual([t.id])
    all.set(t.id, await patchTxn(server, owner.key, t.id, { amount: 10, splits: [{ amount: 5, note: 'Brace' }, { amount: 5 }] }))
    expect(await ids('q=brace')).toEqual([t.id])
    all.set(t.id, await patchTxn(server, owner.key, t.id, { note: null, splits: [] }))
    expect(await ids('q=brace')).toEqual([])
    expect(await ids('q=orthodontist')).toEqual([])
    const u = await txn({ note: 'dentist again' })
    expect((await server.request('DELETE', `/v1/transactions/${u.id}`, { key: owner.key })).status).toBe(200)
    all.delete(u.id)
    expect(await ids('q=dentist')).toEqual([])
    // A payee is searched by its name as it is now.
    const payee = payees['Pingo Doce']
    const renamed = await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { name: 'Mercado Novo' } })
    payees['Pingo Doce'] = renamed.json.data
    expect(await ids('q=pingo')).toEqual(expected((t) => matchesText(t, 'pingo')))
    expect(await ids('q=mercado')).toEqual(expected((t) => matchesText(t, 'mercado')))
    expect((await ids('q=mercado')).length).toBeGreaterThan(0)
    expectIndexInStep()
  })

  test('writes rolled back leave nothing in the index: a dry run, a refused bulk update, a refused batch', async () => {
    const dry = await server.request('POST', '/v1/transactions/batch', {
      key: owner.key,
      body: { dryRun: true, items: [{ externalId: 'dry-1', accountId: accounts[0], amount: 1, date: '2026-05-01', note: 'phantom dry run' }] },
    })
    expect(dry.status).toBe(200)
    const [first] = [...all.values()]
    const bulk = await server.request('POST', '/v1/transactions/bulk-update', {
      key: owner.key,
      body: {
        items: [
          { transactionId: first.id, patch: { note: 'phantom bulk' } },
          { transactionId: 'txn_gone', patch: { note: 'x' } },
        ],
      },
    })
    expect(bulk.status).toBe(422)
    const batch = await server.request('POST', '/v1/transactions/batch', {
      key: owner.key,
      body: {
        items: [
          { externalId: 'b-1', accountId: accounts[0], amount: 1, date: '2026-05-01', note: 'phantom batch' },
          { externalId: 'b-2', accountId: 'acct_gone', amount: 1, date: '2026-05-01' },
        ],
      },
    })
    expect(batch.status).toBe(422)
    expect(await ids('q=phantom')).toEqual([])
    expectIndexInStep()
  })

  test('a file whose search text is missing or of an older version is filled before its first search', async () => {
    const want = expected((t) => matchesText(t, 'cafe'))
    const db = server.platform.tenants.get(owner.id).sqlite
    db.run('DELETE FROM transaction_search')
    db.run('DELETE FROM search_state')
    // As the file of an earlier pfin would be opened: afresh.
    server.platform.tenants.evict(owner.id)
    expect(await ids('q=cafe')).toEqual(want)
    const filled = server.platform.tenants.get(owner.id).sqlite
    expect(filled.query('SELECT version FROM search_state').get()).toEqual({ version: 1n })
    // The fill sets the index's triggers aside and makes them again: later writes are found, and the index agrees with its table.
    const t = await txn({ note: 'after the fill' })
    expect(await ids('q=after%20the%20fill')).toEqual([t.id])
    expect(filled.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'transaction_search'").get()).toEqual({ n: 3n })
    expectIndexInStep()
  })

  test('refused: empty, too long, only spaces or marks', async () => {
    for (const q of ['', ' ', '%CC%81', 'x'.repeat(201)]) {
      const problem = expectProblem(await server.request('GET', `/v1/transactions?q=${q}`, { key: owner.key }), 422, 'validation_failed')
      expect(problem.detail).toContain("'q'")
    }
  })

  test('quotes and FTS syntax are text, nothing more', async () => {
    const t = await txn({ note: 'say "hello" OR NOT* near(x)' })
    for (const q of ['"hello"', 'OR NOT*', 'near(x)', '"', '*']) expect({ q, ids: await ids(`q=${encodeURIComponent(q)}`) }).toEqual({ q, ids: [t.id] })
  })

  test('a NUL in q is searched for, not a 500 (FTS5 cannot take one: the row-by-row test does)', async () => {
    // Found by the fuzz test: q=%00%EF%AC%81 (a NUL and the ligature ﬁ) → 500.
    const t = await txn({ note: 'odd \u0000fine text' })
    expect(await ids('q=%00%EF%AC%81')).toEqual([t.id])
    expect(await ids('q=%00zz')).toEqual([])
    expectIndexInStep()
  })
})

describe('minAmount and maxAmount', () => {
  test('inclusive, exact to 10⁻⁸, in the sign convention (income negative)', async () => {
    const cases: [string, (a: bigint) => boolean][] = [
      ['minAmount=10', (a) => a >= units(10)],
      ['maxAmount=10', (a) => a <= units(10)],
      ['minAmount=0.00000001', (a) => a >= 1n],
      ['maxAmount=-0.00000001', (a) => a <= -1n],
      ['minAmount=-0.00000001&maxAmount=0.00000001', (a) => a >= -1n && a <= 1n],
      ['minAmount=3.5&maxAmount=3.5', (a) => a === units(3.5)],
      ['minAmount=42.42&maxAmount=800', (a) => a >= units(42.42) && a <= units(800)],
      ['maxAmount=-100', (a) => a <= units(-100)],
      ['minAmount=10&maxAmount=5', () => false],
      ['minAmount=92233720368', (a) => a >= units(92233720368)],
    ]
    for (const [query, predicate] of cases) {
      const want = expected((t) => predicate(units(t.amount)))
      expect({ query, ids: await ids(query) }).toEqual({ query, ids: want })
      LIST_BOUNDS.walk = 3
      expect({ query, ids: await ids(query, 2) }).toEqual({ query, ids: want })
      Object.assign(LIST_BOUNDS, DEFAULT_BOUNDS)
    }
    expect(await ids('minAmount=-0.00000001&maxAmount=0.00000001')).toHaveLength(2)
  })

  test('refused: not a plain decimal, more than 8 decimals, out of range', async () => {
    for (const [query, words] of [
      ['minAmount=1e3', 'minAmount'],
      ['maxAmount=12.123456789', 'at most 8 decimal places'],
      ['minAmount=92233720369', 'between'],
      ['maxAmount=abc', 'maxAmount'],
      ['minAmount=', 'minAmount'],
      ['minAmount=+5', 'minAmount'],
    ] as const) {
      const problem = expectProblem(await server.request('GET', `/v1/transactions?${query}`, { key: owner.key }), 422, 'validation_failed')
      expect(problem.detail).toContain(words)
    }
  })
})
