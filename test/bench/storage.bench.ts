import { Database } from 'bun:sqlite'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../../drizzle/tenant/manifest.ts'
import { foldLog, giveBackFreePages, openDatabase } from '../../src/db/sqlite.ts'
import type { Benchmark } from './benchmark.ts'
import { Cleanup, makeOwnerAndKey, startPfin, tempDir } from './support.ts'

/**
 * What one key can make the server store (CONTRACT §19): a 500-item batch with long notes,
 * sent again and again with a fresh Idempotency-Key, as a looping or hostile client would.
 * After the first, every item is `unchanged`, so the only thing that grows is the stored
 * answers. The baseline is the answer itself: the ratio is the bytes stored per request over
 * the answer's size (one copy = 1.0). The per-minute figure assumes the default key limit,
 * 120 requests a minute; the owner's quota (OWNER_QUOTA_MB) bounds the total.
 */

const ITEMS = 500
const REPEATS = 20
const KEY_REQUESTS_PER_MINUTE = 120
const bytes = (n: number) => Math.round(n).toLocaleString('en-US')

/** Logical bytes of every database under DATA_DIR, as SQLite sees them (log included). */
function storedBytes(dataDir: string): number {
  const files = [
    join(dataDir, 'control.db'),
    ...readdirSync(join(dataDir, 'tenants'))
      .filter((f) => f.endsWith('.db'))
      .map((f) => join(dataDir, 'tenants', f)),
  ]
  let total = 0
  for (const file of files) {
    const db = new Database(file, { readonly: true })
    try {
      const pages =
        db.query<{ n: number }, []>('SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count) AS n').get()?.n ?? 0
      total += Number(pages) * 4096
    } finally {
      db.close()
    }
  }
  return total
}

const mib = (n: number) => `${(n / 1_048_576).toFixed(1)} MiB`

/**
 * With the server stopped: what the housekeeping does once the stored answers expire. Purges
 * every stored answer of the owner's file, then gives the pages back as the server's rounds
 * do (one bounded call per round), timing each call (the server waits while one runs).
 */
function giveBackAfterPurge(dataDir: string): { before: number; after: number; calls: number; slowestMs: number } {
  const file = readdirSync(join(dataDir, 'tenants')).find((f) => f.endsWith('.db')) as string
  const path = join(dataDir, 'tenants', file)
  const db = openDatabase(path, { synchronous: 'FULL', migrations, existing: true })
  try {
    const before = statSync(path).size
    db.run('DELETE FROM applied_requests')
    let calls = 0
    let slowestMs = 0
    for (;;) {
      const started = performance.now()
      const pages = giveBackFreePages(db)
      slowestMs = Math.max(slowestMs, performance.now() - started)
      if (pages === 0) break
      calls++
    }
    foldLog(db)
    return { before, after: statSync(path).size, calls, slowestMs }
  } finally {
    db.close()
  }
}

/** A bank memo of `length` characters: words, not one repeated letter, so compression would not flatter it. */
function memo(n: number, length: number): string {
  const words = ['card', 'payment', 'groceries', 'ref', String(n * 7919), 'store', 'Lisboa', 'contactless', 'EUR', 'terminal', String(n)]
  let text = ''
  for (let i = 0; text.length < length; i++) text += `${words[(i * 31 + n) % words.length]} `
  return text.slice(0, length)
}

export const benchmark: Benchmark = {
  name: 'storage',
  description: `bytes stored per repeated ${ITEMS}-item batch (long notes), against the answer's size`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const dataDir = cleanup.dir(tempDir())
      const { key } = await makeOwnerAndKey(dataDir)
      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())
      const account = (await (
        await fetch(`${pfin.url}/v1/accounts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify({ name: 'Main', type: 'bank', balance: 0, currency: 'EUR' }),
        })
      ).json()) as { data: { id: string } }
      const items = Array.from({ length: ITEMS }, (_, n) => ({
        externalId: `row-${n}`,
        accountId: account.data.id,
        amount: 1 + (n % 50),
        date: '2026-11-20',
        note: memo(n, 1900),
      }))
      const body = JSON.stringify({ items })
      const send = async () => {
        const res = await fetch(`${pfin.url}/v1/transactions/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
          body,
        })
        const text = await res.text()
        if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${text.slice(0, 200)}`)
        return text.length
      }
      await send()
      await Bun.sleep(100)
      const before = storedBytes(dataDir)
      let answerBytes = 0
      for (let i = 0; i < REPEATS; i++) answerBytes = await send()
      await Bun.sleep(100) // the control copies are written once the event loop turns
      const perRequest = (storedBytes(dataDir) - before) / REPEATS
      const ratio = perRequest / answerBytes
      const perMinute = perRequest * KEY_REQUESTS_PER_MINUTE
      console.log(`answer ${bytes(answerBytes)} B; stored per request ${bytes(perRequest)} B (${ratio.toFixed(2)}× the answer)`)
      console.log(
        `at ${KEY_REQUESTS_PER_MINUTE} requests/min: ${(perMinute / 1_048_576).toFixed(1)} MiB/min, ${((perMinute * 60 * 24) / 1_073_741_824).toFixed(1)} GiB/day before the owner's quota stops it`,
      )
      await pfin.stop()
      const given = giveBackAfterPurge(dataDir)
      console.log(
        `after the purge of those answers: owner file ${mib(given.before)} → ${mib(given.after)} (${given.calls} housekeeping rounds of at most 8 MiB, the slowest ${given.slowestMs.toFixed(1)} ms)`,
      )
      return {
        summary: `${ratio.toFixed(2)}× the answer stored per request (${bytes(perRequest)} B of ${bytes(answerBytes)} B), ${(perMinute / 1_048_576).toFixed(1)} MiB/min per key`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
