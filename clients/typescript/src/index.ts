/**
 * @pfin/client — a typed client for the pfin API.
 *
 * The typed `GET`/`POST`/`PUT`/`PATCH`/`DELETE` are openapi-fetch over the types generated from
 * pfin's /openapi.json (src/schema.ts). This file adds only what a generator cannot: an
 * Idempotency-Key on every write that is reused by the client's own retries, bounded retries
 * that honour Retry-After, typed problem errors, paging and change-feed iterators, and exact
 * decimal money.
 */
import createClient, { type Client, type MaybeOptionalInit } from 'openapi-fetch'
import { stringifyExact } from './decimals.js'
import { PfinError } from './errors.js'
import { createTransport, type FetchLike, type RetryEvent, type RetryOptions, retryOptions } from './transport.js'
import type { paths } from './schema.js'
import type { ChangeResource, ChangesPage, ClientPaths, ListItem, ListPath, ListQuery, Model } from './types.js'

export { MONEY_FIELDS, type MoneyField, parseExact, quoteMoneyNumbers, stringifyExact } from './decimals.js'
export { isPfinError, PfinError, type PfinErrorCode, PROBLEM_CODES, type ProblemCode } from './errors.js'
export type { components, operations, paths } from './schema.js'
export type { FetchLike, RetryEvent, RetryOptions } from './transport.js'
export type { Change, ChangeResource, ChangesPage, ClientPaths, ListItem, ListPath, ListQuery, Model, WithExactMoney } from './types.js'

export interface PfinClientOptions<Exact extends boolean = false> {
  /** Where pfin answers, e.g. `https://pfin.example.org` (without `/v1`). */
  baseUrl: string
  /**
   * A personal API key (`pfk_…`) or an OAuth access token (`pfa_…`), sent as `Authorization:
   * Bearer`; or a function giving it, asked on every attempt, so that a token refreshed while
   * the client lives is the one sent (a retry after a 401 is not made: refresh, then call again).
   */
  apiKey: string | (() => string | Promise<string>)
  /** The fetch to send with (default `globalThis.fetch`); called once per attempt. */
  fetch?: FetchLike
  /** Retries of one request: a count (default 3; 0 = off) or finer options. */
  retries?: number | RetryOptions
  /**
   * Money fields (`MONEY_FIELDS`: amount, balance, destinationAmount, totalSpent, exchangeRate, and a budget's figures)
   * are read as exact decimal strings and may be sent as strings. Default false (numbers).
   */
  exactDecimals?: Exact
  /** Extra headers on every request. */
  headers?: Record<string, string>
  /** Called before each retry (for logging). */
  onRetry?: (event: RetryEvent) => void
}

type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete'
type OperationOf<P, Path extends keyof P, M extends HttpMethod> = P[Path] extends { [K in M]: infer O } ? O : never
type PathsWith<P, M extends HttpMethod> = { [K in keyof P]: P[K] extends { [X in M]: object } ? K : never }[keyof P]
// biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` is the test for an optional key
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T]
type InitArgs<Init> = [RequiredKeys<Init>] extends [never] ? [init?: Init & { [key: string]: unknown }] : [init: Init & { [key: string]: unknown }]
/** The JSON body of an operation's success (2xx) responses. */
export type SuccessBody<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 ? (R[S] extends { content: { 'application/json': infer B } } ? B : never) : never }[keyof R]
  : never

/** Like openapi-fetch's method, but resolves to the response body and throws PfinError on an error status. */
export type BodyMethod<P, M extends HttpMethod> = <Path extends PathsWith<P, M>, Init extends MaybeOptionalInit<P[Path], M & keyof P[Path]>>(
  url: Path,
  ...init: InitArgs<Init>
) => Promise<SuccessBody<OperationOf<P, Path, M>>>

export interface PaginateOptions<Query> {
  /** Filters and `limit` (default here: 200, the most a page holds). */
  query?: Query
  /** Start after this cursor instead of at the beginning. */
  cursor?: string
  signal?: AbortSignal
}

export interface ChangesOptions {
  /** Resume from here (a stored `nextCursor`); absent = from the beginning. */
  cursor?: string
  /** Only these kinds (default: every kind the key may read). */
  resources?: ChangeResource[]
  /** Page size, 1–500 (server default 100). */
  limit?: number
  signal?: AbortSignal
}

/**
 * The change feed from a cursor. Iterating it fetches pages (each one yielded, empty ones too)
 * until the feed is caught up (`hasMore: false`); iterating again continues from there, so
 * `for await` inside a polling loop is a sync loop. Save `page.nextCursor` once a page is
 * applied. A cursor too old to resume from throws PfinError `cursor_expired` (410): `reset()`
 * and sync again from the beginning.
 */
export interface ChangeFeed<Exact extends boolean = false> extends AsyncIterable<ChangesPage<Exact>> {
  /** Where the next iteration starts: after the last page the loop body finished (a page whose body threw or broke is fetched again). */
  readonly cursor: string | undefined
  /** Back to the beginning (after `cursor_expired`). */
  reset(): void
}

export interface BatchOptions {
  dryRun?: boolean
  ifDeleted?: 'recreate' | 'skip'
  /** Run the owner's rules on each item; each result then carries `rulesApplied` (CONTRACT §23). */
  applyRules?: boolean
  /** Default: a fresh key, reused by the client's retries. */
  idempotencyKey?: string
  signal?: AbortSignal
}

export interface PfinClient<Exact extends boolean = false> {
  /** openapi-fetch's typed methods: resolve to `{ data, error, response }`, never throw for an HTTP status. */
  GET: Client<ClientPaths<Exact>>['GET']
  POST: Client<ClientPaths<Exact>>['POST']
  PUT: Client<ClientPaths<Exact>>['PUT']
  PATCH: Client<ClientPaths<Exact>>['PATCH']
  DELETE: Client<ClientPaths<Exact>>['DELETE']
  /** The same, resolving to the response body, or throwing PfinError. */
  get: BodyMethod<ClientPaths<Exact>, 'get'>
  post: BodyMethod<ClientPaths<Exact>, 'post'>
  put: BodyMethod<ClientPaths<Exact>, 'put'>
  patch: BodyMethod<ClientPaths<Exact>, 'patch'>
  delete: BodyMethod<ClientPaths<Exact>, 'delete'>
  /** Every item of a list route, page after page (following `nextCursor`). */
  paginate<Path extends ListPath<paths>>(
    path: Path,
    options?: PaginateOptions<ListQuery<ClientPaths<Exact>, Path>>,
  ): AsyncGenerator<ListItem<ClientPaths<Exact>, Path>, void, undefined>
  /** The change feed (`GET /v1/changes`) from `cursor`. */
  changes(options?: ChangesOptions): ChangeFeed<Exact>
  transactions: {
    /** `POST /v1/transactions/batch`: 1–500 upserts, all or nothing (or a dry run). */
    batch(items: Model<'TransactionBatchItem', Exact>[], options?: BatchOptions): Promise<Model<'TransactionBatchResponse', Exact>>
  }
  /** The underlying openapi-fetch client (middleware: `raw.use(…)`). */
  raw: Client<ClientPaths<Exact>>
}

/** `{ data, error, response }` from openapi-fetch → the body, or a thrown PfinError. */
export function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(result: R): Exclude<R['data'], undefined> {
  if (!result.response.ok || result.error !== undefined) throw PfinError.fromResponse(result.response, result.error)
  return result.data as Exclude<R['data'], undefined>
}

export function createPfinClient<const Exact extends boolean = false>(options: PfinClientOptions<Exact>): PfinClient<Exact> {
  if (!options.baseUrl) throw new TypeError('createPfinClient: baseUrl is required')
  if (!options.apiKey) throw new TypeError('createPfinClient: apiKey is required')
  const send: FetchLike = options.fetch ?? ((request) => globalThis.fetch(request))
  const apiKey = options.apiKey
  const transport = createTransport({
    fetch:
      typeof apiKey === 'function'
        ? async (request) => {
            const headers = new Headers(request.headers)
            headers.set('authorization', `Bearer ${await apiKey()}`)
            return send(new Request(request, { headers }))
          }
        : send,
    retries: retryOptions(options.retries),
    exactDecimals: options.exactDecimals === true,
    onRetry: options.onRetry,
  })
  const raw = createClient<ClientPaths<Exact>>({
    baseUrl: options.baseUrl,
    fetch: transport,
    headers: typeof apiKey === 'function' ? { ...options.headers } : { ...options.headers, Authorization: `Bearer ${apiKey}` },
    bodySerializer: (body: unknown) => stringifyExact(body),
  })
  // Internal calls go through an untyped view; the public signatures above carry the types.
  const call = raw as unknown as Record<
    'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    // biome-ignore lint/suspicious/noExplicitAny: see above
    (url: string, init?: any) => Promise<{ data?: any; error?: any; response: Response }>
  >
  const bodyOf =
    (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') =>
    // biome-ignore lint/suspicious/noExplicitAny: see above
    async (url: string, init?: any) =>
      unwrap(await call[method](url, init))

  async function* paginate(path: string, opts: PaginateOptions<Record<string, unknown>> = {}) {
    const query = { limit: 200, ...opts.query }
    let cursor = opts.cursor
    for (;;) {
      const page = await bodyOf('GET')(path, { params: { query: cursor === undefined ? query : { ...query, cursor } }, signal: opts.signal })
      yield* page.data as unknown[]
      if (!page.hasMore || typeof page.nextCursor !== 'string') return
      cursor = page.nextCursor
    }
  }

  function changes(opts: ChangesOptions = {}): ChangeFeed<Exact> {
    let cursor = opts.cursor
    const query: Record<string, unknown> = {}
    if (opts.limit !== undefined) query.limit = opts.limit
    if (opts.resources !== undefined) query.resources = opts.resources.join(',')
    return {
      get cursor() {
        return cursor
      },
      reset() {
        cursor = undefined
      },
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const page = (await bodyOf('GET')('/v1/changes', {
            params: { query: cursor === undefined ? query : { ...query, cursor } },
            signal: opts.signal,
          })) as ChangesPage<Exact>
          yield page
          // Moved only once the consumer is done with the page (a break or throw inside the loop leaves it).
          cursor = page.nextCursor
          if (!page.hasMore) return
        }
      },
    }
  }

  return {
    GET: raw.GET,
    POST: raw.POST,
    PUT: raw.PUT,
    PATCH: raw.PATCH,
    DELETE: raw.DELETE,
    get: bodyOf('GET') as never,
    post: bodyOf('POST') as never,
    put: bodyOf('PUT') as never,
    patch: bodyOf('PATCH') as never,
    delete: bodyOf('DELETE') as never,
    paginate: paginate as never,
    changes,
    transactions: {
      batch: (items, batchOptions = {}) =>
        bodyOf('POST')('/v1/transactions/batch', {
          params: batchOptions.idempotencyKey === undefined ? {} : { header: { 'Idempotency-Key': batchOptions.idempotencyKey } },
          body: {
            items,
            ...(batchOptions.dryRun === undefined ? {} : { dryRun: batchOptions.dryRun }),
            ...(batchOptions.ifDeleted === undefined ? {} : { ifDeleted: batchOptions.ifDeleted }),
            ...(batchOptions.applyRules === undefined ? {} : { applyRules: batchOptions.applyRules }),
          },
          signal: batchOptions.signal,
        }),
    },
    raw,
  }
}
