/**
 * The bare baseline: a `Bun.serve` that answers every request with a fixed JSON body
 * (BODY, the exact bytes pfin's GET /v1/me returned) and `content-type: application/json`.
 * Prints `baseline listening on http://HOST:PORT`; SIGTERM stops it.
 */
const body = process.env.BODY ?? '{}'
const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json' } }),
})
console.log(`baseline listening on http://${server.hostname}:${server.port}`)
process.once('SIGTERM', async () => {
  await server.stop()
  process.exit(0)
})
