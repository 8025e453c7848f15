import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Browser, findChromium } from '../docs/chromium.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'

/**
 * CORS in a real browser (CONTRACT §25): a page on an allowed origin calls pfin on another origin
 * with `fetch` and a key — the browser's own preflight passes, the page reads the answer, its
 * headers (ETag, X-Request-Id, rate limits) and a 412's problem; a page on an origin not listed
 * cannot read anything. Skipped without Chromium (as the /docs browser test is).
 */

const chromium = findChromium()
if (!chromium) console.warn('SKIPPED CORS browser test: no Chromium found (apt-get install -y chromium)')

/** A blank page served from its own port: its own origin. */
function pageServer() {
  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () => new Response('<!doctype html><title>app</title>', { headers: { 'content-type': 'text/html' } }),
  })
}

describe.skipIf(!chromium)('a page calling pfin from another origin, in headless Chromium', () => {
  let server: TestServer
  let browser: Browser
  let allowedPage: ReturnType<typeof pageServer>
  let otherPage: ReturnType<typeof pageServer>
  let key: string

  beforeAll(async () => {
    allowedPage = pageServer()
    otherPage = pageServer()
    server = await startTestServer({ env: { CORS_ALLOWED_ORIGINS: `http://127.0.0.1:${allowedPage.port}` } })
    key = (await server.owner()).key
    browser = await Browser.launch(chromium as string)
    await browser.send('Page.enable')
  }, 90_000)

  afterAll(async () => {
    await browser?.close()
    allowedPage?.stop(true)
    otherPage?.stop(true)
    await server?.stop()
  })

  async function open(page: ReturnType<typeof pageServer>) {
    await browser.send('Page.navigate', { url: `http://127.0.0.1:${page.port}/` })
    await browser.waitFor<boolean>(`location.port === '${page.port}' && document.readyState === 'complete'`, 10_000)
  }

  test('from the allowed origin: a read, a write, a conditional PATCH refused with 412, all readable', async () => {
    await open(allowedPage)
    const result = await browser.evaluate<Record<string, unknown>>(`(async () => {
      const base = ${JSON.stringify(server.url)}
      const auth = { Authorization: 'Bearer ${key}' }
      const me = await fetch(base + '/v1/me', { headers: auth })
      const created = await fetch(base + '/v1/tags', {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() },
        body: JSON.stringify({ name: 'From a page' }),
      })
      const tag = await created.json()
      const stale = await fetch(base + '/v1/tags/' + tag.data.id, {
        method: 'PATCH',
        headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID(), 'If-Match': '"not-the-tag"' },
        body: JSON.stringify({ name: 'Renamed' }),
      })
      return {
        me: me.status,
        meRequestId: me.headers.get('X-Request-Id'),
        remaining: me.headers.get('X-RateLimit-Remaining-Minute'),
        created: created.status,
        etag: created.headers.get('ETag'),
        location: created.headers.get('Location'),
        stale: stale.status,
        staleEtag: stale.headers.get('ETag'),
        staleCode: (await stale.json()).code,
      }
    })()`)
    expect(result.me).toBe(200)
    expect(result.meRequestId).toMatch(/^req_/)
    expect(Number(result.remaining)).toBeGreaterThan(0)
    expect(result.created).toBe(201)
    expect(result.etag).toMatch(/^"[^"]+"$/)
    expect(result.location).toMatch(/^\/v1\/tags\/tag_/)
    expect(result.stale).toBe(412)
    expect(result.staleCode).toBe('precondition_failed')
    expect(result.staleEtag).toBe(result.etag)
  }, 30_000)

  test('from an origin not listed: the browser lets the page read nothing', async () => {
    await open(otherPage)
    const outcome = await browser.evaluate<string>(`fetch(${JSON.stringify(`${server.url}/v1/me`)}, { headers: { Authorization: 'Bearer ${key}' } })
      .then((res) => 'read ' + res.status, (error) => 'refused: ' + error.name)`)
    expect(outcome).toBe('refused: TypeError')
  }, 30_000)
})
