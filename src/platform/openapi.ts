import { Type } from '@sinclair/typebox'
import type { TSchema } from '@sinclair/typebox'
import { t } from 'elysia'
import { ERRORS, type ErrorCode } from './errors.ts'
import { SCOPES } from './scopes.ts'

/**
 * Builds each operation of /openapi.json from the same TypeBox schemas that validate the
 * requests. Named schemas (those with a `title`) become components and are referenced.
 */

export const ProblemSchema = t.Object(
  {
    type: t.String({ format: 'uri', examples: ['urn:pfin:problem:not_found'] }),
    title: t.String(),
    detail: t.String(),
    status: Type.Integer(),
    code: t.String({ enum: Object.keys(ERRORS) }),
    request_id: t.String(),
  },
  { title: 'Problem', additionalProperties: false, description: 'An error, as application/problem+json (RFC 9457).' },
)

const integerHeader = (description: string, minimum = 0) => ({ description, schema: { type: 'integer', minimum } })

export const HEADERS = {
  RequestId: { description: 'Request id; echoes a sane client-sent X-Request-Id. Equals `request_id` in error bodies.', schema: { type: 'string' } },
  RateLimitLimitMinute: integerHeader('Requests allowed in the current UTC minute.'),
  RateLimitRemainingMinute: integerHeader('Requests left in the current UTC minute, counting this one.'),
  RateLimitResetMinute: integerHeader('Seconds until the minute window resets.', 1),
  RateLimitLimitDay: integerHeader('Requests allowed in the current UTC day.'),
  RateLimitRemainingDay: integerHeader('Requests left in the current UTC day, counting this one.'),
  RateLimitResetDay: integerHeader('Seconds until the day window resets.', 1),
  RetryAfter: integerHeader('Seconds to wait before retrying.', 1),
  Location: { description: 'URL of the created resource.', schema: { type: 'string' } },
  IdempotentReplayed: {
    description: '`true` when this is a stored response replayed for a repeated Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  ETag: {
    description:
      'Strong entity tag of the resource in `data` as it is now; it changes with every change of it. Send it back in If-Match (PATCH, DELETE) or If-None-Match (GET).',
    schema: { type: 'string', examples: ['"3q2-7w9Vh1mYk0cB4uQZKg"'] },
  },
} as const

export const COMMON_HEADERS = {
  'X-Request-Id': { $ref: '#/components/headers/RequestId' },
  'X-RateLimit-Limit-Minute': { $ref: '#/components/headers/RateLimitLimitMinute' },
  'X-RateLimit-Remaining-Minute': { $ref: '#/components/headers/RateLimitRemainingMinute' },
  'X-RateLimit-Reset-Minute': { $ref: '#/components/headers/RateLimitResetMinute' },
  'X-RateLimit-Limit-Day': { $ref: '#/components/headers/RateLimitLimitDay' },
  'X-RateLimit-Remaining-Day': { $ref: '#/components/headers/RateLimitRemainingDay' },
  'X-RateLimit-Reset-Day': { $ref: '#/components/headers/RateLimitResetDay' },
}

type Json = Record<string, unknown>

/** Deep copy as plain JSON (TypeBox keeps symbols), with titled sub-schemas moved to `components`. */
export function toOpenApiSchema(schema: TSchema, components: Record<string, unknown>): Json {
  const plain = JSON.parse(JSON.stringify(schema)) as Json
  return extract(plain, components)
}

function extract(node: Json, components: Record<string, unknown>): Json {
  const isSchema = typeof node.type === 'string' || Array.isArray(node.anyOf)
  const walked: Json = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && value && typeof value === 'object') {
      walked.properties = Object.fromEntries(Object.entries(value as Json).map(([name, child]) => [name, extract(child as Json, components)]))
    } else if ((key === 'items' || key === 'additionalProperties') && value && typeof value === 'object') {
      walked[key] = extract(value as Json, components)
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
      walked[key] = value.map((child) => extract(child as Json, components))
    } else {
      walked[key] = value
    }
  }
  if (walked.type === 'string') statesWellFormedText(walked)
  if (isSchema && typeof node.title === 'string') {
    components[node.title] = walked
    return { $ref: `#/components/schemas/${node.title}` }
  }
  return walked
}

/**
 * Text with no lone surrogate (a UTF-16 half with no partner): every string of a request is
 * refused with 422 otherwise (body.ts), so the document says so too. It reads the same with
 * and without the `u` flag: a pair is one character or two that the second branch matches.
 */
export const WELL_FORMED_TEXT = '^(?:[^\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$'
/** The same, for text that must hold more than spaces (a name, an externalId: `pattern: '\\S'`). */
export const WELL_FORMED_NOT_BLANK = `^(?=[\\s\\S]*\\S)${WELL_FORMED_TEXT.slice(1)}`

/**
 * Adds the well-formed-text rule to a string schema that does not already imply it: free text,
 * or text whose only pattern is "not blank". Formats, enums and anchored ASCII patterns (a
 * currency, a date) admit no surrogate at all.
 */
function statesWellFormedText(schema: Json): void {
  if (schema.format !== undefined || schema.enum !== undefined || schema.const !== undefined) return
  if (schema.pattern === undefined) schema.pattern = WELL_FORMED_TEXT
  else if (schema.pattern === '\\S') schema.pattern = WELL_FORMED_NOT_BLANK
}

export interface OperationSpec {
  method: string
  path: string
  operationId: string
  summary: string
  description?: string
  tag: string
  scopes: readonly string[]
  scopesNeeded?: 'all' | 'any'
  responseHeaders?: Record<string, unknown>
  body?: TSchema
  query?: TSchema
  params?: TSchema
  response: TSchema
  statuses: readonly number[]
  errors: readonly ErrorCode[]
  requestExample?: unknown
  responseExample?: unknown
  /** A single resource's route: ETag on success; a GET also answers 304 (CONTRACT §25). */
  etag?: boolean
  /** Set on a PATCH or DELETE that honours If-Match (412). */
  current?: unknown
  fileBody?: { description: string }
}

const SUCCESS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created' }

/** The errors every authenticated route can return, and those of every POST and PATCH. */
const AUTHENTICATED_ERRORS: ErrorCode[] = [
  'unauthorized',
  'insufficient_scope',
  'pro_tier_required',
  'rate_limit_exceeded',
  'internal_error',
  'storage_unavailable',
  'server_busy',
]
const WRITE_ERRORS: ErrorCode[] = [
  'idempotency_key_missing',
  'idempotency_key_invalid',
  'malformed_json',
  'idempotency_key_reused',
  'idempotency_key_in_progress',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'insufficient_storage',
]

/** What a write without a body can meet: the disk is full and nothing was written. */
const STORAGE_WRITE_ERRORS: ErrorCode[] = ['insufficient_storage']

function scopeText(spec: OperationSpec): string {
  const list = spec.scopes.map((s) => `\`${s}\``).join(', ')
  if (spec.scopesNeeded === 'any') return `Required scope: at least one of ${list}.`
  return `Required scope${spec.scopes.length > 1 ? 's' : ''}: ${list}.`
}

export function buildOperation(spec: OperationSpec, components: Record<string, unknown>): Json {
  const parameters: Json[] = []
  for (const [where, schema] of [
    ['path', spec.params],
    ['query', spec.query],
  ] as const) {
    if (!schema) continue
    const plain = toOpenApiSchema(schema, components) as { properties?: Json; required?: string[] }
    for (const [name, property] of Object.entries(plain.properties ?? {})) {
      const { description, ...rest } = property as Json
      parameters.push({ name, in: where, required: where === 'path' || (plain.required ?? []).includes(name), description, schema: rest })
    }
  }
  const isWrite = spec.method === 'POST' || spec.method === 'PATCH' || spec.method === 'PUT'
  // A PUT sets a state outright, so a repeat is harmless: its key is optional (CONTRACT §8).
  const keyOptional = spec.method === 'PUT'
  if (isWrite) parameters.push({ $ref: `#/components/parameters/${keyOptional ? 'OptionalIdempotencyKey' : 'IdempotencyKey'}` })
  const tagged = spec.etag === true || spec.current !== undefined
  const notModified = tagged && spec.method === 'GET'
  const conditional = spec.current !== undefined
  if (notModified) parameters.push({ $ref: '#/components/parameters/IfNoneMatch' })
  if (conditional) parameters.push({ $ref: '#/components/parameters/IfMatch' })

  const responses: Json = {}
  for (const status of spec.statuses) {
    const headers: Json = { ...COMMON_HEADERS, ...spec.responseHeaders }
    if (status === 201) headers.Location = { $ref: '#/components/headers/Location' }
    if (isWrite) headers['Idempotent-Replayed'] = { $ref: '#/components/headers/IdempotentReplayed' }
    if (tagged) headers.ETag = { $ref: '#/components/headers/ETag' }
    const content: Json = { schema: toOpenApiSchema(spec.response, components) }
    if (spec.responseExample !== undefined) content.example = spec.responseExample
    responses[String(status)] = { description: SUCCESS_TEXT[status] ?? 'OK', headers, content: { 'application/json': content } }
  }
  if (notModified) {
    responses['304'] = {
      description: 'Not Modified: If-None-Match names the current ETag; no body',
      headers: { ...COMMON_HEADERS, ETag: { $ref: '#/components/headers/ETag' } },
    }
  }
  // A DELETE writes too: a full disk refuses it like any write.
  // Any route refuses query parameters it does not take (validation_failed), with or without a query of its own.
  const codes = [
    ...AUTHENTICATED_ERRORS,
    'validation_failed' as const,
    ...(isWrite ? WRITE_ERRORS.filter((code) => !(keyOptional && code === 'idempotency_key_missing')) : []),
    ...(spec.method === 'DELETE' ? STORAGE_WRITE_ERRORS : []),
    ...(conditional ? (['precondition_failed'] as const) : []),
    ...spec.errors,
  ]
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of new Set(codes)) {
    const status = ERRORS[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Json = { ...COMMON_HEADERS }
    if (status === 429 || list.includes('idempotency_key_in_progress')) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' }
    if (status === 401)
      headers['WWW-Authenticate'] = {
        description: 'Bearer; with sign-in on, Bearer resource_metadata="…/.well-known/oauth-protected-resource/v1" (RFC 9728)',
        schema: { type: 'string' },
      }
    if (status === 412) headers.ETag = { $ref: '#/components/headers/ETag' }
    // A write's refusal by its handler is stored and replayed like a success (CONTRACT §8); a
    // field's shape (validation_failed) is not, so the client may fix it under the same key.
    if (isWrite && list.some((code) => code !== 'validation_failed' && spec.errors.includes(code))) {
      headers['Idempotent-Replayed'] = { $ref: '#/components/headers/IdempotentReplayed' }
    }
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${ERRORS[code].title}`).join('; '),
      headers,
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    }
  }

  const operation: Json = {
    operationId: spec.operationId,
    summary: spec.summary,
    description: [spec.description, scopeText(spec)].filter(Boolean).join('\n\n'),
    tags: [spec.tag],
    // Alternatives in `security` are ORed: one entry per scope when any one of them will do.
    security: spec.scopesNeeded === 'any' ? spec.scopes.map((scope) => ({ bearerAuth: [scope] })) : [{ bearerAuth: [...spec.scopes] }],
    parameters,
    responses,
  }
  if (spec.body) {
    const content: Json = { schema: toOpenApiSchema(spec.body, components) }
    if (spec.requestExample !== undefined) content.example = spec.requestExample
    // A route that takes a file: the file itself (sent with any media type but JSON) is the other form of its body.
    const file = spec.fileBody && { 'application/octet-stream': { schema: { type: 'string', format: 'binary', description: spec.fileBody.description } } }
    operation.requestBody = { required: true, content: { ...file, 'application/json': content } }
  }
  return operation
}

/**
 * The routes' operations, built when the document is first asked for instead of at start-up
 * (where they took 15–25 ms of a compiled binary's start, most of `createApp`). Each route hands Elysia
 * an empty `detail` object now; Elysia keeps that very object, and `complete` fills it in
 * place (and `components` with it) before the swagger plugin reads them.
 */
export class DeferredOperations {
  private readonly pending: (() => void)[] = []
  constructor(private readonly components: Record<string, unknown>) {}

  /** The route's `detail` for Elysia: empty until `complete`. */
  detailFor(spec: OperationSpec): Json {
    const detail: Json = {}
    this.pending.push(() => Object.assign(detail, buildOperation(spec, this.components)))
    return detail
  }

  /** Builds the operations not yet built, in the order the routes were mounted. */
  complete(): void {
    for (const build of this.pending.splice(0)) build()
  }
}

/** An uncounted, keyless route of the server itself (health, the document, the docs page). */
export function systemOperation(operationId: string, summary: string, mediaType: string, schema: Json): Json {
  return {
    operationId,
    summary,
    tags: ['System'],
    security: [],
    responses: { 200: { description: 'OK', headers: { ...COMMON_HEADERS }, content: { [mediaType]: { schema } } } },
  }
}

/** The document-level parts: info, security scheme, shared parameters, headers, schemas. */
export function documentBase(components: Record<string, unknown>) {
  toOpenApiSchema(ProblemSchema, components)
  return {
    openapi: '3.1.0',
    info: {
      title: 'pfin API',
      version: '1.0.0-alpha',
      description:
        'Self-hosted personal-finance API. Authenticate with `Authorization: Bearer <API key>` (or an OAuth access token from pfin’s sign-in, /.well-known/oauth-authorization-server); send `Idempotency-Key` on every POST and PATCH (on PUT it is optional). Money values are exact decimals with at most 8 decimal places. Errors are application/problem+json.',
    },
    servers: [{ url: '/' }],
    paths: {
      '/openapi.json': { get: systemOperation('getOpenApiDocument', 'This document (no key needed, not counted)', 'application/json', { type: 'object' }) },
      '/docs': { get: systemOperation('getDocs', 'Interactive API reference (no key needed, not counted)', 'text/html', { type: 'string' }) },
    },
    tags: [{ name: 'Profile' }, { name: 'Accounts' }, { name: 'Transactions' }, { name: 'Categories' }, { name: 'Payees' }, { name: 'System' }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: `A personal API key (\`pfk_…\`) or an OAuth access token (\`pfa_…\`) from pfin’s sign-in. Each carries scopes (a key's set by the operator with \`key create\`, \`key update\` or by its owner through /v1/keys; a token's granted at sign-in): ${SCOPES.map((scope) => `\`${scope}\``).join(', ')}. Each operation names the scopes it needs.`,
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: true,
          description: 'Makes the request safe to retry: the same key with the same request replays the stored response.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
        },
        IfMatch: {
          name: 'If-Match',
          in: 'header',
          required: false,
          description:
            'Change or delete only if the resource is still as read: its ETag from an earlier answer (or `*`: if it exists). A stale tag is 412 `precondition_failed` with the current ETag, and nothing is written.',
          schema: { type: 'string' },
        },
        IfNoneMatch: {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          description: 'The ETag of the copy you hold: 304 without a body while it is still current.',
          schema: { type: 'string' },
        },
        OptionalIdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Optional on PUT (a repeated PUT is harmless either way); when sent, it works as on POST: the same key with the same request replays the stored response.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
        },
      },
      headers: HEADERS,
      schemas: components,
    },
  }
}
