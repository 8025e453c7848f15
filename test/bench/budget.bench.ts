import { Database } from 'bun:sqlite'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import type { Benchmark } from './benchmark.ts'
import { getOnce, postOnce } from './keyed-load.ts'
import { Cleanup, describe, fmt, type LoadResult, loadEach, makeOwnerAndKey, settings, startPfin, tempDir } from './support.ts'

/**
 * `GET /v1/budgets/{month}` (CONTRACT §27) for an owner with 10,000 transactions and one with
 * 100,000, one connection, p50/p99 from the load generator. Target: p99 ≤ 50 ms at 100k.
 *
 * The transactions span the last twelve months, so the month measured (last month) holds a
 * twelfth of them: ~830 rows at 10k and ~8,300 at 100k, a heavy month (about 270 a day). They
 * are 88% expenses and 8% income in about thirty categories, 10% without a category, 5% split
 * into 2–3 legs, 2% transfers, and a fifth in a dollar account (reported in otherCurrencies).
 * The month is planned for fifteen categories through the API. Owners and accounts are made
 * through the CLI and the API; the transactions are written straight into each owner's file
 * while the server is stopped, with balances brought in line, as list.bench.ts does.
 */

const TARGET_P99_MS = 50
const SIZES = [10_000, 100_000] as const
const DAYS = 365
const DAY_MS = 86_400_000

/** A small deterministic PRNG (mulberry32), so every run seeds the same data. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Owner {
  label: string
  size: number
  ownerId: string
  key: string
  /** Two euro accounts and a dollar one. */
  accounts: [string, string, string]
}

/** Seeds `count` transactions into the owner's file; returns how many fall in `month` and how long it took. */
export function seed(path: string, owner: Owner, count: number, month: string): { seconds: number; inMonth: number } {
  const started = performance.now()
  const db = new Database(path, { strict: true })
  try {
    db.run('PRAGMA journal_mode = DELETE')
    db.run('PRAGMA synchronous = OFF')
    db.run('PRAGMA foreign_keys = ON')
    const categories = db
      .query<{ id: string; type: 'expense' | 'income' }, []>(
        `SELECT id, type FROM categories WHERE is_system = 1 AND type IS NOT NULL AND (countries IS NULL OR countries LIKE '%"DE"%') ORDER BY id`,
      )
      .all()
    const expense = categories.filter((c) => c.type === 'expense').map((c) => c.id)
    const income = categories.filter((c) => c.type === 'income').map((c) => c.id)
    const insert = db.query(
      `INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at, has_splits, has_tags)
       VALUES (?, NULL, ?, ?, NULL, ?, ?, NULL, NULL, ?, ?, ?, NULL, ?, ?, 0)`,
    )
    const insertLeg = db.query(
      'INSERT INTO transaction_splits (id, transaction_id, position, amount, category_id, payee_id, note, date, created_at) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?)',
    )
    const rnd = random(count)
    const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)] as T
    const hex = (value: number, width: number) => value.toString(16).padStart(width, '0')
    const now = new Date()
    const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())
    const start = end - DAYS * DAY_MS
    const balances = new Map<string, bigint>(owner.accounts.map((id) => [id, 0n]))
    const [checking, card, dollars] = owner.accounts
    let inMonth = 0
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const createdAt = start + Math.floor(((i + 0.5) * DAYS * DAY_MS) / count)
        const date = new Date(createdAt).toISOString().slice(0, 10)
        if (date.startsWith(month)) inMonth++
        const id = `txn_${hex(createdAt, 12)}7${hex(i & 0xfff, 3)}${'89ab'[i & 3]}${hex(Math.floor(rnd() * 2 ** 28), 7)}${hex(i, 8)}`
        const kind = rnd()
        const source = rnd() < 0.2 ? dollars : rnd() < 0.7 ? checking : card
        const isTransfer = kind >= 0.98 && source !== dollars
        const isIncome = !isTransfer && kind >= 0.9
        const cents = isIncome ? 50_000 + Math.floor(rnd() * 450_000) : 50 + Math.floor(rnd() ** 2 * 20_000)
        const amount = BigInt(cents) * 1_000_000n * (isIncome ? -1n : 1n)
        const destination = isTransfer ? (source === checking ? card : checking) : null
        const split = !isTransfer && !isIncome && rnd() < 0.05
        const categoryId = isTransfer || split || rnd() < 0.1 ? null : isIncome ? pick(income) : pick(expense)
        insert.run(id, source, categoryId, amount, date, isTransfer ? 1 : 0, destination, isTransfer ? amount : null, createdAt, split ? 1 : 0)
        if (split) {
          const legs = cents >= 3 && rnd() < 0.5 ? 3 : 2
          const first = BigInt(Math.max(1, Math.floor(cents / legs))) * 1_000_000n
          const second = legs === 3 ? first : amount - first
          insertLeg.run(`spl_${id.slice(4, 32)}0001`, id, 0, first, pick(expense), date, createdAt)
          insertLeg.run(`spl_${id.slice(4, 32)}0002`, id, 1, second, rnd() < 0.2 ? null : pick(expense), date, createdAt)
          if (legs === 3) insertLeg.run(`spl_${id.slice(4, 32)}0003`, id, 2, amount - first - second, pick(expense), date, createdAt)
        }
        balances.set(source, (balances.get(source) ?? 0n) - amount)
        if (destination) balances.set(destination, (balances.get(destination) ?? 0n) + amount)
      }
      const move = db.query('UPDATE accounts SET balance = balance + ? WHERE id = ?')
      for (const [id, delta] of balances) move.run(delta, id)
    }).immediate()
    db.run('PRAGMA journal_mode = WAL')
    return { seconds: (performance.now() - started) / 1000, inMonth }
  } finally {
    db.close(false)
  }
}

/** Last calendar month (UTC): always whole inside the seeded year. */
function lastMonth(): string {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7)
}

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')

export const benchmark: Benchmark = {
  name: 'budget',
  description: `GET /v1/budgets/{month} at 10k and 100k transactions (a twelfth of them in the month), 1 connection; target p99 ≤ ${TARGET_P99_MS} ms at 100k`,
  async run() {
    const cleanup = new Cleanup()
    try {
      console.log(`load average before: ${load()} (${navigator.hardwareConcurrency} cpus)`)
      const month = lastMonth()
      const dataDir = cleanup.dir(tempDir())
      const owners: Owner[] = []
      for (const size of SIZES) {
        const label = `${size / 1000}k`
        const { ownerId, key } = await makeOwnerAndKey(dataDir, `Budget ${label}`)
        owners.push({ label, size, ownerId, key, accounts: ['', '', ''] })
      }
      const setup = await startPfin(dataDir)
      cleanup.add(() => setup.stop())
      for (const owner of owners) {
        const account = (name: string, currency: string) => postOnce(setup.url, owner.key, '/v1/accounts', { name, type: 'bank', balance: 5000, currency })
        owner.accounts = [(await account('Checking', 'EUR')).id, (await account('Card', 'EUR')).id, (await account('Dollars', 'USD')).id]
      }
      const code = await setup.stop()
      if (code !== 0) throw new Error(`pfin exited ${code} on SIGTERM`)

      for (const owner of owners) {
        const seeded = seed(join(dataDir, 'tenants', `${owner.ownerId}.db`), owner, owner.size, month)
        console.log(
          `seeded ${owner.size.toLocaleString('en-US')} transactions in ${seeded.seconds.toFixed(1)} s; ${seeded.inMonth.toLocaleString('en-US')} in ${month}`,
        )
      }

      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())
      const plan = [
        'food_drinks',
        'groceries',
        'restaurants',
        'housing',
        'rent',
        'transport',
        'fuel',
        'health',
        'entertainment',
        'travel',
        'education',
        'bills_fees',
        'gifts_donations',
        'salary',
        'bonus',
      ].map((key, i) => ({ categoryId: `cat_sys_${key}`, planned: key === 'salary' || key === 'bonus' ? -2500 : 100 + i * 25.5 }))
      for (const owner of owners) {
        const response = await fetch(`${pfin.url}/v1/budgets/${month}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ categories: plan }),
        })
        if (response.status !== 200) throw new Error(`PUT budget: ${response.status} ${await response.text()}`)
      }

      const variants = [
        { name: 'month', query: '' },
        { name: 'month, includeUnplanned', query: '?includeUnplanned=true' },
      ]
      for (const variant of variants) {
        for (const owner of owners) {
          const budget = (await getOnce(pfin.url, owner.key, `/v1/budgets/${month}${variant.query}`)).data
          if (budget.categories.length < plan.length || budget.totals.spentExpense <= 0) throw new Error(`${owner.label}: an empty budget`)
          const usd = budget.categories.some((c: { otherCurrencies: { currency: string }[] }) => c.otherCurrencies.some((o) => o.currency === 'USD'))
          if (!usd) throw new Error(`${owner.label}: no dollars in otherCurrencies`)
        }
      }
      const results = await loadEach(variants, owners, (variant, owner) => ({
        url: `${pfin.url}/v1/budgets/${month}${variant.query}`,
        headers: { authorization: `Bearer ${owner.key}` },
        connections: 1,
        pid: pfin.proc.pid,
      }))
      console.log(`load: ${results.values().next().value?.tool}; latency measured by the load generator`)
      for (const variant of variants) {
        for (const owner of owners) {
          const r = results.get(`${variant.name}/${owner.label}`) as LoadResult
          console.log(`${describe(`${variant.name}, ${owner.label}`, r)}   (${r.requests} requests)`)
        }
      }
      const at = (variant: string, label: string) => results.get(`${variant}/${label}`) as LoadResult
      const big = at('month', '100k')
      const small = at('month', '10k')
      const unplanned = at('month, includeUnplanned', '100k')
      console.log(`load average after: ${load()}`)
      return {
        targetMet: big.latencyMs.p99 <= TARGET_P99_MS && unplanned.latencyMs.p99 <= TARGET_P99_MS,
        summary:
          `month: p50 ${fmt.ms(small.latencyMs.p50)} / p99 ${fmt.ms(small.latencyMs.p99)} at 10k, p50 ${fmt.ms(big.latencyMs.p50)} / p99 ${fmt.ms(big.latencyMs.p99)} at 100k ` +
          `(includeUnplanned at 100k: p99 ${fmt.ms(unplanned.latencyMs.p99)}; target p99 ≤ ${TARGET_P99_MS} ms); ${settings.duration}s per run`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
