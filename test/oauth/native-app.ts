import * as oauth from 'oauth4webapi'
import { hashPassword } from '../../src/platform/passwords.ts'
import type { TestServer } from '../support/harness.ts'

/**
 * A native app as RFC 8252 has it, for the tests: it registers itself (RFC 7591), listens on a
 * loopback port for the answer, and signs in with PKCE through pfin's page, which these helpers
 * fill in as a person would, with fetch: the hidden fields and the CSRF cookie read from the HTML.
 * oauth4webapi, a strict client, checks pfin's side of every step.
 */

export const PASSWORD = 'correct horse battery staple'

/** Gives an owner a login and a password (as `owner set-password` does). */
export async function givePassword(server: TestServer, ownerId: string, login: string, password = PASSWORD): Promise<void> {
  server.platform.control.oauth.saveLogin(ownerId, { login, passwordHash: await hashPassword(password) }, Date.now())
}

const insecure = { [oauth.allowInsecureRequests]: true }

export async function discover(server: TestServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.url)
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }))
}

/** Reads the `<input type="hidden">` fields of a page's form. */
export function hiddenFields(html: string): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[match[1] as string] = (match[2] as string)
      .replaceAll('&amp;', '&')
      .replaceAll('&quot;', '"')
      .replaceAll('&#39;', "'")
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
  }
  return fields
}

export function cookieOf(response: Response): string {
  return (response.headers.get('set-cookie') ?? '').split(';')[0] as string
}

export interface SignInPage {
  html: string
  status: number
  fields: Record<string, string>
  cookie: string
  headers: Headers
}

/** Follows the authorization URL to the sign-in page, as the system browser would. */
export async function openSignIn(authorizationUrl: URL, cookie = ''): Promise<SignInPage> {
  const first = await fetch(authorizationUrl, { redirect: 'manual' })
  if (first.status !== 303) return { html: await first.text(), status: first.status, fields: {}, cookie, headers: first.headers }
  const location = first.headers.get('location') as string
  const page = await fetch(location, { redirect: 'manual', headers: cookie ? { cookie } : {} })
  const html = await page.text()
  return { html, status: page.status, fields: hiddenFields(html), cookie: cookieOf(page) || cookie, headers: page.headers }
}

/** Sends the sign-in form; returns pfin's answer (not followed). */
export async function submitSignIn(
  server: TestServer,
  page: SignInPage,
  form: { login: string; password: string; scopes?: string[]; action?: 'allow' | 'deny' },
  headers: Record<string, string> = {},
): Promise<Response> {
  const body = new URLSearchParams({ ...page.fields, login: form.login, password: form.password, action: form.action ?? 'allow' })
  for (const scope of form.scopes ?? [...page.html.matchAll(/name="scope" value="([^"]+)" checked/g)].map((m) => m[1] as string)) body.append('scope', scope)
  return fetch(`${server.url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie, ...headers },
    body,
  })
}

/** A registered app with its loopback listener, which records the answers the browser brings back. */
export class NativeApp {
  readonly callbacks: URL[] = []
  private constructor(
    readonly as: oauth.AuthorizationServer,
    readonly client: oauth.Client,
    readonly redirectUri: string,
    private readonly listener: ReturnType<typeof Bun.serve>,
  ) {}

  static async register(server: TestServer, name = 'Budget Buddy (iOS)'): Promise<NativeApp> {
    const as = await discover(server)
    let app: NativeApp | undefined
    // The port the system gives; RFC 8252 §7.3: registered without it, matched on any port.
    const listener = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (request) => {
        app?.callbacks.push(new URL(request.url))
        return new Response('You can go back to the app.')
      },
    })
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { client_name: name, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' },
        insecure,
      ),
    )
    app = new NativeApp(as, registered as oauth.Client, `http://127.0.0.1:${listener.port}/callback`, listener)
    return app
  }

  async authorizationUrl(opts: { scope?: string; state?: string; method?: string } = {}) {
    const verifier = oauth.generateRandomCodeVerifier()
    const state = opts.state ?? oauth.generateRandomState()
    const url = new URL(this.as.authorization_endpoint as string)
    url.searchParams.set('response_type', 'code')
    url.searchParams.set('client_id', this.client.client_id)
    url.searchParams.set('redirect_uri', this.redirectUri)
    url.searchParams.set('code_challenge', opts.method === 'plain' ? verifier : await oauth.calculatePKCECodeChallenge(verifier))
    url.searchParams.set('code_challenge_method', opts.method ?? 'S256')
    url.searchParams.set('state', state)
    if (opts.scope) url.searchParams.set('scope', opts.scope)
    return { url, verifier, state }
  }

  /** The whole sign-in: the page, the form, the loopback answer, the code for tokens. */
  async signIn(server: TestServer, login: string, password = PASSWORD, opts: { scope?: string; scopes?: string[] } = {}) {
    const { url, verifier, state } = await this.authorizationUrl({ scope: opts.scope })
    const page = await openSignIn(url)
    const answer = await submitSignIn(server, page, { login, password, scopes: opts.scopes })
    if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}: ${await answer.text()}`)
    // The browser follows the redirect to the app's loopback listener.
    await fetch(answer.headers.get('location') as string)
    const callback = this.callbacks.at(-1) as URL
    return this.exchange(callback, state, verifier)
  }

  async exchange(callback: URL, state: string, verifier: string) {
    const params = oauth.validateAuthResponse(this.as, this.client, callback, state)
    return oauth.processAuthorizationCodeResponse(
      this.as,
      this.client,
      await oauth.authorizationCodeGrantRequest(this.as, this.client, oauth.None(), params, this.redirectUri, verifier, insecure),
    )
  }

  async refresh(refreshToken: string) {
    return oauth.processRefreshTokenResponse(
      this.as,
      this.client,
      await oauth.refreshTokenGrantRequest(this.as, this.client, oauth.None(), refreshToken, insecure),
    )
  }

  /** The token endpoint's raw answer to a refresh (for refusals). */
  rawRefresh(refreshToken: string) {
    return oauth.refreshTokenGrantRequest(this.as, this.client, oauth.None(), refreshToken, insecure)
  }

  async revoke(token: string) {
    return oauth.processRevocationResponse(await oauth.revocationRequest(this.as, this.client, oauth.None(), token, insecure))
  }

  stop() {
    this.listener.stop(true)
  }
}
