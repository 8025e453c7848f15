import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { cleanup, processEnv, type ServerProcess, startServer, tempDir, ownerWithKey } from '../support/processes.ts'

/**
 * A client that stops sending its body (it closes the connection part way through a
 * Content-Length or chunked body) is not logged as a 500 internal error.
 *
 * Nobody receives that 500, but an operator would see 500s and "internal error" lines they
 * cannot act on, and any client holding a valid key could produce them at will (one per slow
 * connection). CONTRACT §6 keeps 500 for "anything unexpected"; a client going away mid-body is
 * expected, and is logged as an aborted request.
 */

let server: ServerProcess
let key: string
beforeAll(async () => {
  const env = processEnv(tempDir('pfin-abort-'))
  key = (await ownerWithKey(env, 'Abort')).key
  server = await startServer(env)
})
afterAll(async () => {
  server?.proc.kill('SIGTERM')
  await server?.proc.exited
  await cleanup()
})

function sendPartial(framing: 'content-length' | 'chunked'): Promise<void> {
  const { hostname, port } = new URL(server.url)
  const body = '{"name":"Abort","type":"bank","balance":1,"currency":"EUR"}'
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /v1/accounts HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Idempotency-Key: ${crypto.randomUUID()}\r\n${framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length + 100}`}\r\n\r\n` +
          (framing === 'chunked' ? `100\r\n${body}` : body),
      )
      socket.end()
    })
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })
}

test('a client that closes the connection mid-body is not logged as a 500 internal error', async () => {
  await sendPartial('content-length')
  await sendPartial('chunked')
  await Bun.sleep(500)
  // The access log records 400 malformed_json ("the request body ended early"); the failure this
  // catches is two `[req_…] internal error: ` lines on stderr (and status 500 in the access log).
  expect(server.stderr()).not.toContain('internal error')
})
