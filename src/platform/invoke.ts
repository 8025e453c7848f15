import { authorize, checkBody } from './admission.ts'
import type { AuthContext } from './auth.ts'
import type { Platform, RequestState } from './context.ts'
import { ApiError } from './errors.ts'
import { fingerprint } from './idempotency.ts'
import { canonicalJson } from './canonical-json.ts'
import { type AnyRoute, isWriteMethod } from './route.ts'
import { assertValid } from './validation.ts'
import { Input, type Outcome, performWrite, problemOutcome, queryPrint } from './write-path.ts'

/**
 * MCP's way into the REST operations (CONTRACT §17): a tool call runs one route in process,
 * with the same checks, handler, transaction and idempotency record as over HTTP.
 */

/** What an in-process caller (an MCP tool) passes for one operation: typed values, no HTTP. */
export interface Invocation {
  params?: Record<string, string>
  query?: Record<string, unknown>
  body?: unknown
  /** What the route's `prepare` gave for this call (`invokePrepared`). */
  prepared?: unknown
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
    // The state is shared by the calls of one MCP request: each call brings its own prepared value.
    state.prepared = call.prepared
    const input = new Input(platform, state, call.params ?? {})
    if (!isWriteMethod(route.method)) {
      const reply = route.handle(input)
      return { status: reply.status, body: reply.serialized ?? JSON.stringify(reply.body), location: reply.location, headers: reply.headers }
    }
    checkBody(route, call.body)
    // Each call is its own request: a fresh key, so nothing is replayed from an earlier call.
    const key = `mcp:${state.requestId}:${++invocations}`
    const ownerId = auth.subject.id
    const token = platform.idempotency.claim(ownerId, key) as symbol
    const idem = { ownerId, key, fingerprint: fingerprint(route.method, route.path, canonicalJson(call.body ?? null), queryPrint(route, state)), token }
    return performWrite(platform, route, state, input, idem)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    return problemOutcome(error, state.requestId)
  }
}

/**
 * `invoke` for a route with `prepare` (an import): once the call would reach its handler, the
 * route's asynchronous preparation runs first (a file read in a worker), as over HTTP.
 */
export async function invokePrepared(platform: Platform, route: AnyRoute, state: RequestState, auth: AuthContext, call: Invocation): Promise<Outcome> {
  if (!route.prepare) return invoke(platform, route, state, auth, call)
  try {
    authorize(route, auth)
    if (route.query) assertValid(route.query, call.query ?? {}, 'query')
    checkBody(route, call.body)
  } catch (error) {
    // Refused before the handler: invoke gives the same refusal.
    if (error instanceof ApiError) return invoke(platform, route, state, auth, call)
    throw error
  }
  state.auth = auth
  state.query = call.query ?? {}
  state.body = call.body
  const prepared = await route.prepare(new Input(platform, state, call.params ?? {})).catch((error: unknown) => error)
  return invoke(platform, route, state, auth, { ...call, prepared })
}
