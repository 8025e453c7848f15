import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The bare cold-start baseline (cold.bench.ts): opens a SQLite file in DATA_DIR with the
 * pragmas a pfin database gets (WAL, synchronous=FULL, foreign keys), then a `Bun.serve`
 * answers `GET /healthz` with `{"status":"ok"}`. Prints `baseline listening on …`; SIGTERM stops it.
 */
const dataDir = process.env.DATA_DIR ?? '.'
mkdirSync(dataDir, { recursive: true })
const db = new Database(join(dataDir, 'control.db'), { create: true, strict: true })
db.run('PRAGMA busy_timeout = 5000')
db.run('PRAGMA journal_mode = WAL')
db.run('PRAGMA synchronous = FULL')
db.run('PRAGMA foreign_keys = ON')
db.run('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
const health = db.query<{ n: number }, []>('SELECT 1 AS n')

const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  fetch(request) {
    if (new URL(request.url).pathname === '/healthz' && health.get()?.n === 1) return Response.json({ status: 'ok' })
    return new Response('not found', { status: 404 })
  },
})
console.log(`baseline listening on http://${server.hostname}:${server.port}`)
process.once('SIGTERM', async () => {
  await server.stop()
  db.close()
  process.exit(0)
})
