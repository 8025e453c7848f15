import type { Elysia } from 'elysia'
import { admit, authorize, refuseQueryParameters, requestUrl } from './admission.ts'
import type { AuthContext } from './auth.ts'
import { type Platform, type RequestState, requestStateOf, type ServerLookup } from './context.ts'
import { PROBLEM_CONTENT_TYPE } from './errors.ts'
import type { DeferredOperations } from './openapi.ts'
import { encodeBody, MIN_COMPRESSED_LENGTH } from './compression.ts'
import { entityTagOfBody, noneMatchFails } from './etag.ts'
import type { Gate } from './cluster.ts'
import { addVary } from './vary.ts'
import { type AnyRoute, isWriteMethod } from './route.ts'
import { assertValid, coerceQuery } from './validation.ts'
import { handleChecked, Input, performControlWrite, performGroupedWrite, performKeylessWrite, prepareRoute, prepareWrite } from './write-path.ts'

/**
 * The request pipeline, in the order of CONTRACT §6: route → authentication → rate limit →
 * scope/tier → idempotency → body → handler. The route's handler runs synchronously, inside
 * the write transaction for POST, PATCH and PUT, so a write and its idempotency record commit
 * together (in a commit shared with the owner's other writes of the same turn: write-groups.ts).
 */

type Headers = Record<string, string | number>

/**
 * On every /v1 and /mcp answer, success or error: answers carry someone's money, so no cache
 * (a browser's, a proxy's) may keep them, and no browser may read them as anything but what
 * their Content-Type says.
 */
export const PRIVATE_ANSWER_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' } as const

type ResponseSetter = { status?: number | string; headers: Headers }

/**
 * Answers through Elysia's `set` with the body as ready JSON text (or its coded bytes): Elysia
 * builds the one Response itself (returning a Response would make it copy the headers into a
 * second one). A single resource's success carries its ETag (CONTRACT §25): on a GET whose
 * If-None-Match names it, the answer is 304 without a body.
 */
function respond(
  set: ResponseSetter,
  state: RequestState,
  route: AnyRoute,
  status: number,
  body: string,
  location?: string | null,
  extra?: Headers,
  etag?: string,
): string | Uint8Array {
  set.status = status
  if (location) set.headers.location = location
  if (extra) Object.assign(set.headers, extra)
  if (status < 300 && (route.etag || route.current)) {
    const tag = etag ?? entityTagOfBody(body)
    if (tag !== undefined) {
      set.headers.etag = tag
      if (route.method === 'GET' && noneMatchFails(state.header('if-none-match'), tag)) {
        set.status = 304
        // A 304 names what the 200 would vary on.
        if (body.length > MIN_COMPRESSED_LENGTH) addVary(set.headers, 'Accept-Encoding')
        return ''
      }
    }
  }
  set.headers['content-type'] = status >= 400 ? PROBLEM_CONTENT_TYPE : 'application/json'
  return body.length > MIN_COMPRESSED_LENGTH ? encodeBody(body, state.header('accept-encoding'), set.headers) : body
}

/** Runs the route's handler; a write runs inside the tenant transaction that also records its answer. */
function execute(
  platform: Platform,
  route: AnyRoute,
  state: RequestState,
  params: unknown,
  set: ResponseSetter,
): string | Uint8Array | Promise<string | Uint8Array> {
  if (state.replay) {
    const replay = state.replay
    set.headers['x-request-id'] = replay.requestId
    return respond(set, state, route, replay.status, replay.body, replay.location, { 'idempotent-replayed': 'true' })
  }
  const input = new Input(platform, state, params)
  const idem = state.idempotency
  if (state.keyless) {
    return performKeylessWrite(platform, route, state, input).then((outcome) =>
      respond(set, state, route, outcome.status, outcome.body, outcome.location, outcome.headers),
    )
  }
  if (!idem) {
    const reply = route.current ? handleChecked(route, input, state.ifMatch ?? null) : route.handle(input)
    return respond(set, state, route, reply.status, reply.serialized ?? JSON.stringify(reply.body), reply.location, reply.headers, reply.etag)
  }
  const perform = route.store === 'control' ? performControlWrite : performGroupedWrite
  return perform(platform, route, state, input, idem).then((outcome) =>
    respond(set, state, route, outcome.status, outcome.body, outcome.location, outcome.headers),
  )
}

type RouteContext = { request: Request; params: unknown; set: ResponseSetter }

/** The problem answer for a failure (server.ts): `code` is Elysia's name for its own errors, `UNKNOWN` for pfin's. */
export type FailureAnswer = (failure: { code: string | number; error: unknown; request: Request; set: ResponseSetter }) => Promise<Response>

export function mountRoutes(
  app: Elysia,
  platform: Platform,
  routes: AnyRoute[],
  operations: DeferredOperations,
  server: ServerLookup,
  answerFailure: FailureAnswer,
): void {
  const cors = platform.cors
  for (const route of routes) {
    const isWrite = isWriteMethod(route.method)

    // One Elysia handler per route runs the whole pipeline (a transform hook would cost an
    // await per request). It is synchronous for a read by a key verified before; only a
    // key's first use (argon2) and a write's body continue asynchronously.
    const proceed = (request: Request, params: unknown, set: ResponseSetter, state: RequestState, found: AuthContext | null, gate: Gate | undefined) => {
      // In a cluster the key's owner must be on this node (CONTRACT §31), and under delegation the subject's ledger too (§30).
      if (gate && found) gate.admit(found.subject.id)
      const auth = platform.delegations.resolve(admit(platform, found, state, set.headers), request.headers.get('pfin-subject'))
      gate?.admit(auth.subject.id)
      authorize(route, auth)
      state.auth = auth
      if (route.current) state.ifMatch = request.headers.get('if-match')
      if (route.query) {
        const query = coerceQuery(route.query, requestUrl(request).searchParams)
        assertValid(route.query, query, 'query')
        state.query = query
      } else if (request.url.includes('?')) {
        refuseQueryParameters(requestUrl(request).searchParams)
      }
      if (isWrite) {
        return prepareWrite(platform, route, request, state, auth)
          .then(() => (route.prepare ? prepareRoute(platform, route, state, params) : undefined))
          .then(() => execute(platform, route, state, params, set))
      }
      return execute(platform, route, state, params, set)
    }
    const logged = (state: RequestState, set: ResponseSetter) =>
      platform.access?.record(state, route.method, typeof set.status === 'number' ? set.status : 200, set.headers['x-request-id'] as string)
    const runPipeline = (request: Request, params: unknown, set: ResponseSetter) => {
      const state = requestStateOf(request, server)
      state.route = route.path
      set.headers['x-request-id'] = state.requestId
      set.headers['cache-control'] = PRIVATE_ANSWER_HEADERS['cache-control']
      set.headers['x-content-type-options'] = PRIVATE_ANSWER_HEADERS['x-content-type-options']
      // Before anything can refuse the request: a page must be able to read a 401 or a 429 too.
      if (cors) cors.decorate(request.headers.get('origin'), set.headers)
      // In a cluster, an owner placed elsewhere or moving is refused first (CONTRACT §31).
      const gate = platform.cluster?.gate(request.headers.get('authorization'))
      const found = platform.authenticator.authenticate(request.headers.get('authorization'), state)
      // Errors are logged by the error handler; answers here, once they are made.
      let answer: ReturnType<typeof proceed> | Promise<ReturnType<typeof proceed>>
      try {
        answer =
          found instanceof Promise ? found.then((auth) => proceed(request, params, set, state, auth, gate)) : proceed(request, params, set, state, found, gate)
      } catch (error) {
        gate?.leave()
        throw error
      }
      if (gate) {
        if (answer instanceof Promise) answer.then(gate.leave, gate.leave)
        else gate.leave()
      }
      if (platform.access) {
        if (answer instanceof Promise)
          answer.then(
            () => logged(state, set),
            () => {},
          )
        else logged(state, set)
      }
      // Elysia's error hook sees only what the handler throws, not a Promise it returns that fails.
      return answer instanceof Promise ? answer.catch((error: unknown) => answerFailure({ code: 'UNKNOWN', error, request, set })) : answer
    }
    // Elysia reads a handler's source to decide whether to await what it returns: `async`,
    // `await`, or any `return f(` or `=> f(` counts (compose.ts, matchFnReturn), and Bun's
    // transpiler folds any other spelling back into one of those. An await costs every request a
    // turn of the microtask queue (0.5–1 µs on GET /v1/me, in process). A bound function shows
    // Elysia no source, so it is called directly; a Promise it returns (a write, a key's first
    // use) is still waited on by Elysia's mapResponse. What the handler uses of the context (`set`
    // above all) Elysia then learns from the app's hooks: the error hook uses `set` too.
    // unawaited-handler.test.ts pins both.
    const handler = ({ request, params, set }: RouteContext) => runPipeline(request, params, set)

    const detail = operations.detailFor({ ...route, errors: route.errors ?? [] })
    app.route(
      route.method,
      route.path,
      handler.bind(null) as never,
      {
        // Bodies and queries are read and validated by the pipeline above, in contract order.
        parse: 'none',
        detail,
      } as never,
    )
  }
}
