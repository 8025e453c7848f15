import type { ControlStore } from '../db/control/store.ts'
import type { TenantRegistry } from '../db/tenant/registry.ts'
import type { Tenant } from '../db/tenant/tenant.ts'
import { checkBody, requestUrl } from './admission.ts'
import type { AuthContext } from './auth.ts'
import { canonicalJson } from './canonical-json.ts'
import { isJsonBody, readFileBody, readJsonBody } from './body.ts'
import type { Platform, RequestState } from './context.ts'
import { ApiError, problemBody } from './errors.ts'
import { assertIfMatch, entityTag } from './etag.ts'
import { fingerprint, readIdempotencyKey, type StoredResponse, scopedIdempotencyKey } from './idempotency.ts'
import type { AnyRoute, HandlerInput, Reply } from './route.ts'
import { quotaExceeded } from './storage-problem.ts'

/**
 * The idempotent write path (CONTRACT §8, §11, §14): a POST or PATCH claims its
 * Idempotency-Key, runs its handler inside the owner's write transaction with its answer
 * recorded beside its effects, and settles as committed (answered whatever happens to the
 * control copy) or refused (kept in the owner's file, then replayed).
 */

/** What a handler gets; the tenant database is opened only if the handler asks for it. */
export class Input implements HandlerInput<unknown, unknown, unknown> {
  readonly auth: AuthContext
  readonly body: unknown
  readonly query: unknown
  readonly requestId: string
  readonly prepared: unknown
  readonly control: ControlStore
  private readonly tenants: TenantRegistry
  constructor(
    platform: Pick<Platform, 'tenants' | 'control'>,
    state: RequestState,
    readonly params: unknown,
  ) {
    this.tenants = platform.tenants
    this.control = platform.control
    this.auth = state.auth as AuthContext
    this.body = state.body
    this.query = state.query ?? {}
    this.requestId = state.requestId
    this.prepared = state.prepared
  }
  get tenant(): Tenant {
    const tenant = this.tenants.get(this.auth.subject.id)
    tenant.actor = this.auth.principal.owner.id
    return tenant
  }
}

/**
 * The write half of the pipeline (POST, PATCH, PUT): Idempotency-Key, body, fingerprint, then
 * either a stored answer to replay, or the key claimed for this request. A PUT sets a state
 * outright, so sending it twice is harmless: its key is optional, and honoured when sent.
 */
export async function prepareWrite(platform: Platform, route: AnyRoute, request: Request, state: RequestState, auth: AuthContext): Promise<void> {
  const header = request.headers.get('idempotency-key')
  const isPut = route.method === 'PUT'
  if (isPut && header === null) {
    const decoded = route.body ? await readJsonBody(request, route.maxBodyBytes) : undefined
    checkBody(route, decoded?.value)
    state.body = decoded?.value
    state.keyless = true
    return
  }
  const key = scopedIdempotencyKey(auth, readIdempotencyKey(header, isPut))
  const decoded = !route.body
    ? undefined
    : route.fileBody && !isJsonBody(request)
      ? await readFileBody(request, route.fileBody.maxBytes)
      : await readJsonBody(request, route.maxBodyBytes)
  const ownerId = auth.subject.id
  const print = fingerprint(route.method, requestUrl(request).pathname, decoded?.canonical ?? '', queryPrint(route, state))
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

/**
 * Runs the route's `prepare` (if any) for a write that will run: after its key is claimed, before
 * it is queued. A rejection, which `prepare` must not do, reaches the handler as the error.
 */
export async function prepareRoute(platform: Platform, route: AnyRoute, state: RequestState, params: unknown): Promise<void> {
  if (!route.prepare || state.replay) return
  state.prepared = await route.prepare(new Input(platform, state, params)).catch((error: unknown) => error)
}

/** The query's part of a fingerprint: only for a route that takes a file, whose options come in the query. */
export const queryPrint = (route: AnyRoute, state: RequestState): string | undefined => (route.fileBody ? canonicalJson(state.query ?? {}) : undefined)

export interface Outcome {
  status: number
  body: string
  location?: string | null
  headers?: Record<string, string>
}

export type Idem = NonNullable<RequestState['idempotency']>

/** A refusal as an answer (not stored): the problem body under this request's id. */
export function problemOutcome(error: ApiError, requestId: string): Outcome {
  return { status: error.status, body: JSON.stringify(problemBody(error.code, error.detail, requestId)), headers: error.headers }
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

/**
 * The route's handler, with its If-Match checked first against the resource as it is now (a
 * PATCH's inside its write transaction; a DELETE's in a transaction of its own around both), so
 * a stale tag is refused before anything is written (CONTRACT §25).
 */
export function handleChecked(route: AnyRoute, input: Input, ifMatch: string | null): Reply<unknown> {
  if (ifMatch === null || !route.current) return route.handle(input)
  const current = route.current
  const check = () => {
    assertIfMatch(ifMatch, entityTag(JSON.stringify(current(input))))
    return route.handle(input)
  }
  return route.method === 'DELETE' ? input.tenant.write(check) : check()
}

/** A write's work inside its transaction: the handler, and its answer recorded beside its effects. */
const writeBody = (platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem) => (tenant: Tenant) => {
  if (tenant.overQuota()) throw quotaExceeded(platform, tenant)
  const reply = route.current ? handleChecked(route, input, state.ifMatch ?? null) : route.handle(input)
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
  // A stale If-Match is not kept either: the client reads the resource again and retries under the same key (CONTRACT §25).
  if (error instanceof ApiError && (error.code === 'validation_failed' || error.code === 'precondition_failed')) return problemOutcome(error, state.requestId)
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
export function performWrite(platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem): Outcome {
  const work = writeBody(platform, route, state, input, idem)
  return settleWrite(platform, state, idem, () => {
    const tenant = input.tenant
    return tenant.write(() => work(tenant))
  })
}

/**
 * A PUT without an Idempotency-Key: the same transaction, quota check and group commit as any
 * write, but no answer is kept, so a repeat runs again (and, being a PUT, changes nothing more).
 */
export function performKeylessWrite(platform: Platform, route: AnyRoute, state: RequestState, input: Input): Promise<Outcome> {
  const ownerId = input.auth.subject.id
  return platform.writes
    .run(ownerId, (tenant) => {
      if (tenant.overQuota()) throw quotaExceeded(platform, tenant)
      return route.handle(input)
    })
    .then(
      (reply): Outcome => ({ status: reply.status, body: reply.serialized ?? JSON.stringify(reply.body), location: reply.location ?? null }),
      (error: unknown) => {
        if (error instanceof ApiError && error.status < 500) return problemOutcome(error, state.requestId)
        throw error
      },
    )
}

/** A write over HTTP: it shares its commit with the owner's other writes of this turn (`WriteGroups`). */
export function performGroupedWrite(platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem): Promise<Outcome> {
  return platform.writes.run(idem.ownerId, writeBody(platform, route, state, input, idem), { alone: route.alone }).then(
    (stored) => settleWrite(platform, state, idem, () => stored),
    (error: unknown) =>
      settleWrite(platform, state, idem, () => {
        throw error
      }),
  )
}

/**
 * A write whose effects live in control.db (the keys of CONTRACT §28): its `prepare` has run
 * (argon2, in prepareRoute); then the handler and the answer's record commit in one control transaction. A replay
 * answers `reply.stored` when the handler gave one (a key's secret is never stored).
 */
export async function performControlWrite(platform: Platform, route: AnyRoute, state: RequestState, input: Input, idem: Idem): Promise<Outcome> {
  try {
    let sent = ''
    const stored = platform.control.db.transaction(
      () => {
        const reply = route.handle(input)
        sent = reply.serialized ?? JSON.stringify(reply.body)
        const record = serialize(reply, state.requestId, Date.now(), idem.fingerprint)
        if (reply.stored !== undefined) record.body = JSON.stringify(reply.stored)
        platform.control.saveResponse(idem.ownerId, idem.key, record)
        return record
      },
      { behavior: 'immediate' },
    )
    return { status: stored.status, body: sent, location: stored.location }
  } catch (error) {
    if (error instanceof ApiError && error.code === 'validation_failed') return problemOutcome(error, state.requestId)
    if (error instanceof ApiError && error.status < 500) {
      const body = JSON.stringify(problemBody(error.code, error.detail, state.requestId))
      platform.control.saveResponse(idem.ownerId, idem.key, {
        fingerprint: idem.fingerprint,
        status: error.status,
        body,
        location: null,
        requestId: state.requestId,
        createdAt: Date.now(),
      })
      return { status: error.status, body, headers: error.headers }
    }
    throw error
  } finally {
    if (idem.token) platform.idempotency.release(idem.ownerId, idem.key, idem.token)
  }
}
