import { listPages, type TestServer } from '../support/harness.ts'

/**
 * Shared by the accounts, payees and agent-context suites: small helpers that fail loudly when
 * a setup request does not work.
 */
// biome-ignore lint/suspicious/noExplicitAny: response JSON
export type Json = any

export const ACCOUNT_FIELDS = [
  'id',
  'externalId',
  'name',
  'type',
  'subtype',
  'providerSlug',
  'secondaryProviderSlug',
  'balance',
  'currency',
  'color',
  'icon',
  'linkedAccountId',
  'isArchived',
  'isLiability',
  'isFavourite',
  'showInDashboard',
  'isHidden',
  'notes',
  'sortOrder',
  'accountNumber',
  'customFields',
  'createdAt',
  'updatedAt',
].sort()

export const PAYEE_FIELDS = [
  'id',
  'externalId',
  'name',
  'normalizedName',
  'aliases',
  'categoryId',
  'isMerchant',
  'transactionCount',
  'totalSpent',
  'createdAt',
  'updatedAt',
].sort()

/** An id of the right shape that no one has. */
export const unknownId = (prefix: string) => `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`

/** POSTs and insists on 201 (or the given status); returns `data`. */
export async function create(server: TestServer, key: string, path: string, body: unknown, status = 201): Promise<Json> {
  const res = await server.request('POST', path, { key, body })
  if (res.status !== status) throw new Error(`POST ${path} → ${res.status} (expected ${status}): ${res.text}`)
  return res.json.data
}

export const createAccount = (server: TestServer, key: string, body: Record<string, unknown> = {}) =>
  create(server, key, '/v1/accounts', { name: 'Checking', type: 'bank', balance: 0, currency: 'EUR', ...body })

export const createPayee = (server: TestServer, key: string, body: Record<string, unknown>) => create(server, key, '/v1/payees', body)

export const createTransaction = (server: TestServer, key: string, body: Record<string, unknown>) =>
  create(server, key, '/v1/transactions', { date: '2025-03-01', ...body })

export async function get(server: TestServer, key: string, path: string): Promise<Json> {
  const res = await server.request('GET', path, { key })
  if (res.status !== 200) throw new Error(`GET ${path} → ${res.status}: ${res.text}`)
  return res.json.data
}

export async function patch(server: TestServer, key: string, path: string, body: unknown): Promise<Json> {
  const res = await server.request('PATCH', path, { key, body })
  if (res.status !== 200) throw new Error(`PATCH ${path} → ${res.status}: ${res.text}`)
  return res.json.data
}

/** Walks every page of a list route; checks the envelope on every page. */
export const listAll = (server: TestServer, key: string, path: string, query: Record<string, string> = {}, limit = 200): Promise<Json[]> =>
  listPages(server, key, path, query, limit)

/** A table of the owner's file, read directly: proves a rejected request changed nothing. */
export function tableRows(server: TestServer, ownerId: string, table: 'accounts' | 'payees' | 'payee_aliases' | 'transactions' | 'categories'): unknown[] {
  return server.platform.tenants.get(ownerId).sqlite.query(`SELECT * FROM ${table} ORDER BY rowid`).all()
}
