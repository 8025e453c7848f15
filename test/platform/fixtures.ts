import { Database } from 'bun:sqlite'
import { Type } from '@sinclair/typebox'
import { count } from 'drizzle-orm'
import { t } from 'elysia'
import { join } from 'node:path'
import { newId } from '../../src/db/ids.ts'
import { profile } from '../../src/db/tenant/schema.ts'
import { ApiError } from '../../src/platform/errors.ts'
import { type AnyRoute, defineRoute } from '../../src/platform/route.ts'
import type { TestResponse } from '../support/harness.ts'

// Integers use TypeBox's own Type.Integer: Elysia's t.Integer also accepts numeric strings.

/**
 * Throwaway routes for platform tests: they exercise the pipeline without depending on the
 * resource modules. Each write inserts a row into the tenant's `profile` table (a real
 * tenant write) and counts its runs in a closure.
 */

export const ItemBody = t.Object(
  {
    name: t.String({ minLength: 1 }),
    amount: t.Number(),
    tags: t.Optional(t.Array(t.String())),
  },
  { additionalProperties: false },
)

const ItemResponse = t.Object(
  { data: t.Object({ id: t.String(), name: t.String(), run: Type.Integer(), rows: Type.Integer() }, { additionalProperties: false }) },
  { title: 'TestItemResponse', additionalProperties: false },
)

export interface Probe {
  /** Handler runs (including runs that threw). */
  runs: number
  /** Make the next N runs throw an unexpected (500) error. */
  failNext: number
}

export interface Fixture {
  routes: AnyRoute[]
  items: Probe
  others: Probe
  /** Secrets the throwing route puts in its error message; none may reach a client. */
  secrets: string[]
}

export const LEAKY_MESSAGE = 'SQLITE_ERROR: near "SELECT * FROM api_keys WHERE secret_hash": syntax error at /srv/pfin/src/secret-module.ts:42'

export function makeFixture(): Fixture {
  const items: Probe = { runs: 0, failNext: 0 }
  const others: Probe = { runs: 0, failNext: 0 }

  const writeRoute = (path: string, operationId: string, probe: Probe) =>
    defineRoute({
      method: 'POST',
      path,
      operationId,
      summary: 'Test-only write',
      tag: 'System',
      scopes: ['accounts:write'],
      body: ItemBody,
      response: ItemResponse,
      statuses: [201],
      errors: ['rule_violation'],
      handle: ({ body, tenant }) => {
        probe.runs += 1
        const run = probe.runs
        if (probe.failNext > 0) {
          probe.failNext -= 1
          throw new Error(LEAKY_MESSAGE)
        }
        if (body.name === 'reject') throw new ApiError('rule_violation', `rule broken on run ${run}`)
        const id = newId('own')
        tenant.db
          .insert(profile)
          .values({ id, name: body.name, email: null, country: null, defaultCurrency: null, preferredLanguage: null, createdAt: Date.now() })
          .run()
        const rows = tenant.db.select({ n: count() }).from(profile).get()?.n ?? 0
        return { status: 201, location: `${path}/${id}`, body: { data: { id, name: body.name, run, rows } } }
      },
    })

  const patchRoute = defineRoute({
    method: 'PATCH',
    path: '/v1/test-items/:itemId',
    operationId: 'patchTestItem',
    summary: 'Test-only update',
    tag: 'System',
    scopes: ['accounts:write'],
    params: t.Object({ itemId: t.String() }),
    body: t.Object({ name: t.Optional(t.String()) }, { additionalProperties: false }),
    response: t.Object({ data: t.Object({ id: t.String() }) }),
    statuses: [200],
    handle: ({ params }) => ({ status: 200, body: { data: { id: params.itemId } } }),
  })

  const boomRoute = defineRoute({
    method: 'GET',
    path: '/v1/test-boom',
    operationId: 'testBoom',
    summary: 'Test-only route that always fails',
    tag: 'System',
    scopes: ['me:read'],
    response: t.Object({ ok: t.Boolean() }),
    statuses: [200],
    handle: () => {
      throw new Error(LEAKY_MESSAGE)
    },
  })

  const queryRoute = defineRoute({
    method: 'GET',
    path: '/v1/test-query',
    operationId: 'testQuery',
    summary: 'Test-only route with a query parameter',
    tag: 'System',
    scopes: ['me:read'],
    query: t.Object({ limit: t.Optional(Type.Integer({ minimum: 1, maximum: 200 })) }, { additionalProperties: false }),
    response: t.Object({ limit: Type.Integer() }),
    statuses: [200],
    handle: ({ query }) => ({ status: 200, body: { limit: query.limit ?? 50 } }),
  })

  return {
    routes: [
      writeRoute('/v1/test-items', 'createTestItem', items),
      writeRoute('/v1/test-others', 'createTestOther', others),
      patchRoute,
      boomRoute,
      queryRoute,
    ],
    items,
    others,
    secrets: ['SQLITE', 'SELECT', 'api_keys', 'secret_hash', '/srv/pfin', 'secret-module', '.ts:', 'at '],
  }
}

/** Opens a database file of a running server's DATA_DIR with a separate connection. */
export function openFile(dataDir: string, relative: string, readonly = false): Database {
  const db = new Database(join(dataDir, relative), readonly ? { readonly: true } : { readwrite: true })
  db.run('PRAGMA busy_timeout = 5000')
  return db
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Waits, if needed, so that at least `seconds` remain in the current UTC minute: tests that
 * count down a per-minute window must not straddle a window boundary.
 */
export async function awaitFreshMinute(seconds = 8): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < seconds * 1000) await sleep(left + 50)
}

/** Reads a header that must be a whole number. */
export function intHeader(res: TestResponse, name: string): number {
  const raw = res.headers.get(name)
  if (raw === null || !/^\d+$/.test(raw)) throw new Error(`header ${name} is ${JSON.stringify(raw)}, not an integer (status ${res.status})`)
  return Number(raw)
}

/** A well-formed key (`pfk_key_<32 hex>_<43 base64url>`) with the given key id and a fresh random secret. */
export function forgeKey(keyId: string): string {
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  return `pfk_${keyId}_${secret}`
}
