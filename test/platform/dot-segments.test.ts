import { describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { unthrottledServerWithKey } from '../support/harness.ts'

/**
 * A request target with dot segments or a backslash (`/v1/../v1/me`, `/v1/./me`, `/v1\me`,
 * `/x/../healthz`) is answered the same whatever the length of the Host header, and never by a
 * 405 that allows the method it refuses.
 *
 * Bun normalises `request.url` (dot segments, backslashes) while its native router matches the
 * raw target, so such a request falls back to Elysia's dynamic handler, which finds the path with
 * `url.indexOf('/', 11)`: it assumes a host of at least 4 characters (for `http://x/v1/me` it
 * yields `/me`). Hosts of 1–3 characters are common: `api`, `web`, `db` are Docker Compose
 * service names. CONTRACT §6: 405 is for a known path with another method.
 */

const fixture = unthrottledServerWithKey()

function rawGet(target: string, host: string | null): Promise<{ status: number; allow: string | null; body: string }> {
  const { hostname, port } = new URL(fixture.server.url)
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname, () =>
      socket.write(
        host === null
          ? `GET ${target} HTTP/1.0\r\nAuthorization: Bearer ${fixture.key}\r\n\r\n`
          : `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${fixture.key}\r\nConnection: close\r\n\r\n`,
      ),
    )
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const head = text.slice(0, text.indexOf('\r\n\r\n'))
      resolve({ status: Number(head.split(' ')[1]), allow: /\r\nallow: ([^\r]*)/i.exec(head)?.[1] ?? null, body: text.slice(head.length + 4) })
    })
  })
}

describe('dot segments and backslashes in the request target, with a short Host', () => {
  for (const target of ['/v1/../v1/me', '/v1/./me', '/./v1/me', '/v1\\me', '/x/../healthz']) {
    test(`GET ${target} with Host "api" is answered as with Host "localhost"`, async () => {
      const long = await rawGet(target, 'localhost')
      const short = await rawGet(target, 'api')
      // The failure this catches: localhost → 200; api → 405 "GET is not allowed on /v1/me; allowed: GET" (Allow: GET).
      expect({ target, status: short.status, allow: short.allow }).toEqual({ target, status: long.status, allow: long.allow })
    })
  }

  test('without any Host (HTTP/1.0) such a target is served or 404, never a 405 that allows the method it refuses', async () => {
    for (const target of ['/v1/../v1/me', '/v1/./me', '/v1\\me', '/x/../healthz', '/a/b/../../v1/me']) {
      const res = await rawGet(target, null)
      const contradicts = res.status === 405 && (res.allow ?? '').split(/,\s*/).includes('GET')
      expect({ target, contradicts, status: [200, 404].includes(res.status) }).toEqual({ target, contradicts: false, status: true })
    }
  })
})
