import type { Static, TSchema } from '@sinclair/typebox'
import type { ControlStore } from '../db/control/store.ts'
import type { Tenant } from '../db/tenant/tenant.ts'
import type { AuthContext } from './auth.ts'
import type { ErrorCode } from './errors.ts'
import type { Scope } from './scopes.ts'

/**
 * A route, declared once: method and path, the scopes it needs, the schemas that validate
 * its input and document its output, and a synchronous handler. `mountRoutes` turns it into
 * an Elysia route behind the request pipeline and into its OpenAPI operation.
 */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The methods that write through the idempotent write path (CONTRACT §8); DELETE writes in its handler. */
export const isWriteMethod = (method: string): boolean => method === 'POST' || method === 'PATCH' || method === 'PUT'

type StaticOf<T> = T extends TSchema ? Static<T> : undefined

export interface HandlerInput<B, Q, P> {
  auth: AuthContext
  /** The caller's database, opened on first use. */
  readonly tenant: Tenant
  /** The shared control database, for routes over credentials (`store: 'control'`). */
  readonly control: ControlStore
  body: B
  query: Q
  params: P
  requestId: string
  /** What the route's `prepare` gave; undefined when it has none, or the caller did not run it. */
  prepared?: unknown
}

/**
 * A handler's answer: the body as a value, and, when the handler keeps it ready, the same body
 * as JSON text (`serialized`).
 */
export type Reply<T> = {
  status: number
  /** Sets the `Location` header (201 responses). */
  location?: string
  /** Extra response headers (reads only: a write's stored answer keeps status, body and Location). */
  headers?: Record<string, string>
  body: T
  serialized?: string
  /** The answer's ETag, when the handler keeps it ready beside `serialized` (an `etag` route's; else it is computed). */
  etag?: string
  /**
   * What a replay of this write answers, when it must differ from `body`: a new key's secret is
   * shown once and never stored (CONTRACT §28). Only for `store: 'control'` routes.
   */
  stored?: T
}

export interface RouteDef<B extends TSchema | undefined, Q extends TSchema | undefined, P extends TSchema | undefined, R extends TSchema> {
  method: Method
  /** Elysia path, e.g. `/v1/accounts/:accountId`. */
  path: string
  operationId: string
  summary: string
  description?: string
  tag: string
  /** The scopes of the route: the key must carry every one, or with `scopesNeeded: 'any'` at least one. */
  scopes: readonly Scope[]
  scopesNeeded?: 'all' | 'any'
  body?: B
  /** Replaces the plain check of `body` (e.g. a batch whose dry run reports item errors instead of refusing them). */
  checkBody?: (value: unknown) => void
  /** The body limit when it is not the usual 1 MiB. */
  maxBodyBytes?: number
  /**
   * A write of many statements (thousands of rows) that commits in a transaction of its own,
   * never in a savepoint of a group (write-groups.ts): inside a savepoint, SQLite's in-memory
   * statement journal (temp_store = MEMORY) is cut back after each statement by walking it from
   * its start, so each statement costs as much as the savepoint has written so far.
   */
  alone?: boolean
  /**
   * The body may be a file instead of JSON (CONTRACT §24): a body of any media type but JSON is
   * read as bytes, up to `maxBytes`, and reaches the handler as a `RawFile`; a JSON body is the
   * route's `body` as usual. The route's query is then part of the request's fingerprint.
   */
  fileBody?: { maxBytes: number; description: string }
  query?: Q
  params?: P
  response: R
  /** Success statuses, first is the usual one. */
  statuses: readonly number[]
  /** Headers of the success response beyond the shared ones, as OpenAPI header objects. */
  responseHeaders?: Record<string, { description: string; schema: Record<string, unknown> }>
  /** Errors this route can return beyond the shared ones (auth, limits, idempotency, bodies). */
  errors?: readonly ErrorCode[]
  /**
   * Where a write's effects live: the owner's file (default), or control.db for the routes over
   * credentials, whose answer is then kept in control.db in the same transaction (CONTRACT §28).
   */
  store?: 'control'
  /**
   * False for the routes over the key owner's own credentials and grants (keys, grants, the
   * ledgers it may act on): never run on another's ledger; with `Pfin-Subject` they answer 403
   * `insufficient_scope` (CONTRACT §30, no re-delegation).
   */
  delegable?: false
  requestExample?: unknown
  responseExample?: unknown
  /**
   * A route of one resource (CONTRACT §25): its success answers carry the strong ETag of their
   * `data`, and a GET answers 304 to an `If-None-Match` that names it.
   */
  etag?: boolean
  /**
   * The resource as a GET of it shows it now, read inside the write's transaction (throwing 404
   * when it is absent): with it, a PATCH or DELETE honours `If-Match` (412 when the resource
   * changed, before anything is written). Implies `etag`.
   */
  current?: (input: HandlerInput<unknown, unknown, StaticOf<P>>) => unknown
  /**
   * Work a write does before it is queued, off the handler's transaction: asynchronous, so that
   * it may leave the event loop (reading a statement file in a worker, hashing a new key's secret). Its result reaches the
   * handler as `prepared`; it must not reject (a failure is a result the handler turns into its
   * answer, so that it is kept like any other of the handler's refusals).
   */
  prepare?: (input: HandlerInput<StaticOf<B>, StaticOf<Q>, StaticOf<P>>) => Promise<unknown>
  handle(input: HandlerInput<StaticOf<B>, StaticOf<Q>, StaticOf<P>>): Reply<Static<R>>
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of routes
export type AnyRoute = RouteDef<any, any, any, any>

/** Identity helper that infers the handler's types from the schemas. */
export function defineRoute<
  B extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
  R extends TSchema = TSchema,
>(def: RouteDef<B, Q, P, R>): AnyRoute {
  return def as AnyRoute
}

/** An upsert's answer: 201 with `Location` when it created, 200 when it updated. */
export function upsertReply<T>(created: boolean, data: T, location: string) {
  return {
    status: created ? 201 : 200,
    body: { operation: created ? ('created' as const) : ('updated' as const), data },
    location: created ? location : undefined,
  }
}
