import { expect } from 'bun:test'
import { listPages, type TestServer } from '../support/harness.ts'

/**
 * A sync client of GET /v1/changes (CONTRACT §15) as a real one is written: it stores
 * `nextCursor`, applies each page to its copy (upsert → set, delete → remove) and checks every
 * page on the way. And the server's own truth to compare the copy with: the list routes.
 */

// biome-ignore lint/suspicious/noExplicitAny: response JSON
export type Json = any

export const KINDS = ['accounts', 'categories', 'payees', 'transactions'] as const
export type Kind = (typeof KINDS)[number]
export const ENTITY: Record<Kind, string> = { accounts: 'account', categories: 'category', payees: 'payee', transactions: 'transaction' }

const CHANGE_KEYS = ['changedAt', 'data', 'externalId', 'id', 'op', 'resource', 'seq']

export interface FeedClient {
  /** The stored cursor; null before the first call. */
  cursor: string | null
  /** `resource:id` → the object as the feed last showed it. */
  copy: Map<string, Json>
  /** The highest seq applied so far: every later change must be above it. */
  lastSeq: number
  /** The `resources=` this client asks for (undefined: all the key may read). */
  resources?: Kind[]
  pages: number
}

export function newClient(resources?: Kind[]): FeedClient {
  return { cursor: null, copy: new Map(), lastSeq: 0, resources, pages: 0 }
}

export function feedPath(cursor: string | null, limit?: number, resources?: readonly string[]): string {
  const params = new URLSearchParams()
  if (cursor !== null) params.set('cursor', cursor)
  if (limit !== undefined) params.set('limit', String(limit))
  if (resources) params.set('resources', resources.join(','))
  const query = params.toString()
  return query ? `/v1/changes?${query}` : '/v1/changes'
}

/**
 * One page from the client's cursor, checked and applied: exact envelope and Change shape,
 * seqs strictly increasing (within the page and after everything seen before), only the kinds
 * asked for, `data` the current object of an upsert (its id, its externalId), null on a delete.
 */
export async function pullPage(server: TestServer, key: string, client: FeedClient, limit?: number): Promise<{ hasMore: boolean; changes: Json[] }> {
  const res = await server.request('GET', feedPath(client.cursor, limit, client.resources), { key })
  if (res.status !== 200) throw new Error(`GET /v1/changes → ${res.status}: ${res.text}`)
  const body = res.json
  expect(Object.keys(body).sort()).toEqual(['data', 'hasMore', 'nextCursor'])
  expect(typeof body.nextCursor).toBe('string')
  expect(body.nextCursor.startsWith('chg_')).toBe(true)
  expect(typeof body.hasMore).toBe('boolean')
  const pageSize = limit ?? 100
  expect(body.data.length).toBeLessThanOrEqual(pageSize)
  // A page that says there is more is full: the server had more than `limit` to give.
  if (body.hasMore) expect(body.data.length).toBe(pageSize)
  const allowed = new Set((client.resources ?? KINDS).map((kind) => ENTITY[kind]))
  for (const change of body.data) {
    expect(Object.keys(change).sort()).toEqual(CHANGE_KEYS)
    if (!(Number.isInteger(change.seq) && change.seq > client.lastSeq)) {
      throw new Error(`seq ${change.seq} after ${client.lastSeq}: the feed repeated or reordered a change\n${res.text}`)
    }
    client.lastSeq = change.seq
    expect(allowed.has(change.resource)).toBe(true)
    expect(Number.isInteger(change.changedAt)).toBe(true)
    const id = `${change.resource}:${change.id}`
    if (change.op === 'upsert') {
      if (change.data === null) throw new Error(`upsert of ${id} without data`)
      expect(change.data.id).toBe(change.id)
      expect(change.externalId).toBe(change.data.externalId)
      if (change.resource === 'category') expect(change.data.isSystem).toBe(false)
      client.copy.set(id, change.data)
    } else {
      expect(change.op).toBe('delete')
      expect(change.resource).toBe('transaction')
      expect(change.data).toBeNull()
      client.copy.delete(id)
    }
  }
  client.cursor = body.nextCursor
  client.pages += 1
  return { hasMore: body.hasMore, changes: body.data }
}

/** Pages until `hasMore` is false, then checks that the stored cursor now yields nothing. */
export async function drain(server: TestServer, key: string, client: FeedClient, limit = 500): Promise<Json[]> {
  const changes: Json[] = []
  for (let pages = 0; pages < 100_000; pages++) {
    const page = await pullPage(server, key, client, limit)
    changes.push(...page.changes)
    if (!page.hasMore) {
      const again = await pullPage(server, key, client, limit)
      if (again.changes.length !== 0 || again.hasMore) throw new Error(`the cursor at the end of the feed yielded more: ${JSON.stringify(again.changes)}`)
      return changes
    }
  }
  throw new Error('the feed never ended')
}

/** Everything the feed covers, as the list routes return it, keyed like a client's copy. */
export async function listedState(server: TestServer, key: string, kinds: readonly Kind[] = KINDS): Promise<Map<string, Json>> {
  const state = new Map<string, Json>()
  for (const kind of kinds) {
    const query: Record<string, string> = kind === 'accounts' || kind === 'categories' ? { includeArchived: 'true' } : {}
    let items = await listPages(server, key, `/v1/${kind}`, query)
    // System categories are fixed and not in the feed (CONTRACT §15).
    if (kind === 'categories') items = items.filter((category) => !category.isSystem)
    for (const item of items) state.set(`${ENTITY[kind]}:${item.id}`, item)
  }
  return state
}

/** The copy equals the lists, object by object; the failure names what differs. */
export function expectSameState(copy: Map<string, Json>, listed: Map<string, Json>, label = 'feed copy'): void {
  const problems: string[] = []
  for (const [id, item] of listed) {
    const held = copy.get(id)
    if (held === undefined) problems.push(`missing ${id}: ${JSON.stringify(item)}`)
    else if (!Bun.deepEquals(held, item, true)) problems.push(`stale ${id}:\n    feed ${JSON.stringify(held)}\n    list ${JSON.stringify(item)}`)
  }
  for (const [id, held] of copy) if (!listed.has(id)) problems.push(`extra ${id}: ${JSON.stringify(held)}`)
  if (problems.length) throw new Error(`${label} differs from the lists (${problems.length}):\n  ${problems.slice(0, 12).join('\n  ')}`)
}

/** The seq a cursor stands at, read from its payload (`chg_` + base64url "epoch.seq.mac"); test use only. */
export function cursorParts(cursor: string): { epoch: string; seq: string; mac: string } {
  const [epoch = '', seq = '', mac = ''] = Buffer.from(cursor.slice(4), 'base64url').toString('utf8').split('.')
  return { epoch, seq, mac }
}

export function makeCursor(parts: { epoch: string; seq: string; mac: string }): string {
  return `chg_${Buffer.from(`${parts.epoch}.${parts.seq}.${parts.mac}`).toString('base64url')}`
}
