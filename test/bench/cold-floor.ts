import { Elysia, t } from 'elysia'
import { openColdDatabase } from './cold-database.ts'

/**
 * The floor of pfin's own stack for the cold-start benchmark (cold.bench.ts): the bare
 * baseline's work (one SQLite file with pfin's pragmas, `GET /healthz`), served by Elysia
 * instead of a bare `Bun.serve`. With FLOOR=stack it also loads what every pfin start needs
 * before its own code runs: drizzle over that file, TypeBox schemas on the route and the
 * swagger plugin. The benchmark compiles it as `bun run build` compiles pfin, so the start it
 * measures is the least any server on this stack can take: pfin can get close to it, not under it.
 */
const db = openColdDatabase()

const Health = t.Object({ status: t.Literal('ok') })
let healthy: () => boolean
const app = new Elysia()

if (process.env.FLOOR === 'stack') {
  const [{ drizzle }, { sqliteTable, text }, { sql }, { swagger }] = await Promise.all([
    import('drizzle-orm/bun-sqlite'),
    import('drizzle-orm/sqlite-core'),
    import('drizzle-orm'),
    import('@elysiajs/swagger'),
  ])
  const meta = sqliteTable('meta', { key: text('key').primaryKey(), value: text('value').notNull() })
  const orm = drizzle({ client: db })
  const health = orm.select({ n: sql<number>`1` }).from(meta).limit(1).prepare()
  healthy = () => Array.isArray(health.all())
  app.use(swagger({ path: '/openapi.json', specPath: '/openapi.json' }))
} else {
  const health = db.query<{ n: number }, []>('SELECT 1 AS n')
  healthy = () => health.get()?.n === 1
}

app.get('/healthz', ({ status }) => (healthy() ? { status: 'ok' as const } : status(503, 'unhealthy')), { response: { 200: Health, 503: t.String() } })
app.listen({ hostname: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0) })
console.log(`floor (${process.env.FLOOR ?? 'elysia'}) listening on http://${app.server?.hostname}:${app.server?.port}`)
process.once('SIGTERM', async () => {
  await app.stop()
  db.close()
  process.exit(0)
})
