import { afterAll, expect, test } from 'bun:test'
import { adminJson, call, cleanup, MAIN, processEnv, ROOT, tempDir } from '../support/processes.ts'

/** Structured access logs: one line per request with the client address, never a key, a body or a query value. */

afterAll(cleanup)

async function serveAndCollect(
  format: string,
  requests: (url: string, key: string) => Promise<void>,
  extraEnv: Record<string, string> = {},
): Promise<string[]> {
  const dataDir = tempDir('pfin-log-')
  const env = processEnv(dataDir, { LOG_FORMAT: format, ...extraEnv })
  const { id } = await adminJson(env, 'owner', 'create', '--name', 'Logs')
  const { key } = (await adminJson(env, 'key', 'create', '--owner', String(id))) as { key: string }
  // A fixed free-looking port: the listening line shares stdout with the log lines read here.
  const port = 20000 + Math.floor(Math.random() * 20000)
  const server = Bun.spawn(['bun', MAIN, 'serve', '--port', String(port)], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const text = new Response(server.stdout).text()
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${base}/healthz`).catch(() => null)
    if (res?.ok) break
    await Bun.sleep(50)
  }
  await requests(base, key)
  server.kill('SIGTERM')
  await server.exited
  return (await text).split('\n').filter((line) => line.length > 0 && !line.startsWith('pfin'))
}

test('json: one line per request with time, request id, method, route pattern, status, duration, owner and client; no secrets', async () => {
  let accountId = ''
  const lines = await serveAndCollect('json', async (url, key) => {
    const created = await call(url, 'POST', '/v1/accounts', {
      key,
      idempotencyKey: 'log-1',
      body: JSON.stringify({ name: 'Secret Name', type: 'bank', balance: 1, currency: 'EUR' }),
    })
    accountId = JSON.parse(created.text).data.id
    await call(url, 'GET', `/v1/accounts/${accountId}`, { key })
    await call(url, 'GET', '/v1/transactions?externalId=very-private-value', { key })
    await call(url, 'GET', '/v1/me', { key: 'pfk_key_00000000000000000000000000000000_wrongwrongwrongwrongwrongwrongwrongwrong1' })
    await call(url, 'GET', '/v1/nowhere')
  })
  const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  const requests = entries.filter((entry) => entry.route !== '/healthz')
  expect(requests.map((entry) => [entry.method, entry.route, entry.status])).toEqual([
    ['POST', '/v1/accounts', 201],
    ['GET', '/v1/accounts/:accountId', 200],
    ['GET', '/v1/transactions', 200],
    ['GET', '/v1/me', 401],
    ['GET', null, 404],
  ])
  for (const entry of requests) {
    expect(Object.keys(entry).sort()).toEqual(['client_ip', 'duration_ms', 'method', 'owner_id', 'request_id', 'route', 'status', 'time'])
    // No TRUSTED_PROXIES: the socket's peer, whatever a header claims (CONTRACT §25).
    expect(entry.client_ip).toBe('127.0.0.1')
    expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(typeof entry.duration_ms).toBe('number')
    expect(entry.request_id).toMatch(/^req_/)
  }
  expect(requests[0]?.owner_id).toMatch(/^own_/)
  expect(requests[3]?.owner_id).toBeNull()
  const all = lines.join('\n')
  for (const secret of ['pfk_', 'Secret Name', 'very-private-value', accountId]) expect(all).not.toContain(secret)
}, 60_000)

test('pretty: a short readable line; off: nothing', async () => {
  const pretty = await serveAndCollect('pretty', async (url, key) => {
    await call(url, 'GET', '/v1/me', { key })
  })
  expect(pretty.some((line) => / 200 GET \/v1\/me [\d.]+ms own_\w+ 127\.0\.0\.1 req_/.test(line))).toBe(true)
  const off = await serveAndCollect('off', async (url, key) => {
    await call(url, 'GET', '/v1/me', { key })
  })
  expect(off).toEqual([])
}, 60_000)

test('behind a trusted proxy the line names the client its X-Forwarded-For gives; a forged entry to its left is not read', async () => {
  const forwarded = (url: string, path: string, header: string) => fetch(url + path, { headers: { 'x-forwarded-for': header } })
  const lines = await serveAndCollect(
    'json',
    async (url) => {
      await forwarded(url, '/v1/me', '198.51.100.7, 203.0.113.9')
      await forwarded(url, '/v1/nowhere', '2001:db8::5')
    },
    { TRUSTED_PROXIES: '127.0.0.1' },
  )
  const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.route !== '/healthz')
  expect(entries.map((entry) => [entry.status, entry.client_ip])).toEqual([
    [401, '203.0.113.9'],
    [404, '2001:db8::5'],
  ])
}, 60_000)
