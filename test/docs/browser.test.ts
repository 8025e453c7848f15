import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { Browser, findChromium } from './chromium.ts'

/**
 * /docs works with no outside network. A real headless Chromium, whose resolver
 * knows no host but 127.0.0.1, loads /docs from a real pfin server; every operation of
 * /openapi.json must be rendered, every request must go to pfin, the page's policy must not be
 * violated and no script may fail. A screenshot goes to $PFIN_ARTIFACTS (default: a temp dir).
 */

const chromium = findChromium()
if (!chromium) {
  console.warn(
    'SKIPPED /docs browser test: no Chromium found (looked for $PFIN_CHROMIUM, chromium, chromium-browser, google-chrome-stable, google-chrome). Install it with `apt-get install -y chromium`; .ci/run does.',
  )
}

/** Where screenshots go: $PFIN_ARTIFACTS (CI may collect it), else a fresh temp dir that is kept. */
function artifactsDir(): string {
  const dir = process.env.PFIN_ARTIFACTS || mkdtempSync(join(tmpdir(), 'pfin-artifacts-'))
  mkdirSync(dir, { recursive: true })
  return dir
}

interface Rendered {
  method: string
  path: string
  summary: string
}

describe.skipIf(!chromium)('/docs in headless Chromium, offline', () => {
  let server: TestServer
  let browser: Browser

  beforeAll(async () => {
    server = await startTestServer()
    browser = await Browser.launch(chromium as string)
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  test('renders every operation from pfin’s own assets and runs one, within its Content-Security-Policy', async () => {
    const requests: string[] = []
    const failed: string[] = []
    const errors: string[] = []
    browser.on('Network.requestWillBeSent', (p) => requests.push((p.request as { url: string }).url))
    browser.on('Network.loadingFailed', (p) => failed.push(`${String(p.type)} ${String(p.errorText)}${p.blockedReason ? ` (${String(p.blockedReason)})` : ''}`))
    browser.on('Runtime.exceptionThrown', (p) =>
      errors.push(JSON.stringify((p.exceptionDetails as { exception?: { description?: string } }).exception?.description ?? p)),
    )
    browser.on('Runtime.consoleAPICalled', (p) => {
      if (p.type === 'error') errors.push(JSON.stringify(p.args))
    })
    await browser.send('Network.enable')
    await browser.send('Runtime.enable')
    await browser.send('Page.enable')
    // Installed before any script of the page: records every violation of its policy.
    await browser.send('Page.addScriptToEvaluateOnNewDocument', {
      source: `window.__violations = []; document.addEventListener('securitypolicyviolation', function (e) { window.__violations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sourceFile || '') + ':' + e.lineNumber) })`,
    })

    const document = (await server.request('GET', '/openapi.json')).json as { paths: Record<string, Record<string, { summary?: string }>> }
    const expected: Rendered[] = []
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) expected.push({ method: method.toUpperCase(), path, summary: operation.summary ?? '' })
    }
    expect(expected.length).toBeGreaterThan(20)

    const started = performance.now()
    await browser.send('Page.navigate', { url: `${server.url}/docs` })
    await browser.waitFor<boolean>(`document.querySelectorAll('.opblock').length >= ${expected.length}`, 60_000)
    const renderMs = Math.round(performance.now() - started)

    const rendered = await browser.evaluate<Rendered[]>(`[...document.querySelectorAll('.opblock')].map((el) => ({
        method: (el.querySelector('.opblock-summary-method')?.textContent ?? '').trim(),
        path: el.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '',
        summary: (el.querySelector('.opblock-summary-description')?.textContent ?? '').trim(),
      }))`)
    const key = (r: Rendered) => `${r.method} ${r.path} — ${r.summary}`
    expect(rendered.map(key).sort()).toEqual(expected.map(key).sort())
    expect(await browser.evaluate<string>(`document.querySelector('.info .title')?.textContent ?? ''`)).toContain('pfin API')

    const artifacts = artifactsDir()
    const shot = join(artifacts, 'docs.png')
    await browser.screenshot(shot)
    console.log(`/docs rendered ${rendered.length} operations in ${renderMs} ms; screenshot: ${shot}`)

    // Use it: open GET /v1/me, try it without a key (401 problem), authorize with a key, try again (200).
    const me = `document.querySelector('.opblock-summary-path[data-path="/v1/me"]').closest('.opblock')`
    await browser.evaluate(`${me}.querySelector('.opblock-summary-control').click()`)
    await browser.waitFor(`!!${me}.querySelector('.try-out__btn')`, 10_000)
    await browser.evaluate(`${me}.querySelector('.try-out__btn').click()`)
    await browser.waitFor(`!!${me}.querySelector('.execute')`, 10_000)
    await browser.evaluate(`${me}.querySelector('.execute').click()`)
    const refused = await browser.waitFor<string>(`${me}.querySelector('.live-responses-table tr.response .response-col_status')?.textContent.trim()`, 20_000)
    expect(refused).toStartWith('401')
    expect(await browser.evaluate<string>(`${me}.querySelector('.live-responses-table tr.response .response-col_description')?.textContent ?? ''`)).toContain(
      'unauthorized',
    )

    const owner = await server.owner({ name: 'Docs Reader' })
    await browser.evaluate(`document.querySelector('.auth-wrapper .authorize').click()`)
    await browser.waitFor(`!!document.querySelector('.modal-ux input')`, 10_000)
    await browser.evaluate(`document.querySelector('.modal-ux input').focus()`)
    await browser.send('Input.insertText', { text: owner.key })
    await browser.evaluate(`document.querySelector('.modal-ux .modal-btn.auth.authorize').click()`)
    await browser.waitFor(`!!document.querySelector('.modal-ux .btn-done')`, 10_000)
    await browser.evaluate(`document.querySelector('.modal-ux .btn-done').click()`)
    await browser.evaluate(`${me}.querySelector('.execute').click()`)
    await browser.waitFor<string>(`${me}.querySelector('.live-responses-table tr.response .response-col_status')?.textContent.trim().startsWith('200')`, 20_000)
    expect(await browser.evaluate<string>(`${me}.querySelector('.live-responses-table tr.response .response-col_description')?.textContent ?? ''`)).toContain(
      'Docs Reader',
    )
    const used = join(artifacts, 'docs-try-it-out.png')
    await browser.evaluate(`${me}.querySelector('.live-responses-table').scrollIntoView()`)
    await browser.screenshot(used)
    console.log(`GET /v1/me from /docs: 401 without a key, 200 with one; screenshot: ${used}`)

    expect(await browser.evaluate<string[]>('window.__violations')).toEqual([])
    // The recorder is live: an inline style is refused and recorded.
    await browser.evaluate(`document.body.insertAdjacentHTML('beforeend', '<p style="color: red">inline</p>')`)
    expect(await browser.waitFor<string[]>(`window.__violations.length > 0 && window.__violations`, 10_000)).toEqual([
      expect.stringMatching(/^style-src-attr inline/),
    ])
    expect(errors).toEqual([])
    expect(failed).toEqual([])
    const outside = requests.filter((url) => !url.startsWith(`${server.url}/`) && !url.startsWith('data:'))
    expect(outside).toEqual([])
    // The page, the viewer's script and stylesheet, pfin's start script and the document.
    expect(requests.map((url) => new URL(url).pathname)).toEqual(
      expect.arrayContaining([
        '/docs',
        '/openapi.json',
        expect.stringMatching(/^\/docs\/assets\/swagger-ui-[\d.]+\.js$/),
        expect.stringMatching(/^\/docs\/assets\/swagger-ui-[\d.]+\.css$/),
      ]),
    )
  }, 120_000)
})
