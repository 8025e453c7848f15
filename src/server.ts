import { swagger } from '@elysiajs/swagger'
import { Elysia } from 'elysia'
import type { Config } from './config.ts'
import { ControlStore } from './db/control/store.ts'
import { TenantRegistry } from './db/tenant/registry.ts'
import { routes as v1Routes } from './modules/index.ts'
import { Authenticator } from './platform/auth.ts'
import { type Platform, type RequestState, requestStateOf, type ServerLookup } from './platform/context.ts'
import { ApiError, type ErrorCode, PROBLEM_CONTENT_TYPE, problemBody } from './platform/errors.ts'
import { IdempotencyStore } from './platform/idempotency.ts'
import { documentBase, systemOperation } from './platform/openapi.ts'
import { mountRoutes } from './platform/pipeline.ts'
import { type HeaderSink, Limits, RateLimiter } from './platform/rate-limit.ts'
import type { AnyRoute } from './platform/route.ts'
import { allowedMethods } from './platform/route-table.ts'

/** Builds the long-lived services over `config.dataDir`. */
export function createPlatform(config: Config, log: (message: string) => void = console.error): Platform {
  const control = new ControlStore(config.dataDir)
  const idempotency = new IdempotencyStore(control, config.idempotencyTtlHours * 3_600_000)
  const tenants = new TenantRegistry(config.dataDir, config.tenantCacheSize, (tenant) => idempotency.purge([tenant]))
  return {
    config,
    control,
    tenants,
    authenticator: new Authenticator(control),
    limiter: new RateLimiter(control),
    limits: {
      key: new Limits(config.rateLimitPerMinute, config.rateLimitPerDay),
      anonymous: new Limits(config.anonRateLimitPerMinute, config.anonRateLimitPerDay),
    },
    idempotency,
    log,
  }
}

/** Headers of a request that is not counted: the caller's current state, unchanged. */
async function peekHeaders(platform: Platform, request: Request, state: RequestState, headers: HeaderSink): Promise<void> {
  const auth = await platform.authenticator.authenticate(request.headers.get('authorization'))
  if (auth) platform.limiter.peek(`key:${auth.principal.keyId}`, platform.limits.key, headers)
  else platform.limiter.peek(`ip:${state.ip}`, platform.limits.anonymous, headers)
}

/** The keyless, uncounted routes: the API document, the docs page and health. They carry the caller's current counts. */
function uncountedRoutes(platform: Platform, documentation: ReturnType<typeof documentBase>, server: ServerLookup) {
  return new Elysia({ name: 'uncounted' })
    .onTransform(async ({ request, set }) => {
      const state = requestStateOf(request, server)
      set.headers['x-request-id'] = state.requestId
      await peekHeaders(platform, request, state, set.headers)
    })
    .use(swagger({ path: '/docs', specPath: '/openapi.json', documentation: documentation as never, exclude: ['/docs', '/openapi.json'] }))
    .get('/healthz', () => ({ status: 'ok' }), {
      detail: systemOperation('health', 'Liveness check (no key needed, not counted)', 'application/json', {
        type: 'object',
        properties: { status: { type: 'string', const: 'ok' } },
        required: ['status'],
        additionalProperties: false,
      }) as never,
    })
}

/**
 * The HTTP application, served with `app.listen` by `serve` and by the test harness. Routes are
 * answered through the listening Bun server: `app.handle` on its own answers them 405 (seen
 * with Elysia 1.4.30), so tests always go through a real socket.
 */
export function createApp(platform: Platform, routes: AnyRoute[] = v1Routes) {
  const components: Record<string, unknown> = {}
  const base = documentBase(components)

  // There is no global onRequest hook: each route's first hook (or this error handler) starts
  // the request's state, which saves Elysia work on every request. The server is read from
  // `app` rather than the context, which would make Elysia define a getter per request.
  const server: ServerLookup = () => app.server
  const app = new Elysia({ normalize: false, aot: true })
    .onError({ as: 'global' }, async ({ code, error, request, set }) => {
      const state = requestStateOf(request, server)
      const requestId = state.requestId
      set.headers['x-request-id'] = requestId
      if (state.idempotency?.token) platform.idempotency.release(state.idempotency.ownerId, state.idempotency.key, state.idempotency.token)
      let problem: { code: ErrorCode; detail: string; headers?: Record<string, string> }
      if (error instanceof ApiError) {
        problem = { code: error.code, detail: error.detail, headers: error.headers }
      } else if (code === 'NOT_FOUND') {
        await peekHeaders(platform, request, state, set.headers)
        const path = new URL(request.url).pathname
        const allowed = allowedMethods(app.routes, path)
        problem =
          allowed.length > 0
            ? { code: 'method_not_allowed', detail: `${request.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`, headers: { allow: allowed.join(', ') } }
            : { code: 'route_not_found', detail: `No route matches ${request.method} ${path}` }
      } else if (code === 'PARSE') {
        problem = { code: 'malformed_json', detail: 'The request body is not valid JSON' }
      } else {
        platform.log(`[${requestId}] internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
        problem = { code: 'internal_error', detail: `Something went wrong on our side; quote request id ${requestId} when reporting it` }
      }
      const body = problemBody(problem.code, problem.detail, requestId)
      return new Response(JSON.stringify(body), {
        status: body.status,
        headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...problem.headers },
      })
    })
    .use(uncountedRoutes(platform, base, server))

  mountRoutes(app as unknown as Elysia, platform, routes, components)
  return app
}

export type App = ReturnType<typeof createApp>

/** Background work: write-behind of counters and last-use times, idempotency purge. */
export function startMaintenance(platform: Platform): () => void {
  const flush = () => {
    try {
      platform.limiter.flush()
      platform.authenticator.flush()
    } catch (error) {
      platform.log(`write-behind failed: ${String(error)}`)
    }
  }
  const purge = () => {
    try {
      platform.idempotency.purge(platform.tenants.openTenants())
    } catch (error) {
      platform.log(`idempotency purge failed: ${String(error)}`)
    }
  }
  purge()
  const flushTimer = setInterval(flush, 1000)
  const purgeTimer = setInterval(purge, 10 * 60_000)
  return () => {
    clearInterval(flushTimer)
    clearInterval(purgeTimer)
    flush()
  }
}
