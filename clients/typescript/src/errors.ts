import type { components } from './schema.js'

/** The problem `code`s the server sends (CONTRACT §6, and §17's `origin_not_allowed` and `confirmation_required`), as the generated Problem schema lists them. */
export type ProblemCode = components['schemas']['Problem']['code']

/** Every problem code, at runtime. The type checks keep it equal to the generated union both ways. */
export const PROBLEM_CODES = [
  'malformed_json',
  'unsupported_media_type',
  'payload_too_large',
  'idempotency_key_missing',
  'idempotency_key_invalid',
  'validation_failed',
  'invalid_reference',
  'rule_violation',
  'unauthorized',
  'insufficient_scope',
  'pro_tier_required',
  'origin_not_allowed',
  'system_category_read_only',
  'not_found',
  'route_not_found',
  'method_not_allowed',
  'idempotency_key_reused',
  'idempotency_key_in_progress',
  'external_id_conflict',
  'payee_exists',
  'tag_exists',
  'limit_reached',
  'grant_exists',
  'confirmation_required',
  'cursor_expired',
  'precondition_failed',
  'rate_limit_exceeded',
  'misdirected_request',
  'owner_moving',
  'insufficient_storage',
  'storage_unavailable',
  'server_busy',
  'internal_error',
] as const satisfies readonly ProblemCode[]

// A compile error here means the server's codes and this list differ: regenerate, then update the list.
type Missing = Exclude<ProblemCode, (typeof PROBLEM_CODES)[number]>
const everyCodeListed: [Missing] extends [never] ? true : Missing = true
void everyCodeListed

/**
 * `code` of a PfinError: a server problem code, or `unexpected_response` for an error response
 * that is not pfin's problem+json (say, an HTML 502 from a reverse proxy) or whose code this
 * version of the client does not know (then `detail` starts with that code).
 */
export type PfinErrorCode = ProblemCode | 'unexpected_response'

const KNOWN = new Set<string>(PROBLEM_CODES)

/** An error answer of the pfin API (application/problem+json, RFC 9457), thrown by the client's helpers. */
export class PfinError extends Error {
  override readonly name = 'PfinError'
  /** HTTP status. */
  readonly status: number
  /** Stable machine-readable code (CONTRACT §6). */
  readonly code: PfinErrorCode
  /** Human-readable explanation; names the offending field or parameter when there is one. */
  readonly detail: string
  /** Short summary of the code. */
  readonly title: string
  /** `urn:pfin:problem:<code>`. */
  readonly type: string
  /** The request id (body `request_id`, else the `X-Request-Id` header): quote it to the operator. */
  readonly requestId: string | null
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | null
  /** The response, its body already read. */
  readonly response: Response | undefined

  constructor(problem: {
    status: number
    code: PfinErrorCode
    detail: string
    title?: string
    type?: string
    requestId?: string | null
    retryAfter?: number | null
    response?: Response
  }) {
    super(`${problem.status} ${problem.code}: ${problem.detail}${problem.requestId ? ` (request ${problem.requestId})` : ''}`)
    this.status = problem.status
    this.code = problem.code
    this.detail = problem.detail
    this.title = problem.title ?? problem.code
    this.type = problem.type ?? `urn:pfin:problem:${problem.code}`
    this.requestId = problem.requestId ?? null
    this.retryAfter = problem.retryAfter ?? null
    this.response = problem.response
  }

  /** From an error response and its body (parsed JSON, or text when it was not JSON). */
  static fromResponse(response: Response, body: unknown): PfinError {
    const headerId = response.headers.get('x-request-id')
    const retryAfter = retryAfterMs(response.headers.get('retry-after'))
    const common = { status: response.status, response, retryAfter: retryAfter === null ? null : retryAfter / 1000 }
    if (isProblem(body)) {
      const requestId = typeof body.request_id === 'string' && body.request_id ? body.request_id : headerId
      const title = typeof body.title === 'string' ? body.title : undefined
      const type = typeof body.type === 'string' ? body.type : undefined
      // A code this client does not know (a newer server): kept in the detail, typed as unexpected.
      if (!KNOWN.has(body.code))
        return new PfinError({ ...common, code: 'unexpected_response', detail: `${body.code}: ${body.detail}`, title, type, requestId })
      return new PfinError({ ...common, code: body.code as ProblemCode, detail: body.detail, title, type, requestId })
    }
    const text = typeof body === 'string' ? body.trim().slice(0, 200) : body === undefined ? '' : JSON.stringify(body).slice(0, 200)
    return new PfinError({
      ...common,
      code: 'unexpected_response',
      title: 'Unexpected response',
      detail: `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} without a pfin problem body${text ? `: ${text}` : ''}`,
      requestId: headerId,
    })
  }
}

/** Problem-shaped: a string `code` and `detail` (the other fields are read when present). */
function isProblem(body: unknown): body is { code: string; detail: string; title?: unknown; type?: unknown; request_id?: unknown } {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  return typeof b.code === 'string' && typeof b.detail === 'string'
}

/** Whether `error` is a PfinError (with this code, when given). */
export function isPfinError<C extends PfinErrorCode>(error: unknown, code?: C): error is PfinError & { code: C } {
  return error instanceof PfinError && (code === undefined || error.code === code)
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}
