import { afterAll, beforeAll, expect } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createKey, createOwner, type NewOwner } from '../../src/cli/admin.ts'
import { loadConfig } from '../../src/config.ts'
import { routes } from '../../src/modules/index.ts'
import type { Platform } from '../../src/platform/context.ts'
import type { AnyRoute } from '../../src/platform/route.ts'
import type { Scope } from '../../src/platform/scopes.ts'
import { closePlatform, createApp, createPlatform, listen, startMaintenance } from '../../src/server.ts'

/**
 * A real pfin server on an ephemeral port over a fresh temporary DATA_DIR, with helpers to
 * make owners and keys and to send real HTTP requests.
 */
export interface TestServer {
  url: string
  dataDir: string
  platform: Platform
  /** Makes an owner (Pro unless told otherwise) and a key with all scopes unless told otherwise. */
  owner(input?: OwnerInput): Promise<TestOwner>
  key(ownerId: string, opts?: { scopes?: Scope[]; ttlMs?: number | null }): Promise<{ id: string; key: string }>
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>
  /** Stops the server and closes its databases; keeps the data dir unless `remove`. */
  stop(opts?: { remove?: boolean }): Promise<void>
}

export interface RequestOptions {
  key?: string
  /** JSON-encoded unless a string. */
  body?: unknown
  /** Defaults to a fresh random key on POST/PATCH; pass null to omit. */
  idempotencyKey?: string | null
  headers?: Record<string, string>
}

export interface TestResponse {
  status: number
  headers: Headers
  text: string
  // biome-ignore lint/suspicious/noExplicitAny: tests read response JSON freely
  json: any
}

export function tempDir(prefix = 'pfin-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export interface StartOptions {
  env?: Record<string, string>
  dataDir?: string
  /** Extra routes mounted after the v1 routes (platform tests use throwaway routes). */
  extraRoutes?: AnyRoute[]
}

/** A server whose rate limits stay out of the way, for suites that make many requests. */
export function startUnthrottledServer(): Promise<TestServer> {
  return startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_DAY: '10000000' } })
}

/** What `TestServer.owner` takes: the owner's fields (Pro unless told otherwise) and its key's scopes (all unless told otherwise). */
export type OwnerInput = Partial<NewOwner> & { scopes?: Scope[] }

export interface TestOwner {
  id: string
  key: string
  keyId: string
}

/**
 * One server and one owner (and its key) for a whole test file: the server starts
 * before the file's first test and stops after its last. It is unthrottled unless `start` makes
 * another. The `server` and `owner` returned stand in for them from the start, so a file names
 * them once at its top (`const { server, owner } = serverWithOwner()`); use them inside tests
 * and hooks, once they are set.
 */
export function serverWithOwner(options: { owner?: OwnerInput; start?: () => Promise<TestServer> } = {}): { server: TestServer; owner: TestOwner } {
  const { owner: input, start = startUnthrottledServer } = options
  let started: TestServer | undefined
  let made: TestOwner | undefined
  beforeAll(async () => {
    started = await start()
    made = await started.owner(input)
  })
  afterAll(() => started?.stop())
  const live = (): TestServer => {
    if (!started) throw new Error('the server starts in beforeAll: use it inside a test or a hook')
    return started
  }
  const mine = (): TestOwner => {
    if (!made) throw new Error('the owner is made in beforeAll: use it inside a test or a hook')
    return made
  }
  const server: TestServer = {
    get url() {
      return live().url
    },
    get dataDir() {
      return live().dataDir
    },
    get platform() {
      return live().platform
    },
    owner: (input) => live().owner(input),
    key: (ownerId, opts) => live().key(ownerId, opts),
    request: (method, path, opts) => live().request(method, path, opts),
    stop: (opts) => live().stop(opts),
  }
  const owner: TestOwner = {
    get id() {
      return mine().id
    },
    get key() {
      return mine().key
    },
    get keyId() {
      return mine().keyId
    },
  }
  return { server, owner }
}

/** `serverWithOwner` for the files that need only the server and the owner's key. */
export function unthrottledServerWithKey(): { readonly server: TestServer; readonly key: string } {
  const { server, owner } = serverWithOwner()
  return {
    server,
    get key() {
      return owner.key
    },
  }
}

/** Asserts `replay` is the stored response of `original`, byte for byte (CONTRACT §8). */
export function expectReplayOf(replay: TestResponse, original: TestResponse): void {
  expect(replay.status).toBe(original.status)
  expect(replay.text).toBe(original.text)
  expect(replay.headers.get('idempotent-replayed')).toBe('true')
  expect(replay.headers.get('x-request-id')).toBe(original.headers.get('x-request-id'))
  expect(replay.headers.get('location')).toBe(original.headers.get('location'))
}

export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  const { env = {}, dataDir = tempDir(), extraRoutes = [] } = options
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'off', ...env })
  const platform = createPlatform(config, () => {})
  const server = listen(createApp(platform, [...routes, ...extraRoutes]), config)
  const stopMaintenance = startMaintenance(platform)
  const url = `http://127.0.0.1:${server.port}`
  // The server's own address is its public one (CONTRACT §28), unless a test chose PUBLIC_URL (or '' for none).
  if (!('PUBLIC_URL' in env)) platform.config.publicUrl = url

  const test: TestServer = {
    url,
    dataDir,
    platform,
    async owner(input = {}) {
      const { scopes, ...fields } = input
      const owner = createOwner(platform.control, platform.tenants, {
        name: 'Test Owner',
        email: null,
        country: null,
        defaultCurrency: null,
        preferredLanguage: null,
        ...fields,
      })
      const key = await createKey(platform.control, { ownerId: owner.id, scopes })
      return { id: owner.id, key: key.key, keyId: key.id }
    },
    async key(ownerId, opts = {}) {
      const key = await createKey(platform.control, { ownerId, scopes: opts.scopes, ttlMs: opts.ttlMs })
      return { id: key.id, key: key.key }
    },
    request: (method, path, opts) => send(url, method, path, opts),
    async stop(opts = {}) {
      await server.stop(true)
      stopMaintenance()
      closePlatform(platform)
      if (opts.remove !== false) rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return test
}

export async function send(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.key) headers.authorization = `Bearer ${opts.key}`
  let body: string | undefined
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  if ((method === 'POST' || method === 'PATCH') && opts.idempotencyKey !== null) {
    headers['idempotency-key'] ??= opts.idempotencyKey ?? crypto.randomUUID()
  }
  return sendRaw(baseUrl, path, { method, headers, body })
}

export const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-minute',
  'x-ratelimit-remaining-minute',
  'x-ratelimit-reset-minute',
  'x-ratelimit-limit-day',
  'x-ratelimit-remaining-day',
  'x-ratelimit-reset-day',
] as const

/** Asserts the CONTRACT §6 problem shape and returns the body. */
export function expectProblem(res: TestResponse, status: number, code: string) {
  const problems: string[] = []
  if (res.status !== status) problems.push(`status ${res.status} (expected ${status})`)
  if (!res.headers.get('content-type')?.startsWith('application/problem+json')) problems.push(`content-type ${res.headers.get('content-type')}`)
  const body = res.json ?? {}
  if (body.code !== code) problems.push(`code ${body.code} (expected ${code})`)
  const keys = Object.keys(body).sort().join(',')
  if (keys !== 'code,detail,request_id,status,title,type') problems.push(`keys ${keys}`)
  if (body.type !== `urn:pfin:problem:${code}`) problems.push(`type ${body.type}`)
  if (body.status !== status) problems.push(`body status ${body.status}`)
  if (body.request_id !== res.headers.get('x-request-id')) problems.push('request_id differs from X-Request-Id')
  if (typeof body.detail !== 'string' || body.detail.length === 0) problems.push('empty detail')
  for (const name of RATE_LIMIT_HEADERS) if (!res.headers.has(name)) problems.push(`missing ${name}`)
  if (problems.length) throw new Error(`not the expected problem: ${problems.join('; ')}\n${res.text}`)
  return body as { type: string; title: string; detail: string; status: number; code: string; request_id: string }
}

/** Sends a request exactly as given (raw body, no added headers) and reads it like `send`. */
export async function sendRaw(baseUrl: string, path: string, init: RequestInit): Promise<TestResponse> {
  const response = await fetch(baseUrl + path, init)
  const text = await response.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

/**
 * One JSON-RPC message (its text exactly as given) POSTed to /mcp under `key`, and the text of
 * the JSON-RPC answer, taken out of the event stream when the server answers with one.
 */
export async function mcpAnswerText(server: TestServer, key: string, message: string): Promise<string> {
  const res = await sendRaw(server.url, '/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: message,
  })
  if (res.status !== 200) throw new Error(`/mcp answered ${res.status}: ${res.text}`)
  if (!res.headers.get('content-type')?.includes('text/event-stream')) return res.text
  return res.text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5))
    .join('')
}

/**
 * Every item of a list, page by page through `nextCursor`, checking the page envelope on the
 * way: exactly `data`, `hasMore`, `nextCursor`; a string cursor while there is more, null at the end.
 */
// biome-ignore lint/suspicious/noExplicitAny: response JSON
export async function listPages(server: TestServer, key: string, path: string, query: string | Record<string, string> = {}, limit = 200): Promise<any[]> {
  // biome-ignore lint/suspicious/noExplicitAny: response JSON
  const items: any[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 10_000; pages++) {
    const params = new URLSearchParams(query)
    params.set('limit', String(limit))
    if (cursor) params.set('cursor', cursor)
    const res = await server.request('GET', `${path}?${params}`, { key })
    if (res.status !== 200) throw new Error(`GET ${path}?${params} → ${res.status}: ${res.text}`)
    expect(Object.keys(res.json).sort()).toEqual(['data', 'hasMore', 'nextCursor'])
    items.push(...res.json.data)
    if (!res.json.hasMore) {
      expect(res.json.nextCursor).toBeNull()
      return items
    }
    expect(typeof res.json.nextCursor).toBe('string')
    cursor = res.json.nextCursor
  }
  throw new Error('too many pages')
}
