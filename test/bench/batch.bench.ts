import type { Benchmark } from './benchmark.ts'
import { postOnce } from './keyed-load.ts'
import { Cleanup, fmt, settings, startPfinWithOwner, median } from './support.ts'

/**
 * Importing 500 transactions: one `POST /v1/transactions/batch` of 500 items against
 * 500 single `POST /v1/transactions/upsert` of the same items, sent one after another over one
 * keep-alive connection as an import script would, each with its own Idempotency-Key. Every
 * round uses fresh externalIds on both sides (so both create 500 transactions), and the two sides
 * run in interleaved rounds, alternating which goes first. The figure is the median round's
 * ratio of wall time, singles / batch. Target: the batch at least 20× faster.
 */

const TARGET = 20
const ITEMS = 500
const PAYEES = Array.from({ length: 20 }, (_, i) => `Merchant ${i + 1}`)
const CATEGORIES = ['cat_sys_groceries', 'cat_sys_restaurants', 'cat_sys_fuel', 'cat_sys_utilities', 'cat_sys_subscriptions']

/** The bank export of one round: the same 500 rows for both sides, only the externalIds differ. */
function exportRows(accountId: string, round: number): Record<string, unknown>[] {
  return Array.from({ length: ITEMS }, (_, n) => {
    const income = n % 17 === 0
    const cents = income ? -(150_000 + ((n * 7919) % 100_000)) : 100 + ((n * 104_729 + round * 31) % 25_000)
    return {
      accountId,
      amount: JSON.rawJSON((cents / 100).toFixed(2)),
      date: `2026-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')}`,
      payeeName: PAYEES[n % PAYEES.length],
      ...(income ? {} : { categoryId: CATEGORIES[n % CATEGORIES.length] }),
      note: `card payment ${n}`,
    }
  })
}

interface Timing {
  ms: number
  requests: number
}

async function post(url: string, key: string, path: string, body: string, idempotencyKey: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    body,
  })
  return { status: response.status, text: await response.text() }
}

async function viaBatch(url: string, key: string, rows: Record<string, unknown>[], prefix: string): Promise<Timing> {
  const body = JSON.stringify({ items: rows.map((row, n) => ({ externalId: `${prefix}-${n}`, ...row })) })
  const started = performance.now()
  const res = await post(url, key, '/v1/transactions/batch', body, `${prefix}-batch`)
  const ms = performance.now() - started
  if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${res.text.slice(0, 300)}`)
  const summary = JSON.parse(res.text).summary
  if (summary.created !== ITEMS) throw new Error(`batch created ${summary.created} of ${ITEMS}`)
  return { ms, requests: 1 }
}

async function viaSingles(url: string, key: string, rows: Record<string, unknown>[], prefix: string): Promise<Timing> {
  const bodies = rows.map((row, n) => JSON.stringify({ externalId: `${prefix}-${n}`, ...row }))
  const started = performance.now()
  for (const [n, body] of bodies.entries()) {
    const res = await post(url, key, '/v1/transactions/upsert', body, `${prefix}-${n}`)
    if (res.status !== 201) throw new Error(`upsert ${n} answered ${res.status}: ${res.text.slice(0, 300)}`)
  }
  return { ms: performance.now() - started, requests: ITEMS }
}

export const benchmark: Benchmark = {
  name: 'batch',
  description: `one POST /v1/transactions/batch of ${ITEMS} items vs ${ITEMS} sequential POST /v1/transactions/upsert of the same items, interleaved rounds; target: batch ≥ ${TARGET}× faster`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const account = await postOnce(pfin.url, key, '/v1/accounts', { name: 'Bench', type: 'bank', balance: 1_000_000, currency: 'EUR' })
      const run = `${Date.now().toString(36)}`

      // Unmeasured: warm the JIT, the statement caches and the file on both paths.
      await viaBatch(pfin.url, key, exportRows(account.id, 0), `${run}-warm-b`)
      await viaSingles(pfin.url, key, exportRows(account.id, 0), `${run}-warm-s`)

      const rounds = Math.max(7, settings.rounds)
      const results: { batch: Timing; singles: Timing; ratio: number }[] = []
      for (let round = 1; round <= rounds; round++) {
        const rows = exportRows(account.id, round)
        let batch: Timing
        let singles: Timing
        if (round % 2) {
          batch = await viaBatch(pfin.url, key, rows, `${run}-r${round}-b`)
          singles = await viaSingles(pfin.url, key, rows, `${run}-r${round}-s`)
        } else {
          singles = await viaSingles(pfin.url, key, rows, `${run}-r${round}-s`)
          batch = await viaBatch(pfin.url, key, rows, `${run}-r${round}-b`)
        }
        const ratio = singles.ms / batch.ms
        results.push({ batch, singles, ratio })
        console.log(
          `round ${round} (${round % 2 ? 'batch first' : 'singles first'}): batch ${fmt.ms(batch.ms).padStart(10)} (${Math.round((ITEMS * 1000) / batch.ms).toLocaleString('en-US')} items/s)   ` +
            `500 singles ${fmt.ms(singles.ms).padStart(10)} (${Math.round((ITEMS * 1000) / singles.ms).toLocaleString('en-US')} items/s, ${fmt.ms(singles.ms / ITEMS)} each)   ratio ${fmt.ratio(ratio)}`,
        )
      }
      const ratio = median(results.map((r) => r.ratio))
      const batchMs = median(results.map((r) => r.batch.ms))
      const singlesMs = median(results.map((r) => r.singles.ms))
      console.log(`median: batch ${fmt.ms(batchMs)}, 500 singles ${fmt.ms(singlesMs)}, ratio ${fmt.ratio(ratio)} (target ≥ ${TARGET})`)
      return {
        targetMet: ratio >= TARGET,
        summary: `500 items: batch ${fmt.ms(batchMs)} vs 500 sequential upserts ${fmt.ms(singlesMs)}; median ratio ${fmt.ratio(ratio)}× over ${rounds} interleaved rounds (target ≥ ${TARGET})`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
