import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { tokenHash } from '../../src/platform/auth.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { givePassword, hiddenFields, NativeApp, openSignIn, PASSWORD, type SignInPage, submitSignIn } from './native-app.ts'

/**
 * Sign-in against guessing (CONTRACT §28): failures lock the login name and the address, the
 * lock and the answers read the same for a name no owner has, an unknown name costs the same
 * argon2 check; invitations set a password once, within 24 hours, under the password policy.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

let server: TestServer
let app: NativeApp
let ownerId: string

beforeAll(async () => {
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '100000' } })
  ownerId = (await server.owner({ name: 'Ana' })).id
  await givePassword(server, ownerId, 'ana')
  app = await NativeApp.register(server)
})
afterAll(async () => {
  app?.stop()
  await server?.stop()
})

async function page(): Promise<SignInPage> {
  return openSignIn((await app.authorizationUrl()).url)
}

/** The page's text without what differs between any two renderings (the signed request, the CSRF token, the typed login). */
const comparable = (html: string, login: string) =>
  html
    .replace(/value="[^"]*"/g, 'value=""')
    .replace(/127\.0\.0\.1:\d+/g, 'APP')
    .replaceAll(login, 'LOGIN')

describe('brute force', () => {
  test('a wrong password and an unknown login get the same answer, at a similar cost', async () => {
    const known = await page()
    const times = { known: [] as number[], unknown: [] as number[] }
    const answers: string[] = []
    for (let i = 0; i < 5; i++) {
      for (const [kind, login] of [
        ['known', 'ana'],
        ['unknown', 'nobody-here'],
      ] as const) {
        const started = performance.now()
        const answer = await submitSignIn(server, known, { login, password: 'wrong password here' })
        times[kind].push(performance.now() - started)
        expect(answer.status).toBe(401)
        answers.push(comparable(await answer.text(), login))
      }
    }
    expect(new Set(answers).size).toBe(1)
    expect(answers[0]).toContain('The login or the password is wrong.')
    // Both run one argon2 check (the unknown one against a decoy): medians within a factor of four
    // (without the decoy an unknown login answers in well under a tenth of the time).
    const median = (values: number[]) => values.sort((a, b) => a - b)[2] as number
    expect(median(times.unknown)).toBeGreaterThan(median(times.known) / 4)
    expect(median(times.unknown)).toBeLessThan(median(times.known) * 4)
  })

  /** A server of its own, so that one test's failures do not lock the address for the next. */
  async function alone<T>(run: (server: TestServer, app: NativeApp) => Promise<T>): Promise<T> {
    const own = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '100000' } })
    await givePassword(own, (await own.owner({ name: 'Ana' })).id, 'ana')
    await givePassword(own, (await own.owner({ name: 'Bea' })).id, 'bea')
    const ownApp = await NativeApp.register(own)
    try {
      return await run(own, ownApp)
    } finally {
      ownApp.stop()
      await own.stop()
    }
  }

  test('ten failures lock the login, for the right password too; a name no owner has locks the same way', async () => {
    const lockedAnswers = await Promise.all(
      ['bea', 'nobody-at-all'].map((login) =>
        alone(async (own, ownApp) => {
          const form = await openSignIn((await ownApp.authorizationUrl()).url)
          for (let i = 0; i < 10; i++) expect((await submitSignIn(own, form, { login, password: `guess number ${i}` })).status).toBe(401)
          const answer = await submitSignIn(own, form, { login, password: PASSWORD })
          expect(answer.status).toBe(429)
          // Another owner's login is not locked by it.
          expect((await submitSignIn(own, form, { login: 'ana', password: PASSWORD })).status).toBe(303)
          return comparable(await answer.text(), login)
        }),
      ),
    )
    expect(lockedAnswers[0]).toContain('Too many failed sign-ins. Try again in 15 minutes.')
    expect(lockedAnswers[0]).toBe(lockedAnswers[1] as string)
  })

  test('twenty failures from one address lock the address, whatever the logins', async () => {
    await alone(async (own, ownApp) => {
      const form = await openSignIn((await ownApp.authorizationUrl()).url)
      for (let i = 0; i < 20; i++) expect((await submitSignIn(own, form, { login: `someone-${i}`, password: 'a guess at it' })).status).toBe(401)
      expect((await submitSignIn(own, form, { login: 'ana', password: PASSWORD })).status).toBe(429)
    })
  })
})

describe('invitations', () => {
  let fresh: TestServer
  beforeAll(async () => {
    fresh = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '100000' } })
  })
  afterAll(() => fresh?.stop())

  async function invite(ownerId: string, login: string, expiresAt = Date.now() + 86_400_000) {
    const token = `pfi_${crypto.randomUUID()}`
    fresh.platform.control.oauth.saveLogin(ownerId, { login }, Date.now())
    fresh.platform.control.oauth.createInvite(ownerId, tokenHash(token), Date.now(), expiresAt)
    return `${fresh.url}/signin?invite=${token}`
  }

  async function open(url: string) {
    const answer = await fetch(url)
    const html = await answer.text()
    return { status: answer.status, html, fields: hiddenFields(html), cookie: (answer.headers.get('set-cookie') ?? '').split(';')[0] as string }
  }

  async function send(form: Awaited<ReturnType<typeof open>>, password: string, confirm = password) {
    return fetch(`${fresh.url}/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
      body: new URLSearchParams({ ...form.fields, password, confirm }),
    })
  }

  test('sets the password once, under the policy; the owner then signs in', async () => {
    const owner = await fresh.owner({ name: 'Cy' })
    const url = await invite(owner.id, 'cy@example.com')
    const form = await open(url)
    expect(form.status).toBe(200)
    expect(form.html).toContain('cy@example.com')
    const short = await send(form, 'short pass')
    expect(short.status).toBe(422)
    expect(await short.text()).toContain('at least 12 characters')
    expect(await (await send(form, 'PasswordPassword')).text()).toContain('most common passwords')
    expect(await (await send(form, 'a fine password 1', 'a fine password 2')).text()).toContain('differ')
    const done = await send(form, 'a fine long password')
    expect(done.status).toBe(200)
    expect(await done.text()).toContain('Password set')
    // Once only.
    expect((await send(form, 'another fine password')).status).toBe(410)
    expect((await open(url)).status).toBe(410)

    const app = await NativeApp.register(fresh)
    try {
      const tokens = await app.signIn(fresh, 'cy@example.com', 'a fine long password', { scope: 'me:read' })
      expect((await fresh.request('GET', '/v1/me', { key: tokens.access_token })).json.data.id).toBe(owner.id)
    } finally {
      app.stop()
    }
  })

  test('an expired invitation is refused, on the page and in the form', async () => {
    const owner = await fresh.owner({ name: 'Dee' })
    const live = await open(await invite(owner.id, 'dee'))
    const expired = await invite(owner.id, 'dee', Date.now() - 1)
    const page = await open(expired)
    expect(page.status).toBe(410)
    expect(page.html).toContain('expired')
    // A new invitation voided the older one, too.
    expect((await send(live, 'a fine long password')).status).toBe(410)
  })
})
