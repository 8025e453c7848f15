import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { TrustedProxies } from '../../src/platform/client-address.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { forgeKey } from './fixtures.ts'

/**
 * TRUSTED_PROXIES (CONTRACT §7, §25): a forwarding header is read only when the socket's peer is
 * a listed proxy, from the right, and the first address that is not a listed proxy is the client:
 * for the anonymous rate-limit bucket and the key-guessing lock. Without the setting, a header
 * any client can forge changes nothing. The bucket a request counted against shows in its
 * X-RateLimit-Remaining-Minute.
 */

const ANON_LIMIT = 50
const anonEnv = { ANON_RATE_LIMIT_PER_MINUTE: String(ANON_LIMIT), ANON_RATE_LIMIT_PER_DAY: '100000' }

/** `GET /v1/me` with these headers, without a key (the anonymous bucket); its remaining minute count. */
async function anonymousRemaining(server: TestServer, headers: Record<string, string>): Promise<number> {
  const res = await server.request('GET', '/v1/me', { headers })
  expect(res.status).toBe(401)
  return Number(res.headers.get('x-ratelimit-remaining-minute'))
}

describe('without TRUSTED_PROXIES', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ env: anonEnv })
  })
  afterAll(() => server.stop())

  test('a spoofed X-Forwarded-For or Forwarded from the client is ignored: every request counts against the socket peer', async () => {
    const counts = [
      await anonymousRemaining(server, {}),
      await anonymousRemaining(server, { 'x-forwarded-for': '203.0.113.1' }),
      await anonymousRemaining(server, { 'x-forwarded-for': '203.0.113.2' }),
      await anonymousRemaining(server, { forwarded: 'for=203.0.113.3' }),
    ]
    // One bucket: the count goes down by one each time, whatever the headers say.
    expect(counts).toEqual([ANON_LIMIT - 1, ANON_LIMIT - 2, ANON_LIMIT - 3, ANON_LIMIT - 4])
  })
})

describe('TRUSTED_PROXIES=127.0.0.1,10.0.0.0/8 (X-Forwarded-For)', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ env: { ...anonEnv, TRUSTED_PROXIES: '127.0.0.1,10.0.0.0/8' } })
  })
  afterAll(() => server.stop())

  test('each client the proxy names has its own anonymous bucket', async () => {
    const a1 = await anonymousRemaining(server, { 'x-forwarded-for': '198.51.100.1' })
    const a2 = await anonymousRemaining(server, { 'x-forwarded-for': '198.51.100.1' })
    const b1 = await anonymousRemaining(server, { 'x-forwarded-for': '198.51.100.2' })
    expect([a1, a2, b1]).toEqual([ANON_LIMIT - 1, ANON_LIMIT - 2, ANON_LIMIT - 1])
  })

  test('a chain is read from the right: trusted hops are skipped, whatever the client wrote to their left is not read', async () => {
    // The client forged the left-most entry; 203.0.113.5 is what the first trusted proxy saw.
    const chain = (forged: string) => ({ 'x-forwarded-for': `${forged}, 203.0.113.5, 10.1.2.3` })
    expect(await anonymousRemaining(server, chain('192.0.2.1'))).toBe(ANON_LIMIT - 1)
    expect(await anonymousRemaining(server, chain('192.0.2.2'))).toBe(ANON_LIMIT - 2)
    // The same client without a second proxy: the same bucket.
    expect(await anonymousRemaining(server, { 'x-forwarded-for': '203.0.113.5' })).toBe(ANON_LIMIT - 3)
  })

  test('a Forwarded header is not read when the proxies write X-Forwarded-For', async () => {
    const before = await anonymousRemaining(server, { 'x-forwarded-for': '198.51.100.77' })
    // The peer (127.0.0.1) is trusted but sent no X-Forwarded-For: the client is the peer itself, not 198.51.100.77.
    const forged = await anonymousRemaining(server, { forwarded: 'for=198.51.100.77' })
    expect(before).toBe(ANON_LIMIT - 1)
    expect(forged).not.toBe(ANON_LIMIT - 2)
  })

  test('an entry that is not an address stops the walk: the nearest trusted hop stands for the client', async () => {
    const first = await anonymousRemaining(server, { 'x-forwarded-for': '198.51.100.9, unknown, 10.9.9.9' })
    const second = await anonymousRemaining(server, { 'x-forwarded-for': '198.51.100.10, garbage, 10.9.9.9' })
    const proxy = await anonymousRemaining(server, { 'x-forwarded-for': '10.9.9.9' })
    // All three are 10.9.9.9's bucket (the hop that wrote the entry), none the forged address's.
    expect([first, second, proxy]).toEqual([ANON_LIMIT - 1, ANON_LIMIT - 2, ANON_LIMIT - 3])
  })

  test('wrong secrets lock the client the proxy names, not every client behind the proxy', async () => {
    const victim = await server.owner({ name: 'Victim' })
    const me = (client: string, key: string) => server.request('GET', '/v1/me', { key, headers: { 'x-forwarded-for': client } })
    for (let i = 0; i < 8; i++) expect((await me('198.51.100.66', forgeKey(victim.keyId))).status).toBe(401)
    // The guesser is locked out of the key id, even with the right secret (no check runs)...
    expect((await me('198.51.100.66', victim.key)).status).toBe(401)
    // ...while the owner, another client of the same proxy, passes.
    expect((await me('198.51.100.77', victim.key)).status).toBe(200)
  })
})

describe('TRUSTED_PROXIES with TRUSTED_PROXY_HEADER=forwarded', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ env: { ...anonEnv, TRUSTED_PROXIES: '127.0.0.1,::1', TRUSTED_PROXY_HEADER: 'forwarded' } })
  })
  afterAll(() => server.stop())

  test('RFC 7239 elements are read from the right, quoted IPv6 with a port included; X-Forwarded-For is not read', async () => {
    const v6 = { forwarded: 'for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"' }
    expect(await anonymousRemaining(server, v6)).toBe(ANON_LIMIT - 1)
    // One address, one bucket, however it is spelt.
    expect(await anonymousRemaining(server, { forwarded: 'For="[2001:DB8:CAFE:0::17]"' })).toBe(ANON_LIMIT - 2)
    const forged = await anonymousRemaining(server, { 'x-forwarded-for': '2001:db8:cafe::17' })
    expect(forged).not.toBe(ANON_LIMIT - 3)
  })
})

describe('the peer is the proxy only when listed', () => {
  test('a listed proxy on another loopback address is trusted; one beside it is not', async () => {
    const server = await startTestServer({ env: { ...anonEnv, TRUSTED_PROXIES: '127.0.0.2' } })
    try {
      const port = Number(new URL(server.url).port)
      /** A raw request from `localAddress` (a loopback address of this machine) claiming client 198.51.100.50. */
      const from = (localAddress: string) =>
        new Promise<number>((resolve, reject) => {
          let text = ''
          const socket = connect({ host: '127.0.0.1', port, localAddress }, () =>
            socket.write('GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 198.51.100.50\r\nConnection: close\r\n\r\n'),
          )
          socket.setEncoding('utf8')
          socket.on('data', (chunk) => {
            text += chunk
          })
          socket.on('error', reject)
          socket.on('close', () => resolve(Number(/x-ratelimit-remaining-minute: (\d+)/i.exec(text)?.[1])))
        })
      // 127.0.0.2 is the listed proxy: its header names 198.51.100.50.
      expect(await from('127.0.0.2')).toBe(ANON_LIMIT - 1)
      expect(await from('127.0.0.2')).toBe(ANON_LIMIT - 2)
      // 127.0.0.3 is not listed: it is the client, whatever it claims.
      expect(await from('127.0.0.3')).toBe(ANON_LIMIT - 1)
      // And 198.51.100.50's bucket is not 127.0.0.3's.
      expect(await from('127.0.0.2')).toBe(ANON_LIMIT - 3)
    } finally {
      await server.stop()
    }
  })
})

describe('TrustedProxies.clientOf', () => {
  const xff = (value: string) => new Headers({ 'x-forwarded-for': value })
  const proxies = new TrustedProxies(['127.0.0.1', '::1', '10.0.0.0/8', 'fd00::/8'])

  test('reads brackets, ports and IPv4-mapped addresses; the socket peer decides whether anything is read', () => {
    expect(proxies.clientOf('127.0.0.1', xff('[2001:db8::1]:443'))).toBe('2001:db8::1')
    expect(proxies.clientOf('127.0.0.1', xff('198.51.100.1:5000'))).toBe('198.51.100.1')
    expect(proxies.clientOf('::ffff:127.0.0.1', xff('::ffff:198.51.100.2'))).toBe('198.51.100.2')
    expect(proxies.clientOf('fd12::9', xff('2001:DB8:0:0::2, fd00::1'))).toBe('2001:db8::2')
    // A zone index has no one spelling: the nearest trusted hop stands for the client.
    expect(proxies.clientOf('127.0.0.1', xff('fe80::1%eth0'))).toBe('127.0.0.1')
    expect(proxies.clientOf('198.51.100.3', xff('203.0.113.1'))).toBe('198.51.100.3')
    // Every hop trusted (a request from the proxy host itself): the left-most.
    expect(proxies.clientOf('127.0.0.1', xff('10.0.0.5, 10.0.0.6'))).toBe('10.0.0.5')
    expect(proxies.clientOf('127.0.0.1', xff(''))).toBe('127.0.0.1')
  })

  test('refuses entries that are not addresses or CIDR blocks, naming them', () => {
    for (const entry of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '1.2.3.4/x', '']) {
      expect(() => new TrustedProxies([entry])).toThrow(`"${entry}"`)
    }
  })
})
