import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { newId } from '../../src/db/ids.ts'
import { startTestServer, type TestServer } from '../support/harness.ts'
import { forgeKey } from './fixtures.ts'

/**
 * Guessing a key's secret is limited per guesser, never at the owner's expense (CONTRACT §7):
 * wrong secrets from one client address lock that address out of that key id, while the
 * correct secret from another address passes; and a refusal takes the same time whether or
 * not the key id exists. Clients on other addresses are other loopback addresses (127.0.0.x).
 */

let server: TestServer
let port: number
beforeAll(async () => {
  server = await startTestServer({ env: { ANON_RATE_LIMIT_PER_MINUTE: '100000', ANON_RATE_LIMIT_PER_DAY: '1000000' } })
  port = Number(new URL(server.url).port)
})
afterAll(() => server.stop())

/** `GET /v1/me` over a connection from `localAddress`: the status and how long the answer took. */
function getMe(localAddress: string, authorization: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    let text = ''
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () => {
      socket.write(`GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${authorization}\r\nConnection: close\r\n\r\n`)
    })
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => {
      text += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])
      if (!status) reject(new Error(`no HTTP answer: ${text.slice(0, 100)}`))
      else resolve({ status, ms: performance.now() - started })
    })
  })
}

describe('wrong secrets lock the guesser, not the owner', () => {
  test('after a lock from one address, the correct secret from another address passes at once, also on first use', async () => {
    const victim = await server.owner({ name: 'Victim' })
    // The key has not been verified by this process yet: the correct secret needs its argon2 check.
    for (let i = 0; i < 8; i++) expect((await getMe('127.0.0.66', `Bearer ${forgeKey(victim.keyId)}`)).status).toBe(401)
    // The guesser's address is locked out of this key id (even with the right secret, no check runs)...
    expect((await getMe('127.0.0.66', `Bearer ${victim.key}`)).status).toBe(401)
    // ...but the owner, elsewhere, is not.
    expect((await getMe('127.0.0.77', `Bearer ${victim.key}`)).status).toBe(200)
    // And once verified, the correct secret passes from anywhere: it costs no argon2 check.
    expect((await getMe('127.0.0.66', `Bearer ${victim.key}`)).status).toBe(200)
  })
})

/** Mann–Whitney U's z score: how far apart two samples' ranks lie (|z| > 3: hardly chance). */
function rankSumZ(a: number[], b: number[]): number {
  const all = [...a.map((v) => ({ v, from: 0 })), ...b.map((v) => ({ v, from: 1 }))].sort((x, y) => x.v - y.v)
  let rankA = 0
  all.forEach((entry, i) => {
    if (entry.from === 0) rankA += i + 1
  })
  const u = rankA - (a.length * (a.length + 1)) / 2
  const mean = (a.length * b.length) / 2
  const sd = Math.sqrt((a.length * b.length * (a.length + b.length + 1)) / 12)
  return (u - mean) / sd
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number

describe('a refusal tells nothing about which key ids exist', () => {
  test('an unknown key id takes as long to refuse as a real one with a wrong secret, checked or cached', async () => {
    const owners = await Promise.all(Array.from({ length: 7 }, (_, i) => server.owner({ name: `Timed ${i}` })))
    // The last one verified already: its refusals come from the hot path.
    const cached = owners.pop() as { keyId: string; key: string }
    expect((await getMe('127.0.1.1', `Bearer ${cached.key}`)).status).toBe(200)
    const samples = { unknown: [] as number[], checked: [] as number[], cached: [] as number[] }
    for (let i = 0; i < 24; i++) {
      // A fresh address per round: nothing here is locked, every refusal is a full check.
      const address = `127.0.2.${i + 1}`
      const real = owners[i % owners.length] as { keyId: string }
      const round = [
        async () => samples.unknown.push((await getMe(address, `Bearer ${forgeKey(newId('key'))}`)).ms),
        async () => samples.checked.push((await getMe(address, `Bearer ${forgeKey(real.keyId)}`)).ms),
        async () => samples.cached.push((await getMe(address, `Bearer ${forgeKey(cached.keyId)}`)).ms),
      ]
      // Rotated, so no kind always runs first (or last) in its round.
      for (let k = 0; k < round.length; k++) await (round[(k + i) % round.length] as () => Promise<number>)()
    }
    for (const kind of ['checked', 'cached'] as const) {
      const z = rankSumZ(samples.unknown, samples[kind])
      const ratio = median(samples.unknown) / median(samples[kind])
      console.log(
        `refusal time: unknown key id median ${median(samples.unknown).toFixed(1)} ms, real key id (${kind}) ${median(samples[kind]).toFixed(1)} ms; ratio ${ratio.toFixed(2)}, rank-sum z ${z.toFixed(2)}`,
      )
      // Told apart only if the samples are both far apart in rank and by a large factor: a
      // skipped check (~1 ms against ~20 ms) is both, machine noise is seldom either.
      expect({ kind, toldApart: Math.abs(z) > 3.5 && (ratio < 0.5 || ratio > 2) }).toEqual({ kind, toldApart: false })
    }
  }, 60_000)
})
