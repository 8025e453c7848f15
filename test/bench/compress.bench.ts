import { type Coding, encode } from '../../src/platform/compression.ts'
import type { Benchmark } from './benchmark.ts'
import { getOnce, postOnce } from './keyed-load.ts'
import { Cleanup, describe, fmt, type LoadResult, load, median, settings, startPfinWithOwner, warm } from './support.ts'

/**
 * What compression costs (CONTRACT §25): `GET /v1/transactions?limit=200` (a page of 200 varied
 * transactions, some with legs and tags) asked for as identity, gzip, br and zstd, in interleaved
 * rounds; for each, the bytes on the wire, requests/s and the server's CPU time per request, and
 * the extra CPU against identity. Then the coding alone, in this process, on the same page text:
 * the steadier figure on a shared machine. No target: the figures choose the levels and the
 * order of preference.
 */

const CODINGS = ['identity', 'gzip', 'br', 'zstd'] as const
const PAGE = '/v1/transactions?limit=200'

/** A small deterministic PRNG (mulberry32), so every run imports the same transactions. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const CATEGORIES = ['cat_sys_groceries', 'cat_sys_restaurants', 'cat_sys_transport', 'cat_sys_housing', 'cat_sys_gifts_donations', null]

function items(accountId: string) {
  const rnd = random(200)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  return Array.from({ length: 200 }, (_, i) => {
    const cents = 50 + Math.floor(rnd() ** 2 * 20_000)
    const amount = cents / 100
    const split = i % 20 === 0 && cents >= 4
    return {
      externalId: `bank-2026-${String(i).padStart(5, '0')}`,
      accountId,
      amount,
      date: `2026-${String(1 + (i % 11)).padStart(2, '0')}-${String(1 + (i % 28)).padStart(2, '0')}`,
      payeeName: `Shop ${Math.floor(rnd() * 40)}`,
      note: rnd() < 0.3 ? `receipt ${Math.floor(rnd() * 1e6)}` : undefined,
      time: rnd() < 0.3 ? `${String(Math.floor(rnd() * 24)).padStart(2, '0')}:${String(Math.floor(rnd() * 60)).padStart(2, '0')}` : undefined,
      ...(split
        ? {
            splits: [
              { amount: Math.floor(cents / 2) / 100, categoryId: 'cat_sys_groceries' },
              { amount: (cents - Math.floor(cents / 2)) / 100, categoryId: 'cat_sys_housing' },
            ],
          }
        : { categoryId: pick(CATEGORIES) ?? undefined }),
      tagNames: rnd() < 0.1 ? ['Trip'] : undefined,
    }
  })
}

/** The page as it comes over the wire for this Accept-Encoding: its size and coding. */
async function onTheWire(url: string, key: string, coding: string): Promise<{ bytes: number; coding: string | null }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': coding }, decompress: false } as RequestInit)
  const bytes = (await response.arrayBuffer()).byteLength
  if (response.status !== 200) throw new Error(`${coding}: ${response.status}`)
  return { bytes, coding: response.headers.get('content-encoding') }
}

/** Median µs of `fn` over `times` runs, after a warm-up. */
function timeIt(fn: () => unknown, times = 300): number {
  for (let i = 0; i < 30; i++) fn()
  const runs: number[] = []
  for (let i = 0; i < times; i++) {
    const started = performance.now()
    fn()
    runs.push((performance.now() - started) * 1000)
  }
  return median(runs)
}

export const benchmark: Benchmark = {
  name: 'compress',
  description: 'GET of 200 transactions as identity, gzip, br and zstd: bytes, req/s and server CPU per request (no target)',
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const account = await postOnce(pfin.url, key, '/v1/accounts', { name: 'Checking', type: 'bank', balance: 1000, currency: 'EUR' })
      await postOnce(pfin.url, key, '/v1/transactions/batch', { items: items(account.id) })
      const page = await getOnce(pfin.url, key, PAGE)
      if (page.data.length !== 200) throw new Error(`the page holds ${page.data.length} transactions`)
      const text = JSON.stringify(page)

      const url = `${pfin.url}${PAGE}`
      const wire = new Map<string, { bytes: number; coding: string | null }>()
      for (const coding of CODINGS) wire.set(coding, await onTheWire(url, key, coding))
      for (const coding of CODINGS.slice(1)) if (wire.get(coding)?.coding !== coding) throw new Error(`asked for ${coding}, got ${wire.get(coding)?.coding}`)

      const options = (coding: string) => ({ url, headers: { authorization: `Bearer ${key}`, 'accept-encoding': coding }, pid: pfin.proc.pid })
      for (const coding of CODINGS) await warm(options(coding))
      const results = new Map<string, LoadResult[]>(CODINGS.map((coding) => [coding, []]))
      for (let round = 0; round < settings.rounds; round++) {
        // Each round starts with another coding, so none always meets the same machine.
        const order = CODINGS.map((_, i) => CODINGS[(i + round) % CODINGS.length] as string)
        for (const coding of order) {
          const result = await load(options(coding))
          if (result.non2xx || result.errors) throw new Error(`${coding}: ${describe(coding, result)}`)
          results.get(coding)?.push(result)
          console.log(`round ${round + 1}: ${describe(coding, result)}`)
        }
      }

      const cpu = (coding: string) => median((results.get(coding) ?? []).map((r) => r.serverCpuUs?.total ?? Number.NaN))
      const rps = (coding: string) => median((results.get(coding) ?? []).map((r) => r.rps))
      const identityBytes = wire.get('identity')?.bytes ?? Number.NaN
      console.log(
        `\nthe page: ${page.data.length} transactions, ${identityBytes.toLocaleString('en-US')} bytes of JSON; medians of ${settings.rounds} round(s)`,
      )
      console.log('coding     bytes on the wire   req/s      server CPU/request   extra CPU vs identity   coding alone (this process)')
      const lines: string[] = []
      for (const coding of CODINGS) {
        const bytes = wire.get(coding)?.bytes ?? Number.NaN
        const alone = coding === 'identity' ? 0 : timeIt(() => encode(text, coding as Coding))
        const extra = cpu(coding) - cpu('identity')
        console.log(
          `${coding.padEnd(10)} ${`${bytes.toLocaleString('en-US')} (${((100 * bytes) / identityBytes).toFixed(1)}%)`.padEnd(19)} ${fmt.rps(rps(coding)).padEnd(10)} ${`${cpu(coding).toFixed(1)} µs`.padEnd(20)} ${coding === 'identity' ? '—'.padEnd(23) : `${extra >= 0 ? '+' : ''}${extra.toFixed(1)} µs`.padEnd(23)} ${coding === 'identity' ? '—' : `${alone.toFixed(1)} µs`}`,
        )
        if (coding !== 'identity')
          lines.push(`${coding} ${(bytes / 1024).toFixed(1)} KiB, +${extra.toFixed(0)} µs/req server CPU (${alone.toFixed(0)} µs alone)`)
      }
      return { summary: `200-txn page ${(identityBytes / 1024).toFixed(1)} KiB at ${cpu('identity').toFixed(0)} µs/req; ${lines.join('; ')}` }
    } finally {
      await cleanup.run()
    }
  },
}
