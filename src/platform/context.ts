import type { ClusterNode } from './cluster.ts'
import type { Config } from '../config.ts'
import type { ControlStore } from '../db/control/store.ts'
import type { DataDirLock } from '../db/data-dir.ts'
import type { TenantRegistry } from '../db/tenant/registry.ts'
import type { Tenant } from '../db/tenant/tenant.ts'
import type { AccessLog } from './access-log.ts'
import type { AuthContext, Authenticator } from './auth.ts'
import type { TrustedProxies } from './client-address.ts'
import type { Cors } from './cors.ts'
import type { Delegations } from './delegation.ts'
import type { IdempotencyStore, StoredResponse } from './idempotency.ts'
import type { Limits, RateLimiter } from './rate-limit.ts'
import type { WriteGroups } from './write-groups.ts'

/** The long-lived services a request may use, built once by the server. */
export interface Platform {
  config: Config
  control: ControlStore
  tenants: TenantRegistry
  authenticator: Authenticator
  /** `Pfin-Subject`: households' delegated requests (CONTRACT §30). */
  delegations: Delegations
  limiter: RateLimiter
  /** Rate limits for callers with a valid key and for everyone else (per client IP). */
  limits: { key: Limits; anonymous: Limits }
  idempotency: IdempotencyStore
  /** Writes over HTTP, grouped per owner into shared commits. */
  writes: WriteGroups
  log: (message: string) => void
  /** This server's claim on DATA_DIR, released when it stops. */
  lock: DataDirLock
  /** One line per request, or null when LOG_FORMAT=off. */
  access: AccessLog | null
  /** The proxies whose forwarding header names the client (TRUSTED_PROXIES); null: none. */
  proxies: TrustedProxies | null
  /** CORS for the origins of CORS_ALLOWED_ORIGINS; null when none is set: no header, no check. */
  cors: Cors | null
  /** This node's place in a cluster (CONTRACT §31); null on a single server. */
  cluster: ClusterNode | null
  /** Called on the turn after an owner's file is opened (the auto-posting catch-up, CONTRACT §29). */
  openHooks: ((tenant: Tenant) => void)[]
}

/** Finds the listening server (for client addresses); null when there is none, as under `app.handle`. */
export type ServerLookup = () => { requestIP(request: Request): { address: string } | null } | null | undefined

/**
 * The server's lookup as requests see it: with trusted proxies, a request's address is the
 * client their forwarding header names (CONTRACT §25), for the anonymous bucket, the key-guessing
 * lock and the access log alike. Without, it is the socket's peer, read as before.
 */
export function clientLookup(server: ServerLookup, proxies: TrustedProxies | null): ServerLookup {
  if (!proxies) return server
  return () => {
    const listening = server()
    if (!listening) return listening
    return { requestIP: (request) => ({ address: proxies.clientOf(listening.requestIP(request)?.address ?? 'local', request.headers) }) }
  }
}

/** What the pipeline learns about one request, kept beside it until the response is made. */
export class RequestState {
  auth?: AuthContext
  body?: unknown
  query?: unknown
  idempotency?: { ownerId: string; key: string; fingerprint: string; token?: symbol }
  /** A PUT sent without an Idempotency-Key: it writes, but keeps no answer to replay (CONTRACT §8). */
  keyless?: boolean
  replay?: StoredResponse
  /** A REST request's If-Match, for a route that honours it (CONTRACT §25); MCP tool calls send none. */
  ifMatch?: string | null
  /** What the route's `prepare` gave, before its write was queued (a statement file read in a worker). */
  prepared?: unknown
  /** The route pattern that matched, for the access log. */
  route?: string
  readonly startedAt = performance.now()
  private clientIp?: string

  constructor(
    readonly requestId: string,
    private readonly request: Request,
    private readonly server: ServerLookup,
  ) {}

  /** A request header (conditions, Accept-Encoding), read when the answer needs it. */
  header(name: string): string | null {
    return this.request.headers.get(name)
  }

  /** The client address, read only when needed (requests without a valid key). */
  get ip(): string {
    this.clientIp ??= this.server()?.requestIP(this.request)?.address ?? 'local'
    return this.clientIp
  }
}

/**
 * Where a request keeps its state: a symbol-keyed property of the Request itself, which lives
 * exactly as long as the request. (A WeakMap entry per request costs several times more, in
 * the lookup and again in every garbage collection while it is live.)
 */
const STATE = Symbol('pfin.requestState')
type WithState = Request & { [STATE]?: RequestState }

/**
 * The request's state, made by whichever hook meets the request first (the route's pipeline,
 * an uncounted route, or the error handler), with its request id: a sane client-sent
 * X-Request-Id, otherwise a fresh one. A global onRequest hook would do the same for every
 * request but costs Elysia a context property and URL parsing on each.
 */
export function requestStateOf(request: Request, server: ServerLookup): RequestState {
  let state = (request as WithState)[STATE]
  if (!state) {
    state = new RequestState(chooseRequestId(request.headers.get('x-request-id')), request, server)
    ;(request as WithState)[STATE] = state
  }
  return state
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/**
 * Request ids need to be unique, not unguessable: 72 random bits fixed per process, then a
 * counter, 32 hex digits in all (like a UUID) and far cheaper than a fresh UUID per request.
 * The counter is two small integers, each printed at a fixed width (a number above 2^31 prints
 * in hex several times slower): 6 digits for every 2^28 requests, then the 8 of the count.
 */
const REQUEST_ID_PREFIX = `req_${Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString('hex')}`
const LOW_START = 0x1000_0000
const LOW_END = 0x2000_0000
const sixHexDigits = (n: number) => (0x100_0000 + n).toString(16).slice(1)
let high = 0
let highText = sixHexDigits(high)
let low = LOW_START

/** A client-sent X-Request-Id when it is a sane token, otherwise a fresh one. */
function chooseRequestId(sent: string | null): string {
  if (sent && SANE_REQUEST_ID.test(sent)) return sent
  low += 1
  if (low === LOW_END) {
    low = LOW_START + 1
    high += 1
    highText = sixHexDigits(high)
  }
  // `low` prints as 8 digits starting with 1: its last 7 and a fixed digit before them keep the width.
  return REQUEST_ID_PREFIX + highText + low.toString(16)
}
