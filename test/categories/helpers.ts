import { expect } from 'bun:test'
import { listPages, type TestServer } from '../support/harness.ts'

/** Helpers of the category tests: create, get, list and snapshot categories over real HTTP, failing loudly when a setup request does not work. */

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
export const listAll = (server: TestServer, key: string, query = '', limit = 200): Promise<Cat[]> => listPages(server, key, '/v1/categories', query, limit)

/** The owner's whole category table, straight from the file: to prove a request changed nothing. */
export function snapshot(server: TestServer, ownerId: string): unknown[] {
  return server.platform.tenants.get(ownerId).sqlite.query('SELECT * FROM categories ORDER BY id').all()
}
