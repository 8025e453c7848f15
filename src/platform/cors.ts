import type { HeaderSink } from './rate-limit.ts'
import { addVary } from './vary.ts'

/**
 * CORS for browser pages of the origins in CORS_ALLOWED_ORIGINS (CONTRACT §25). Without the
 * setting there is no `Cors` at all: no header is added and no check runs. With it, an allowed
 * origin's requests get `Access-Control-Allow-Origin` (its own origin, never `*`, and never
 * credentials: keys travel in `Authorization`, which a page sets itself) and every response
 * header the contract defines exposed; a preflight gets 204 with the methods and request
 * headers the API takes. `/mcp` is not opened here: it has its own rule (MCP_ALLOWED_ORIGINS).
 */

/** Every response header the contract defines that a page's script may need to read. */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit-Minute',
  'X-RateLimit-Remaining-Minute',
  'X-RateLimit-Reset-Minute',
  'X-RateLimit-Limit-Day',
  'X-RateLimit-Remaining-Day',
  'X-RateLimit-Reset-Day',
  'Retry-After',
  'Idempotent-Replayed',
  'ETag',
  'Location',
  'X-Changes-Cursor',
  'WWW-Authenticate',
  'Allow',
] as const

/** The request headers a page may send beyond the CORS-safelisted ones. */
export const ALLOWED_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Pfin-Subject',
  'X-Request-Id',
] as const

export const ALLOWED_METHODS = ['GET', 'POST', 'PATCH', 'DELETE'] as const

/** How long a browser may keep a preflight's answer: Chromium's cap (Firefox allows a day). */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200

export class Cors {
  private readonly origins: ReadonlySet<string>
  private readonly anyOrigin: boolean
  private readonly exposed = EXPOSED_HEADERS.join(', ')

  constructor(origins: readonly string[]) {
    this.anyOrigin = origins.includes('*')
    this.origins = new Set(origins)
  }

  allows(origin: string | null): origin is string {
    return origin !== null && origin !== 'null' && (this.anyOrigin || this.origins.has(origin))
  }

  /** The headers of an answer to a request from `origin`: `Vary: Origin` always (the answer depends on it), the rest when allowed. */
  decorate(origin: string | null, headers: HeaderSink): void {
    addVary(headers, 'Origin')
    if (!this.allows(origin)) return
    headers['access-control-allow-origin'] = origin
    headers['access-control-expose-headers'] = this.exposed
  }

  /** The CORS headers of a preflight's 204 for an allowed `origin`. */
  preflightHeaders(origin: string): Record<string, string> {
    return {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': ALLOWED_METHODS.join(', '),
      'access-control-allow-headers': ALLOWED_REQUEST_HEADERS.join(', '),
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
    }
  }
}

/** A CORS preflight: `OPTIONS` with `Origin` and `Access-Control-Request-Method` (Fetch standard). */
export function isPreflight(request: Request): boolean {
  return request.method === 'OPTIONS' && request.headers.has('origin') && request.headers.has('access-control-request-method')
}
