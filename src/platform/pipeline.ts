import type { Elysia } from 'elysia'
import type { Tenant, TenantRegistry } from '../db/tenant/registry.ts'
import type { AuthContext } from './auth.ts'
import { readJsonBody } from './body.ts'
import { type Platform, type RequestState, requestStateOf } from './context.ts'
import { ApiError, PROBLEM_CONTENT_TYPE, problemBody } from './errors.ts'
import { fingerprint, readIdempotencyKey, type StoredResponse } from './idempotency.ts'
import { Issues, shownName } from './issues.ts'
import { canonicalJson } from './json.ts'
import type { DeferredOperations } from './openapi.ts'
import type { AnyRoute, HandlerInput, Reply } from './route.ts'
import { mayCall } from './scopes.ts'
import { assertValid, coerceQuery } from './validation.ts'

/**
 * The request pipeline, in the order of CONTRACT §6: route → authentication → rate limit →
 * scope/tier → idempotency → body → handler. The route's handler runs synchronously, inside
 * the write transaction for POST and PATCH, so a write and its idempotency record commit
 * together (in a commit shared with the owner's other writes of the same turn: write-groups.ts).
 */

type Headers = Record<string, string | number>

/**
 * The request's URL. Bun makes `request.url` from the Host header, and without a usable one (an
 * HTTP/1.0 request with none, `Host: `, `Host: x/y`) it is the bare target, `/v1/accounts?limit=5`:
 * resolved against a placeholder origin, the path and query are read the same either way.
 */
export const requestUrl = (request: Request): URL => new URL(request.url, 'http://host.invalid')

/** Counts the request against the key's bucket, or the client IP's without a valid key; throws 429, then 401. */
export function admit(platform: Platform, auth: AuthContext | null, state: RequestState, headers: Headers): AuthContext {
  const retryAfter = auth
    ? platform.limiter.consume(`key:${auth.principal.keyId}`, platform.limits.key, headers)
    : platform.limiter.consume(`ip:${state.ip}`, platform.limits.anonymous, headers)
  if (retryAfter > 0) {
    throw new ApiError('rate_limit_exceeded', `Rate limit exceeded; retry in ${retryAfter} seconds`)
  }
  if (!auth) {
    throw new ApiError('unauthorized', 'A valid API key is required: send Authorization: Bearer <key>', { 'www-authenticate': 'Bearer' })
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

function authorize(route: AnyRoute, auth: AuthContext): void {
  if (!mayCall(auth.principal.scopes, route)) {
    if (route.scopesNeeded === 'any') throw new ApiError('insufficient_scope', `This API key needs one of the scopes ${route.scopes.join(', ')}`)
    const missing = route.scopes.filter((scope) => !auth.principal.scopes.includes(scope))
    throw new ApiError('insufficient_scope', `This API key lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`)
  }
  requireProTier(auth)
}

/** Only Pro owners may use the API (CONTRACT §3), over REST and MCP alike. */
export function requireProTier(auth: AuthContext): void {
  if (auth.subject.tier !== 'pro') throw new ApiError('pro_tier_required', 'The API is available to Pro tier owners only')
}

/** A write's body against its route: the route's own check (the batch's), or its schema. */
function checkBody(route: AnyRoute, value: unknown): void {
  if (route.checkBody) route.checkBody(value)
  else if (route.body) assertValid(route.body, value, 'body')
}

/** A refusal as an answer (not stored): the problem body under this request's id. */
function problemOutcome(error: ApiError, requestId: string): Outcome {
  return { status: error.status, body: JSON.stringify(problemBody(error.code, error.detail, requestId)), headers: error.headers }
}

type ResponseSetter = { status?: number | string; headers: Headers }

/**
 * Answers through Elysia's `set` with the body as ready JSON text: Elysia builds the one
 * Response itself (returning a Response would make it copy the headers into a second one).
 */
function respond(set: ResponseSetter, status: number, body: string, location?: string | null, extra?: Headers): string {
  set.status = status
  set.headers['content-type'] = status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json'
  if (location) set.headers.location = location
  if (extra) Object.assign(set.headers, extra)
  return body
}

function serialize(reply: Reply<unknown>, requestId: string, now: number, print: string): StoredResponse {
  return {
    fingerprint: print,
    status: reply.status,
    body: reply.serialized ?? JSON.stringify(reply.body),
    location: reply.location ?? null,
    requestId,
    createdAt: now,
  }
}

/** What a handler gets; the tenant database is opened only if the handler asks for it. */
class Input implements HandlerInput<unknown, unknown, unknown> {
  readonly auth: AuthContext
  readonly body: unknown
  readonly query: unknown
  readonly requestId: string
  constructor(
    private readonly tenants: TenantRegistry,
    state: RequestState,
    readonly params: unknown,
  ) {
    this.auth = state.auth as AuthContext
    this.body = state.body
    this.query = state.query ?? {}
    this.requestId = state.requestId
  }
  get tenant(): Tenant {
    return this.tenants.get(this.auth.subject.id)
  }
}

/**
 * The write half of the pipeline (POST and PATCH): Idempotency-Key, body, fingerprint, then
 * either a stored answer to replay, or the key claimed for this request.
 */
async function prepareWrite(platform: Platform, route: AnyRoute, request: Request, state: RequestState, auth: AuthContext): Promise<void> {
  const key = readIdempotencyKey(request.headers.get('idempotency-key'))
  const decoded = route.body ? await readJsonBody(request, route.maxBodyBytes) : undefined
  const ownerId = auth.subject.id
  const print = fingerprint(route.method, requestUrl(request).pathname, decoded?.canonical ?? '')
  const stored = platform.idempotency.find(platform.tenants.get(ownerId), key)
  if (stored) {
    if (stored.fingerprint !== print) {
      throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was used with a different request (method, path or body)')
    }
    state.replay = stored
    return
  }
  checkBody(route, decoded?.value)
  const token = platform.idempotency.claim(ownerId, key)
  if (!token) {
    throw new ApiError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed', { 'retry-after': '1' })
  }
  state.body = decoded?.value
  state.idempotency = { ownerId, key, fingerprint: print, token }
}

/** Runs the route's handler; a write runs inside the tenant transaction that also records its answer. */
function execute(platform: Platform, route: AnyRoute, state: RequestState, params: unknown, set: ResponseSetter): string | Promise<string> {
  if (state.replay) {
    const replay = state.replay
    set.headers['x-request-id'] = replay.requestId
    return respond(set, replay.status, replay.body, replay.location, { 'idempotent-replayed': 'true' })
  }
  const input = new Input(platform.tenants, state, params)
  const idem = state.idempotency
  if (!idem) {
    const reply = route.handle(input)
    return respond(set, reply.status, reply.serialized ?? JSON.stringify(reply.body), reply.location, reply.headers)
  }
  return performGroupedWrite(platform, route, state, input, idem).then((outcome) =>
    respond(set, outcome.status, outcome.body, outcome.location, outcome.headers),
  )
}

interface Outcome {
  status: number
  body: string
  location?: string | null
  headers?: Record<string, string>
}

type Idem = NonNullable<RequestState['idempotency']>

/** A write's work inside its transaction: the handler, and its answer recorded beside its effects. */
const writeBody = (platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem) => (tenant: Tenant) => {
  const reply = route.handle(input)
  const record = serialize(reply, state.requestId, Date.now(), idem.fingerprint)
  platform.idempotency.recordInTenant(tenant, idem.key, record)
  return record
}

/** Committed: from here on the client gets this answer whatever happens to the control copy. */
function committed(platform: Platform, idem: Idem, stored: StoredResponse): Outcome {
  platform.idempotency.recordInControl(idem.ownerId, idem.key, stored)
  return stored
}

/**
 * A write that did not commit. A handler's 4xx is an answer like any other: stored, and
 * replayed on retry; except validation_failed (a field's shape, CONTRACT §8), which the client
 * may fix and send again under the same key, wherever the check ran (money digits are read
 * inside the handler). Anything else is rethrown for the error handler.
 */
function refused(platform: Platform, state: RequestState, idem: Idem, error: unknown): Outcome {
  if (error instanceof ApiError && error.code === 'validation_failed') return problemOutcome(error, state.requestId)
  if (error instanceof ApiError && error.status < 500) {
    const body = JSON.stringify(problemBody(error.code, error.detail, state.requestId))
    const record = { fingerprint: idem.fingerprint, status: error.status, body, location: null, requestId: state.requestId, createdAt: Date.now() }
    keepRefusal(platform, idem, record)
    return { status: error.status, body, headers: error.headers }
  }
  throw error
}

/**
 * A refusal is an answer to replay like a commit's, so it is kept where a commit's is: in the
 * owner's file (its own small transaction, the write's having rolled back), then copied to
 * control.db. A copy alone could be lost (a crash before it is written, a full control disk),
 * and the retry would then run: a write the client was told was refused could still happen.
 */
function keepRefusal(platform: Platform, idem: Idem, record: StoredResponse): void {
  try {
    const tenant = platform.tenants.get(idem.ownerId)
    tenant.write(() => platform.idempotency.recordInTenant(tenant, idem.key, record))
  } catch (error) {
    // Nothing was written either way; the answer stands, kept only by the control copy.
    platform.log(`the refusal of idempotency key ${JSON.stringify(idem.key)} could not be kept in the owner's file: ${String(error)}`)
  }
  platform.idempotency.recordInControl(idem.ownerId, idem.key, record)
}

/** The end of every write: the answer `attempt` committed, or its refusal; then the key is free again. */
function settleWrite(platform: Platform, state: RequestState, idem: Idem, attempt: () => StoredResponse): Outcome {
  try {
    return committed(platform, idem, attempt())
  } catch (error) {
    return refused(platform, state, idem, error)
  } finally {
    if (idem.token) platform.idempotency.release(idem.ownerId, idem.key, idem.token)
  }
}

/** A write in a transaction of its own, answered synchronously (MCP tool calls). */
function performWrite(platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem): Outcome {
  const work = writeBody(platform, route, state, input, idem)
  return settleWrite(platform, state, idem, () => {
    const tenant = input.tenant
    return tenant.write(() => work(tenant))
  })
}

/** A write over HTTP: it shares its commit with the owner's other writes of this turn (`WriteGroups`). */
function performGroupedWrite(platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem): Promise<Outcome> {
  return platform.writes.run(idem.ownerId, writeBody(platform, route, state, input, idem)).then(
    (stored) => settleWrite(platform, state, idem, () => stored),
    (error: unknown) =>
      settleWrite(platform, state, idem, () => {
        throw error
      }),
  )
}

/** What an in-process caller (an MCP tool) passes for one operation: typed values, no HTTP. */
export interface Invocation {
  params?: Record<string, string>
  query?: Record<string, unknown>
  body?: unknown
}

let invocations = 0

/**
 * Runs one route for a caller that has already been authenticated and counted (an MCP tool
 * call rides on its /mcp request): scope and tier, the query and body checks, the handler,
 * and for a write its transaction and idempotency record under a fresh key, exactly as over
 * HTTP. Every refusal comes back as the same problem the REST route gives.
 */
export function invoke(platform: Platform, route: AnyRoute, state: RequestState, auth: AuthContext, call: Invocation): Outcome {
  try {
    authorize(route, auth)
    state.auth = auth
    if (route.query) assertValid(route.query, call.query ?? {}, 'query')
    state.query = call.query ?? {}
    state.body = call.body
    const input = new Input(platform.tenants, state, call.params ?? {})
    if (route.method !== 'POST' && route.method !== 'PATCH') {
      const reply = route.handle(input)
      return { status: reply.status, body: reply.serialized ?? JSON.stringify(reply.body), location: reply.location, headers: reply.headers }
    }
    checkBody(route, call.body)
    // Each call is its own request: a fresh key, so nothing is replayed from an earlier call.
    const key = `mcp:${state.requestId}:${++invocations}`
    const ownerId = auth.subject.id
    const token = platform.idempotency.claim(ownerId, key) as symbol
    const idem = { ownerId, key, fingerprint: fingerprint(route.method, route.path, canonicalJson(call.body ?? null)), token }
    return performWrite(platform, route, state, input, idem)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return problemOutcome(error, state.requestId)
  }
}

type RouteContext = { request: Request; params: unknown; set: ResponseSetter }

export function mountRoutes(app: Elysia, platform: Platform, routes: AnyRoute[], operations: DeferredOperations): void {
  const server = () => app.server
  for (const route of routes) {
    const isWrite = route.method === 'POST' || route.method === 'PATCH'

    // One Elysia handler per route runs the whole pipeline (a transform hook would cost an
    // await per request). It is synchronous for a read by a key verified before; only a
    // key's first use (argon2) and a write's body continue asynchronously.
    const proceed = (request: Request, params: unknown, set: ResponseSetter, state: RequestState, found: AuthContext | null) => {
      const auth = admit(platform, found, state, set.headers)
      authorize(route, auth)
      state.auth = auth
      if (route.query) {
        const query = coerceQuery(route.query, requestUrl(request).searchParams)
        assertValid(route.query, query, 'query')
        state.query = query
      } else if (request.url.includes('?')) {
        refuseQueryParameters(requestUrl(request).searchParams)
      }
      if (isWrite) return prepareWrite(platform, route, request, state, auth).then(() => execute(platform, route, state, params, set))
      return execute(platform, route, state, params, set)
    }
    const logged = (state: RequestState, set: ResponseSetter) =>
      platform.access?.record(state, route.method, typeof set.status === 'number' ? set.status : 200, set.headers['x-request-id'] as string)
    const handler = ({ request, params, set }: RouteContext) => {
      const state = requestStateOf(request, server)
      state.route = route.path
      set.headers['x-request-id'] = state.requestId
      const found = platform.authenticator.authenticate(request.headers.get('authorization'))
      // Errors are logged by the error handler; answers here, once they are made.
      const answer = found instanceof Promise ? found.then((auth) => proceed(request, params, set, state, auth)) : proceed(request, params, set, state, found)
      if (platform.access) {
        if (answer instanceof Promise)
          answer.then(
            () => logged(state, set),
            () => {},
          )
        else logged(state, set)
      }
      return answer
    }

    const detail = operations.detailFor({ ...route, errors: route.errors ?? [] })
    app.route(
      route.method,
      route.path,
      handler as never,
      {
        // Bodies and queries are read and validated by the pipeline above, in contract order.
        parse: 'none',
        detail,
      } as never,
    )
  }
}
