import { Elysia } from 'elysia'
import { newId } from '../../db/ids.ts'
import type { OAuthClient, OAuthGrant } from '../../db/control/oauth-store.ts'
import { tokenHash } from '../../platform/auth.ts'
import { readJsonBody, readLimited } from '../../platform/body.ts'
import { type Platform, type RequestState, requestStateOf, type ServerLookup } from '../../platform/context.ts'
import { ApiError, PROBLEM_CONTENT_TYPE, problemBody } from '../../platform/errors.ts'
import { hashPassword, MIN_PASSWORD_LENGTH, normalizeLogin, passwordProblem, verifyPassword } from '../../platform/passwords.ts'
import { PRIVATE_ANSWER_HEADERS } from '../../platform/pipeline.ts'
import type { HeaderSink } from '../../platform/rate-limit.ts'
import { DEFAULT_SCOPES, isScope } from '../../platform/scopes.ts'
import { SignInGuard } from './guard.ts'
import { authorizationServerMetadata, isOwnResource, protectedResourceMetadata, type Resource } from './metadata.ts'
import { consentPage, invitePage, messagePage, pageHeaders } from './pages.ts'
import { formActionSource, redirectShown, redirectUriMatches, redirectUriProblem } from './redirects.ts'
import {
  ACCESS_TOKEN_TTL_MS,
  CODE_TTL_MS,
  mintCode,
  mintCsrf,
  mintTokens,
  type PendingRequest,
  pkceMatches,
  REFRESH_TOKEN_TTL_MS,
  REQUEST_TTL_MS,
  RequestSigner,
  S256_CHALLENGE,
} from './tokens.ts'

/**
 * pfin as an OAuth 2.1 authorization server for its own API (CONTRACT §28): metadata, dynamic
 * registration, the authorization code flow with PKCE (S256 only) through the sign-in page,
 * refresh tokens that rotate, and revocation. Tokens are opaque, kept as SHA-256 in control.db,
 * and act exactly like keys (auth.ts). Everything here is off (404) while PUBLIC_URL is unset.
 */

const FORM_LIMIT = 64 * 1024
const JSON_LIMIT = 16 * 1024
const CSRF_COOKIE = 'pfin_csrf'

type Answer = { status: number; body: string; headers: Record<string, string> }

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...PRIVATE_ANSWER_HEADERS, pragma: 'no-cache', ...headers },
})

/** An OAuth error answer (RFC 6749 §5.2, RFC 7591 §3.2.2). */
const oauthError = (status: number, error: string, description: string, headers: Record<string, string> = {}) =>
  json(status, { error, error_description: description }, headers)

const html = (status: number, body: string, headers: Record<string, string>): Answer => ({ status, body, headers })

const redirect = (location: string): Answer => ({ status: 303, body: '', headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } })

async function readForm(request: Request): Promise<URLSearchParams | null> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded' || request.body === null) return null
  if (Number(request.headers.get('content-length') ?? 0) > FORM_LIMIT) return null
  const bytes = await readLimited(request.body, FORM_LIMIT)
  return new URLSearchParams(new TextDecoder().decode(bytes))
}

/** One value of a form or query parameter; a repeated one is refused (null), as the API refuses repeats. */
function single(params: URLSearchParams, name: string): string | null | undefined {
  const all = params.getAll(name)
  if (all.length > 1) return null
  return all[0]
}

function cookie(request: Request, name: string): string | null {
  const header = request.headers.get('cookie')
  if (!header) return null
  for (const part of header.split(';')) {
    const [key, ...rest] = part.trim().split('=')
    if (key === name) return rest.join('=')
  }
  return null
}

export function oauthEndpoints(platform: Platform, server: ServerLookup) {
  const signer = new RequestSigner()
  const guard = new SignInGuard()
  const now = () => Date.now()
  /** An argon2 hash no password matches: an unknown login is checked against it, at the same cost. */
  let dummy: Promise<string> | undefined
  const dummyHash = () => (dummy ??= hashPassword(mintCsrf()))

  /** Runs a handler with the request's id, the caller's counts (counted or only shown) and a log line. */
  const serve =
    (route: string, count: boolean, handle: (request: Request, state: RequestState, issuer: string) => Answer | Promise<Answer>) =>
    async ({ request }: { request: Request }) => {
      const state = requestStateOf(request, server)
      state.route = route
      const headers: HeaderSink = { 'x-request-id': state.requestId }
      // A cluster node serves no sign-in (CONTRACT §31): nothing tells a router whose node a sign-in
      // belongs to before it happens, and each node's control.db holds only its own owners' logins.
      const issuer = platform.cluster ? null : platform.config.publicUrl
      let answer: Answer
      if (!issuer) {
        platform.limiter.peek(`ip:${state.ip}`, platform.limits.anonymous, headers)
        const why = platform.cluster
          ? 'sign-in and OAuth are served by a single server, not by a cluster node (CLUSTER_NODE): use an API key'
          : 'sign-in and OAuth are off until the operator sets PUBLIC_URL'
        const body = problemBody('route_not_found', `No route matches ${request.method.slice(0, 16)} on this path: ${why}`, state.requestId)
        answer = { status: 404, body: JSON.stringify(body), headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...PRIVATE_ANSWER_HEADERS } }
      } else {
        let retryAfter = 0
        if (count) retryAfter = platform.limiter.consume(`ip:${state.ip}`, platform.limits.anonymous, headers)
        else platform.limiter.peek(`ip:${state.ip}`, platform.limits.anonymous, headers)
        if (retryAfter > 0) {
          answer = oauthError(429, 'temporarily_unavailable', `Too many requests from this address; retry in ${retryAfter} seconds`)
        } else {
          try {
            answer = await handle(request, state, issuer)
          } catch (error) {
            if (!(error instanceof ApiError)) throw error
            answer = oauthError(error.status, 'invalid_request', error.detail)
          }
        }
      }
      platform.access?.record(state, request.method, answer.status)
      return new Response(answer.body || null, { status: answer.status, headers: { ...headers, ...answer.headers } as Record<string, string> })
    }

  // ---- the authorization request

  /** GET /oauth/authorize: checks the request, then sends the person to the sign-in page with it signed. */
  const authorize = (request: Request, _state: RequestState, issuer: string): Answer => {
    const params = new URL(request.url, issuer).searchParams
    const clientId = single(params, 'client_id')
    const client = clientId ? platform.control.oauth.findClient(clientId) : undefined
    // Until the client and its redirect URI are known, errors are shown, never redirected (RFC 6749 §4.1.2.1).
    if (!client)
      return html(400, messagePage('Unknown app', 'This sign-in link names no app registered with this pfin server. Start again from your app.'), pageHeaders())
    const asked = single(params, 'redirect_uri')
    // Absent: the one registered URI, if there is one; given twice (null): none.
    const redirectUri = asked === undefined && client.redirectUris.length === 1 ? client.redirectUris[0] : asked
    if (!redirectUri || !redirectUriMatches(client.redirectUris, redirectUri))
      return html(
        400,
        messagePage('Wrong return address', 'This sign-in link asks to return to an address the app did not register. Start again from your app.'),
        pageHeaders(),
      )
    const state = single(params, 'state')
    const fail = (error: string, description: string) => {
      const target = new URL(redirectUri)
      target.searchParams.set('error', error)
      target.searchParams.set('error_description', description)
      if (state) target.searchParams.set('state', state)
      target.searchParams.set('iss', issuer)
      return redirect(target.href)
    }
    for (const name of ['response_type', 'client_id', 'redirect_uri', 'state', 'scope', 'code_challenge', 'code_challenge_method', 'resource'])
      if (single(params, name) === null) return fail('invalid_request', `${name} is given more than once`)
    if (single(params, 'response_type') !== 'code') return fail('unsupported_response_type', 'pfin supports response_type=code only')
    const challenge = single(params, 'code_challenge')
    const method = single(params, 'code_challenge_method')
    if (!challenge) return fail('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256')
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not accepted)')
    if (!S256_CHALLENGE.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the verifier (43 characters)')
    const resource = single(params, 'resource')
    if (resource && !isOwnResource(issuer, resource)) return fail('invalid_target', `resource must be ${issuer}/v1 or ${issuer}/mcp`)
    const scopeText = single(params, 'scope')
    const scopes = scopeText?.trim() ? [...new Set(scopeText.trim().split(/ +/))] : [...DEFAULT_SCOPES]
    const unknown = scopes.filter((scope) => !isScope(scope))
    if (unknown.length > 0) return fail('invalid_scope', `unknown scope ${unknown.join(', ')}`)
    const pending: PendingRequest = {
      clientId: client.id,
      redirectUri,
      codeChallenge: challenge,
      state: state ?? null,
      scopes,
      expiresAt: now() + REQUEST_TTL_MS,
    }
    return redirect(`${issuer}/signin?request=${signer.sign(pending)}`)
  }

  // ---- the sign-in page

  /** The form's CSRF token: a cookie the page sets, which the form must repeat (and a browser's Origin must be ours). */
  const csrfFor = (request: Request, issuer: string) => {
    const existing = cookie(request, CSRF_COOKIE)
    const value = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : mintCsrf()
    const secure = issuer.startsWith('https:') ? '; Secure' : ''
    const headers: Record<string, string> =
      existing === value ? {} : { 'set-cookie': `${CSRF_COOKIE}=${value}; Path=/signin; HttpOnly; SameSite=Strict${secure}` }
    return { value, headers }
  }

  const consent = (pending: PendingRequest, client: OAuthClient, csrf: string, extra: { login?: string; error?: string; checked?: string[] } = {}) =>
    consentPage({
      clientName: client.name,
      destination: redirectShown(pending.redirectUri),
      scopes: pending.scopes,
      checked: extra.checked ?? pending.scopes,
      handle: signer.sign(pending),
      csrf,
      login: extra.login,
      error: extra.error,
    })

  const expired = () =>
    html(400, messagePage('This sign-in has expired', 'The sign-in page was open too long, or the server restarted. Start again from your app.'), pageHeaders())
  const inviteGone = () =>
    html(
      410,
      messagePage(
        'This invitation cannot be used',
        'The link has expired (it lasts 24 hours) or was used already. Ask the operator of this pfin server for a new one.',
      ),
      pageHeaders(),
    )

  const signinPage = (request: Request, _state: RequestState, issuer: string): Answer => {
    const params = new URL(request.url, issuer).searchParams
    const csrf = csrfFor(request, issuer)
    const handle = single(params, 'request')
    const invite = single(params, 'invite')
    if (handle) {
      const pending = signer.open(handle, now())
      const client = pending && platform.control.oauth.findClient(pending.clientId)
      if (!pending || !client) return expired()
      return html(200, consent(pending, client, csrf.value), { ...pageHeaders(formActionSource(pending.redirectUri)), ...csrf.headers })
    }
    if (invite) {
      const found = platform.control.oauth.findUsableInvite(tokenHash(invite), now())
      const login = found && platform.control.oauth.findLogin(found.ownerId)
      if (!found || !login) return inviteGone()
      return html(200, invitePage({ login: login.login, invite, csrf: csrf.value, minLength: MIN_PASSWORD_LENGTH }), { ...pageHeaders(), ...csrf.headers })
    }
    return html(
      200,
      messagePage('pfin', 'Sign in from your app: it brings you here when it needs you. To set your password, open the invitation link you were given.'),
      pageHeaders(),
    )
  }

  const signinForm = async (request: Request, state: RequestState, issuer: string): Promise<Answer> => {
    const form = await readForm(request)
    const origin = request.headers.get('origin')
    const csrfCookie = cookie(request, CSRF_COOKIE)
    if (!form || (origin !== null && origin !== issuer) || !csrfCookie || form.get('csrf') !== csrfCookie) {
      return html(
        403,
        messagePage('This form cannot be sent', 'It is out of date or came from another site. Go back, reload the page and try again.'),
        pageHeaders(),
      )
    }
    const invite = single(form, 'invite')
    if (invite) return setPassword(form, invite, csrfCookie)
    const handle = single(form, 'request')
    const pending = handle ? signer.open(handle, now()) : null
    const client = pending && platform.control.oauth.findClient(pending.clientId)
    if (!pending || !client) return expired()
    const page = (status: number, extra: { login?: string; error?: string; checked?: string[] }) =>
      html(status, consent(pending, client, csrfCookie, extra), pageHeaders(formActionSource(pending.redirectUri)))

    const back = (params: Record<string, string>) => {
      const target = new URL(pending.redirectUri)
      for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value)
      if (pending.state !== null) target.searchParams.set('state', pending.state)
      target.searchParams.set('iss', issuer)
      return redirect(target.href)
    }
    if (single(form, 'action') === 'deny') return back({ error: 'access_denied', error_description: 'The person declined' })

    const loginText = single(form, 'login') ?? ''
    const password = single(form, 'password') ?? ''
    const checked = form.getAll('scope').filter((scope) => pending.scopes.includes(scope))
    const login = normalizeLogin(loginText) ?? `\u0000${loginText.slice(0, 100)}`
    const waitMs = guard.lockedFor(login, state.ip)
    if (waitMs > 0) {
      const minutes = Math.ceil(waitMs / 60_000)
      return page(429, { login: loginText, checked, error: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` })
    }
    const found = platform.control.oauth.findLoginByName(login)
    // An unknown login, or one without a password yet, costs the same argon2 check as a real one.
    const ok = await verifyPassword(found?.passwordHash ?? (await dummyHash()), password.slice(0, 1024))
    if (!ok || !found?.passwordHash) {
      guard.fail(login, state.ip)
      return page(401, { login: loginText, checked, error: 'The login or the password is wrong.' })
    }
    guard.succeed(login)
    if (checked.length === 0) return page(422, { login: loginText, checked, error: 'Choose at least one thing the app may do, or Deny.' })
    const code = mintCode()
    const at = now()
    platform.control.oauth.createCode({
      codeHash: tokenHash(code),
      ownerId: found.ownerId,
      clientId: client.id,
      scopes: checked,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      createdAt: at,
      expiresAt: at + CODE_TTL_MS,
      grantId: null,
    })
    return back({ code })
  }

  const setPassword = async (form: URLSearchParams, invite: string, csrf: string): Promise<Answer> => {
    const found = platform.control.oauth.findUsableInvite(tokenHash(invite), now())
    const login = found && platform.control.oauth.findLogin(found.ownerId)
    if (!found || !login) return inviteGone()
    const password = single(form, 'password') ?? ''
    const again = (status: number, error: string) =>
      html(status, invitePage({ login: login.login, invite, csrf, error, minLength: MIN_PASSWORD_LENGTH }), pageHeaders())
    if (password !== single(form, 'confirm')) return again(422, 'The two passwords differ.')
    const problem = passwordProblem(password, login.login)
    if (problem) return again(422, `Choose another password: ${problem}.`)
    if (!platform.control.oauth.acceptInvite(tokenHash(invite), await hashPassword(password), now())) return inviteGone()
    return html(200, messagePage('Password set', `You can now sign in as ${login.login} from your app.`), pageHeaders())
  }

  // ---- the token endpoint

  const grantAnswer = (grant: OAuthGrant, tokens: { access: string; refresh: string }) =>
    json(200, {
      access_token: tokens.access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: tokens.refresh,
      scope: grant.scopes.join(' '),
    })

  const token = async (request: Request, _state: RequestState, issuer: string): Promise<Answer> => {
    const form = await readForm(request)
    if (!form) return oauthError(400, 'invalid_request', 'Send the token request as application/x-www-form-urlencoded (at most 64 KiB)')
    for (const name of new Set(form.keys())) if (single(form, name) === null) return oauthError(400, 'invalid_request', `${name} is given more than once`)
    if (request.headers.get('authorization'))
      return oauthError(401, 'invalid_client', 'pfin clients are public: send client_id in the body and no Authorization header', {
        'www-authenticate': 'Basic',
      })
    const grantType = form.get('grant_type')
    const clientId = form.get('client_id')
    if (!clientId) return oauthError(400, 'invalid_request', 'client_id is required')
    const resource = form.get('resource')
    if (resource && !isOwnResource(issuer, resource)) return oauthError(400, 'invalid_target', `resource must be ${issuer}/v1 or ${issuer}/mcp`)
    const at = now()
    if (grantType === 'authorization_code') {
      const code = form.get('code')
      const verifier = form.get('code_verifier')
      const redirectUri = form.get('redirect_uri')
      if (!code || !verifier) return oauthError(400, 'invalid_request', 'code and code_verifier are required')
      let minted: ReturnType<typeof mintTokens> | undefined
      let why = 'the code is unknown, expired or used'
      const refuse = (reason: string) => {
        why = reason
        return null
      }
      const result = platform.control.oauth.redeemCode(tokenHash(code), at, (found) => {
        if (found.clientId !== clientId) return refuse('the code was issued to another client')
        if (redirectUri !== found.redirectUri) return refuse('redirect_uri differs from the one of the authorization request')
        if (!pkceMatches(verifier, found.codeChallenge)) return refuse('code_verifier does not match the code_challenge')
        const grantId = newId('app')
        minted = mintTokens(found.ownerId, grantId, at)
        const grant = {
          id: grantId,
          ownerId: found.ownerId,
          clientId,
          scopes: found.scopes,
          createdAt: at,
          lastUsedAt: null,
          expiresAt: at + REFRESH_TOKEN_TTL_MS,
          revokedAt: null,
        }
        return { grant, tokens: minted.rows }
      })
      if (result.outcome === 'reused') {
        platform.authenticator.revokedHere()
        return oauthError(400, 'invalid_grant', 'the code was used already: the tokens it gave are revoked')
      }
      if (result.outcome !== 'redeemed' || !minted) return oauthError(400, 'invalid_grant', why)
      return grantAnswer(result.grant, minted)
    }
    if (grantType === 'refresh_token') {
      const refresh = form.get('refresh_token')
      if (!refresh) return oauthError(400, 'invalid_request', 'refresh_token is required')
      const scopeText = form.get('scope')?.trim()
      let minted: ReturnType<typeof mintTokens> | undefined
      let why = 'the refresh token is unknown, expired or revoked'
      const refuse = (reason: string) => {
        why = reason
        return null
      }
      let narrowed: string[] | undefined
      const result = platform.control.oauth.rotateRefresh(tokenHash(refresh), at, ({ grant, clientId: owner }) => {
        if (owner !== clientId) return refuse('the refresh token was issued to another client')
        if (scopeText) {
          const asked = [...new Set(scopeText.split(/ +/))]
          if (asked.some((scope) => !grant.scopes.includes(scope))) return refuse('scope may only narrow what was granted')
          narrowed = asked
        }
        minted = mintTokens(grant.ownerId, grant.id, at)
        return { tokens: minted.rows, expiresAt: at + REFRESH_TOKEN_TTL_MS }
      })
      if (result.outcome === 'reused') {
        platform.authenticator.revokedHere()
        return oauthError(400, 'invalid_grant', 'this refresh token was used already: the whole grant is revoked; sign in again')
      }
      if (result.outcome !== 'rotated' || !minted) return oauthError(400, why.startsWith('scope') ? 'invalid_scope' : 'invalid_grant', why)
      let grant = result.grant
      if (narrowed) {
        platform.control.oauth.narrowGrant(grant.id, narrowed)
        platform.authenticator.revokedHere()
        grant = { ...grant, scopes: narrowed }
      }
      return grantAnswer(grant, minted)
    }
    return oauthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token')
  }

  /** POST /oauth/revoke (RFC 7009): either token of a grant ends the whole grant (a sign-out). Unknown tokens are fine. */
  const revoke = async (request: Request): Promise<Answer> => {
    const form = await readForm(request)
    const value = form?.get('token')
    if (!form || !value) return oauthError(400, 'invalid_request', 'token is required (application/x-www-form-urlencoded)')
    const found = platform.control.oauth.findToken(tokenHash(value))
    const clientId = form.get('client_id')
    if (found && (clientId === null || clientId === found.grant.clientId)) {
      platform.control.oauth.revokeGrant(found.grant.id, now())
      platform.authenticator.revokedHere()
    }
    return { status: 200, body: '', headers: { 'cache-control': 'no-store' } }
  }

  /** POST /oauth/register (RFC 7591): open registration of public clients. */
  const register = async (request: Request): Promise<Answer> => {
    let body: unknown
    try {
      body = (await readJsonBody(request, JSON_LIMIT))?.value
    } catch (error) {
      if (error instanceof ApiError) return oauthError(400, 'invalid_client_metadata', error.detail)
      throw error
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return oauthError(400, 'invalid_client_metadata', 'send the client metadata as a JSON object')
    const metadata = body as Record<string, unknown>
    const uris = metadata.redirect_uris
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || uris.some((uri) => typeof uri !== 'string'))
      return oauthError(400, 'invalid_redirect_uri', 'redirect_uris must list 1 to 10 URIs')
    for (const uri of uris as string[]) {
      const problem = redirectUriProblem(uri)
      if (problem) return oauthError(400, 'invalid_redirect_uri', `${uri.slice(0, 200)} ${problem}`)
    }
    const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token']
    if (!Array.isArray(grantTypes) || grantTypes.some((type) => type !== 'authorization_code' && type !== 'refresh_token'))
      return oauthError(400, 'invalid_client_metadata', 'grant_types may hold authorization_code and refresh_token only')
    const responseTypes = metadata.response_types ?? ['code']
    if (!Array.isArray(responseTypes) || responseTypes.some((type) => type !== 'code'))
      return oauthError(400, 'invalid_client_metadata', 'response_types may hold code only')
    const givenName = typeof metadata.client_name === 'string' ? metadata.client_name.trim().slice(0, 100) : ''
    const client: OAuthClient = {
      id: newId('cli'),
      // A client without a name is shown by where it returns to.
      name: givenName || `An app returning to ${redirectShown(uris[0] as string)}`,
      redirectUris: uris as string[],
      createdAt: now(),
    }
    platform.control.oauth.createClient(client)
    // RFC 7591 §3.2.1: the metadata as registered. Every client is public: any other auth method asked for is replaced.
    return json(201, {
      client_id: client.id,
      client_id_issued_at: Math.floor(client.createdAt / 1000),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    })
  }

  const resourceMetadata = (resource: Resource | null) => (_request: Request, _state: RequestState, issuer: string) =>
    json(200, protectedResourceMetadata(issuer, resource), { 'cache-control': 'max-age=3600' })

  const options = { parse: 'none', detail: { hide: true } } as never
  return new Elysia({ name: 'oauth' })
    .get(
      '/.well-known/oauth-authorization-server',
      serve('/.well-known/oauth-authorization-server', false, (_r, _s, issuer) =>
        json(200, authorizationServerMetadata(issuer), { 'cache-control': 'max-age=3600' }),
      ),
      options,
    )
    .get('/.well-known/oauth-protected-resource', serve('/.well-known/oauth-protected-resource', false, resourceMetadata(null)), options)
    .get('/.well-known/oauth-protected-resource/v1', serve('/.well-known/oauth-protected-resource/v1', false, resourceMetadata('v1')), options)
    .get('/.well-known/oauth-protected-resource/mcp', serve('/.well-known/oauth-protected-resource/mcp', false, resourceMetadata('mcp')), options)
    .get('/oauth/authorize', serve('/oauth/authorize', true, authorize), options)
    .post('/oauth/token', serve('/oauth/token', true, token), options)
    .post('/oauth/register', serve('/oauth/register', true, register), options)
    .post('/oauth/revoke', serve('/oauth/revoke', true, revoke), options)
    .get('/signin', serve('/signin', true, signinPage), options)
    .post('/signin', serve('/signin', true, signinForm), options)
}
