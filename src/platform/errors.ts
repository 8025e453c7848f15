/**
 * One table of error codes (CONTRACT §6), one error class, one renderer.
 * Handlers throw `ApiError`; the server's error hook turns anything into problem+json.
 */
export const ERRORS = {
  malformed_json: { status: 400, title: 'Malformed JSON' },
  idempotency_key_missing: { status: 400, title: 'Idempotency-Key header missing' },
  idempotency_key_invalid: { status: 400, title: 'Idempotency-Key header invalid' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  pro_tier_required: { status: 403, title: 'Pro tier required' },
  origin_not_allowed: { status: 403, title: 'Origin not allowed' },
  system_category_read_only: { status: 403, title: 'System category is read-only' },
  not_found: { status: 404, title: 'Not found' },
  route_not_found: { status: 404, title: 'Route not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  idempotency_key_reused: { status: 409, title: 'Idempotency-Key reused' },
  idempotency_key_in_progress: { status: 409, title: 'Idempotency-Key in progress' },
  external_id_conflict: { status: 409, title: 'externalId already in use' },
  payee_exists: { status: 409, title: 'Payee already exists' },
  tag_exists: { status: 409, title: 'Tag already exists' },
  limit_reached: { status: 409, title: 'Limit reached' },
  /** A live household grant from this subject to this grantee exists already (CONTRACT §30). */
  grant_exists: { status: 409, title: 'Grant already exists' },
  /** MCP only: a destructive or bulk tool's confirmToken is expired, or not for this target as it is now (CONTRACT §17). */
  confirmation_required: { status: 409, title: 'Confirmation required' },
  cursor_expired: { status: 410, title: 'Cursor expired' },
  /** If-Match names a version of the resource that is no longer current (CONTRACT §25); the current ETag goes with it. */
  precondition_failed: { status: 412, title: 'Precondition failed' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  /** In a cluster, the owner is placed on another node (CONTRACT §31): the router's map was stale, or the caller bypassed it. */
  misdirected_request: { status: 421, title: 'Misdirected request' },
  validation_failed: { status: 422, title: 'Validation failed' },
  invalid_reference: { status: 422, title: 'Invalid reference' },
  rule_violation: { status: 422, title: 'Rule violation' },
  rate_limit_exceeded: { status: 429, title: 'Rate limit exceeded' },
  internal_error: { status: 500, title: 'Internal error' },
  storage_unavailable: { status: 503, title: 'Storage unavailable' },
  /** More keys wait for their first check than the server queues (CONTRACT §7): retry after `Retry-After` seconds. */
  server_busy: { status: 503, title: 'Server busy' },
  /** In a cluster, the owner is being moved between nodes (CONTRACT §31); retry after `Retry-After` seconds. */
  owner_moving: { status: 503, title: 'Owner moving' },
  insufficient_storage: { status: 507, title: 'Insufficient storage' },
} as const satisfies Record<string, { status: number; title: string }>

export type ErrorCode = keyof typeof ERRORS

export class ApiError extends Error {
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    /** Extra response headers, e.g. `Retry-After` or `Allow`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
    this.status = ERRORS[code].status
  }
}

export interface Problem {
  type: string
  title: string
  detail: string
  status: number
  code: ErrorCode
  request_id: string
}

export function problemBody(code: ErrorCode, detail: string, requestId: string): Problem {
  const { status, title } = ERRORS[code]
  return { type: `urn:pfin:problem:${code}`, title, detail, status, code, request_id: requestId }
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** Shorthands for the errors handlers throw most. */
export const notFound = (what: string, id: string) => new ApiError('not_found', `${what} ${JSON.stringify(id)} was not found`)
export const invalidReference = (field: string, id: string) =>
  new ApiError('invalid_reference', `${field}: ${JSON.stringify(id)} does not refer to one of your records`)
export const ruleViolation = (detail: string) => new ApiError('rule_violation', detail)
export const externalIdConflict = (resource: string, externalId: string | null, holderId: string) =>
  new ApiError('external_id_conflict', `externalId ${JSON.stringify(externalId)} is already used by ${resource} ${holderId}`)
