import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Browser, findChromium } from '../docs/chromium.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { givePassword, NativeApp, PASSWORD } from './native-app.ts'

/**
 * A person signs in through the page in a real headless Chromium (CONTRACT §28): the page
 * renders within its policy (no script, its one style allowed by hash), the person types the
 * login and password, unticks a scope and allows; the browser is sent to the app's loopback
 * address with a code, and the form's redirect passes the page's `form-action`. Skipped where
 * no Chromium is installed, as the /docs browser test is.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

const chromium = findChromium()
if (!chromium) console.warn('SKIPPED sign-in browser test: no Chromium found (see test/docs/browser.test.ts). Install it with `apt-get install -y chromium`.')

describe.skipIf(!chromium)('sign-in in headless Chromium', () => {
  let server: TestServer
  let browser: Browser
  let app: NativeApp

  beforeAll(async () => {
    server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
    await givePassword(server, (await server.owner({ name: 'Ana' })).id, 'ana@example.com')
    app = await NativeApp.register(server, 'Budget Buddy (Android)')
    browser = await Browser.launch(chromium as string, { width: 600, height: 900 })
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    app?.stop()
    await server?.stop()
  })

  test('the person signs in, narrows the scopes and is sent back to the app', async () => {
    await browser.send('Page.enable')
    await browser.send('Runtime.enable')
    await browser.send('Page.addScriptToEvaluateOnNewDocument', {
      source: `window.__violations = []; document.addEventListener('securitypolicyviolation', function (e) { window.__violations.push(e.violatedDirective + ' ' + e.blockedURI) })`,
    })
    const { url, verifier, state } = await app.authorizationUrl({ scope: 'me:read accounts:read transactions:read' })
    await browser.send('Page.navigate', { url: url.href })
    await browser.waitFor<boolean>(`!!document.querySelector('form input[name=password]')`, 20_000)
    expect(await browser.evaluate<string>('document.body.innerText')).toContain('Budget Buddy (Android) asks for access')
    expect(await browser.evaluate<number>('document.scripts.length')).toBe(0)
    // The style applies (its hash is in the policy): the Allow button is blue.
    expect(await browser.evaluate<string>(`getComputedStyle(document.querySelector('button.primary')).backgroundColor`)).toBe('rgb(43, 79, 216)')

    await browser.evaluate(`document.querySelector('#login').focus()`)
    await browser.send('Input.insertText', { text: 'ana@example.com' })
    await browser.evaluate(`document.querySelector('#password').focus()`)
    await browser.send('Input.insertText', { text: PASSWORD })
    await browser.evaluate(`document.querySelector('input[value="transactions:read"]').click()`)
    const dir = process.env.PFIN_ARTIFACTS || mkdtempSync(join(tmpdir(), 'pfin-artifacts-'))
    mkdirSync(dir, { recursive: true })
    await browser.screenshot(join(dir, 'signin.png'))
    expect(await browser.evaluate<string[]>('window.__violations')).toEqual([])

    const before = app.callbacks.length
    await browser.evaluate(`document.querySelector('button[value=allow]').click()`)
    const deadline = Date.now() + 20_000
    while (app.callbacks.length === before && Date.now() < deadline) await Bun.sleep(100)
    const callback = app.callbacks.at(-1) as URL
    expect(callback.searchParams.get('code')).toMatch(/^pfc_/)
    expect(await browser.waitFor<string>(`location.href.startsWith('${app.redirectUri}') && document.body.innerText`, 10_000)).toContain('go back to the app')

    const tokens = await app.exchange(callback, state, verifier)
    expect(tokens.scope).toBe('me:read accounts:read')
    expect((await server.request('GET', '/v1/me', { key: tokens.access_token })).status).toBe(200)
  }, 60_000)
})
