import { join } from 'node:path'
import { ClusterNode } from './platform/cluster.ts'
import { swagger } from '@elysiajs/swagger'
import { Elysia } from 'elysia'
import type { Config } from './config.ts'
import { AutoPoster } from './modules/schedules/autopost.ts'
import { fixToday } from './platform/clock.ts'
import { ControlStore } from './db/control/store.ts'
import { giveBackFreePages, tryWithoutWaiting } from './db/sqlite.ts'
import { AccessLog } from './platform/access-log.ts'
import { CHECKED_FILES_LIST, DataDirLock, prepareDir } from './db/data-dir.ts'
import { unexpectedProblem } from './platform/storage-problem.ts'
import { TenantRegistry } from './db/tenant/registry.ts'
import type { Tenant } from './db/tenant/tenant.ts'
import { purgeTombstones } from './db/tenant/change-log.ts'
import { mcpEndpoint } from './modules/mcp/endpoint.ts'
import { oauthEndpoints } from './modules/oauth/endpoints.ts'
import { routes as v1Routes } from './modules/index.ts'
import { Delegations } from './platform/delegation.ts'
import { Authenticator } from './platform/auth.ts'
import { clientLookup, type Platform, type RequestState, requestStateOf, type ServerLookup } from './platform/context.ts'
import { TrustedProxies } from './platform/client-address.ts'
import { type Coding, chooseCoding, encode, encodeBody, MIN_COMPRESSED_LENGTH } from './platform/compression.ts'
import { addVary } from './platform/vary.ts'
import { Cors, isPreflight } from './platform/cors.ts'
import { ApiError, type ErrorCode, PROBLEM_CONTENT_TYPE, problemBody } from './platform/errors.ts'
import { IdempotencyStore } from './platform/idempotency.ts'
import { docsRoutes, ROOT_POINTER } from './platform/docs/page.ts'
import { DeferredOperations, documentBase, systemOperation } from './platform/openapi.ts'
import { type FailureAnswer, mountRoutes, PRIVATE_ANSWER_HEADERS } from './platform/pipeline.ts'
import { WriteGroups } from './platform/write-groups.ts'
import { type HeaderSink, Limits, RateLimiter } from './platform/rate-limit.ts'
import type { AnyRoute } from './platform/route.ts'
import { allowedMethods } from './platform/route-table.ts'

/** Builds the long-lived services over `config.dataDir`. */
export function createPlatform(config: Config, log: (message: string) => void = console.error): Platform {
  prepareDir(config.dataDir)
  const lock = DataDirLock.acquire(config.dataDir)
  let control: ControlStore
  try {
    control = new ControlStore(config.dataDir, !config.cluster?.replica)
  } catch (error) {
    lock.release()
    throw error
  }
  const idempotency = new IdempotencyStore(control, config.idempotencyTtlHours * 3_600_000, (message) => platform.log(message))
  const tenants = new TenantRegistry(
    config.dataDir,
    config.tenantCacheSize,
    // After the request that opened the file: its first answer need not wait for housekeeping.
    (tenant) =>
      setImmediate(() => {
        if (tenant.closed) return
        try {
          idempotency.purgeTenant(tenant)
        } catch (error) {
          platform.log(`idempotency purge of owner ${tenant.ownerId} failed: ${String(error)}`)
        }
        for (const hook of platform.openHooks) hook(tenant)
      }),
    config.tombstoneRetentionDays * 86_400_000,
    config.ownerLimits,
    // Replicated files are checkpointed by Litestream alone (CONTRACT §31).
    !config.cluster?.replica,
  )
  tenants.keepChecksAcrossRestarts(join(config.dataDir, CHECKED_FILES_LIST))
  const limiter = new RateLimiter(control)
  const limits = {
    key: new Limits(config.rateLimitPerMinute, config.rateLimitPerDay),
    anonymous: new Limits(config.anonRateLimitPerMinute, config.anonRateLimitPerDay),
  }
  fixToday(config.today)
  const platform: Platform = {
    openHooks: [],
    lock,
    access: config.logFormat === 'off' ? null : new AccessLog(config.logFormat),
    config,
    control,
    tenants,
    authenticator: new Authenticator(control),
    delegations: new Delegations(control),
    limiter,
    limits,
    idempotency,
    writes: new WriteGroups(tenants),
    proxies: config.trustedProxies.length > 0 ? new TrustedProxies(config.trustedProxies, config.trustedProxyHeader) : null,
    cors: config.corsAllowedOrigins.length > 0 ? new Cors(config.corsAllowedOrigins) : null,
    cluster: config.cluster ? new ClusterNode(config.cluster.node, config.cluster.directory, config.dataDir, log) : null,
    log,
  }
  // An owner placed elsewhere is closed here: if it comes back, its file is a new copy.
  const cluster = platform.cluster
  cluster?.onChange(() => {
    for (const tenant of tenants.openTenants()) if (!cluster.placedHere(tenant.ownerId)) tenants.evict(tenant.ownerId)
  })
  return platform
}

/**
 * The 204 of a CORS preflight from an allowed origin (CONTRACT §25), not counted: the methods and
 * request headers the API takes, with the caller's current counts like any uncounted answer.
 */
function preflightAnswer(cors: Cors, origin: string, headers: HeaderSink): Response {
  return new Response(null, {
    status: 204,
    headers: { ...(headers as Record<string, string>), ...PRIVATE_ANSWER_HEADERS, ...cors.preflightHeaders(origin), vary: 'Origin' },
  })
}

/** Headers of a request that is not counted: the caller's current state, unchanged. */
async function peekHeaders(platform: Platform, request: Request, state: RequestState, headers: HeaderSink): Promise<void> {
  // A key that cannot be checked now (too many waiting) reads the anonymous state: /healthz must not fail for it.
  const auth = await Promise.resolve(platform.authenticator.authenticate(request.headers.get('authorization'), state)).catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'server_busy') return null
    throw error
  })
  if (auth) platform.limiter.peek(`key:${auth.principal.keyId}`, platform.limits.key, headers)
  else platform.limiter.peek(`ip:${state.ip}`, platform.limits.anonymous, headers)
}

/**
 * /openapi.json as it goes out: the document is the same for the life of the process, so its text
 * and its coded forms are made once (it is over 300 KB; coded, a tenth of that) and every later
 * request is answered from them (CONTRACT §25).
 */
function documentAnswers() {
  let text: string | undefined
  const coded = new Map<Coding, Uint8Array>()
  return (document: unknown, acceptEncoding: string | null, headers: HeaderSink): Response => {
    text ??= JSON.stringify(document)
    addVary(headers, 'Accept-Encoding')
    const coding = chooseCoding(acceptEncoding)
    if (coding === null) return new Response(text, { headers: { 'content-type': 'application/json' } })
    let bytes = coded.get(coding)
    if (!bytes) {
      bytes = encode(text, coding)
      coded.set(coding, bytes)
    }
    headers['content-encoding'] = coding
    return new Response(bytes, { headers: { 'content-type': 'application/json' } })
  }
}

/** The keyless, uncounted routes: the API document, the docs page and its assets, health and `/`. They carry the caller's current counts. */
function uncountedRoutes(platform: Platform, documentation: ReturnType<typeof documentBase>, operations: DeferredOperations, server: ServerLookup) {
  const documentAnswer = documentAnswers()
  return (
    new Elysia({ name: 'uncounted' })
      .onTransform(async ({ request, set, route }) => {
        // The plugin reads every route's operation while it builds the document.
        if (route === '/openapi.json') operations.complete()
        const state = requestStateOf(request, server)
        set.headers['x-request-id'] = state.requestId
        platform.cors?.decorate(request.headers.get('origin'), set.headers)
        await peekHeaders(platform, request, state, set.headers)
      })
      .onAfterResponse(({ request, set, route }) => {
        const state = requestStateOf(request, server)
        const status = typeof set.status === 'number' ? set.status : 200
        // 4xx and 5xx are logged by the error handler.
        if (status >= 400) return
        state.route = route
        platform.access?.record(state, request.method, status)
      })
      .mapResponse(({ request, response, set, route }) =>
        route === '/openapi.json' && response !== null && typeof response === 'object' && !(response instanceof Response)
          ? documentAnswer(response, request.headers.get('accept-encoding'), set.headers)
          : undefined,
      )
      // The plugin builds /openapi.json. Its own page (which loads a viewer from a CDN) is given the
      // same path, so the document's route replaces it and the plugin serves no page; /docs is pfin's own.
      .use(swagger({ path: '/openapi.json', specPath: '/openapi.json', documentation: documentation as never, exclude: ['/docs', '/openapi.json'] }))
      .use(docsRoutes())
      .get('/', () => ROOT_POINTER, { detail: { hide: true } })
      .get('/healthz', () => ({ status: 'ok' }), {
        detail: systemOperation('health', 'Liveness check (no key needed, not counted)', 'application/json', {
          type: 'object',
          properties: { status: { type: 'string', const: 'ok' } },
          required: ['status'],
          additionalProperties: false,
        }) as never,
      })
  )
}

/**
 * The HTTP application, served with `app.listen` by `serve` and by the test harness. Routes are
 * answered through the listening Bun server: `app.handle` on its own answers them 405 (seen
 * with Elysia 1.4.30), so tests always go through a real socket.
 */
export function createApp(platform: Platform, routes: AnyRoute[] = v1Routes) {
  const components: Record<string, unknown> = {}
  const base = documentBase(components)
  const operations = new DeferredOperations(components)

  // There is no global onRequest hook: each route's first hook (or this error handler) starts
  // the request's state, which saves Elysia work on every request. The server is read from
  // `app` rather than the context, which would make Elysia define a getter per request.
  const server: ServerLookup = clientLookup(() => app.server, platform.proxies)
  // Every failure's answer: thrown inside Elysia (its error hook) or by a route's pipeline after it went asynchronous.
  const answerFailure: FailureAnswer = async ({ code, error, request, set }) => {
    const state = requestStateOf(request, server)
    const requestId = state.requestId
    set.headers['x-request-id'] = requestId
    if (state.idempotency?.token) platform.idempotency.release(state.idempotency.ownerId, state.idempotency.key, state.idempotency.token)
    let problem: { code: ErrorCode; detail: string; headers?: Record<string, string> } | undefined
    if (error instanceof ApiError) {
      problem = { code: error.code, detail: error.detail, headers: error.headers }
    } else if (code === 'NOT_FOUND') {
      await peekHeaders(platform, request, state, set.headers)
      // The path as the router saw it: the URL text up to '?'. (`new URL().pathname` drops a
      // `#fragment` the router kept, which made an unmatched `GET /v1/me#x` a 405 allowing GET.)
      // Without a usable Host header, Bun's `request.url` is the bare target (`/nowhere`).
      const url = request.url
      const start = url.startsWith('/') ? 0 : url.indexOf('/', url.indexOf('://') + 3)
      const query = url.indexOf('?', start)
      const path = start === -1 ? '/' : query === -1 ? url.slice(start) : url.slice(start, query)
      // /mcp keeps its own browser rule (MCP_ALLOWED_ORIGINS): CORS neither answers nor marks it.
      const cors = path === '/mcp' ? null : platform.cors
      const origin = request.headers.get('origin')
      const allowed = allowedMethods(app.routes, path)
      // The path is the client's text: it is not echoed back (a reflected page, a log of its own).
      const method = request.method.slice(0, 16)
      if (cors && isPreflight(request)) {
        if (cors.allows(origin)) {
          platform.access?.record(state, request.method, 204)
          return preflightAnswer(cors, origin, set.headers)
        }
        // No CORS headers: the browser refuses the page's request; whoever reads this answer learns the setting.
        cors.decorate(origin, set.headers)
        problem = {
          code: 'origin_not_allowed',
          detail: `Origin ${(origin ?? '').slice(0, 200)} may not call this API from a browser; the operator can allow it with CORS_ALLOWED_ORIGINS`,
        }
      } else if (cors) {
        cors.decorate(origin, set.headers)
      }
      problem ??=
        allowed.length > 0
          ? {
              code: 'method_not_allowed',
              detail: `${method} is not allowed on this path; allowed: ${allowed.join(', ')}`,
              headers: { allow: allowed.join(', ') },
            }
          : { code: 'route_not_found', detail: `No route matches ${method} on this path; /openapi.json lists every route` }
    } else if (code === 'PARSE') {
      if (state.route !== '/mcp') platform.cors?.decorate(request.headers.get('origin'), set.headers)
      problem = { code: 'malformed_json', detail: 'The request body is not valid JSON' }
    } else {
      problem = unexpectedProblem(platform, error, state, requestId)
    }
    const body = problemBody(problem.code, problem.detail, requestId)
    platform.access?.record(state, request.method, body.status)
    const text = JSON.stringify(body)
    // A long problem (a 422 listing many fields) is coded like any answer (CONTRACT §25); Elysia adds `set.headers`.
    const payload = text.length > MIN_COMPRESSED_LENGTH ? encodeBody(text, request.headers.get('accept-encoding'), set.headers) : text
    return new Response(payload, {
      status: body.status,
      headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...PRIVATE_ANSWER_HEADERS, ...problem.headers },
    })
  }
  // A request the native router does not match (a path with dot segments, say) is routed by
  // Elysia's own handler, which by default skips 11 characters of the URL as if every Host were
  // at least `a.bc` long: with `Host: api` it read `/v1/me` as `/me`. Bun serves plain http.
  const app = new Elysia({ normalize: false, aot: true, handler: { standardHostname: false } })
    .onError({ as: 'global' }, answerFailure)
    .use(uncountedRoutes(platform, base, operations, server))
    .use(mcpEndpoint(platform, routes, server))
    .use(oauthEndpoints(platform, server))

  mountRoutes(app as unknown as Elysia, platform, routes, operations, server, answerFailure)
  return app
}

export type App = ReturnType<typeof createApp>

/** The listening options every pfin server uses, the tests' included. */
export function listen(app: App, config: Pick<Config, 'port' | 'host'>) {
  try {
    // reusePort off: a second server on a busy port must fail, not quietly share the traffic.
    // Bun's own body limit is lifted so every oversized body gets the contract's 413 from the pipeline.
    app.listen({ port: config.port, hostname: config.host, reusePort: false, maxRequestBodySize: Number.MAX_SAFE_INTEGER })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'EADDRINUSE')
      throw new StartupError(`port ${config.port} on ${config.host} is already in use (another pfin or another program). Stop it, or set PORT to a free port.`)
    if (code === 'EACCES') throw new StartupError(`not allowed to listen on port ${config.port} (ports below 1024 need privileges). Set PORT to 1024 or above.`)
    if (code === 'EADDRNOTAVAIL') throw new StartupError(`HOST ${config.host} is not an address of this machine. Set HOST to one (0.0.0.0 for all).`)
    // A HOST that is no address is looked up as a name; where no resolver answers (a machine
    // without network) Bun reports that lookup's failure as ENOENT.
    if (code === 'EINVAL' || code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'ENOENT')
      throw new StartupError(`HOST ${config.host} is not an address pfin can listen on. Set HOST to an IP address of this machine (0.0.0.0 for all).`)
    throw error
  }
  const server = app.server
  if (!server) throw new StartupError('the server failed to start')
  return server
}

/** The server cannot start for a reason the operator can fix; the message says how. */
export class StartupError extends Error {}

/** Closes what the platform holds: owner databases, the control database, the claim on DATA_DIR. */
export function closePlatform(platform: Platform): void {
  // Writes queued for this turn's commit run before the files close.
  platform.writes.flush()
  platform.idempotency.copyNow()
  platform.access?.close()
  platform.cluster?.close()
  platform.tenants.closeAll()
  platform.control.close()
  platform.lock.release()
}

/** An owner no request has used for this long gives back its page cache and has its log folded into its file. */
const IDLE_OWNER_MS = 30_000

/**
 * Returns to the filesystem the pages that purges and deletions freed (CONTRACT §19), a bounded
 * number per database and round: without it a file keeps its largest size for ever.
 */
function giveBackSpace(platform: Platform): void {
  const control = platform.control.sqlite
  const databases: [string, () => unknown][] = [['control.db', () => tryWithoutWaiting(control, () => giveBackFreePages(control))]]
  for (const tenant of ownersServed(platform)) databases.push([`owner ${tenant.ownerId}`, () => tenant.giveBackFreePages()])
  for (const [name, giveBack] of databases) {
    try {
      giveBack()
    } catch (error) {
      platform.log(`could not give back the free space of ${name}: ${String(error)}`)
    }
  }
}

/**
 * The open owners this server may write to now: in a cluster, not those being moved away (their
 * file is being copied, and the copy is compared with it) nor those placed elsewhere.
 */
function ownersServed(platform: Platform): Tenant[] {
  const cluster = platform.cluster
  const open = platform.tenants.openTenants()
  return cluster ? open.filter((tenant) => cluster.serves(tenant.ownerId)) : open
}

/**
 * One round of housekeeping: old tombstones and answers out of the owners' files, expired copies,
 * counters and tokens out of control.db (never waiting for another process's lock on it), and
 * free pages given back.
 */
export function housekeep(platform: Platform): void {
  try {
    for (const tenant of ownersServed(platform)) {
      purgeTombstones(tenant, Date.now() - tenant.tombstoneRetentionMs)
      platform.idempotency.purgeTenant(tenant)
    }
    // Like the write-behind: never held by another process's lock on control.db; a busy round waits for the next.
    tryWithoutWaiting(platform.control.sqlite, () => {
      platform.idempotency.purgeCopies()
      platform.limiter.purge()
      platform.control.oauth.purge(Date.now())
    })
  } catch (error) {
    platform.log(`idempotency purge failed: ${String(error)}`)
  }
  giveBackSpace(platform)
}

/** Background work: write-behind of counters and last-use times, idempotency purge, resting idle owners. */
export function startMaintenance(platform: Platform): () => void {
  // Every second without waiting for a lock another process holds on control.db (an admin
  // command's transaction): what is not written stays queued for the next round, and the thread
  // that answers every request is never held for the busy timeout. At shutdown it waits.
  const flush = (wait = false) => {
    try {
      const write = () => {
        platform.limiter.flush()
        platform.authenticator.flush()
      }
      if (wait) write()
      else tryWithoutWaiting(platform.control.sqlite, write)
    } catch (error) {
      platform.log(`write-behind failed: ${String(error)}`)
    }
  }
  const purge = () => housekeep(platform)
  const rest = () => {
    for (const { ownerId, error } of platform.tenants.restIdle(IDLE_OWNER_MS)) {
      platform.log(`could not rest the idle database of owner ${ownerId}: ${String(error)}`)
    }
  }
  // After the first answers, not before them: a restart (a failover) is waited on until its first 200.
  const firstPurge = setTimeout(purge, 2000)
  // Auto-posting (CONTRACT §29): a sweep of the owners due at start (catching up after downtime) and every minute.
  const cluster = platform.cluster
  const poster = new AutoPoster(platform.control.sqlite, platform.tenants, platform.log, cluster ? (ownerId) => cluster.serves(ownerId) : undefined)
  platform.openHooks.push((tenant) => poster.opened(tenant))
  const post = () => {
    try {
      poster.sweep()
    } catch (error) {
      platform.log(`auto-posting sweep failed: ${String(error)}`)
    }
  }
  const startSweep = setTimeout(post, 0)
  const postTimer = setInterval(post, 60_000)
  const syncTimer = setInterval(() => poster.syncChanged(), 1000)
  const flushTimer = setInterval(() => flush(), 1000)
  const purgeTimer = setInterval(purge, 10 * 60_000)
  const restTimer = setInterval(rest, IDLE_OWNER_MS / 2)
  return () => {
    clearInterval(flushTimer)
    clearInterval(purgeTimer)
    clearInterval(restTimer)
    clearTimeout(startSweep)
    clearTimeout(firstPurge)
    clearInterval(postTimer)
    clearInterval(syncTimer)
    poster.syncChanged(true)
    flush(true)
  }
}
