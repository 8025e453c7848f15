import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import * as oauth from 'oauth4webapi'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { givePassword, NativeApp, openSignIn, PASSWORD, submitSignIn } from './native-app.ts'

/**
 * What the authorization server refuses (CONTRACT §28): redirect URIs that are not exactly
 * registered, authorization requests without S256 PKCE, codes replayed or redeemed with the
 * wrong verifier, client registrations with unsafe redirect URIs, forged forms; and its
 * documents (RFC 8414, RFC 9728), and that all of it is off without PUBLIC_URL.
 */

// Sign-ins run argon2 (and some tests many): seconds on a busy machine.
setDefaultTimeout(60_000)

let server: TestServer
let app: NativeApp

beforeAll(async () => {
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '1000' } })
  const owner = await server.owner({ name: 'Ana' })
  await givePassword(server, owner.id, 'ana')
  app = await NativeApp.register(server)
})
afterAll(async () => {
  app?.stop()
  await server?.stop()
})

describe('the authorization request', () => {
  test('a redirect URI not registered is refused on a page, never redirected to', async () => {
    const { url } = await app.authorizationUrl()
    for (const wrong of ['http://127.0.0.1:4000/other', 'https://evil.example/callback', 'http://127.0.0.1:4000/callback/', 'http://127.0.0.2/callback']) {
      url.searchParams.set('redirect_uri', wrong)
      const answer = await fetch(url, { redirect: 'manual' })
      expect(answer.status).toBe(400)
      expect(answer.headers.get('location')).toBeNull()
      expect(await answer.text()).toContain('Wrong return address')
    }
  })

  test('a loopback redirect URI matches on any port, as RFC 8252 §7.3 says', async () => {
    const { url } = await app.authorizationUrl()
    url.searchParams.set('redirect_uri', 'http://127.0.0.1:61234/callback')
    const answer = await fetch(url, { redirect: 'manual' })
    expect(answer.status).toBe(303)
    expect(answer.headers.get('location')).toStartWith(`${server.url}/signin?request=`)
  })

  test('an unknown client is refused on a page', async () => {
    const { url } = await app.authorizationUrl()
    url.searchParams.set('client_id', 'cli_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b')
    const answer = await fetch(url, { redirect: 'manual' })
    expect(answer.status).toBe(400)
    expect(await answer.text()).toContain('Unknown app')
  })

  test('plain PKCE, or none, is refused back to the app with invalid_request', async () => {
    const plain = await app.authorizationUrl({ method: 'plain' })
    const answer = await fetch(plain.url, { redirect: 'manual' })
    expect(answer.status).toBe(303)
    const back = new URL(answer.headers.get('location') as string)
    expect(back.origin + back.pathname).toBe(app.redirectUri)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('error_description')).toContain('S256')
    expect(back.searchParams.get('state')).toBe(plain.state)
    expect(back.searchParams.get('iss')).toBe(server.url)

    const none = await app.authorizationUrl()
    none.url.searchParams.delete('code_challenge')
    none.url.searchParams.delete('code_challenge_method')
    const noPkce = new URL((await fetch(none.url, { redirect: 'manual' })).headers.get('location') as string)
    expect(noPkce.searchParams.get('error')).toBe('invalid_request')
  })

  test('an unknown scope is invalid_scope; another resource than pfin is invalid_target', async () => {
    const scoped = await app.authorizationUrl({ scope: 'me:read admin:everything' })
    const back = new URL((await fetch(scoped.url, { redirect: 'manual' })).headers.get('location') as string)
    expect(back.searchParams.get('error')).toBe('invalid_scope')
    const other = await app.authorizationUrl()
    other.url.searchParams.set('resource', 'https://other.example/api')
    const target = new URL((await fetch(other.url, { redirect: 'manual' })).headers.get('location') as string)
    expect(target.searchParams.get('error')).toBe('invalid_target')
  })

  test('Deny sends access_denied back to the app', async () => {
    const { url, state } = await app.authorizationUrl()
    const page = await openSignIn(url)
    const answer = await submitSignIn(server, page, { login: '', password: '', action: 'deny' })
    const back = new URL(answer.headers.get('location') as string)
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('state')).toBe(state)
  })
})

describe('the code', () => {
  async function code(verifierFor?: string) {
    const { url, verifier, state } = await app.authorizationUrl()
    const page = await openSignIn(url)
    const answer = await submitSignIn(server, page, { login: 'ana', password: PASSWORD })
    const callback = new URL(answer.headers.get('location') as string)
    return { callback, verifier: verifierFor ?? verifier, state }
  }

  test('a wrong code_verifier gets invalid_grant', async () => {
    const { callback, state } = await code(oauth.generateRandomCodeVerifier())
    await expect(app.exchange(callback, state, oauth.generateRandomCodeVerifier())).rejects.toMatchObject({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge',
    })
  })

  test('a code redeemed twice gives nothing the second time and revokes what it gave (RFC 6749 §4.1.2)', async () => {
    const { callback, state, verifier } = await code()
    const tokens = await app.exchange(callback, state, verifier)
    expect((await server.request('GET', '/v1/me', { key: tokens.access_token })).status).toBe(200)
    await expect(app.exchange(callback, state, verifier)).rejects.toMatchObject({ error: 'invalid_grant' })
    expect((await server.request('GET', '/v1/me', { key: tokens.access_token })).status).toBe(401)
  })

  test('redirect_uri at the token endpoint must be the one of the request', async () => {
    const { callback, verifier } = await code()
    const answer = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') as string,
        code_verifier: verifier,
        client_id: app.client.client_id,
        redirect_uri: 'http://127.0.0.1:1/elsewhere',
      }),
    })
    expect(answer.status).toBe(400)
    expect(await answer.json()).toEqual({ error: 'invalid_grant', error_description: 'redirect_uri differs from the one of the authorization request' })
    expect(answer.headers.get('cache-control')).toBe('no-store')
  })
})

describe('registration (RFC 7591)', () => {
  async function register(metadata: unknown) {
    return fetch(`${server.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) })
  }

  test('refuses redirect URIs a browser or a network could abuse', async () => {
    for (const uri of ['http://app.example/cb', 'javascript:alert(1)', 'data:text/html,x', 'https://app.example/cb#frag', 'not a uri', 'file:///etc/passwd']) {
      const answer = await register({ client_name: 'x', redirect_uris: [uri] })
      expect(answer.status).toBe(400)
      expect(((await answer.json()) as { error: string }).error).toBe('invalid_redirect_uri')
    }
    expect((await register({ client_name: 'x' })).status).toBe(400)
  })

  test('registers a public client with a custom scheme, and says so', async () => {
    const answer = await register({
      client_name: 'Budget Buddy',
      redirect_uris: ['com.example.budget:/oauth'],
      token_endpoint_auth_method: 'client_secret_basic',
    })
    expect(answer.status).toBe(201)
    const body = (await answer.json()) as Record<string, unknown>
    expect(body).toMatchObject({ client_name: 'Budget Buddy', redirect_uris: ['com.example.budget:/oauth'], token_endpoint_auth_method: 'none' })
    expect(body.client_secret).toBeUndefined()
  })
})

describe('the sign-in page', () => {
  test('has a strict Content-Security-Policy and no script', async () => {
    const { url } = await app.authorizationUrl()
    const page = await openSignIn(url)
    expect(page.status).toBe(200)
    const csp = page.headers.get('content-security-policy') as string
    expect(csp).toStartWith("default-src 'none'; style-src 'sha256-")
    expect(csp).toContain(`form-action 'self' ${new URL(app.redirectUri).origin}`)
    expect(csp).toContain("frame-ancestors 'none'")
    expect(page.html).not.toContain('<script')
    // The one style element is the one the policy's hash allows.
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.html)?.[1] as string
    const hash = new Bun.CryptoHasher('sha256').update(style).digest('base64')
    expect(csp).toContain(`'sha256-${hash}'`)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('referrer-policy')).toBe('same-origin')
    expect(page.html).toContain('Budget Buddy (iOS)')
    expect(page.cookie).toStartWith('pfin_csrf=')
  })

  test('refuses a form without its CSRF cookie, or from another origin', async () => {
    const { url } = await app.authorizationUrl()
    const page = await openSignIn(url)
    const noCookie = await submitSignIn(server, { ...page, cookie: '' }, { login: 'ana', password: PASSWORD })
    expect(noCookie.status).toBe(403)
    const otherCookie = await submitSignIn(
      server,
      { ...page, cookie: 'pfin_csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      { login: 'ana', password: PASSWORD },
    )
    expect(otherCookie.status).toBe(403)
    const crossSite = await submitSignIn(server, page, { login: 'ana', password: PASSWORD }, { origin: 'https://evil.example' })
    expect(crossSite.status).toBe(403)
    // The genuine form still works.
    expect((await submitSignIn(server, page, { login: 'ana', password: PASSWORD })).status).toBe(303)
  })

  test('the person can narrow the scopes; none at all is asked again', async () => {
    const { url, verifier, state } = await app.authorizationUrl({ scope: 'me:read accounts:read accounts:write' })
    const page = await openSignIn(url)
    const none = await submitSignIn(server, page, { login: 'ana', password: PASSWORD, scopes: [] })
    expect(none.status).toBe(422)
    const narrowed = await submitSignIn(server, page, { login: 'ana', password: PASSWORD, scopes: ['me:read', 'accounts:write', 'payees:write'] })
    const tokens = await app.exchange(new URL(narrowed.headers.get('location') as string), state, verifier)
    // A scope not asked for (payees:write) is not granted even when sent.
    expect(tokens.scope).toBe('me:read accounts:write')
  })
})

describe('the documents', () => {
  test('authorization server metadata (RFC 8414) and protected resource metadata (RFC 9728)', async () => {
    const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()
    expect(metadata).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      registration_endpoint: `${server.url}/oauth/register`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
    })
    for (const [path, resource] of [
      ['/mcp', `${server.url}/mcp`],
      ['/v1', `${server.url}/v1`],
      ['', server.url],
    ]) {
      const document = await (await fetch(`${server.url}/.well-known/oauth-protected-resource${path}`)).json()
      expect(document).toMatchObject({ resource, authorization_servers: [server.url], bearer_methods_supported: ['header'] })
    }
  })

  test('a 401 on /v1 names its resource metadata', async () => {
    const answer = await server.request('GET', '/v1/me')
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/v1"`)
  })
})

test('without PUBLIC_URL, sign-in and OAuth are off and a 401 says only Bearer', async () => {
  const off = await startTestServer({ env: { PUBLIC_URL: '' } })
  try {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp', '/signin', '/oauth/authorize']) {
      const answer = await off.request('GET', path)
      expect(answer.status).toBe(404)
      expect(answer.json.code).toBe('route_not_found')
    }
    expect((await off.request('GET', '/v1/me')).headers.get('www-authenticate')).toBe('Bearer')
  } finally {
    await off.stop()
  }
})
