import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { send, startUnthrottledServer, type TestResponse, type TestServer } from '../support/harness.ts'

/**
 * CONTRACT §14: reading, canonicalising and validating a body costs linear time in its size,
 * whatever its shape. Wall time depends on the machine, so this compares GROWTH: each hostile
 * shape is sent at about n and 4n bytes through a real server, and the time of the whole
 * request must grow far less than the 16× a quadratic step would give (stripping a number's
 * trailing zeros one bigint division at a time is such a step).
 */

const N = 64 * 1024
/** Quadratic growth over 4× the size is 16×; linear is 4×. Anything under 8 is not quadratic. */
const MAX_RATIO = 8
/**
 * Below this (at 256 KiB) the figures are scheduling and collector noise rather than growth;
 * every quadratic step seen so far cost seconds here.
 */
const NOISE_FLOOR_MS = 10
const REPETITIONS = 5
/**
 * A busy machine or a collection can spoil one measurement; a quadratic step spoils them all.
 * A shape passes when one of these attempts shows linear growth.
 */
const ATTEMPTS = 3

let server: TestServer
let key: string

beforeAll(async () => {
  server = await startUnthrottledServer()
  key = (await server.owner({ name: 'Growth' })).key
})
afterAll(() => server.stop())

/** An account body whose `balance` is `value` (raw JSON text). */
const account = (value: string) => `{"name":"x","type":"bank","currency":"EUR","balance":${value}}`
const digits = (count: number) => '0'.repeat(Math.max(0, count))
const list = (count: number, item: (index: number) => string) => Array.from({ length: count }, (_, i) => item(i)).join(',')

interface Shape {
  name: string
  /** A body of about `size` bytes. */
  body(size: number): string
  /** The status the body earns (validity is not the point; a 5xx never is). */
  status: number
}

const SHAPES: Shape[] = [
  { name: 'zero-padded integer (1000…0)', body: (size) => account(`1${digits(size)}`), status: 422 },
  { name: '1. followed by zeros (exactly 1)', body: (size) => account(`1.${digits(size)}`), status: 201 },
  { name: '0.000…01 (too many decimals)', body: (size) => account(`0.${digits(size)}1`), status: 422 },
  { name: 'zeros with a compensating exponent (1000…0e-n = 1)', body: (size) => account(`1${digits(size)}e-${size}`), status: 201 },
  { name: 'array of 16 long numbers', body: (size) => account(`[${list(16, () => `1${digits(size / 16)}`)}]`), status: 422 },
  { name: 'number of many significant digits', body: (size) => account(`0.${'123456789'.repeat(size / 9)}`), status: 422 },
  { name: 'many short numbers', body: (size) => account(`[${list(size / 8, () => '1234567')}]`), status: 422 },
  { name: 'many decimals', body: (size) => account(`[${list(size / 8, () => '1.23e-4')}]`), status: 422 },
  { name: 'many short strings', body: (size) => account(`[${list(size / 8, () => '"12345"')}]`), status: 422 },
  { name: 'deep nesting', body: (size) => account(`${'['.repeat(size / 2)}${']'.repeat(size / 2)}`), status: 400 },
  { name: 'deep nesting of objects', body: (size) => account(`${'{"a":'.repeat(size / 6)}1${'}'.repeat(size / 6)}`), status: 400 },
  { name: 'many nested containers', body: (size) => account(`[${list(size / 14, () => '[{"a":[0.5]}]')}]`), status: 422 },
  { name: 'many keys', body: (size) => account(`{${list(size / 12, (i) => `"k${String(i).padStart(6, '0')}":1`)}}`), status: 422 },
  { name: 'many keys at the top level, decimal values', body: (size) => `{${list(size / 14, (i) => `"k${String(i).padStart(6, '0')}":1.5`)}}`, status: 422 },
  { name: 'long string', body: (size) => `{"name":"${'x'.repeat(size)}","type":"bank","currency":"EUR","balance":1}`, status: 422 },
  {
    name: 'long string of escapes',
    body: (size) => `{"name":"${'\\u00e9\\ud83d\\ude00'.repeat(size / 18)}","type":"bank","currency":"EUR","balance":1}`,
    status: 422,
  },
  {
    name: 'long string of backslashes and quotes',
    body: (size) => `{"name":"${'\\\\\\"'.repeat(size / 4)}","type":"bank","currency":"EUR","balance":1}`,
    status: 422,
  },
  {
    name: 'many lone surrogates',
    body: (size) => `{"name":"x","type":"bank","currency":"EUR","balance":1,"notes":"${'\\udc00'.repeat(size / 6)}"}`,
    status: 422,
  },
]

const post = (body: string) => send(server.url, 'POST', '/v1/accounts', { key, body })

/**
 * The full request, timed as this process's CPU time (the server runs in it): unlike wall
 * time it does not count the moments other processes on a busy machine hold the CPU.
 */
async function timed(body: string): Promise<{ ms: number; res: TestResponse }> {
  // No forced collection first: it would shrink the heap and make each run pay to grow it again.
  const start = process.cpuUsage()
  const res = await post(body)
  const used = process.cpuUsage(start)
  return { ms: (used.user + used.system) / 1000, res }
}

function expectAnswer(shape: Shape, size: number, res: TestResponse): void {
  const summary = `${shape.name} at ${size} bytes: ${res.status} ${res.text.slice(0, 200)}`
  expect(summary).toStartWith(`${shape.name} at ${size} bytes: ${shape.status}`)
  if (shape.status >= 400) {
    expect(res.headers.get('content-type') ?? '').toStartWith('application/problem+json')
    expect(res.json?.status).toBe(shape.status)
  }
}

/** The least time of REPETITIONS requests at each size, the sizes alternating. */
async function measure(shape: Shape, small: string, large: string): Promise<{ small: number; large: number }> {
  const best = { small: Infinity, large: Infinity }
  for (let round = 0; round < REPETITIONS; round++) {
    const a = await timed(small)
    expectAnswer(shape, small.length, a.res)
    const b = await timed(large)
    expectAnswer(shape, large.length, b.res)
    best.small = Math.min(best.small, a.ms)
    best.large = Math.min(best.large, b.ms)
  }
  return best
}

describe('request time grows linearly with the body size', () => {
  for (const shape of SHAPES) {
    test(shape.name, async () => {
      const small = shape.body(N)
      const large = shape.body(4 * N)
      expect(large.length).toBeLessThan(1024 * 1024)
      // One unmeasured request first, so the JIT has seen the code path.
      expectAnswer(shape, small.length, (await timed(small)).res)
      const ratios: string[] = []
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        const best = await measure(shape, small, large)
        const ratio = best.large / best.small
        ratios.push(ratio.toFixed(2))
        console.log(
          `${shape.name.padEnd(52)} ${(small.length / 1024).toFixed(0).padStart(4)} KiB ${best.small.toFixed(2).padStart(9)} ms   ${(large.length / 1024).toFixed(0).padStart(4)} KiB ${best.large.toFixed(2).padStart(9)} ms   ratio ${ratio.toFixed(2)}`,
        )
        if (best.large < NOISE_FLOOR_MS || ratio < MAX_RATIO) return
      }
      throw new Error(`${shape.name}: 4× the body took ${ratios.join(', ')}× the time (quadratic is 16×, the limit ${MAX_RATIO}×)`)
    }, 60_000)
  }
})

describe('a large hostile body does not hold other requests', () => {
  /**
   * CONTRACT §14: a 1 MiB body of any shape is answered well under a second. Judged on CPU
   * time (this process runs the server, the client and the health checks), which a busy
   * machine inflates far less than wall time; a quadratic step cost minutes here.
   */
  const CPU_BUDGET_MS = 1000
  /** Wall time only catches a stall (the server held for seconds), whatever else runs on the machine. */
  const STALL_MS = 5000

  test('/healthz is answered while 1 MiB bodies of every shape are read, each within the CPU budget', async () => {
    for (const shape of SHAPES) {
      const body = shape.body(1024 * 1024 - 256)
      expect(body.length).toBeLessThanOrEqual(1024 * 1024)
      const sent = performance.now()
      const cpu = process.cpuUsage()
      const pending = post(body)
      let done = false
      void pending.finally(() => {
        done = true
      })
      // Health checks, one after another, until the hostile request is answered.
      let checks = 0
      let worst = 0
      while (!done) {
        const start = performance.now()
        const health = await send(server.url, 'GET', '/healthz')
        worst = Math.max(worst, performance.now() - start)
        expect(health.status).toBe(200)
        checks++
        await Bun.sleep(1)
      }
      expectAnswer(shape, body.length, await pending)
      const used = process.cpuUsage(cpu)
      const cpuMs = (used.user + used.system) / 1000
      console.log(
        `${shape.name.padEnd(52)} ${(body.length / 1024).toFixed(0).padStart(5)} KiB: ${cpuMs.toFixed(0).padStart(4)} ms CPU, ${(performance.now() - sent).toFixed(0).padStart(4)} ms wall; ${checks} /healthz answered, the slowest in ${worst.toFixed(0)} ms`,
      )
      expect(checks).toBeGreaterThan(0)
      if (cpuMs > CPU_BUDGET_MS) throw new Error(`${shape.name}: a 1 MiB body cost ${cpuMs.toFixed(0)} ms of CPU`)
      if (worst > STALL_MS) throw new Error(`${shape.name}: /healthz waited ${worst.toFixed(0)} ms behind a 1 MiB body`)
    }
  }, 60_000)
})
