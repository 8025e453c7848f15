import { openColdDatabase } from './cold-database.ts'

/**
 * The bare cold-start baseline (cold.bench.ts): opens a SQLite file in DATA_DIR with the
 * pragmas a pfin database gets (WAL, synchronous=FULL, foreign keys), then a `Bun.serve`
 * answers `GET /healthz` with `{"status":"ok"}`. Prints `baseline listening on …`; SIGTERM stops it.
 */
const db = openColdDatabase()
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
