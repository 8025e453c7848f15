import { expect } from 'bun:test'
import { listPages, type TestServer } from '../support/harness.ts'

/** Shared helpers for the transaction tests: real HTTP, exact money read from response text. */

// biome-ignore lint/suspicious/noExplicitAny: response JSON
export type Json = any

export const TXN_FIELDS = [
  'id',
  'externalId',
  'accountId',
  'categoryId',
  'payeeId',
  'amount',
  'date',
  'note',
  'originalDescription',
  'time',
  'isTransfer',
  'transferToAccountId',
  'destinationAmount',
  'exchangeRate',
  'hasSplits',
  'splitMode',
  'categoryType',
  'createdAt',
  'updatedAt',
  'createdBy',
  'updatedBy',
  'splits',
  'tagIds',
  'scheduleId',
]

const SCALE = 8n
const UNIT = 10n ** SCALE

/**
 * A decimal lexeme (as written in JSON) as exact integer units of 10⁻⁸. Independent of the
 * server's own money code on purpose. Throws if the value has more than 8 decimals.
 */
export function units(lexeme: string | number): bigint {
  const text = String(lexeme)
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!m) throw new Error(`not a number lexeme: ${text}`)
  const [, sign, intPart = '', frac = '', exp = '0'] = m
  let digits = BigInt(intPart + frac)
  let scale = BigInt(frac.length) - BigInt(exp) // value = digits × 10^-scale
  // bring to 10^-8
  if (scale > SCALE) {
    const drop = 10n ** (scale - SCALE)
    if (digits % drop !== 0n) throw new Error(`more than 8 decimals: ${text}`)
    digits /= drop
    scale = SCALE
  }
  const value = digits * 10n ** (SCALE - scale)
  return sign === '-' ? -value : value
}

/** Exact units as the shortest decimal lexeme (what a client would send). */
export function lexeme(u: bigint): string {
  const negative = u < 0n
  const abs = negative ? -u : u
  const whole = abs / UNIT
  const fraction = (abs % UNIT).toString().padStart(Number(SCALE), '0').replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}

/** The source text of every occurrence of a numeric field in a JSON text, in order. */
export function rawNumbers(text: string, field: string): string[] {
  const re = new RegExp(`"${field}":(-?[0-9][0-9.eE+-]*)`, 'g')
  return [...text.matchAll(re)].map((m) => m[1] as string)
}

export function rawNumber(text: string, field: string): string {
  const all = rawNumbers(text, field)
  if (all.length !== 1) throw new Error(`expected one "${field}" number in ${text}`)
  return all[0] as string
}

export async function createAccount(server: TestServer, key: string, body: Record<string, unknown> = {}): Promise<Json> {
  const res = await server.request('POST', '/v1/accounts', { key, body: { name: 'Checking', type: 'bank', balance: 100, currency: 'EUR', ...body } })
  if (res.status !== 201) throw new Error(`account create failed: ${res.status} ${res.text}`)
  return res.json.data
}

/** The account's balance as exact units, read from the response text (never through a double). */
export async function balance(server: TestServer, key: string, accountId: string): Promise<bigint> {
  const res = await server.request('GET', `/v1/accounts/${accountId}`, { key })
  if (res.status !== 200) throw new Error(`account get failed: ${res.status} ${res.text}`)
  return units(rawNumber(res.text, 'balance'))
}

/** Balances of several accounts as decimal strings, for readable equality checks. */
export async function balances(server: TestServer, key: string, ...ids: string[]): Promise<string[]> {
  return Promise.all(ids.map(async (id) => lexeme(await balance(server, key, id))))
}

export async function createTxn(server: TestServer, key: string, body: Record<string, unknown> | string): Promise<Json> {
  const res = await server.request('POST', '/v1/transactions', { key, body })
  if (res.status !== 201) throw new Error(`transaction create failed: ${res.status} ${res.text}`)
  return res.json.data
}

export async function patchTxn(server: TestServer, key: string, id: string, body: Record<string, unknown>): Promise<Json> {
  const res = await server.request('PATCH', `/v1/transactions/${id}`, { key, body })
  if (res.status !== 200) throw new Error(`transaction PATCH failed: ${res.status} ${res.text}`)
  return res.json.data
}

export async function getTxn(server: TestServer, key: string, id: string): Promise<Json> {
  const res = await server.request('GET', `/v1/transactions/${id}`, { key })
  expect(res.status).toBe(200)
  return res.json.data
}

export async function getPayee(server: TestServer, key: string, id: string): Promise<Json> {
  const res = await server.request('GET', `/v1/payees/${id}`, { key })
  expect(res.status).toBe(200)
  return res.json.data
}

/** Walks every page of the transaction list with the given query. */
export const listAll = (server: TestServer, key: string, query = '', limit = 200): Promise<Json[]> => listPages(server, key, '/v1/transactions', query, limit)

/** Everything a transaction write can touch, straight from the owner's file: to prove a request changed nothing. */
export function snapshot(server: TestServer, ownerId: string): Record<string, unknown[]> {
  const db = server.platform.tenants.get(ownerId).sqlite
  return {
    accounts: db.query('SELECT * FROM accounts ORDER BY id').all(),
    transactions: db.query('SELECT * FROM transactions ORDER BY id').all(),
    payees: db.query('SELECT * FROM payees ORDER BY id').all(),
    categories: db.query('SELECT * FROM categories ORDER BY id').all(),
  }
}

/** The list order of CONTRACT §9: date desc, createdAt desc, then id (desc: newest first). */
export function newestFirst(a: Json, b: Json): number {
  if (a.date !== b.date) return a.date < b.date ? 1 : -1
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}
