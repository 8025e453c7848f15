import { expect } from 'bun:test'
import { startTestServer, type TestServer } from '../support/harness.ts'

/** A real server whose rate limits stay out of the way of these tests. */
export function startCategoryServer(): Promise<TestServer> {
  return startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_DAY: '1000000' } })
}

// biome-ignore lint/suspicious/noExplicitAny: response JSON
export type Cat = any

export async function createCategory(server: TestServer, key: string, body: Record<string, unknown>): Promise<Cat> {
  const res = await server.request('POST', '/v1/categories', { key, body })
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`)
  return res.json.data
}

export async function getCategory(server: TestServer, key: string, id: string): Promise<Cat> {
  const res = await server.request('GET', `/v1/categories/${id}`, { key })
  expect(res.status).toBe(200)
  return res.json.data
}

/** Walks every page of the list with the given query. */
export async function listAll(server: TestServer, key: string, query = '', limit = 200): Promise<Cat[]> {
  const items: Cat[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 1000; pages++) {
    const params = new URLSearchParams(query)
    params.set('limit', String(limit))
    if (cursor) params.set('cursor', cursor)
    const res = await server.request('GET', `/v1/categories?${params}`, { key })
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`)
    items.push(...res.json.data)
    if (!res.json.hasMore) {
      expect(res.json.nextCursor).toBeNull()
      return items
    }
    cursor = res.json.nextCursor
  }
  throw new Error('too many pages')
}

/** The owner's whole category table, straight from the file: to prove a request changed nothing. */
export function snapshot(server: TestServer, ownerId: string): unknown[] {
  return server.platform.tenants.get(ownerId).sqlite.query('SELECT * FROM categories ORDER BY id').all()
}
