import type { AuthContext } from './auth.ts'
import { RawFile } from './body.ts'
import type { Platform, RequestState } from './context.ts'
import { ApiError } from './errors.ts'
import { Issues, shownName } from './issues.ts'
import type { AnyRoute } from './route.ts'
import { mayCall } from './scopes.ts'
import { assertValid } from './validation.ts'

/**
 * Admission (CONTRACT §6, §7): the checks every request passes before its handler, in contract
 * order after the route: authentication's outcome counted against the rate limit, then scope
 * and tier; the query parameters a route does not take; a write's body against its schema.
 */

type Headers = Record<string, string | number>

/**
 * The request's URL. Bun makes `request.url` from the Host header, and without a usable one (an
 * HTTP/1.0 request with none, `Host: `, `Host: x/y`) it is the bare target, `/v1/accounts?limit=5`:
 * resolved against a placeholder origin, the path and query are read the same either way.
 */
export const requestUrl = (request: Request): URL => new URL(request.url, 'http://host.invalid')

/**
 * The 401's challenge. With PUBLIC_URL set it names the resource's metadata document (RFC 9728
 * §5.1), so an OAuth client (an MCP connector) finds the authorization server from this answer.
 */
export function bearerChallenge(platform: Platform, resource: 'v1' | 'mcp'): string {
  // A cluster node serves no sign-in (CONTRACT §31): naming its metadata would send clients to a 404.
  const base = platform.cluster ? null : platform.config.publicUrl
  return base ? `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/${resource}"` : 'Bearer'
}

/** Counts the request against the key's bucket, or the client IP's without a valid key; throws 429, then 401. */
export function admit(platform: Platform, auth: AuthContext | null, state: RequestState, headers: Headers, resource: 'v1' | 'mcp' = 'v1'): AuthContext {
  const retryAfter = auth
    ? platform.limiter.consume(`key:${auth.principal.keyId}`, platform.limits.key, headers)
    : platform.limiter.consume(`ip:${state.ip}`, platform.limits.anonymous, headers)
  if (retryAfter > 0) {
    throw new ApiError('rate_limit_exceeded', `Rate limit exceeded; retry in ${retryAfter} seconds`)
  }
  if (!auth) {
    throw new ApiError('unauthorized', 'A valid API key or access token is required: send Authorization: Bearer <key>', {
      'www-authenticate': bearerChallenge(platform, resource),
    })
  }
  return auth
}

/**
 * Counts `more` requests beyond the one `admit` counted, all or none: the other requests of a
 * JSON-RPC batch, each of which counts once (CONTRACT §17). Throws 429 when they do not fit.
 */
export function admitMore(platform: Platform, auth: AuthContext, more: number, headers: Headers): void {
  const retryAfter = platform.limiter.consume(`key:${auth.principal.keyId}`, platform.limits.key, headers, more)
  if (retryAfter > 0) {
    throw new ApiError(
      'rate_limit_exceeded',
      `This batch holds ${more + 1} JSON-RPC requests, each counted once, and the key's rate limit has fewer left: nothing of it ran; send fewer at a time, or retry in ${retryAfter} seconds`,
    )
  }
}

/**
 * A route that takes no query parameters refuses any, as a list refuses one it does not know:
 * a misspelt or misplaced parameter (`/v1/accounts/acct_…?includeArchived=true`) is an error
 * the client sees, never silently ignored.
 */
export function refuseQueryParameters(params: URLSearchParams): void {
  const issues = new Issues()
  for (const name of new Set(params.keys())) {
    const why = issues.count === 0 ? ': this route takes no query parameters' : ''
    issues.add('unknown', () => `query parameter '${shownName(name)}' is not allowed${why}`)
  }
  if (issues.count > 0) throw new ApiError('validation_failed', issues.detail())
}

export function authorize(route: AnyRoute, auth: AuthContext): void {
  if (auth.accessMode === 'delegated' && route.delegable === false) {
    throw new ApiError(
      'insufficient_scope',
      "This route manages the key owner's own keys and grants and never acts on another's ledger (no re-delegation): send it without Pfin-Subject",
    )
  }
  if (!mayCall(auth.principal.scopes, route)) {
    const held = auth.principal.scopes
    const missing = route.scopesNeeded === 'any' ? route.scopes : route.scopes.filter((scope) => !held.includes(scope))
    const lackedByKey = missing.filter((scope) => !auth.principal.keyScopes.includes(scope))
    // Under delegation a scope the key holds may be one the grant does not: say which.
    const why =
      auth.grant && lackedByKey.length === 0
        ? `: the grant to ${auth.subject.id}'s ledger does not include ${missing.length > 1 ? 'them' : 'it'}`
        : auth.grant
          ? ' (a delegated request holds the scopes both the key and the grant hold)'
          : ''
    if (route.scopesNeeded === 'any') throw new ApiError('insufficient_scope', `This API key needs one of the scopes ${route.scopes.join(', ')}${why}`)
    throw new ApiError('insufficient_scope', `This API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}${why}`)
  }
  requireProTier(auth)
}

/**
 * Only Pro owners may use the API (CONTRACT §3), over REST and MCP alike: the key's owner, and
 * under delegation the owner whose ledger is served too (CONTRACT §30).
 */
export function requireProTier(auth: AuthContext): void {
  if (auth.principal.owner.tier !== 'pro') throw new ApiError('pro_tier_required', 'The API is available to Pro tier owners only')
  if (auth.subject.tier !== 'pro') {
    throw new ApiError('pro_tier_required', `The ledger of ${auth.subject.id} is on the free tier: the API serves Pro tier owners' ledgers only`)
  }
}

/** A write's body against its route: the route's own check (the batch's), or its schema; a file is its handler's to read. */
export function checkBody(route: AnyRoute, value: unknown): void {
  if (value instanceof RawFile) return
  if (value === undefined && route.fileBody) throw new ApiError('validation_failed', `the request body is empty: ${route.fileBody.description}`)
  if (route.checkBody) route.checkBody(value)
  else if (route.body) assertValid(route.body, value, 'body')
}
