import { Database } from 'bun:sqlite'
import { join } from 'node:path'

/**
 * The bare baseline for tenant.bench.ts and rss.bench.ts: a `Bun.serve` over bun:sqlite
 * doing the work pfin's routes do, without pfin. Owners are named by `?owner=ID`; an owner's
 * file is DATA_DIR/tenants/ID.db (a copy of a pfin tenant file, so the same schema), opened
 * on its first request with pfin's pragmas (WAL, synchronous=FULL, foreign keys, temp_store
 * in memory) and kept open; with CACHE_SIZE set, at most that many stay open, the least recently
 * used closed first (as pfin's TENANT_CACHE_SIZE).
 *  - `GET /v1/me`: BODY (fixed bytes);
 *  - `GET /v1/transactions?owner=ID&limit=N`: the newest N rows as `{ data, hasMore }`;
 *  - `POST /v1/transactions/upsert?owner=ID`: `{ externalId, accountId, amount, date, note }`
 *    inserted or updated by externalId in one transaction, the row answered back.
 * Prints `baseline listening on http://HOST:PORT`; SIGTERM stops it.
 */
const dataDir = process.env.DATA_DIR ?? '.'
const me = process.env.BODY ?? '{}'
const json = { 'content-type': 'application/json' }

interface Owner {
  db: Database
  list: ReturnType<Database['query']>
  upsert: ReturnType<Database['query']>
  byExternalId: ReturnType<Database['query']>
}
const owners = new Map<string, Owner>()
const cacheSize = Number(process.env.CACHE_SIZE ?? Number.POSITIVE_INFINITY)

function owner(id: string): Owner {
  let found = owners.get(id)
  if (found) {
    if (cacheSize !== Number.POSITIVE_INFINITY) {
      owners.delete(id)
      owners.set(id, found)
    }
    return found
  }
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error('bad owner')
  const db = new Database(join(dataDir, 'tenants', `${id}.db`), { strict: true })
  db.run('PRAGMA busy_timeout = 10000')
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = FULL')
  db.run('PRAGMA foreign_keys = ON')
  db.run('PRAGMA temp_store = MEMORY')
  found = {
    db,
    list: db.query('SELECT * FROM transactions ORDER BY date DESC, created_at DESC, id DESC LIMIT ?'),
    upsert: db.query(
      `INSERT INTO transactions (id, external_id, account_id, category_id, payee_id, amount, date, note, time, is_transfer, transfer_to_account_id, destination_amount, exchange_rate, created_at)
       VALUES (?, ?, ?, NULL, NULL, ?, ?, ?, NULL, 0, NULL, NULL, NULL, ?)
       ON CONFLICT(external_id) DO UPDATE SET account_id = excluded.account_id, amount = excluded.amount, date = excluded.date, note = excluded.note`,
    ),
    byExternalId: db.query('SELECT * FROM transactions WHERE external_id = ?'),
  }
  owners.set(id, found)
  if (owners.size > cacheSize) {
    const [oldest, evicted] = owners.entries().next().value as [string, Owner]
    owners.delete(oldest)
    evicted.db.close()
  }
  return found
}

let counter = 0
const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(request) {
    const url = new URL(request.url)
    if (url.pathname === '/v1/me') return new Response(me, { headers: json })
    const ownerId = url.searchParams.get('owner')
    if (!ownerId) return new Response('not found', { status: 404 })
    const o = owner(ownerId)
    if (url.pathname === '/v1/transactions' && request.method === 'GET') {
      const limit = Number(url.searchParams.get('limit') ?? 50)
      const rows = o.list.all(limit + 1)
      return new Response(JSON.stringify({ data: rows.slice(0, limit), hasMore: rows.length > limit }), { headers: json })
    }
    if (url.pathname === '/v1/transactions/upsert' && request.method === 'POST') {
      const body = (await request.json()) as { externalId: string; accountId: string; amount: number; date: string; note?: string }
      const amount = BigInt(Math.round(body.amount * 100)) * 1_000_000n
      const id = `txn_${Date.now().toString(16)}${(counter++).toString(16).padStart(12, '0')}`
      const row = o.db.transaction(() => {
        o.upsert.run(id, body.externalId, body.accountId, amount, body.date, body.note ?? null, Date.now())
        return o.byExternalId.get(body.externalId)
      })()
      return new Response(
        JSON.stringify(row, (_, v) => (typeof v === 'bigint' ? Number(v) : v)),
        { headers: json },
      )
    }
    return new Response('not found', { status: 404 })
  },
})
console.log(`baseline listening on http://${server.hostname}:${server.port}`)
process.once('SIGTERM', async () => {
  await server.stop()
  for (const o of owners.values()) o.db.close()
  process.exit(0)
})
