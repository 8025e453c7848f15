import { beforeAll, describe, expect, test } from 'bun:test'
import { brotliDecompressSync } from 'node:zlib'
import { chooseCoding } from '../../src/platform/compression.ts'
import { serverWithOwner } from '../support/harness.ts'

/**
 * Compression (CONTRACT §25): an answer over 1 KiB is coded with zstd, brotli or gzip when the
 * client's Accept-Encoding admits one, with `Vary: Accept-Encoding`; decoded, it is exactly the
 * identity answer. Small answers, 304s and 204s are never coded. A stored idempotent answer is
 * replayed coded or not as the retry asks, the same bytes once decoded. The ETag names the
 * resource, whatever the coding.
 */

const { server, owner } = serverWithOwner()

interface Raw {
  status: number
  headers: Headers
  bytes: Uint8Array
}

/** A request whose answer is read as it came over the wire (fetch decodes nothing). */
async function raw(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Raw> {
  const init = {
    method,
    headers: { authorization: `Bearer ${owner.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    decompress: false,
  }
  const res = await fetch(server.url + path, init as RequestInit)
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

function decoded(res: Raw): string {
  const coding = res.headers.get('content-encoding')
  if (coding === null) return text(res.bytes)
  if (coding === 'gzip') return text(Bun.gunzipSync(res.bytes as Uint8Array<ArrayBuffer>))
  if (coding === 'br') return text(brotliDecompressSync(res.bytes))
  if (coding === 'zstd') return text(Bun.zstdDecompressSync(res.bytes as Uint8Array<ArrayBuffer>))
  throw new Error(`unexpected coding ${coding}`)
}

let accountId = ''
const PAGE = '/v1/transactions?limit=200'

beforeAll(async () => {
  const account = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })
  accountId = account.json.data.id
  const items = Array.from({ length: 200 }, (_, i) => ({
    externalId: `bank-${i}`,
    accountId,
    amount: (i % 37) + 0.25,
    date: `2026-0${(i % 9) + 1}-1${i % 10}`,
    payeeName: `Shop ${i % 13}`,
    note: i % 3 === 0 ? `note ${i}` : undefined,
  }))
  const batch = await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items } })
  expect(batch.status).toBe(200)
})

describe('a page of 200 transactions', () => {
  test('identity when the client accepts no coding, yet Vary: Accept-Encoding (the answer depends on it)', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { 'accept-encoding': 'identity' },
      { 'accept-encoding': 'gzip;q=0, br;q=0, zstd;q=0' },
      { 'accept-encoding': 'deflate' },
    ]) {
      const res = await raw('GET', PAGE, headers)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-encoding')).toBeNull()
      expect(res.headers.get('vary')).toContain('Accept-Encoding')
      expect(JSON.parse(text(res.bytes)).data.length).toBe(200)
    }
  })

  test('gzip, br and zstd each decode to exactly the identity bytes, and are far smaller', async () => {
    const identity = await raw('GET', PAGE, { 'accept-encoding': 'identity' })
    for (const coding of ['gzip', 'br', 'zstd']) {
      const res = await raw('GET', PAGE, { 'accept-encoding': coding })
      expect(res.headers.get('content-encoding')).toBe(coding)
      expect(res.headers.get('vary')).toContain('Accept-Encoding')
      expect(res.headers.get('content-type')).toStartWith('application/json')
      expect(decoded(res)).toBe(text(identity.bytes))
      expect(res.bytes.byteLength).toBeLessThan(identity.bytes.byteLength / 4)
    }
  })

  test('the highest q wins; zstd, then br, then gzip on a tie; * stands for the codings not named', async () => {
    const codingFor = async (header: string) => (await raw('GET', PAGE, { 'accept-encoding': header })).headers.get('content-encoding')
    expect(await codingFor('gzip, deflate, br, zstd')).toBe('zstd')
    expect(await codingFor('gzip, br')).toBe('br')
    expect(await codingFor('gzip;q=1.0, br;q=0.5')).toBe('gzip')
    expect(await codingFor('br;q=0, *')).toBe('zstd')
    expect(await codingFor('zstd;q=0, *;q=0.3')).toBe('br')
    expect(await codingFor('GZIP')).toBe('gzip')
  })
})

describe('never coded', () => {
  test('a small answer (GET /v1/me) is sent as it is, without Vary', async () => {
    const res = await raw('GET', '/v1/me', { 'accept-encoding': 'gzip, br, zstd' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-encoding')).toBeNull()
    expect(res.headers.get('vary')).toBeNull()
    expect(res.bytes.byteLength).toBeLessThanOrEqual(1024)
  })

  test('a 304 has no body to code', async () => {
    const first = await raw('GET', `/v1/accounts/${accountId}`, {})
    const res = await raw('GET', `/v1/accounts/${accountId}`, { 'accept-encoding': 'gzip', 'if-none-match': first.headers.get('etag') as string })
    expect(res.status).toBe(304)
    expect(res.headers.get('content-encoding')).toBeNull()
    expect(res.bytes.byteLength).toBe(0)
  })
})

describe('coded answers stay the same answers', () => {
  test('the ETag of a large resource is the same coded or not: it names the resource, not the bytes on the wire', async () => {
    const legs = Array.from({ length: 40 }, (_, i) => ({ amount: 1, note: `leg ${i} of a long receipt` }))
    const made = await server.request('POST', '/v1/transactions', { key: owner.key, body: { accountId, amount: 40, date: '2026-11-21', splits: legs } })
    expect(made.status).toBe(201)
    const path = `/v1/transactions/${made.json.data.id}`
    const plain = await raw('GET', path, { 'accept-encoding': 'identity' })
    const coded = await raw('GET', path, { 'accept-encoding': 'br' })
    expect(plain.bytes.byteLength).toBeGreaterThan(1024)
    expect(coded.headers.get('content-encoding')).toBe('br')
    expect(decoded(coded)).toBe(text(plain.bytes))
    expect(coded.headers.get('etag')).toBe(plain.headers.get('etag'))
    expect(coded.headers.get('etag')).toBe(made.headers.get('etag'))
    // If-None-Match works the same over either.
    expect((await raw('GET', path, { 'accept-encoding': 'gzip', 'if-none-match': plain.headers.get('etag') as string })).status).toBe(304)
  })

  test('an idempotent answer stored uncoded is replayed coded to a retry that accepts it, and the other way round', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ externalId: `replay-${i}`, accountId, amount: 2, date: '2026-10-01', note: 'replayed batch' }))
    const key = crypto.randomUUID()
    const first = await raw('POST', '/v1/transactions/batch', { 'idempotency-key': key, 'accept-encoding': 'identity' }, { items })
    expect(first.status).toBe(200)
    expect(first.headers.get('content-encoding')).toBeNull()
    for (const coding of ['gzip', 'br', 'zstd', 'identity']) {
      const retry = await raw('POST', '/v1/transactions/batch', { 'idempotency-key': key, 'accept-encoding': coding }, { items })
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
      expect(retry.headers.get('content-encoding')).toBe(coding === 'identity' ? null : coding)
      expect(decoded(retry)).toBe(text(first.bytes))
    }

    const other = crypto.randomUUID()
    const coded = await raw('POST', '/v1/transactions/batch', { 'idempotency-key': other, 'accept-encoding': 'gzip' }, { items })
    expect(coded.headers.get('content-encoding')).toBe('gzip')
    const plainRetry = await raw('POST', '/v1/transactions/batch', { 'idempotency-key': other }, { items })
    expect(plainRetry.headers.get('content-encoding')).toBeNull()
    expect(text(plainRetry.bytes)).toBe(decoded(coded))
  })

  test('a long problem+json (a 422 naming many fields) is coded too', async () => {
    // Ten problems are listed, each naming a field clipped to 64 characters: well over 1 KiB.
    const bad = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`unknown_field_${i}_${'with_a_long_name_'.repeat(3)}`, i]))
    const res = await raw('POST', '/v1/accounts', { 'idempotency-key': crypto.randomUUID(), 'accept-encoding': 'gzip' }, bad)
    expect(res.status).toBe(422)
    expect(res.headers.get('content-type')).toStartWith('application/problem+json')
    expect(res.headers.get('content-encoding')).toBe('gzip')
    const problem = JSON.parse(decoded(res))
    expect(problem.code).toBe('validation_failed')
    expect(decoded(res).length).toBeGreaterThan(1024)
  })

  test('/openapi.json is coded, made once and answered from memory', async () => {
    const plain = await raw('GET', '/openapi.json', { 'accept-encoding': 'identity' })
    const coded = await raw('GET', '/openapi.json', { 'accept-encoding': 'zstd' })
    expect(coded.headers.get('content-encoding')).toBe('zstd')
    expect(decoded(coded)).toBe(text(plain.bytes))
    expect(coded.bytes.byteLength).toBeLessThan(plain.bytes.byteLength / 10)
  })
})

test('chooseCoding reads q-values as RFC 9110 says', () => {
  expect(chooseCoding(null)).toBeNull()
  expect(chooseCoding('')).toBeNull()
  expect(chooseCoding('identity')).toBeNull()
  expect(chooseCoding('gzip;q=0.001')).toBe('gzip')
  expect(chooseCoding('gzip; q=0')).toBeNull()
  expect(chooseCoding('*;q=0')).toBeNull()
  expect(chooseCoding('br;q=0.5, gzip;q=0.5')).toBe('br')
  expect(chooseCoding('gzip;q=nonsense, br')).toBe('br')
})
