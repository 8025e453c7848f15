import { quoteMoneyNumbers } from './decimals.js'
import { retryAfterMs } from './errors.js'

export type FetchLike = (request: Request) => Promise<Response>

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  max?: number
  /** Upper bound on the sum of all waits of one request, in ms (default 60 000). A `Retry-After` beyond what is left is not waited for: the response is returned as it is. */
  maxTotalWaitMs?: number
  /** First backoff when the server gave no `Retry-After`, doubled each retry (default 250 ms). */
  baseDelayMs?: number
  /** Cap on one backoff (default 8 000 ms). */
  maxDelayMs?: number
}

/** What the client is about to retry, for logs and tests. */
export interface RetryEvent {
  method: string
  url: string
  /** 1 for the first retry. */
  attempt: number
  /** Why: the status answered, or `network` when fetch itself failed. */
  reason: number | 'network'
  /** The wait before the retry, in ms. */
  delayMs: number
  /** The Idempotency-Key the retry carries (the same as the first attempt's), if any. */
  idempotencyKey: string | null
  error?: unknown
}

export interface TransportOptions {
  fetch: FetchLike
  retries: Required<RetryOptions>
  exactDecimals: boolean
  onRetry?: (event: RetryEvent) => void
  makeIdempotencyKey?: () => string
}

export const DEFAULT_RETRIES: Required<RetryOptions> = { max: 3, maxTotalWaitMs: 60_000, baseDelayMs: 250, maxDelayMs: 8_000 }

export function retryOptions(option: number | RetryOptions | undefined): Required<RetryOptions> {
  const given = typeof option === 'number' ? { max: option } : (option ?? {})
  const merged = { ...DEFAULT_RETRIES, ...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) }
  if (!Number.isInteger(merged.max) || merged.max < 0) throw new RangeError('retries: max must be a whole number ≥ 0')
  return merged
}

/** Writes given a key: POST and PATCH need one, and a PUT's (optional) key makes its retry a replay too. */
const WRITES = new Set(['POST', 'PATCH', 'PUT'])
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * The fetch that openapi-fetch calls: it gives every POST, PATCH and PUT an Idempotency-Key unless
 * the caller set one, and retries with that same key, so a retry never writes twice.
 *
 * Retried, within `retries`:
 * - 429 (any method; a 429 ran nothing), after `Retry-After`;
 * - 409 `idempotency_key_in_progress` (the same key is still running), after `Retry-After`;
 * - 503 (any method: the owner's data could not be opened, nothing ran), 500, 502 and 504
 *   (GET/HEAD and keyed POST/PATCH/PUT only), after backoff or `Retry-After`;
 * - a network error (GET/HEAD and keyed POST/PATCH/PUT only), after backoff.
 * A DELETE carries no key, so it is retried only when the server says it ran nothing (429, 503).
 */
export function createTransport(options: TransportOptions): FetchLike {
  const { fetch: send, retries, exactDecimals, onRetry } = options
  const makeKey = options.makeIdempotencyKey ?? (() => crypto.randomUUID())

  return async function pfinFetch(request: Request): Promise<Response> {
    const method = request.method.toUpperCase()
    const headers = new Headers(request.headers)
    if (WRITES.has(method) && !headers.has('idempotency-key')) headers.set('idempotency-key', makeKey())
    const idempotencyKey = headers.get('idempotency-key')
    const repeatable = SAFE.has(method) || (WRITES.has(method) && idempotencyKey !== null)
    // The body is read once and sent again as it is on each attempt.
    const body = request.body === null ? undefined : await request.arrayBuffer()
    const signal = request.signal

    let waited = 0
    for (let attempt = 0; ; attempt++) {
      const init: RequestInit = { method, headers, body, signal, redirect: request.redirect, credentials: request.credentials }
      let response: Response | undefined
      let failure: unknown
      try {
        response = await send(new Request(request.url, init))
      } catch (error) {
        if (signal.aborted) throw error
        failure = error
      }

      const delay = response === undefined ? (repeatable ? backoff(retries, attempt) : null) : await retryDelay(response, method, repeatable, retries, attempt)
      if (delay === null || attempt >= retries.max || waited + delay > retries.maxTotalWaitMs) {
        if (response === undefined) throw failure
        return exactDecimals ? await withExactMoney(response) : response
      }
      await response?.body?.cancel().catch(() => {})
      onRetry?.({ method, url: request.url, attempt: attempt + 1, reason: response?.status ?? 'network', delayMs: delay, idempotencyKey, error: failure })
      await sleep(delay, signal)
      waited += delay
    }
  }
}

/** The wait before retrying this response, or null when it is not to be retried. */
async function retryDelay(response: Response, method: string, repeatable: boolean, retries: Required<RetryOptions>, attempt: number): Promise<number | null> {
  const status = response.status
  const asked = retryAfterMs(response.headers.get('retry-after'))
  if (status === 429 || status === 503) return asked ?? backoff(retries, attempt)
  if (status === 409 && WRITES.has(method)) {
    const code = await problemCode(response)
    return code === 'idempotency_key_in_progress' ? (asked ?? 1000) : null
  }
  if ((status === 500 || status === 502 || status === 504) && repeatable) return asked ?? backoff(retries, attempt)
  return null
}

async function problemCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { code?: unknown }
    return typeof body?.code === 'string' ? body.code : undefined
  } catch {
    return undefined
  }
}

/** Exponential backoff with jitter: between half and all of base × 2^attempt, capped. */
function backoff(retries: Required<RetryOptions>, attempt: number): number {
  const full = Math.min(retries.maxDelayMs, retries.baseDelayMs * 2 ** attempt)
  return Math.round(full / 2 + (Math.random() * full) / 2)
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** The response with every money number of its JSON body turned into its exact decimal string. */
async function withExactMoney(response: Response): Promise<Response> {
  const type = response.headers.get('content-type') ?? ''
  if (!/\bjson\b/i.test(type) || response.body === null) return response
  const text = quoteMoneyNumbers(await response.text())
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  headers.delete('content-encoding')
  return new Response(text, { status: response.status, statusText: response.statusText, headers })
}
