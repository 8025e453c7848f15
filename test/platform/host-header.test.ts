import { describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A request without a usable Host header (HTTP/1.0 without Host, an empty `Host:`, a Host holding
 * '/', '?' or '#') is answered as with a proper one: never 500, and an unknown route is 404.
 *
 * Bun builds `request.url` from the Host header, so `new URL(request.url)` (for the query of
 * every list route and the fingerprint of every POST/PATCH) would throw `Invalid URL` on these
 * requests: a 500 and a stack trace in the log for any caller, no key needed (HAProxy's default
 * `option httpchk`, old clients and scanners send them). CONTRACT §6: 500 is for "anything
 * unexpected"; a request Bun accepted gets a normal answer.
 */

const fixture = unthrottledServerWithKey()

function raw(head: string, body = ''): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(fixture.server.url)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname, () => socket.write(`${head}\r\n\r\n${body}`))
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      resolve({ status: Number(text.split(' ')[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) })
    })
  })
}

const account = '{"name":"Host","type":"bank","balance":1,"currency":"EUR"}'

describe('requests without a usable Host header', () => {
  const variants: [string, (line: string) => string][] = [
    ['HTTP/1.0 without Host', (line) => `${line} HTTP/1.0`],
    ['HTTP/1.1 with an empty Host', (line) => `${line} HTTP/1.1\r\nHost: \r\nConnection: close`],
    ['HTTP/1.1 with Host "x/y"', (line) => `${line} HTTP/1.1\r\nHost: x/y\r\nConnection: close`],
    ['HTTP/1.1 with Host "x?"', (line) => `${line} HTTP/1.1\r\nHost: x?\r\nConnection: close`],
  ]
  for (const [name, requestLine] of variants) {
    test(`${name}: GET /v1/accounts and POST /v1/accounts are not 500`, async () => {
      const list = await raw(`${requestLine('GET /v1/accounts?limit=5')}\r\nAuthorization: Bearer ${fixture.key}`)
      const create = await raw(
        `${requestLine('POST /v1/accounts')}\r\nAuthorization: Bearer ${fixture.key}\r\nContent-Type: application/json\r\nIdempotency-Key: ${crypto.randomUUID()}\r\nContent-Length: ${account.length}`,
        account,
      )
      // The failure this catches: 500 internal_error for both ("TypeError: Invalid URL" in the log).
      expect({ list: list.status, create: create.status }).toEqual({ list: 200, create: 201 })
    })
  }

  test('HTTP/1.0 without Host: every kind of route answers as it does with a Host (reads, writes, paths with ids, MCP, the document)', async () => {
    const created = await raw(
      `POST /v1/accounts HTTP/1.0\r\nAuthorization: Bearer ${fixture.key}\r\nContent-Type: application/json\r\nIdempotency-Key: ${crypto.randomUUID()}\r\nContent-Length: ${account.length}`,
      account,
    )
    const id = JSON.parse(created.body).data.id as string
    const patch = '{"name":"Renamed"}'
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })
    const auth = `Authorization: Bearer ${fixture.key}`
    const statuses = {
      account: (await raw(`GET /v1/accounts/${id} HTTP/1.0\r\n${auth}`)).status,
      patch: (
        await raw(
          `PATCH /v1/accounts/${id} HTTP/1.0\r\n${auth}\r\nContent-Type: application/json\r\nIdempotency-Key: ${crypto.randomUUID()}\r\nContent-Length: ${patch.length}`,
          patch,
        )
      ).status,
      transactions: (await raw(`GET /v1/transactions?limit=2&accountId=${id} HTTP/1.0\r\n${auth}`)).status,
      changes: (await raw(`GET /v1/changes?limit=3 HTTP/1.0\r\n${auth}`)).status,
      context: (await raw(`GET /v1/agent/context HTTP/1.0\r\n${auth}`)).status,
      me: (await raw(`GET /v1/me HTTP/1.0\r\n${auth}`)).status,
      mcp: (
        await raw(
          `POST /mcp HTTP/1.0\r\n${auth}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${initialize.length}`,
          initialize,
        )
      ).status,
      openapi: (await raw('GET /openapi.json HTTP/1.0')).status,
      health: (await raw('GET /healthz HTTP/1.0')).status,
      unknownMethod: (await raw(`DELETE /v1/me HTTP/1.0\r\n${auth}`)).status,
    }
    expect({ created: created.status, ...statuses }).toEqual({
      created: 201,
      account: 200,
      patch: 200,
      transactions: 200,
      changes: 200,
      context: 200,
      me: 200,
      mcp: 200,
      openapi: 200,
      health: 200,
      unknownMethod: 405,
    })
  })

  test('HTTP/1.0 without Host: an unknown route is 404 route_not_found, not 405 "GET is not allowed on /; allowed: GET"', async () => {
    const res = await raw('GET /nowhere HTTP/1.0')
    expect(res.status).toBe(404)
    expect(JSON.parse(res.body).code).toBe('route_not_found')
  })
})
