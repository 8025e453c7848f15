import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { encodeFeedCursor } from '../../src/modules/changes/cursor.ts'
import type { Benchmark } from './benchmark.ts'
import { getOnce, postOnce } from './keyed-load.ts'
import { Cleanup, describe, fmt, type LoadResult, loadEach, makeOwnerAndKey, settings, startPfin, tempDir, warm } from './support.ts'

/**
 * `GET /v1/changes?limit=500` (the first page of a full sync) for an owner with 10,000 changes
 * and one with 100,000, one connection, p50/p99 from the load generator.
 * Target: p50(100k) / p50(10k) ≤ 1.5. Also measured, without a target: the same page from a
 * cursor half way through the feed, and `resources=payees` (a kind with few changes, spread
 * thin through the feed).
 *
 * Accounts and payees are made through the API; the transactions are written straight into
 * each owner's tenant file with bun:sqlite while the server is stopped, through the schema's
 * own triggers, so the change_log rows are exactly what pfin's writes make (one per
 * transaction, and the accounts and payees moved again at the end, with their totals).
 */

const TARGET = 1.5
const SIZES = [10_000, 100_000] as const
const PAGE = 500

interface Owner {
  label: string
  size: number
  ownerId: string
  key: string
  accounts: string[]
  payees: string[]
  /** A signed cursor at the middle of the feed. */
  middle?: string
}

/** Fills the feed up to `size` changes with transactions written through the triggers. */
function seed(path: string, owner: Owner): { seconds: number; changes: number } {
  const started = performance.now()
  const db = new Database(path, { strict: true })
  try {
    db.run('PRAGMA journal_mode = DELETE')
    db.run('PRAGMA synchronous = OFF')
    db.run('PRAGMA foreign_keys = ON')
    const count = () => Number(db.query<{ n: number | bigint }, []>('SELECT count(*) AS n FROM change_log').get()?.n)
    // The accounts and payees are moved once more at the end: each keeps its one row.
    const toWrite = owner.size - count()
    const insert = db.query(
      `INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at)
       VALUES (?, ?, ?, 'cat_sys_groceries', ?, ?, ?, NULL, NULL, 0, NULL, NULL, NULL, ?)`,
    )
    const hex = (value: number, width: number) => value.toString(16).padStart(width, '0')
    const start = Date.now() - 5 * 365 * 86_400_000
    const balances = new Map<string, bigint>()
    const payees = new Map<string, { count: number; spent: bigint }>()
    db.transaction(() => {
      for (let i = 0; i < toWrite; i++) {
        const createdAt = start + i * 1000
        const account = owner.accounts[i % owner.accounts.length] as string
        const payee = owner.payees[i % owner.payees.length] as string
        const amount = BigInt(100 + ((i * 7919) % 20_000)) * 1_000_000n
        insert.run(
          `txn_${hex(createdAt, 12)}7${hex(i & 0xfff, 3)}8${hex(i, 15)}`,
          i % 5 === 0 ? `bank-${i}` : null,
          account,
          payee,
          amount,
          new Date(createdAt).toISOString().slice(0, 10),
          createdAt,
        )
        balances.set(account, (balances.get(account) ?? 0n) - amount)
        const totals = payees.get(payee) ?? { count: 0, spent: 0n }
        totals.count += 1
        totals.spent += amount
        payees.set(payee, totals)
      }
      const move = db.query('UPDATE accounts SET balance = balance + ? WHERE id = ?')
      for (const [id, delta] of balances) move.run(delta, id)
      const totals = db.query('UPDATE payees SET transaction_count = transaction_count + ?, total_spent = total_spent + ? WHERE id = ?')
      for (const [id, t] of payees) totals.run(t.count, t.spent, id)
    }).immediate()
    const changes = count()
    if (changes !== owner.size) throw new Error(`${owner.label}: ${changes} changes, expected ${owner.size}`)
    // A signed cursor half way through, as GET /v1/changes would have handed out.
    const state = db
      .query<{ epoch: string; secret: string; purged_seq: number | bigint }, []>('SELECT epoch, secret, purged_seq FROM feed_state WHERE id = 1')
      .get()
    const middle = db.query<{ seq: number | bigint }, [number]>('SELECT seq FROM change_log ORDER BY seq LIMIT 1 OFFSET ?').get(Math.floor(changes / 2))
    if (!state || !middle) throw new Error('no feed state after seeding')
    owner.middle = encodeFeedCursor(owner.ownerId, { epoch: state.epoch, secret: state.secret, purgedSeq: Number(state.purged_seq) }, Number(middle.seq))
    db.run('PRAGMA journal_mode = WAL')
    return { seconds: (performance.now() - started) / 1000, changes }
  } finally {
    db.close(false)
  }
}

export const benchmark: Benchmark = {
  name: 'changes',
  description: `GET /v1/changes?limit=${PAGE} (first page of a full sync) at 10k and 100k changes, 1 connection; target p50 ratio 100k/10k ≤ ${TARGET}`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const dataDir = cleanup.dir(tempDir())
      const owners: Owner[] = []
      for (const size of SIZES) {
        const label = `${size / 1000}k`
        const { ownerId, key } = await makeOwnerAndKey(dataDir, `Bench ${label}`)
        owners.push({ label, size, ownerId, key, accounts: [], payees: [] })
      }
      const setup = await startPfin(dataDir)
      cleanup.add(() => setup.stop())
      for (const owner of owners) {
        for (const name of ['Checking', 'Card', 'Savings'])
          owner.accounts.push((await postOnce(setup.url, owner.key, '/v1/accounts', { name, type: 'bank', balance: 5000, currency: 'EUR' })).id)
        for (let i = 0; i < 30; i++) owner.payees.push((await postOnce(setup.url, owner.key, '/v1/payees', { name: `Shop ${i + 1}` })).id)
      }
      const code = await setup.stop()
      if (code !== 0) throw new Error(`pfin exited ${code} on SIGTERM`)
      for (const owner of owners) {
        const seeded = seed(join(dataDir, 'tenants', `${owner.ownerId}.db`), owner)
        console.log(`seeded ${owner.label}: ${seeded.changes.toLocaleString('en-US')} changes in ${seeded.seconds.toFixed(1)} s`)
      }

      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())
      const variants = [
        { name: `first page (limit=${PAGE})`, query: () => `limit=${PAGE}` },
        { name: 'from a cursor half way', query: (o: Owner) => `limit=${PAGE}&cursor=${o.middle}` },
        { name: 'resources=payees', query: () => `limit=${PAGE}&resources=payees` },
      ]
      const options = (variant: (typeof variants)[number], owner: Owner) => ({
        url: `${pfin.url}/v1/changes?${variant.query(owner)}`,
        headers: { authorization: `Bearer ${owner.key}` },
        connections: 1,
      })
      for (const variant of variants) {
        for (const owner of owners) {
          const page = await getOnce(pfin.url, owner.key, `/v1/changes?${variant.query(owner)}`)
          const full = variant.name !== 'resources=payees'
          if ((full && (page.data.length !== PAGE || page.hasMore !== true)) || (!full && page.data.length !== owner.payees.length)) {
            throw new Error(`${variant.name} (${owner.label}): ${page.data.length} changes, hasMore ${page.hasMore}`)
          }
          await warm(options(variant, owner))
        }
      }
      const results = await loadEach(variants, owners, options)
      console.log(`load: ${results.values().next().value?.tool}; latency measured by the load generator`)
      let headline = ''
      let ratioFirst = Number.NaN
      for (const [index, variant] of variants.entries()) {
        const [small, big] = owners.map((o) => results.get(`${variant.name}/${o.label}`) as LoadResult) as [LoadResult, LoadResult]
        const [smallOwner, bigOwner] = owners as [Owner, Owner]
        console.log(`${describe(`${variant.name}, ${smallOwner.label}`, small)}   (${small.requests} requests)`)
        console.log(`${describe(`${variant.name}, ${bigOwner.label}`, big)}   (${big.requests} requests)`)
        const ratio = big.latencyMs.p50 / small.latencyMs.p50
        console.log(
          `  ratio ${bigOwner.label}/${smallOwner.label}: p50 ${fmt.ratio(ratio)}${index === 0 ? ` (target ≤ ${TARGET})` : ''}, p99 ${fmt.ratio(big.latencyMs.p99 / small.latencyMs.p99)}`,
        )
        if (index === 0) {
          ratioFirst = ratio
          headline = `first page of ${PAGE}: p50 ${fmt.ms(small.latencyMs.p50)} (${smallOwner.label}) vs ${fmt.ms(big.latencyMs.p50)} (${bigOwner.label}), p99 ${fmt.ms(small.latencyMs.p99)} vs ${fmt.ms(big.latencyMs.p99)}, ratio ${fmt.ratio(ratio)}`
        }
      }
      return { targetMet: ratioFirst <= TARGET, summary: `${headline}; ${settings.duration}s per run` }
    } finally {
      await cleanup.run()
    }
  },
}
