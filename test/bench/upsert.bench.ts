import { join } from 'node:path'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { newId } from '../../src/db/ids.ts'
import { openDatabase } from '../../src/db/sqlite.ts'
import type { Benchmark } from './benchmark.ts'
import { describeKeyed, type KeyedLoadOptions, type KeyedLoadResult, keyedLoad, keyedWarm, postOnce } from './keyed-load.ts'
import { Cleanup, fmt, settings, startPfinWithOwner, tempDir } from './support.ts'

/**
 * `POST /v1/transactions/upsert` throughput over HTTP, at 1 and at
 * BENCH_CONNECTIONS (default 16) connections, every request with its own Idempotency-Key:
 *  - update path: the same externalId every time (its balance effect is reversed and re-applied);
 *  - insert path: a new externalId per request.
 * Baseline, "the physical limit": the bare bun:sqlite insert-or-update of the same row into
 * the same table (a file made by the tenant migrations, so same columns, indexes, foreign keys
 * and pragmas: WAL, synchronous=FULL), one transaction per write, in a loop in this process
 * for the same total duration, half right before and half right after each HTTP run. No target is set by the issue;
 * the ratios are reported.
 */

const DATE = '2026-01-15'
const NOTE = 'bench upsert'

interface BaselineResult {
  writes: number
  seconds: number
  rps: number
  pragmas: string
}

/** Bare insert-or-update in a loop: BEGIN IMMEDIATE; INSERT … ON CONFLICT(external_id) DO UPDATE …; COMMIT. */
function sqliteBaseline(path: string, mode: 'update' | 'insert', duration: number): BaselineResult {
  const db = openDatabase(path, { synchronous: 'FULL', migrations })
  try {
    const journal = db.query<{ journal_mode: string }, []>('PRAGMA journal_mode').get()?.journal_mode
    const synchronous = Number(db.query<{ synchronous: number | bigint }, []>('PRAGMA synchronous').get()?.synchronous)
    if (journal !== 'wal' || synchronous !== 2) throw new Error(`baseline file has journal_mode=${journal}, synchronous=${synchronous}`)
    const accountId = newId('acct')
    db.query(
      `INSERT INTO accounts (id, name, type, balance, currency, is_archived, is_liability, is_favourite, show_in_dashboard, is_hidden, custom_fields, created_at)
       VALUES (?, 'Baseline', 'bank', 100000000000, 'EUR', 0, 0, 0, 1, 0, '[]', ?)`,
    ).run(accountId, Date.now())
    const upsert = db.query(
      `INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at)
       VALUES (?, ?, ?, NULL, NULL, ?, ?, ?, NULL, 0, NULL, NULL, NULL, ?)
       ON CONFLICT(external_id) DO UPDATE SET account_id = excluded.account_id, category_id = excluded.category_id, payee_id = excluded.payee_id,
         amount = excluded.amount, date = excluded.date, note = excluded.note, time = excluded.time, is_transfer = excluded.is_transfer,
         transfer_to_account_id = excluded.transfer_to_account_id, destination_amount = excluded.destination_amount, exchange_rate = excluded.exchange_rate`,
    )
    const sameId = newId('txn')
    // The same amounts as the HTTP load's {amount}: (1 + n % 997).(n % 100), in units of 10⁻⁸.
    const write = db.transaction((n: number) => {
      const amount = BigInt(1 + (n % 997)) * 100_000_000n + BigInt(n % 100) * 1_000_000n
      if (mode === 'update') upsert.run(sameId, 'baseline-same', accountId, amount, DATE, NOTE, Date.now())
      else upsert.run(newId('txn'), `baseline-new-${n}`, accountId, amount, DATE, NOTE, Date.now())
    })
    let n = 0
    const loop = (seconds: number): number => {
      const start = n
      const end = performance.now() + seconds * 1000
      while (performance.now() < end) write.immediate(++n)
      return n - start
    }
    loop(settings.warmup)
    const started = performance.now()
    const writes = loop(duration)
    const seconds = (performance.now() - started) / 1000
    const rows = Number(db.query<{ n: number | bigint }, []>('SELECT count(*) AS n FROM transactions').get()?.n)
    const expected = mode === 'update' ? 1 : n
    if (rows !== expected) throw new Error(`baseline ${mode}: ${rows} rows, expected ${expected}`)
    return { writes, seconds, rps: writes / seconds, pragmas: `journal_mode=${journal}, synchronous=FULL` }
  } finally {
    db.close(false)
  }
}

export const benchmark: Benchmark = {
  name: 'upsert',
  description: `POST /v1/transactions/upsert at 1 and ${settings.connections} connections (same externalId = update path; new externalId = insert path) vs a bare bun:sqlite insert-or-update (WAL, synchronous=FULL)`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const baseDir = cleanup.dir(tempDir('pfin-bench-sqlite-'))
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const account = await postOnce(pfin.url, key, '/v1/accounts', { name: 'Bench', type: 'bank', balance: 1000000, currency: 'EUR' })

      const url = `${pfin.url}/v1/transactions/upsert`
      const headers = { authorization: `Bearer ${key}` }
      const fields = `"accountId":"${account.id}","amount":{amount},"date":"${DATE}","note":"${NOTE}"`
      const variants = {
        update: `{"externalId":"bench-same",${fields}}`,
        insert: `{"externalId":"new-{key}",${fields}}`,
      }
      const levels = [...new Set([1, settings.connections])]
      const results: {
        variant: keyof typeof variants
        connections: number
        result: KeyedLoadResult
        base: BaselineResult & { before: number; after: number }
      }[] = []
      let run = 0
      for (const variant of ['update', 'insert'] as const) {
        for (const connections of levels) {
          run += 1
          // The physical limit for half the duration right before and half right after each HTTP run
          // (pfin idle meanwhile), so drift in disk and fsync speed hits both sides alike.
          const before = sqliteBaseline(join(baseDir, `${variant}-${run}-before.db`), variant, settings.duration / 2)
          const options: KeyedLoadOptions = { url, headers, body: variants[variant], keyPrefix: `r${run}-`, connections, duration: settings.duration }
          await keyedWarm(options)
          const result = await keyedLoad(options)
          const expected = variant === 'update' ? '200' : '201'
          const unexpected = Object.keys(result.statuses).filter((status) => status !== expected)
          if (result.non2xx || result.errors || result.replayed || unexpected.length) {
            throw new Error(`invalid run (${variant}, ${connections} connections): ${describeKeyed(variant, result)}`)
          }
          const after = sqliteBaseline(join(baseDir, `${variant}-${run}-after.db`), variant, settings.duration / 2)
          const base = {
            writes: before.writes + after.writes,
            seconds: before.seconds + after.seconds,
            rps: (before.writes + after.writes) / (before.seconds + after.seconds),
            pragmas: before.pragmas,
            before: before.rps,
            after: after.rps,
          }
          results.push({ variant, connections, result, base })
        }
      }

      // The update path kept one row.
      const check = await fetch(`${pfin.url}/v1/transactions?externalId=bench-same`, { headers })
      const same = (await check.json()) as { data: unknown[] }
      if (check.status !== 200 || same.data.length !== 1) throw new Error(`externalId bench-same: ${check.status}, ${same.data?.length} rows`)

      const tool = results[0]?.result.tool.replace(/ -c ?\d+/, '') ?? settings.tool
      console.log(`load: ${tool}; every request a unique Idempotency-Key; statuses counted per response`)
      console.log(
        `baseline: bare bun:sqlite INSERT … ON CONFLICT(external_id) DO UPDATE (update: the same externalId; insert: a new one per write), one transaction per write, ${results[0]?.base.pragmas}, tenant schema; measured for ${settings.duration / 2}s right before and ${settings.duration / 2}s right after each HTTP run`,
      )
      const summary: string[] = []
      for (const { variant, connections, result, base } of results) {
        const ratio = result.rps / base.rps
        console.log(
          `${describeKeyed(`pfin ${variant} c${connections}`, result)}   baseline ${Math.round(base.rps).toLocaleString('en-US')} writes/s (before ${Math.round(base.before).toLocaleString('en-US')}, after ${Math.round(base.after).toLocaleString('en-US')})   ratio ${fmt.ratio(ratio)}`,
        )
        summary.push(`${variant} c${connections} ${fmt.rps(result.rps)} vs ${Math.round(base.rps).toLocaleString('en-US')} writes/s (${fmt.ratio(ratio)})`)
      }
      return { summary: summary.join(', ') }
    } finally {
      await cleanup.run()
    }
  },
}
