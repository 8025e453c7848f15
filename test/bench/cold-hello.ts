/**
 * The least a compiled Bun server does before its first answer (cold.bench.ts compiles it as
 * pfin is compiled): a `Bun.serve` answering `GET /healthz` with `{"status":"ok"}`, no database.
 * Prints `hello listening on …`; SIGTERM stops it.
 */
const hello = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  fetch(request) {
    if (new URL(request.url).pathname === '/healthz') return Response.json({ status: 'ok' })
    return new Response('not found', { status: 404 })
  },
})
console.log(`hello listening on http://${hello.hostname}:${hello.port}`)
process.once('SIGTERM', async () => {
  await hello.stop()
  process.exit(0)
})
export {}
