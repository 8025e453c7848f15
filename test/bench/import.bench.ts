import { ofxFile } from '../imports/helpers.ts'
import type { Benchmark } from './benchmark.ts'
import { postOnce } from './keyed-load.ts'
import { Cleanup, fmt, median, settings, startPfinWithOwner } from './support.ts'

/**
 * Importing a 5,000-row statement (CONTRACT §24): one `POST /v1/accounts/{id}/imports` of an OFX
 * file and of a CSV file, against the same 5,000 rows sent as transaction upserts through the
 * batch route (ten `POST /v1/transactions/batch` of 500, one after another). Each round uses new
 * ids on every side, so each creates 5,000 transactions; the sides run in interleaved rounds,
 * alternating which goes first. Reported: each side's time (the request's round trip on
 * localhost, the server's time and the file's transfer), rows per second, and the import's time
 * as a ratio to the batch route's: what reading the file costs over sending ready rows.
 */

const ROWS = 5000
const BATCH = 500
const PAYEES = Array.from({ length: 40 }, (_, i) => `MERCHANT ${i + 1}`)

interface Row {
  date: string
  cents: number
  payee: string
}

function rowsOf(round: number): Row[] {
  return Array.from({ length: ROWS }, (_, n) => ({
    date: `2026-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')}`,
    cents: (n % 17 === 0 ? 1 : -1) * (100 + ((n * 104_729 + round * 31) % 25_000)),
    payee: PAYEES[n % PAYEES.length] as string,
  }))
}

const decimal = (cents: number) => `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`

const ofxOf = (rows: Row[], prefix: string) =>
  ofxFile(rows.map((row, n) => ({ fitid: `${prefix}-${n}`, date: row.date, amount: decimal(row.cents), name: row.payee })))

/** A CSV with an id column, as Nubank's (ids make the externalIds, as FITIDs do). */
const csvOf = (rows: Row[], prefix: string) =>
  `Date,Id,Payee,Amount\n${rows.map((row, n) => `${row.date},${prefix}-${n},${row.payee},${decimal(row.cents)}`).join('\n')}\n`

async function timed(run: () => Promise<Response>): Promise<{ ms: number; body: unknown }> {
  const started = performance.now()
  const res = await run()
  const text = await res.text()
  const ms = performance.now() - started
  if (res.status !== 200) throw new Error(`answered ${res.status}: ${text.slice(0, 300)}`)
  return { ms, body: JSON.parse(text) }
}

async function viaImport(url: string, key: string, account: string, file: string): Promise<number> {
  const { ms, body } = await timed(() =>
    fetch(`${url}/v1/accounts/${account}/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/octet-stream' },
      body: file,
    }),
  )
  const created = (body as { data: { summary: { created: number } } }).data.summary.created
  if (created !== ROWS) throw new Error(`the import created ${created} of ${ROWS}`)
  return ms
}

async function viaBatches(url: string, key: string, account: string, rows: Row[], prefix: string): Promise<number> {
  let total = 0
  for (let at = 0; at < rows.length; at += BATCH) {
    const items = rows.slice(at, at + BATCH).map((row, n) => ({
      externalId: `${prefix}-${at + n}`,
      accountId: account,
      amount: JSON.rawJSON(decimal(-row.cents)),
      date: row.date,
      payeeName: row.payee,
    }))
    const { ms } = await timed(() =>
      fetch(`${url}/v1/transactions/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' },
        body: JSON.stringify({ items }),
      }),
    )
    total += ms
  }
  return total
}

export const benchmark: Benchmark = {
  name: 'import',
  description: `one ${ROWS}-row OFX and one ${ROWS}-row CSV import vs the same rows through the batch route (${ROWS / BATCH} × ${BATCH}); time, rows/s, and the ratio`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const account = (await postOnce(pfin.url, key, '/v1/accounts', { name: 'Bench', type: 'bank', balance: 0, currency: 'EUR' })).id as string
      const run = Date.now().toString(36)
      // Unmeasured: warm the JIT, the worker, the statement caches and the file on every path.
      const warm = rowsOf(0)
      await viaImport(pfin.url, key, account, ofxOf(warm, `${run}-wo`))
      await viaImport(pfin.url, key, account, csvOf(warm, `${run}-wc`))
      await viaBatches(pfin.url, key, account, warm, `${run}-wb`)

      const rounds = Math.max(3, settings.rounds)
      const results: { ofx: number; csv: number; batch: number }[] = []
      for (let round = 1; round <= rounds; round++) {
        const rows = rowsOf(round)
        const sides = {
          ofx: () => viaImport(pfin.url, key, account, ofxOf(rows, `${run}-r${round}o`)),
          csv: () => viaImport(pfin.url, key, account, csvOf(rows, `${run}-r${round}c`)),
          batch: () => viaBatches(pfin.url, key, account, rows, `${run}-r${round}b`),
        }
        const order = (round % 2 ? ['ofx', 'csv', 'batch'] : ['batch', 'csv', 'ofx']) as (keyof typeof sides)[]
        const times: Record<string, number> = {}
        for (const side of order) times[side] = await sides[side]()
        const result = { ofx: times.ofx as number, csv: times.csv as number, batch: times.batch as number }
        results.push(result)
        const perSecond = (ms: number) => Math.round((ROWS * 1000) / ms).toLocaleString('en-US')
        console.log(
          `round ${round}: OFX import ${fmt.ms(result.ofx)} (${perSecond(result.ofx)} rows/s)   CSV import ${fmt.ms(result.csv)} (${perSecond(result.csv)} rows/s)   ` +
            `batch route ${fmt.ms(result.batch)} (${perSecond(result.batch)} rows/s)   ratios ${fmt.ratio(result.ofx / result.batch)} / ${fmt.ratio(result.csv / result.batch)}`,
        )
      }
      const ofx = median(results.map((r) => r.ofx))
      const csv = median(results.map((r) => r.csv))
      const batch = median(results.map((r) => r.batch))
      const ofxRatio = median(results.map((r) => r.ofx / r.batch))
      const csvRatio = median(results.map((r) => r.csv / r.batch))
      const rate = (ms: number) => `${Math.round((ROWS * 1000) / ms).toLocaleString('en-US')} rows/s`
      return {
        summary: `${ROWS} rows: OFX import ${fmt.ms(ofx)} (${rate(ofx)}), CSV import ${fmt.ms(csv)} (${rate(csv)}), batch route ${fmt.ms(batch)} (${rate(batch)}); import ÷ batch: OFX ${fmt.ratio(ofxRatio)}, CSV ${fmt.ratio(csvRatio)} (median of ${rounds} rounds)`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
