import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { startUnthrottledServer, type TestServer } from '../support/harness.ts'

/**
 * A write with a request pipelined behind it on one connection is applied once, and its retry
 * with the same Idempotency-Key gets the committed answer. That every pipelined request is
 * answered in order waits on Bun: those two tests are `test.todo`.
 *
 * HTTP/1.1 pipelining sends the next request before the answer to the one ahead of it arrives.
 * Group commit answers every HTTP write on the next event-loop turn (`setImmediate` in
 * write-groups.ts), and Bun 1.4.5's server closes a connection whose first answer comes a
 * macrotask after its body was read when a request is pipelined behind it (uWS "denying async
 * pipelining"; oven-sh/bun#38128 is the open fix): the write commits unanswered, and the request
 * behind it is dropped unread. pfin cannot answer every write in the turn its request arrived (a
 * body is read as it streams in, a key's first use is checked off the main thread; answering in a
 * microtask instead changed nothing), so the retry every client makes of an unanswered write is
 * what pfin guarantees. CONTRACT §14: a write that committed is answered as committed, writes
 * from one connection keep their order, and pipelining is not served in order by Bun 1.4.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

/** Writes `raw` on one TCP connection and returns everything read until the server closes it. */
function exchange(raw: string): Promise<string> {
  const port = Number(new URL(server.url).port)
  return new Promise((resolve) => {
    let text = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(raw))
    socket.on('data', (chunk) => {
      text += chunk.toString()
    })
    socket.on('close', () => resolve(text))
    socket.on('error', () => resolve(text))
    socket.setTimeout(5_000, () => socket.destroy())
  })
}

function post(key: string, path: string, body: unknown, last = false, idempotencyKey: string = crypto.randomUUID()): string {
  const text = JSON.stringify(body)
  return (
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(text)}\r\nIdempotency-Key: ${idempotencyKey}\r\n${last ? 'Connection: close\r\n' : ''}\r\n${text}`
  )
}

const statusLines = (text: string) => text.match(/^HTTP\/1\.1 \d{3}/gm) ?? []

test.todo('two writes pipelined on one connection: each is answered, in order, and each is applied once (Bun closes the connection)', async () => {
  const owner = await server.owner()
  const account = (await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })).json
    .data
  const txn = (note: string) => ({ accountId: account.id, amount: 1, date: '2026-11-20', note })
  const answer = await exchange(post(owner.key, '/v1/transactions', txn('first')) + post(owner.key, '/v1/transactions', txn('second'), true))
  await Bun.sleep(200)
  const listed = await server.request('GET', '/v1/transactions?limit=200', { key: owner.key })
  const notes = listed.json.data.map((row: { note: string }) => row.note).sort()
  // What was written must have been answered; Bun 1.4.5 gives answers [] and notes ['first'].
  expect({ answers: statusLines(answer), notes }).toEqual({ answers: ['HTTP/1.1 201', 'HTTP/1.1 201'], notes: ['first', 'second'] })
})

test.todo('a write with a read pipelined behind it: the write is answered (Bun closes the connection)', async () => {
  const owner = await server.owner()
  const answer = await exchange(
    post(owner.key, '/v1/accounts', { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' }) +
      `GET /v1/accounts HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${owner.key}\r\nConnection: close\r\n\r\n`,
  )
  await Bun.sleep(200)
  const listed = await server.request('GET', '/v1/accounts', { key: owner.key })
  // Bun 1.4.5 gives answers [] while the account exists.
  expect({ answers: statusLines(answer), accounts: listed.json.data.length }).toEqual({ answers: ['HTTP/1.1 201', 'HTTP/1.1 200'], accounts: 1 })
})

test('a pipelined write that got no answer is answered by its retry with the same key, and applied once', async () => {
  const owner = await server.owner()
  const account = (await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 0, currency: 'EUR' } })).json
    .data
  const body = { accountId: account.id, amount: 1, date: '2026-11-20', note: 'first' }
  const idempotencyKey = crypto.randomUUID()
  await exchange(post(owner.key, '/v1/transactions', body, false, idempotencyKey) + post(owner.key, '/v1/transactions', { ...body, note: 'second' }, true))
  await Bun.sleep(200)
  const retry = await server.request('POST', '/v1/transactions', { key: owner.key, body, idempotencyKey })
  expect(retry.status).toBe(201)
  const listed = await server.request('GET', '/v1/transactions?limit=200', { key: owner.key })
  const firsts = listed.json.data.filter((row: { note: string }) => row.note === 'first')
  expect(firsts).toHaveLength(1)
  expect(retry.json.data.id).toBe(firsts[0].id)
})
