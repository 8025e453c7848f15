import { Elysia } from 'elysia'
import { TenantRegistry } from '../../src/db/tenant/registry.ts'
import { listTransactionPage } from '../../src/modules/transactions/list.ts'
import { setFloorHeaders } from './floor-headers.ts'

/**
 * The floor of pfin's stack for the `list` benchmark (list.bench.ts): Elysia answering
 * GET /v1/transactions?limit=50 for the owner OWNER in DATA_DIR with pfin's own page code (the
 * same statements, the same rows, the same JSON) and the headers every pfin answer carries
 * (floor-headers.ts). It reads the Authorization header and refuses a request without one, but
 * checks no key, scope, tier, rate limit or query: what is left between this server and pfin is
 * pfin's request pipeline. Prints `floor (list) listening on http://HOST:PORT`; SIGTERM stops it.
 */
const owner = process.env.OWNER ?? ''
const tenants = new TenantRegistry(process.env.DATA_DIR ?? '.', 4)
const tenant = tenants.get(owner)

const app = new Elysia().get(
  '/v1/transactions',
  // Written so that Elysia calls it without an await, as pfin's routes are (pipeline.ts): a
  // `return f(` would make Elysia read the handler as async and await every answer.
  ({ request, set }) => {
    let answer = 'unauthorized'
    if (request.headers.get('authorization')) {
      setFloorHeaders(set.headers)
      answer = JSON.stringify(listTransactionPage(tenant, { limit: 50 }))
    } else set.status = 401
    return answer
  },
  { parse: 'none' },
)
app.listen({ hostname: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 0) })
console.log(`floor (list) listening on http://${app.server?.hostname}:${app.server?.port}`)
process.once('SIGTERM', async () => {
  await app.stop()
  tenants.closeAll()
  process.exit(0)
})
