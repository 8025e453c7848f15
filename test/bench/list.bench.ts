import { Database } from 'bun:sqlite'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { encodeCursor } from '../../src/platform/pagination.ts'
import type { Benchmark } from './benchmark.ts'
import { getOnce, postOnce } from './keyed-load.ts'
import {
  bareTenantDir,
  Cleanup,
  describe,
  fmt,
  loadEach,
  type LoadResult,
  makeOwnerAndKey,
  seededRandom,
  settings,
  spawnServer,
  startPfin,
  startTenantBaseline,
  tempDir,
  threeWayRounds,
  warm,
} from './support.ts'
import { report } from './me.bench.ts'

/**
 * `GET /v1/transactions?limit=50` (the newest 50) for an owner with 10,000 transactions and
 * one with 1,000,000, one connection, p50/p99 from the load generator, for every filter and
 * combination the list offers (issue 29). Target for each: p50(1M) / p50(10k) ≤ 1.5.
 *
 * Then throughput: the newest 50 of the 10,000 at BENCH_CONNECTIONS, in the same rounds, against
 * `tenant-baseline.ts` (a bare `Bun.serve` + bun:sqlite answering the newest 50 rows of a copy
 * of the same file as JSON) and against the stack's floor, `list-floor.ts` (Elysia answering the
 * same page with pfin's own page code and the same headers, checking nothing). Targets: pfin ≥ 0.6
 * × the bare server's req/s, and ≥ 0.95 × the floor's. Server CPU per request is printed beside
 * them: it stays put on a machine busy with other work, where requests/s swing by a factor of two.
 *
 * Owners, accounts and payees are made through the CLI and the API; the transactions are
 * written straight into each owner's tenant file with bun:sqlite while the server is stopped
 * (one transaction, one prepared statement), with account balances and payee aggregates
 * brought in line, so the files look as if the API had written them.
 */

const TARGET = 1.5
/** A category no transaction has of its own: the page filtered by it is found through legs only. */
const LEG_CATEGORY = 'cat_sys_gifts_donations'
const THROUGHPUT_TARGET = 0.6
/** The two ledgers; LIST_BIG makes the big one smaller for a quick look (the figures then say nothing of scale). */
const SIZES = [10_000, Number(process.env.LIST_BIG ?? 1_000_000)] as const
const YEARS = 10
const DAY_MS = 86_400_000

export interface Owner {
  label: string
  size: number
  ownerId: string
  key: string
  accounts: [string, string]
  payees: string[]
  tags: string[]
}

interface SeedResult {
  seconds: number
  bytes: number
  /** The cursor after the row half way down the newest-first order. */
  deepCursor: string
  newestId: string
}

/**
 * Writes `count` transactions into a tenant file: time-ordered `txn_` ids, dates over the last
 * ten years in recording order (5% entered up to 30 days late), 90% expenses, 8% income,
 * 2% transfers between the two accounts; most with a category, 60% with a payee, some with
 * an externalId, a note or a time; 5% of the expenses split into 2–3 legs (one of them in
 * LEG_CATEGORY), 10% of all with a tag (half of those the first tag).
 */
export function seed(path: string, owner: Owner, count: number): SeedResult {
  const started = performance.now()
  const db = new Database(path, { strict: true })
  try {
    // A bulk load into a file nobody else has open: a rollback journal (no second copy of every
    // page through the WAL), no fsync until the end. The file goes back to WAL before pfin opens it.
    db.run('PRAGMA journal_mode = DELETE')
    db.run('PRAGMA synchronous = OFF')
    db.run('PRAGMA cache_size = -1000000')
    db.run('PRAGMA foreign_keys = ON')
    const categories = db
      .query<{ id: string; type: 'expense' | 'income' }, []>(
        `SELECT id, type FROM categories WHERE is_system = 1 AND parent_id IS NOT NULL AND type IS NOT NULL AND (countries IS NULL OR countries LIKE '%"DE"%') ORDER BY id`,
      )
      .all()
    const expenseCategories = categories.filter((c) => c.type === 'expense').map((c) => c.id)
    const incomeCategories = categories.filter((c) => c.type === 'income').map((c) => c.id)
    if (!expenseCategories.length || !incomeCategories.length) throw new Error('no system categories in the tenant file')

    const insert = db.query(
      `INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at, has_splits, has_tags, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?13, ?, ?, ?13)`,
    )
    const insertLeg = db.query(
      'INSERT INTO transaction_splits (id, transaction_id, position, amount, category_id, payee_id, note, date, created_at) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?)',
    )
    const insertTag = db.query('INSERT INTO transaction_tags (transaction_id, tag_id, position, date, created_at) VALUES (?, ?, 0, ?, ?)')
    const tagCounts = new Map<string, number>(owner.tags.map((id) => [id, 0]))
    const rnd = seededRandom(count)
    const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)] as T
    const hex = (value: number, width: number) => value.toString(16).padStart(width, '0')
    const end = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())
    const days = Math.round(YEARS * 365.25)
    const start = end - days * DAY_MS
    const dates = Array.from({ length: days + 1 }, (_, d) => new Date(start + d * DAY_MS).toISOString().slice(0, 10))
    const balances = new Map<string, bigint>(owner.accounts.map((id) => [id, 0n]))
    const payeeStats = new Map<string, { count: number; spent: bigint }>(owner.payees.map((id) => [id, { count: 0, spent: 0n }]))
    const [accountA, accountB] = owner.accounts

    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        // Recorded in order over the ten years, into the afternoon of its day.
        const createdAt = start + Math.floor(((i + 0.5) * days * DAY_MS) / count)
        let day = Math.floor((createdAt - start) / DAY_MS)
        if (rnd() < 0.05) day = Math.max(0, day - Math.floor(rnd() * 30))
        const id = `txn_${hex(createdAt, 12)}7${hex(i & 0xfff, 3)}${'89ab'[i & 3]}${hex(Math.floor(rnd() * 2 ** 28), 7)}${hex(i, 8)}`
        const kind = rnd()
        const source = rnd() < 0.7 ? accountA : accountB
        const isTransfer = kind >= 0.98
        const income = !isTransfer && kind >= 0.9
        const cents = income ? 50_000 + Math.floor(rnd() * 450_000) : 50 + Math.floor(rnd() ** 2 * 20_000)
        const amount = BigInt(cents) * 1_000_000n * (income ? -1n : 1n)
        const destination = isTransfer ? (source === accountA ? accountB : accountA) : null
        const split = !isTransfer && !income && rnd() < 0.05
        const categoryId = isTransfer || split ? null : income ? (rnd() < 0.9 ? pick(incomeCategories) : null) : rnd() < 0.85 ? pick(expenseCategories) : null
        const tagId = rnd() < 0.1 ? (rnd() < 0.5 ? owner.tags[0] : pick(owner.tags)) : null
        const payeeId = !isTransfer && rnd() < 0.6 ? pick(owner.payees) : null
        const externalId = rnd() < 0.2 ? `import-${String(i).padStart(8, '0')}` : null
        const note = rnd() < 0.1 ? `note ${i}` : null
        const time = rnd() < 0.3 ? `${String(Math.floor(rnd() * 24)).padStart(2, '0')}:${String(Math.floor(rnd() * 60)).padStart(2, '0')}` : null
        insert.run(
          id,
          externalId,
          source,
          categoryId,
          payeeId,
          amount,
          dates[day] as string,
          note,
          time,
          isTransfer ? 1 : 0,
          destination,
          isTransfer ? amount : null,
          createdAt,
          split ? 1 : 0,
          tagId ? 1 : 0,
        )
        if (split) {
          // 2 or 3 legs that sum exactly to the amount, the first in LEG_CATEGORY.
          const legs = cents >= 3 && rnd() < 0.5 ? 3 : 2
          const first = BigInt(Math.max(1, Math.floor(cents / legs))) * 1_000_000n
          const second = legs === 3 ? first : amount - first
          insertLeg.run(`spl_${id.slice(4, 32)}0001`, id, 0, first, LEG_CATEGORY, dates[day] as string, createdAt)
          insertLeg.run(`spl_${id.slice(4, 32)}0002`, id, 1, second, pick(expenseCategories), dates[day] as string, createdAt)
          if (legs === 3) insertLeg.run(`spl_${id.slice(4, 32)}0003`, id, 2, amount - first - second, pick(expenseCategories), dates[day] as string, createdAt)
        }
        if (tagId) {
          insertTag.run(id, tagId, dates[day] as string, createdAt)
          tagCounts.set(tagId, (tagCounts.get(tagId) ?? 0) + 1)
        }

        // The effects pfin applies on create (CONTRACT §4): an expense lowers the source, a transfer credits the destination.
        balances.set(source, (balances.get(source) ?? 0n) - amount)
        if (destination) balances.set(destination, (balances.get(destination) ?? 0n) + amount)
        if (payeeId) {
          const stats = payeeStats.get(payeeId) as { count: number; spent: bigint }
          stats.count += 1
          if (amount > 0n) stats.spent += amount
        }
      }
      const moveBalance = db.query('UPDATE accounts SET balance = balance + ? WHERE id = ?')
      for (const [id, delta] of balances) moveBalance.run(delta, id)
      const setStats = db.query('UPDATE payees SET transaction_count = transaction_count + ?, total_spent = total_spent + ? WHERE id = ?')
      for (const [id, stats] of payeeStats) setStats.run(stats.count, stats.spent, id)
      const setCount = db.query('UPDATE tags SET transaction_count = ? WHERE id = ?')
      for (const [id, count] of tagCounts) setCount.run(count, id)
    }).immediate()

    const rows = Number(db.query<{ n: number | bigint }, []>('SELECT count(*) AS n FROM transactions').get()?.n)
    if (rows !== count) throw new Error(`seeded ${rows} rows, expected ${count}`)
    const order = 'ORDER BY date DESC, created_at DESC, id DESC'
    const newest = db.query<{ id: string }, []>(`SELECT id FROM transactions ${order} LIMIT 1`).get()
    const middle = db
      .query<{ date: string; created_at: number | bigint; id: string }, [number]>(`SELECT date, created_at, id FROM transactions ${order} LIMIT 1 OFFSET ?`)
      .get(Math.floor(count / 2))
    if (!newest || !middle) throw new Error('no rows after seeding')
    db.run('PRAGMA journal_mode = WAL')
    const bytes = Number(db.query<{ n: number | bigint }, []>('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').get()?.n)
    return {
      seconds: (performance.now() - started) / 1000,
      bytes,
      deepCursor: encodeCursor([middle.date, Number(middle.created_at), middle.id]),
      newestId: newest.id,
    }
  } finally {
    db.close(false)
  }
}

export const benchmark: Benchmark = {
  name: 'list',
  description: `GET /v1/transactions?limit=50 (newest 50) at 10k and 1M transactions, 1 connection; target p50 ratio 1M/10k ≤ ${TARGET}`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const dataDir = cleanup.dir(tempDir())
      const owners: Owner[] = []
      for (const size of SIZES) {
        const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`
        const { ownerId, key } = await makeOwnerAndKey(dataDir, `Bench ${label}`)
        owners.push({ label, size, ownerId, key, accounts: ['', ''], payees: [], tags: [] })
      }

      // Accounts and payees through the API, so their rows are exactly what pfin writes.
      const setup = await startPfin(dataDir)
      cleanup.add(() => setup.stop())
      for (const owner of owners) {
        const a = await postOnce(setup.url, owner.key, '/v1/accounts', { name: 'Checking', type: 'bank', balance: 5000, currency: 'EUR' })
        const b = await postOnce(setup.url, owner.key, '/v1/accounts', { name: 'Card', type: 'card', balance: 0, currency: 'EUR' })
        owner.accounts = [a.id, b.id]
        for (let i = 0; i < 20; i++) owner.payees.push((await postOnce(setup.url, owner.key, '/v1/payees', { name: `Shop ${i + 1}` })).id)
        for (const name of ['Lisbon 2026', 'Work', 'Claims']) owner.tags.push((await postOnce(setup.url, owner.key, '/v1/tags', { name })).id)
      }
      const code = await setup.stop()
      if (code !== 0) throw new Error(`pfin exited ${code} on SIGTERM`)

      const seeded = new Map<Owner, SeedResult>()
      for (const owner of owners) {
        const result = seed(join(dataDir, 'tenants', `${owner.ownerId}.db`), owner, owner.size)
        seeded.set(owner, result)
        console.log(
          `seeded ${owner.size.toLocaleString('en-US')} transactions in ${result.seconds.toFixed(1)} s (file ${(result.bytes / 2 ** 20).toFixed(0)} MiB)`,
        )
      }

      // The baseline reads a copy of the 10k file, taken before pfin opens (and migrates or writes) it.
      const small = owners[0] as Owner
      const bareDir = bareTenantDir(cleanup)
      copyFileSync(join(dataDir, 'tenants', `${small.ownerId}.db`), join(bareDir, 'tenants', 'bare.db'))
      // The floor opens its own copy, under the owner's id, as pfin's registry names files.
      const floorDir = cleanup.dir(tempDir('pfin-bench-floor-'))
      mkdirSync(join(floorDir, 'tenants'))
      copyFileSync(join(dataDir, 'tenants', `${small.ownerId}.db`), join(floorDir, 'tenants', `${small.ownerId}.db`))

      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())

      const variants: { name: string; query: (o: Owner) => string; short?: boolean }[] = [
        { name: 'newest 50', query: () => 'limit=50' },
        { name: 'accountId, newest 50', query: (o: Owner) => `limit=50&accountId=${o.accounts[1]}` },
        { name: 'tagId, newest 50', query: (o: Owner) => `limit=50&tagId=${o.tags[0]}` },
        { name: 'category through legs, newest 50', query: () => `limit=50&categoryId=${LEG_CATEGORY}` },
        { name: 'deep page (cursor at 50%)', query: (o: Owner) => `limit=50&cursor=${(seeded.get(o) as SeedResult).deepCursor}` },
        // CONTRACT §26: the uncategorized walk their partial indexes; `q` with few matches reads
        // them through the FTS5 index, with many it walks (10% of rows have "note …"; "Shop 7" and
        // "Shop 17" name 6% of them); an amount bound walks too, at most 10,000 rows a page.
        { name: 'categoryId=none, newest 50', query: () => 'limit=50&categoryId=none' },
        { name: 'q, few matches (index)', query: () => 'limit=50&q=note%204242', short: true },
        { name: 'q, many matches (walk)', query: () => 'limit=50&q=note' },
        { name: 'q, a payee name', query: () => 'limit=50&q=shop%207' },
        { name: 'minAmount, newest 50', query: () => 'limit=50&minAmount=150' },
        // CONTRACT §9: a second id filter is tested on the rows of the first's walk, at most 10,000 a page.
        { name: 'payeeId + accountId', query: (o: Owner) => `limit=50&payeeId=${o.payees[6]}&accountId=${o.accounts[1]}` },
        { name: 'categoryId + payeeId', query: (o: Owner) => `limit=50&categoryId=${LEG_CATEGORY}&payeeId=${o.payees[3]}`, short: true },
      ]
      const options = (variant: (typeof variants)[number], owner: Owner) => ({
        url: `${pfin.url}/v1/transactions?${variant.query(owner)}`,
        headers: { authorization: `Bearer ${owner.key}` },
        connections: 1,
      })
      // Check every page, then warm every one of them first, so no run pays for the server's JIT or a cold file.
      for (const variant of variants) {
        for (const owner of owners) {
          const page = await getOnce(pfin.url, owner.key, `/v1/transactions?${variant.query(owner)}`)
          if (!variant.short && (page.data.length !== 50 || page.hasMore !== true))
            throw new Error(`${variant.name} (${owner.label}): ${page.data.length} items, hasMore ${page.hasMore}`)
          if (variant.name === 'newest 50' && page.data[0].id !== seeded.get(owner)?.newestId)
            throw new Error(`newest 50 (${owner.label}) does not start with the newest row`)
          if (variant.name.startsWith('tagId') && !page.data.every((t: { tagIds: string[] }) => t.tagIds.includes(owner.tags[0] as string)))
            throw new Error(`tagId (${owner.label}): a row without the tag`)
          if (
            variant.name.startsWith('category through legs') &&
            !page.data.every((t: { splits: { categoryId: string }[] }) => t.splits.some((leg) => leg.categoryId === LEG_CATEGORY))
          )
            throw new Error(`category through legs (${owner.label}): a row without such a leg`)
          await warm(options(variant, owner))
        }
      }
      const results = await loadEach(variants, owners, options)

      console.log(`load: ${results.values().next().value?.tool}; latency measured by the load generator`)
      let headline = ''
      const ratios = new Map<string, number>()
      for (const variant of variants) {
        const [small, big] = owners.map((o) => results.get(`${variant.name}/${o.label}`) as LoadResult) as [LoadResult, LoadResult]
        const [smallOwner, bigOwner] = owners as [Owner, Owner]
        console.log(`${describe(`${variant.name}, ${smallOwner.label}`, small)}   (${small.requests} requests)`)
        console.log(`${describe(`${variant.name}, ${bigOwner.label}`, big)}   (${big.requests} requests)`)
        const ratio = big.latencyMs.p50 / small.latencyMs.p50
        console.log(
          `  ratio ${bigOwner.label}/${smallOwner.label}: p50 ${fmt.ratio(ratio)} (target ≤ ${TARGET}), p99 ${fmt.ratio(big.latencyMs.p99 / small.latencyMs.p99)}`,
        )
        ratios.set(variant.name, ratio)
        if (variant.name === 'newest 50') {
          headline = `newest 50: p50 ${fmt.ms(small.latencyMs.p50)} (${smallOwner.label}) vs ${fmt.ms(big.latencyMs.p50)} (${bigOwner.label}), ratio ${fmt.ratio(ratio)}`
        }
      }

      const baseline = await startTenantBaseline(cleanup, bareDir)
      const barePage = (await (await fetch(`${baseline.url}/v1/transactions?owner=bare&limit=50`)).json()) as { data: { id: string }[] }
      if (barePage.data.length !== 50 || barePage.data[0]?.id !== seeded.get(small)?.newestId) throw new Error('the baseline does not answer the same page')
      const floor = await spawnServer(['bun', join(import.meta.dir, 'list-floor.ts')], { DATA_DIR: floorDir, OWNER: small.ownerId }, 'floor')
      cleanup.add(() => floor.stop())
      const headers = { authorization: `Bearer ${small.key}` }
      const [floorPage, pfinPage] = await Promise.all(
        [floor.url, pfin.url].map(async (url) => (await fetch(`${url}/v1/transactions?limit=50`, { headers })).text()),
      )
      if (floorPage !== pfinPage) throw new Error('the floor does not answer the same page as pfin')
      console.log(`\nthroughput, newest 50 of ${small.label}, ${settings.connections} connections:`)
      const path = '/v1/transactions?limit=50'
      const figures = await threeWayRounds({
        bare: { url: `${baseline.url}/v1/transactions?owner=bare&limit=50`, headers, pid: baseline.proc.pid },
        floor: { url: `${floor.url}${path}`, headers, pid: floor.proc.pid },
        pfin: { url: `${pfin.url}${path}`, headers, pid: pfin.proc.pid },
      })
      const throughput = report(figures, (pfinPage as string).length, THROUGHPUT_TARGET)

      const seedSeconds = owners.map((o) => `${o.label} ${(seeded.get(o) as SeedResult).seconds.toFixed(1)} s`).join(', ')
      const missed = [...ratios].filter(([, ratio]) => ratio > TARGET).map(([name, ratio]) => `${name} ${fmt.ratio(ratio)}`)
      return {
        targetMet: missed.length === 0 && throughput.targetMet,
        summary: `${headline}; ${ratios.size - missed.length} of ${ratios.size} filter cases ≤ ${TARGET}${missed.length ? ` (over: ${missed.join(', ')})` : ''}; throughput ${throughput.summary}; seeded ${seedSeconds}; ${settings.duration}s per run`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
