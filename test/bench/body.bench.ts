import { readFileSync } from 'node:fs'
import type { Benchmark } from './benchmark.ts'
import { Cleanup, fmt, type Service, settings, spawnServer, startPfinWithOwner, median } from './support.ts'

/**
 * Hostile request bodies (CONTRACT §14): pfin answering 1 MiB bodies of the shapes
 * that once cost quadratic time (long zero-padded numbers, many numbers, deep nesting, many
 * keys, long strings…) against a bare `Bun.serve` that only does `JSON.parse` of the same body
 * and answers 422, measured in the same run. Then pfin alone at 64 KiB … 1 MiB, to show the
 * time growing linearly with the size: the fitted exponent of time against size is ~1 for
 * linear work and 2 for quadratic.
 *
 * Targets: every 1 MiB body answered in under 1 s (median) and every growth exponent below 1.5.
 * Requests go one at a time over one connection (the point is the cost of one body, not
 * throughput). BENCH_ROUNDS sets the interleaved rounds (default 3); each round sends every
 * shape REQUESTS times to each server.
 */

const MIB = 1024 * 1024
const REQUESTS = 5
const SIZES = [64, 128, 256, 512, 1024].map((kib) => kib * 1024)
const TARGET_MS = 1000
const TARGET_EXPONENT = 1.5

const account = (value: string) => `{"name":"x","type":"bank","currency":"EUR","balance":${value}}`
const list = (count: number, item: (index: number) => string) => Array.from({ length: Math.floor(count) }, (_, i) => item(i)).join(',')
const zeros = (count: number) => '0'.repeat(Math.max(0, Math.floor(count)))

/** Body makers: a body of about `size` bytes (a little under, so 1 MiB stays within the limit). */
const SHAPES: Record<string, (size: number) => string> = {
  'zero-padded integer': (size) => account(`1${zeros(size - 80)}`),
  '1. + zeros': (size) => account(`1.${zeros(size - 80)}`),
  '0.000…01': (size) => account(`0.${zeros(size - 80)}1`),
  '16 long numbers': (size) => account(`[${list(16, () => `1${zeros(size / 16 - 8)}`)}]`),
  'many short numbers': (size) => account(`[${list((size - 80) / 8, () => '1234567')}]`),
  'many decimals': (size) => account(`[${list((size - 80) / 8, () => '1.23e-4')}]`),
  'deep nesting': (size) => account(`${'['.repeat((size - 80) / 2)}${']'.repeat((size - 80) / 2)}`),
  'many keys': (size) => `{${list((size - 80) / 14, (i) => `"k${String(i).padStart(6, '0')}":1.5`)}}`,
  'nested containers': (size) => account(`[${list((size - 80) / 14, () => '[{"a":[0.5]}]')}]`),
  'long string': (size) => `{"name":"${'x'.repeat(size - 80)}","type":"bank","currency":"EUR","balance":1}`,
  'string of escapes': (size) => `{"name":"${'\\u00e9\\ud83d\\ude00'.repeat((size - 80) / 18)}","type":"bank","currency":"EUR","balance":1}`,
  'lone surrogates': (size) => `{"name":"x","type":"bank","currency":"EUR","balance":1,"notes":"${'\\udc00'.repeat((size - 100) / 6)}"}`,
}

/** The bare baseline: read the body, JSON.parse it, answer a fixed 422 problem (400 if it is not JSON). */
const BASELINE = `
const problem = (status, code) => new Response(JSON.stringify({ type: 'urn:pfin:problem:' + code, title: code, detail: code, status, code, request_id: 'r' }), { status, headers: { 'content-type': 'application/problem+json' } })
const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 0),
  async fetch(request) {
    const text = await request.text()
    try { JSON.parse(text) } catch { return problem(400, 'malformed_json') }
    return problem(422, 'validation_failed')
  },
})
console.log('body baseline listening on http://' + server.hostname + ':' + server.port)
process.once('SIGTERM', async () => { await server.stop(); process.exit(0) })
`

const CLOCK_TICKS = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout?.toString().trim()) || 100

/** A process's CPU time (user + system) in ms from /proc, or null where there is none. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS
  } catch {
    return null
  }
}

interface Sample {
  /** Median wall time of one request, ms. */
  ms: number
  /** The server's CPU time per request, ms (null without /proc). */
  cpu: number | null
  statuses: Set<number>
}

/** Sends `body` REQUESTS times, one after another, and times each answer. */
async function sample(service: Service, key: string, body: string, requests = REQUESTS): Promise<Sample> {
  const times: number[] = []
  const statuses = new Set<number>()
  const cpuBefore = cpuMs(service.proc.pid)
  for (let i = 0; i < requests; i++) {
    const started = performance.now()
    const response = await fetch(`${service.url}/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body,
    })
    await response.arrayBuffer()
    times.push(performance.now() - started)
    statuses.add(response.status)
  }
  const cpuAfter = cpuMs(service.proc.pid)
  return { ms: median(times), cpu: cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) / requests, statuses }
}

/** The least-squares slope of log(time) against log(size): 1 for linear growth, 2 for quadratic. */
function growthExponent(points: { size: number; ms: number }[]): number {
  const xs = points.map((p) => Math.log(p.size))
  const ys = points.map((p) => Math.log(Math.max(p.ms, 0.01)))
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length
  const my = ys.reduce((a, b) => a + b, 0) / ys.length
  let num = 0
  let den = 0
  for (let i = 0; i < xs.length; i++) {
    num += ((xs[i] as number) - mx) * ((ys[i] as number) - my)
    den += ((xs[i] as number) - mx) ** 2
  }
  return num / den
}

const cpuText = (cpu: number | null) => (cpu === null ? '' : `  CPU ${cpu.toFixed(1).padStart(6)} ms/req`)

export const benchmark: Benchmark = {
  name: 'body',
  description: `1 MiB hostile bodies: pfin vs a bare Bun.serve that JSON.parses them, and pfin's time from 64 KiB to 1 MiB; targets: each < ${TARGET_MS} ms, growth exponent < ${TARGET_EXPONENT}`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const baseline = await spawnServer(['bun', '-e', BASELINE], {}, 'body baseline')
      cleanup.add(() => baseline.stop())

      // Warm both (the JIT, pfin's key cache) on every shape at a small size.
      for (const make of Object.values(SHAPES)) {
        await sample(pfin, key, make(64 * 1024), 2)
        await sample(baseline, key, make(64 * 1024), 2)
      }

      console.log(
        `1 MiB bodies, ${settings.rounds} interleaved round(s) of ${REQUESTS} requests per server; median wall time per request, and server CPU per request`,
      )
      const worst = { ms: 0, ratio: 0, shape: '' }
      for (const [name, make] of Object.entries(SHAPES)) {
        const body = make(MIB)
        if (body.length > MIB) throw new Error(`${name}: the body is ${body.length} bytes, over 1 MiB`)
        const ours: Sample[] = []
        const base: Sample[] = []
        for (let round = 0; round < settings.rounds; round++) {
          // Alternate which goes first, so drift on a shared machine hits both alike.
          if (round % 2 === 0) {
            base.push(await sample(baseline, key, body))
            ours.push(await sample(pfin, key, body))
          } else {
            ours.push(await sample(pfin, key, body))
            base.push(await sample(baseline, key, body))
          }
        }
        const statuses = new Set(ours.flatMap((s) => [...s.statuses]))
        if ([...statuses].some((status) => status >= 500)) throw new Error(`${name}: pfin answered ${[...statuses].join(', ')}`)
        const oursMs = median(ours.map((s) => s.ms))
        const baseMs = median(base.map((s) => s.ms))
        const oursCpu = ours.every((s) => s.cpu !== null) ? median(ours.map((s) => s.cpu as number)) : null
        const baseCpu = base.every((s) => s.cpu !== null) ? median(base.map((s) => s.cpu as number)) : null
        const ratio = oursMs / baseMs
        if (oursMs > worst.ms) Object.assign(worst, { ms: oursMs, shape: name })
        worst.ratio = Math.max(worst.ratio, ratio)
        console.log(
          `${name.padEnd(22)} ${(body.length / 1024).toFixed(0).padStart(5)} KiB  pfin ${fmt.ms(oursMs).padStart(10)} (${[...statuses].join('/')})${cpuText(oursCpu)}   baseline ${fmt.ms(baseMs).padStart(10)}${cpuText(baseCpu)}   ratio ${fmt.ratio(ratio)}`,
        )
      }

      console.log(`\npfin alone by size (median of ${REQUESTS}); exponent: slope of log time over log size (1 linear, 2 quadratic)`)
      console.log(`${''.padEnd(22)} ${SIZES.map((size) => `${size / 1024} KiB`.padStart(10)).join('')}   exponent`)
      let steepest = { exponent: 0, shape: '' }
      for (const [name, make] of Object.entries(SHAPES)) {
        const points: { size: number; ms: number }[] = []
        for (const size of SIZES) {
          const body = make(size)
          points.push({ size: body.length, ms: (await sample(pfin, key, body)).ms })
        }
        const exponent = growthExponent(points)
        if (exponent > steepest.exponent) steepest = { exponent, shape: name }
        console.log(`${name.padEnd(22)} ${points.map((p) => fmt.ms(p.ms).padStart(10)).join('')}   ${exponent.toFixed(2)}`)
      }

      const targetMet = worst.ms < TARGET_MS && steepest.exponent < TARGET_EXPONENT
      return {
        targetMet,
        summary: `slowest 1 MiB body ${fmt.ms(worst.ms)} (${worst.shape}), at most ${fmt.ratio(worst.ratio)}× the bare JSON.parse server; steepest growth exponent ${steepest.exponent.toFixed(2)} (${steepest.shape})`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
