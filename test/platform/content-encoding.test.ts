import { expect, test } from 'bun:test'
import { sendRaw, unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A request body with a `Content-Encoding` other than identity is refused 415
 * unsupported_media_type and writes nothing: coded bytes are never read as JSON.
 *
 * Ignoring the header would answer a gzip body 400 malformed_json "(it is not UTF-8 text)" and
 * write plain JSON mislabelled gzip as if it were plain. RFC 9110 §8.4.1: a server that does not
 * support a request's content coding answers 415; CONTRACT §6 names it unsupported_media_type.
 */

const fixture = unthrottledServerWithKey()

const json = '{"name":"Coded","type":"bank","balance":1,"currency":"EUR"}'
const headers = (encoding: string) => ({
  authorization: `Bearer ${fixture.key}`,
  'content-type': 'application/json',
  'content-encoding': encoding,
  'idempotency-key': crypto.randomUUID(),
})

test('a gzip-coded body is decoded (201) or refused 415, not read as JSON text', async () => {
  const res = await sendRaw(fixture.server.url, '/v1/accounts', {
    method: 'POST',
    headers: headers('gzip'),
    body: Bun.gzipSync(new TextEncoder().encode(json)),
  })
  // The failure this catches: 400 malformed_json "The request body is not valid JSON (it is not UTF-8 text)".
  expect(res.status).toBe(415)
  expect(res.json.code).toBe('unsupported_media_type')
})

test('a body labelled gzip that is not gzip is not written as if it were plain JSON', async () => {
  const res = await sendRaw(fixture.server.url, '/v1/accounts', { method: 'POST', headers: headers('gzip'), body: json })
  // The failure this catches: 201 Created.
  expect(res.status).toBe(415)
  expect(res.json.code).toBe('unsupported_media_type')
})

test('every coding but identity is refused 415 and writes nothing; identity (any case) is read as usual', async () => {
  for (const coding of ['br', 'zstd', 'deflate', 'compress', 'gzip, identity', 'x-made-up']) {
    const res = await sendRaw(fixture.server.url, '/v1/accounts', { method: 'POST', headers: headers(coding), body: json })
    expect({ coding, status: res.status }).toEqual({ coding, status: 415 })
  }
  const list = await sendRaw(fixture.server.url, '/v1/accounts?limit=100', { method: 'GET', headers: { authorization: `Bearer ${fixture.key}` } })
  expect(list.json.data).toEqual([])
  const plain = await sendRaw(fixture.server.url, '/v1/accounts', { method: 'POST', headers: headers('Identity'), body: json })
  expect(plain.status).toBe(201)
})
