import { Elysia } from 'elysia'
import { addVary } from '../vary.ts'
import viewerPackage from 'swagger-ui-dist/package.json' with { type: 'json' }
import viewerScriptFile from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import viewerStyleFile from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }

/**
 * The API reference at `/docs`, served entirely by pfin so it works without internet: Swagger UI
 * (`swagger-ui-dist`, pinned in the lockfile) from files Bun embeds in the single binary, started
 * by a script of pfin's own, under a Content-Security-Policy that allows nothing but this origin.
 */

/**
 * Only this origin: no inline scripts or styles, no third-party hosts. Swagger UI needs no
 * 'unsafe-inline' for styles: React sets element styles through the CSSOM, which CSP does not
 * govern (test/docs/browser.test.ts uses the page under this policy and records no violation).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * Starts Swagger UI on the element that names the document. It is a file of its own (not an
 * inline script) so the page's policy can forbid inline scripts. Plain ES5, no external URL.
 */
export const DOCS_INIT_SCRIPT = `// pfin: starts the API reference on #swagger-ui with the document named by its data-url.
(function () {
  'use strict'
  var root = document.getElementById('swagger-ui')
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-url'),
    domNode: root,
    deepLinking: true,
    filter: true,
    displayRequestDuration: true,
    // No call to the public validator service, no ?url= or ?configUrl= from the address bar,
    // and an API key typed into "Authorize" stays in memory (never in localStorage).
    validatorUrl: null,
    queryConfigEnabled: false,
    persistAuthorization: false
  })
})()
`

const IMMUTABLE = 'public, max-age=31536000, immutable'
const COMMON_HEADERS = { 'content-security-policy': DOCS_CSP, 'x-content-type-options': 'nosniff' }

/** A file served from memory, read once on first use, gzip-compressed once for clients that accept it. */
class Asset {
  private plain?: Promise<Uint8Array>
  private compressed?: Promise<Uint8Array>

  constructor(
    readonly path: string,
    readonly contentType: string,
    private readonly read: () => Promise<Uint8Array>,
  ) {}

  bytes(): Promise<Uint8Array> {
    this.plain ??= this.read().catch((error) => {
      this.plain = undefined
      throw error
    })
    return this.plain
  }

  gzipped(): Promise<Uint8Array> {
    this.compressed ??= this.bytes()
      // Bun's own gzip: node:zlib and its streams would load at start-up for a page few open.
      .then((bytes) => Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>, { level: 9 }))
      .catch((error) => {
        this.compressed = undefined
        throw error
      })
    return this.compressed
  }
}

const encoder = new TextEncoder()
const initHash = new Bun.CryptoHasher('sha256').update(DOCS_INIT_SCRIPT).digest('hex').slice(0, 12)
const viewerVersion = viewerPackage.version

/** Every asset's path names its content (the viewer's exact version, the init script's hash), so browsers may keep it for good. */
const ASSETS = [
  new Asset(`/docs/assets/swagger-ui-${viewerVersion}.js`, 'text/javascript; charset=utf-8', () => Bun.file(viewerScriptFile).bytes()),
  // The stylesheet ends with a source-map comment for a map pfin does not serve; it is dropped.
  new Asset(`/docs/assets/swagger-ui-${viewerVersion}.css`, 'text/css; charset=utf-8', async () =>
    encoder.encode((await Bun.file(viewerStyleFile).text()).replace(/\s*\/\*# sourceMappingURL=[^*]*\*\/\s*$/, '\n')),
  ),
  new Asset(`/docs/assets/pfin-docs-${initHash}.js`, 'text/javascript; charset=utf-8', async () => encoder.encode(DOCS_INIT_SCRIPT)),
] as const
const [SCRIPT, STYLE, INIT] = ASSETS

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pfin API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${STYLE.path}">
</head>
<body>
<noscript><p>This reference needs JavaScript. The API description it shows is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p></noscript>
<div id="swagger-ui" data-url="/openapi.json"></div>
<script src="${SCRIPT.path}"></script>
<script src="${INIT.path}"></script>
</body>
</html>
`

/** Whether an Accept-Encoding header admits gzip (by name or `*`, with a q above 0). */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    if (name !== 'gzip' && name !== '*') continue
    const q = params.find((p) => p.startsWith('q='))
    if (!q || Number(q.slice(2)) > 0) return true
  }
  return false
}

/** Below this, compression is not worth a `Vary`. */
const GZIP_MIN_BYTES = 1024

/**
 * `GET /docs` and its assets, hidden from the OpenAPI document. Mounted inside the uncounted
 * routes, whose hook gives them the caller's X-Request-Id and rate-limit headers.
 */
export function docsRoutes() {
  const app = new Elysia({ name: 'docs' }).get(
    '/docs',
    ({ set }) => {
      Object.assign(set.headers, COMMON_HEADERS, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-cache',
        'referrer-policy': 'no-referrer',
      })
      return PAGE
    },
    { detail: { hide: true } },
  )
  for (const asset of ASSETS) {
    app.get(
      asset.path,
      async ({ request, set }) => {
        const plain = await asset.bytes()
        Object.assign(set.headers, COMMON_HEADERS, { 'content-type': asset.contentType, 'cache-control': IMMUTABLE })
        if (plain.byteLength < GZIP_MIN_BYTES) return plain
        addVary(set.headers, 'Accept-Encoding')
        if (!acceptsGzip(request.headers.get('accept-encoding'))) return plain
        set.headers['content-encoding'] = 'gzip'
        return asset.gzipped()
      },
      { detail: { hide: true } },
    )
  }
  return app
}

/** What `GET /` answers: where to go next. */
export const ROOT_POINTER = Object.freeze({ name: 'pfin', docs: '/docs', openapi: '/openapi.json', health: '/healthz' })
