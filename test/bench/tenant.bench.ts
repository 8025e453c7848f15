import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { newId } from '../../src/db/ids.ts'
import type { Benchmark } from './benchmark.ts'
import { Cleanup, fmt, makeOwnerAndKey, type Service, startPfin, startTenantBaseline, bareTenantDir, tempDir, median } from './support.ts'

/**
 * A never-seen owner's first request: `GET /v1/transactions?limit=50` for an owner
 * the running server has not opened yet. Each owner and key are made with the admin CLI on
 * the server's DATA_DIR while it runs, the owner's tenant file gets one account and 60
 * transactions (written here with bun:sqlite, before the server ever opens it), and the key
 * is verified once through `GET /v1/me` (which reads only control.db), so argon2 is out of
 * the way: the measured request pays for opening, checking and migrating the tenant file,
 * preparing its statements and the page itself.
 *
 * Baseline: `test/bench/tenant-baseline.ts`, a bare `Bun.serve` + bun:sqlite opening a fresh
 * copy of the same file (a pfin tenant file as the CLI made it, seeded alike) with the same
 * pragmas and selecting the newest 50 rows. The two servers take turns per owner (the order
 * alternating); TENANT_OWNERS owners (default 24) after 2 unmeasured ones. Figures: median
 * first-request latency, as the client sees it, and the median of the per-owner ratios.
 * Target: pfin ≤ 2 × the baseline.
 */

const TARGET = 2
const OWNERS = Math.max(1, Number(process.env.TENANT_OWNERS ?? 24))
const WARMUP_OWNERS = 2
export const ROWS = 60

/** One account and ROWS transactions, as the API would have written them (minus balances); returns the account's id. */
export function seed(path: string): string {
  const db = new Database(path, { strict: true })
  try {
    db.run('PRAGMA foreign_keys = ON')
    const accountId = newId('acct')
    const now = Date.now()
    db.transaction(() => {
      db.query(
        `INSERT INTO accounts (id, name, type, balance, currency, is_archived, is_liability, is_favourite, show_in_dashboard, is_hidden, custom_fields, created_at)
         VALUES (?, 'Checking', 'bank', 0, 'EUR', 0, 0, 0, 1, 0, '[]', ?)`,
      ).run(accountId, now)
      const insert = db.query(
        `INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at)
         VALUES (?, NULL, ?, NULL, NULL, ?, ?, ?, NULL, 0, NULL, NULL, NULL, ?)`,
      )
      for (let i = 0; i < ROWS; i++) {
        const date = new Date(now - (ROWS - i) * 86_400_000).toISOString().slice(0, 10)
        insert.run(newId('txn'), accountId, BigInt(100 + i * 37) * 1_000_000n, date, `row ${i}`, now - (ROWS - i) * 1000)
      }
    }).immediate()
    return accountId
  } finally {
    db.close(false)
  }
}

async function timed(url: string, headers: Record<string, string> = {}): Promise<{ ms: number; items: number }> {
  const started = performance.now()
  const response = await fetch(url, { headers })
  const text = await response.text()
  const ms = performance.now() - started
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text}`)
  return { ms, items: (JSON.parse(text) as { data: unknown[] }).data.length }
}

export const benchmark: Benchmark = {
  name: 'tenant',
  description: `a never-seen owner's first GET /v1/transactions?limit=50 (opens the owner's file) vs a bare Bun.serve + bun:sqlite opening a copy; target ≤ ${TARGET}× bare`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const dataDir = cleanup.dir(tempDir())
      const baseDir = bareTenantDir(cleanup)
      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())
      const baseline: Service = await startTenantBaseline(cleanup, baseDir)
      const template = join(baseDir, 'template.db')

      const rows: { pfin: number; base: number; pfinAgain: number; baseAgain: number }[] = []
      for (let i = 0; i < WARMUP_OWNERS + OWNERS; i++) {
        const { ownerId, key } = await makeOwnerAndKey(dataDir, `Tenant ${i + 1}`)
        const file = join(dataDir, 'tenants', `${ownerId}.db`)
        if (!existsSync(file)) throw new Error(`the CLI made no tenant file at ${file}`)
        if (existsSync(`${file}-wal`)) throw new Error(`the CLI left a WAL file beside ${file}`)
        if (i === 0) copyFileSync(file, template)
        seed(file)
        const bareId = `bare${i}`
        const bareFile = join(baseDir, 'tenants', `${bareId}.db`)
        copyFileSync(template, bareFile)
        seed(bareFile)

        const headers = { authorization: `Bearer ${key}` }
        const me = await fetch(`${pfin.url}/v1/me`, { headers })
        if (me.status !== 200) throw new Error(`GET /v1/me answered ${me.status}: ${await me.text()}`)
        await me.arrayBuffer()

        const pfinUrl = `${pfin.url}/v1/transactions?limit=50`
        const baseUrl = `${baseline.url}/v1/transactions?owner=${bareId}&limit=50`
        let ours: { ms: number; items: number }
        let base: { ms: number; items: number }
        if (i % 2 === 0) {
          base = await timed(baseUrl)
          ours = await timed(pfinUrl, headers)
        } else {
          ours = await timed(pfinUrl, headers)
          base = await timed(baseUrl)
        }
        if (ours.items !== 50 || base.items !== 50) throw new Error(`pages of ${ours.items} (pfin) and ${base.items} (baseline) items, not 50`)
        const pfinAgain = (await timed(pfinUrl, headers)).ms
        const baseAgain = (await timed(baseUrl)).ms
        if (i < WARMUP_OWNERS) continue
        rows.push({ pfin: ours.ms, base: base.ms, pfinAgain, baseAgain })
        console.log(
          `owner ${String(i - WARMUP_OWNERS + 1).padStart(2)}: first request pfin ${fmt.ms(ours.ms)}, baseline ${fmt.ms(base.ms)}, ratio ${fmt.ratio(ours.ms / base.ms)}; second: pfin ${fmt.ms(pfinAgain)}, baseline ${fmt.ms(baseAgain)}`,
        )
      }
      const ours = median(rows.map((r) => r.pfin))
      const base = median(rows.map((r) => r.base))
      const ratio = median(rows.map((r) => r.pfin / r.base))
      console.log(`${rows.length} owners (after ${WARMUP_OWNERS} unmeasured), ${ROWS} transactions each, latency as the client sees it; medians:`)
      console.log(
        `  first request:  pfin ${fmt.ms(ours)}, baseline ${fmt.ms(base)}, ratio ${fmt.ratio(ratio)} (median of per-owner ratios; target ≤ ${TARGET})`,
      )
      console.log(
        `  second request: pfin ${fmt.ms(median(rows.map((r) => r.pfinAgain)))}, baseline ${fmt.ms(median(rows.map((r) => r.baseAgain)))} (file already open)`,
      )
      return {
        targetMet: ratio <= TARGET,
        summary: `first request of a new owner: pfin ${fmt.ms(ours)}, baseline ${fmt.ms(base)}, ratio ${fmt.ratio(ratio)} over ${rows.length} owners`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
