import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { acceptsGzip, DOCS_CSP } from '../../src/platform/docs/page.ts'
import { awaitFreshMinute, intHeader } from '../platform/fixtures.ts'
import { expectProblem, RATE_LIMIT_HEADERS, sendRaw, startTestServer, type TestResponse, type TestServer } from '../support/harness.ts'

/**
 * /docs and its assets come from pfin itself, under a policy that allows only pfin's origin, and
 * `GET /` points the way; checked without a browser (test/docs/browser.test.ts renders it).
 */

// The counting tests wait for a fresh UTC minute (up to 8 s) first: past bun's 5 s default.
setDefaultTimeout(30_000)

const ROOT = join(import.meta.dir, '..', '..')
const VIEWER = join(ROOT, 'node_modules', 'swagger-ui-dist')

/** The policy /docs is served under; 'unsafe-inline' styles are not needed by the viewer, so not allowed. */
const EXPECTED_CSP: Record<string, string[]> = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"],
}

function parseCsp(header: string | null): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const directive of (header ?? '').split(';')) {
    const [name, ...values] = directive.trim().split(/\s+/)
    if (name) out[name] = values
  }
  return out
}

/** JavaScript with its comments removed (line comments only where `//` starts a line or follows a space, so URLs in strings stay). */
function withoutComments(js: string): string {
  return js.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1')
}

let server: TestServer
let page: TestResponse
let assets: string[]

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '50', ANON_RATE_LIMIT_PER_MINUTE: '50' } })
  page = await server.request('GET', '/docs')
  assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string).filter((url) => url.startsWith('/docs/assets/'))
})
afterAll(() => server.stop())

describe('GET /docs', () => {
  test('an HTML page under a policy that allows only pfin’s origin', () => {
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(parseCsp(page.headers.get('content-security-policy'))).toEqual(EXPECTED_CSP)
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP)
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('cache-control')).toBe('no-cache')
    expect(page.headers.get('referrer-policy')).toBe('no-referrer')
  })

  test('loads the viewer and its start script from pfin, points it at /openapi.json, and says where the document is without JavaScript', () => {
    const html = page.text
    expect(html).toMatch(/<div id="swagger-ui" data-url="\/openapi\.json"><\/div>/)
    expect(html).toMatch(/<noscript>[\s\S]*<a href="\/openapi\.json">[\s\S]*<\/noscript>/)
    // Every script is a file of pfin's, with no inline code; no inline styles or event handlers.
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBe(2)
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/^ src="\/docs\/assets\/[^"]+\.js"$/)
      expect(body).toBe('')
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i)
    expect(assets).toEqual([
      expect.stringMatching(/^\/docs\/assets\/swagger-ui-[\d.]+\.css$/),
      expect.stringMatching(/^\/docs\/assets\/swagger-ui-[\d.]+\.js$/),
      expect.stringMatching(/^\/docs\/assets\/pfin-docs-[0-9a-f]{12}\.js$/),
    ])
  })

  test('references no other host', () => {
    expect(page.text).not.toMatch(/https?:|\/\/[a-z]/i)
    for (const [, url] of page.text.matchAll(/(?:src|href|data-url)="([^"]*)"/g)) {
      expect({ url, ok: url === 'data:,' || /^\/(?!\/)/.test(url as string) }).toEqual({ url, ok: true })
    }
  })
})

describe('the assets', () => {
  test('each is served with its content type, the policy, nosniff and a year of immutable caching', async () => {
    for (const path of assets) {
      const res = await server.request('GET', path)
      expect({ path, status: res.status }).toEqual({ path, status: 200 })
      expect({ path, type: res.headers.get('content-type') }).toEqual({
        path,
        type: path.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
      })
      expect({ path, csp: res.headers.get('content-security-policy') }).toEqual({ path, csp: DOCS_CSP })
      expect({ path, nosniff: res.headers.get('x-content-type-options') }).toEqual({ path, nosniff: 'nosniff' })
      expect({ path, cache: res.headers.get('cache-control') }).toEqual({ path, cache: 'public, max-age=31536000, immutable' })
    }
  })

  test('the viewer is the pinned swagger-ui-dist: its path names the exact version, its bytes are the package’s', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    const pinned = pkg.dependencies['swagger-ui-dist']
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/)
    expect(JSON.parse(readFileSync(join(VIEWER, 'package.json'), 'utf8')).version).toBe(pinned)
    expect(readFileSync(join(ROOT, 'bun.lock'), 'utf8')).toContain(`"swagger-ui-dist@${pinned}"`)
    expect(assets).toContain(`/docs/assets/swagger-ui-${pinned}.js`)
    expect(assets).toContain(`/docs/assets/swagger-ui-${pinned}.css`)

    const script = await fetch(`${server.url}/docs/assets/swagger-ui-${pinned}.js`, { headers: { 'accept-encoding': 'identity' } })
    expect(Buffer.from(await script.arrayBuffer()).equals(readFileSync(join(VIEWER, 'swagger-ui-bundle.js')))).toBe(true)
    // The stylesheet loses only its comment naming a source map that pfin does not serve.
    const style = await (await fetch(`${server.url}/docs/assets/swagger-ui-${pinned}.css`, { headers: { 'accept-encoding': 'identity' } })).text()
    expect(style).not.toContain('sourceMappingURL')
    expect(style.trimEnd()).toBe(readFileSync(join(VIEWER, 'swagger-ui.css'), 'utf8').replace(/\s*\/\*# sourceMappingURL=[^*]*\*\/\s*$/, ''))
    expect(style).not.toMatch(/@import|url\(\s*['"]?(https?:|\/\/)/i)
  })

  test('the start script is plain JavaScript that names no host, outside comments', async () => {
    const path = assets.find((p) => p.includes('/pfin-docs-')) as string
    const init = (await server.request('GET', path)).text
    expect(() => new Function(init)).not.toThrow() // parses; not run
    expect(withoutComments(init)).not.toMatch(/https?:\/\//i)
    expect(withoutComments(init)).not.toMatch(/(['"`])\/\/|\bimport\s*\(/)
    expect(init).toContain('SwaggerUIBundle(')
    expect(init).toContain("getAttribute('data-url')")
    // No public validator, no configuration from the address bar, no key kept in localStorage.
    expect(init).toMatch(/validatorUrl: null/)
    expect(init).toMatch(/queryConfigEnabled: false/)
    expect(init).toMatch(/persistAuthorization: false/)
  })

  test('large ones are sent gzip-compressed to clients that accept it, and the same bytes otherwise', async () => {
    for (const path of assets.filter((p) => p.includes('/swagger-ui-'))) {
      const plain = await fetch(server.url + path, { headers: { 'accept-encoding': 'identity' } })
      const zipped = await fetch(server.url + path, { headers: { 'accept-encoding': 'br;q=1, gzip;q=0.5' }, decompress: false })
      const refused = await fetch(server.url + path, { headers: { 'accept-encoding': 'gzip;q=0' }, decompress: false })
      expect(plain.headers.get('vary')).toBe('Accept-Encoding')
      expect(zipped.headers.get('vary')).toBe('Accept-Encoding')
      expect(plain.headers.get('content-encoding')).toBeNull()
      expect(refused.headers.get('content-encoding')).toBeNull()
      expect(zipped.headers.get('content-encoding')).toBe('gzip')
      const plainBytes = Buffer.from(await plain.arrayBuffer())
      const zippedBytes = Buffer.from(await zipped.arrayBuffer())
      expect(zippedBytes.length).toBeLessThan(plainBytes.length / 3)
      expect(gunzipSync(zippedBytes).equals(plainBytes)).toBe(true)
      expect(Buffer.from(await refused.arrayBuffer()).equals(plainBytes)).toBe(true)
    }
  })

  test('Accept-Encoding is read with its q-values', () => {
    expect(acceptsGzip(null)).toBe(false)
    expect(acceptsGzip('')).toBe(false)
    expect(acceptsGzip('identity')).toBe(false)
    expect(acceptsGzip('gzip')).toBe(true)
    expect(acceptsGzip('gzip, deflate, br, zstd')).toBe(true)
    expect(acceptsGzip('br, GZIP;q=0.1')).toBe(true)
    expect(acceptsGzip('gzip;q=0')).toBe(false)
    expect(acceptsGzip('gzip; q=0.000')).toBe(false)
    expect(acceptsGzip('*')).toBe(true)
    expect(acceptsGzip('x-gzip')).toBe(false)
  })

  test('an unknown asset is 404 route_not_found; other methods are 405', async () => {
    expectProblem(await server.request('GET', '/docs/assets/viewer.js'), 404, 'route_not_found')
    expectProblem(await server.request('GET', '/docs/x'), 404, 'route_not_found')
    expectProblem(await server.request('POST', '/docs', { body: {} }), 405, 'method_not_allowed')
    expectProblem(await server.request('DELETE', assets[0] as string), 405, 'method_not_allowed')
  })
})

describe('GET /', () => {
  test('points to the docs, the document and health, as JSON', async () => {
    const res = await server.request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.json).toEqual({ name: 'pfin', docs: '/docs', openapi: '/openapi.json', health: '/healthz' })
    for (const path of Object.values(res.json as Record<string, string>).filter((v) => v.startsWith('/'))) {
      expect({ path, status: (await server.request('GET', path)).status }).toEqual({ path, status: 200 })
    }
    expectProblem(await server.request('POST', '/', { body: {} }), 405, 'method_not_allowed')
  })
})

describe('keyless and uncounted, with the caller’s request id and counts', () => {
  const paths = () => ['/', '/docs', ...assets, '/openapi.json']

  test('with a key: the key’s counts, unchanged', async () => {
    const owner = await server.owner()
    await awaitFreshMinute()
    await server.request('GET', '/v1/me', { key: owner.key })
    for (const path of paths()) {
      const res = await sendRaw(server.url, path, { headers: { authorization: `Bearer ${owner.key}`, 'x-request-id': 'docs-check.1' } })
      expect({ path, status: res.status, requestId: res.headers.get('x-request-id') }).toEqual({ path, status: 200, requestId: 'docs-check.1' })
      expect({ path, remaining: intHeader(res, 'x-ratelimit-remaining-minute'), limit: intHeader(res, 'x-ratelimit-limit-minute') }).toEqual({
        path,
        remaining: 49,
        limit: 50,
      })
    }
    expect(intHeader(await server.request('GET', '/v1/me', { key: owner.key }), 'x-ratelimit-remaining-minute')).toBe(48)
  })

  test('without a key: the address’s counts, unchanged', async () => {
    await awaitFreshMinute()
    const first = await server.request('GET', '/docs')
    const before = intHeader(first, 'x-ratelimit-remaining-minute')
    for (const path of [...paths(), ...paths()]) {
      const res = await server.request('GET', path)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/)
      for (const name of RATE_LIMIT_HEADERS) expect({ path, name, present: res.headers.has(name) }).toEqual({ path, name, present: true })
      expect({ path, remaining: intHeader(res, 'x-ratelimit-remaining-minute') }).toEqual({ path, remaining: before })
    }
  })
})

describe('/openapi.json', () => {
  test('is still the document (the swagger plugin’s own page, given the same path, is replaced by it)', async () => {
    const res = await server.request('GET', '/openapi.json')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(res.json).toMatchObject({ openapi: '3.1.0', info: { title: 'pfin API', version: '1.0.0-alpha' } })
  })

  test('documents neither GET / nor the docs assets (they are not part of the API)', async () => {
    const doc = (await server.request('GET', '/openapi.json')).json as { paths: Record<string, unknown> }
    expect(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/docs/'))).toEqual([])
    expect(Object.keys(doc.paths)).toContain('/docs')
  })
})
