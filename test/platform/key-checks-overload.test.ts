import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { join } from 'node:path'
import { hash } from '@node-rs/argon2'
import { newId } from '../../src/db/ids.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'

/**
 * Pins: when more first uses of keys arrive at once than the argon2 queue holds (256 waiting,
 * CONTRACT §7), as after a restart or a failover with many clients active, the ones past it are
 * told to come back (503 `server_busy`, `Retry-After`), not that their key is wrong: they were
 * answered 401 before, which a client takes for a revoked key, and each counted towards locking
 * the client's address out of its own key. A retry then succeeds.
 */

const KEYS = 400
let server: TestServer
const keys: string[] = []

beforeAll(async () => {
  server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '100000', ANON_RATE_LIMIT_PER_MINUTE: '100000' } })
  const owner = await server.owner({ name: 'Many Keys' })
  // One secret for every key (one argon2 hash to make); each key id is still checked on its own.
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const secretHash = await hash(secret)
  const control = new Database(join(server.dataDir, 'control.db'))
  const insert = control.query(
    `INSERT INTO api_keys (id, owner_id, name, scopes, secret_hash, created_at, last_used_at, expires_at, revoked_at, replaced_by)
     VALUES (?, ?, NULL, '["me:read"]', ?, ?, NULL, NULL, NULL, NULL)`,
  )
  control.transaction(() => {
    for (let i = 0; i < KEYS; i++) {
      const id = newId('key')
      insert.run(id, owner.id, secretHash, Date.now())
      keys.push(`pfk_${id}_${secret}`)
    }
  })()
  control.close()
})
afterAll(() => server.stop())

/**
 * `GET /v1/me` on a connection of its own: `fetch` keeps at most 256 requests in flight, fewer
 * than it takes to fill the queue. The status, headers (lower-case) and body.
 */
function getMe(key: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  const port = Number(new URL(server.url).port)
  return new Promise((resolve, reject) => {
    let text = ''
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.write(`GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`)
    })
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => {
      text += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1])
      if (!status) reject(new Error(`no HTTP answer: ${text.slice(0, 100)}`))
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
      resolve({ status, headers, body })
    })
  })
}

test(`${KEYS} keys used for the first time at once: none is refused as wrong; those past the queue are asked to retry, and then pass`, async () => {
  const first = await Promise.all(keys.map((key) => getMe(key)))
  const statuses = new Map<number, number>()
  for (const res of first) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
  expect([...statuses.keys()].sort()).toEqual([200, 503])
  const busy = first.find((res) => res.status === 503)
  expect(JSON.parse(busy?.body ?? '{}').code).toBe('server_busy')
  expect(busy?.headers.get('retry-after')).toBe('1')
  expect(busy?.headers.get('content-type')).toBe('application/problem+json')

  const retried = keys.filter((_, i) => first[i]?.status === 503)
  const again = await Promise.all(retried.map((key) => server.request('GET', '/v1/me', { key })))
  expect(again.map((res) => res.status)).toEqual(retried.map(() => 200))
}, 60_000)
