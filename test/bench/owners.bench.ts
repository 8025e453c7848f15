import { Database } from 'bun:sqlite'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createOwner } from '../../src/cli/admin.ts'
import { oauthGrants, oauthTokens } from '../../src/db/control/schema.ts'
import { ControlStore } from '../../src/db/control/store.ts'
import { newId } from '../../src/db/ids.ts'
import { TenantRegistry } from '../../src/db/tenant/registry.ts'
import { mintApiKey } from '../../src/platform/auth.ts'
import { DEFAULT_SCOPES } from '../../src/platform/scopes.ts'
import { mintTokens } from '../../src/modules/oauth/tokens.ts'
import type { Benchmark } from './benchmark.ts'
import {
  Cleanup,
  fmt,
  percentile,
  processCpuMs,
  processFootprint,
  type Service,
  seededRandom,
  settings,
  startPfin,
  startTenantBaseline,
  tempDir,
} from './support.ts'
import { seed } from './tenant.bench.ts'

/**
 * Many owners: BENCH_OWNERS owners (default 10,000), pfin started with TENANT_CACHE_SIZE=256,
 * BENCH_CONNECTIONS client loops sending a mix (70% `GET /v1/transactions?limit=50`, 20%
 * `GET /v1/me`, 10% `POST /v1/transactions/upsert` of one of four externalIds) to owners drawn
 * Zipf-like (s = 1), from a freshly started server. Every 5 s: requests, p50/p99, RSS and open
 * descriptors of the server. Each request is classed by what the client knows it costs: the
 * first use of a key (argon2 once, then cached), the first open of an owner's file (with its
 * `quick_check`), a reopen of an owner the cache evicted (a client-side LRU of the server's size,
 * so approximate under concurrency), or a hit.
 *
 * Two phases on one server. First, BENCH_OWNERS_SECONDS (default 60) with each owner's OAuth
 * access token (CONTRACT §28: found by its SHA-256, no argon2): the owner cache under churn.
 * Then a third of that with the owners' API keys, none verified yet in the process: argon2 runs
 * once per key (~20 ms of a core, one at a time on 2 cores), so the rate at which a restarted
 * server gets through its keys is measured there, apart from the file cache.
 *
 * Setup, without 10,000 runs of the CLI (~0.3 s and one argon2 hash each): the first owner is
 * made by the CLI's own `createOwner` and its file seeded with one account and 60 transactions
 * (tenant.bench.ts's seed); every other owner gets a copy of that file with its own profile row,
 * and its owner, key, grant and token rows in control.db in one transaction. Every key has its
 * own id and owner but the same secret, so one real argon2id hash (`mintApiKey`, the CLI's
 * parameters) serves them all: the server still runs a full argon2 check for each key.
 *
 * Baseline: `tenant-baseline.ts` (bare `Bun.serve` + bun:sqlite, CACHE_SIZE=256) over the same
 * files after pfin stopped, the same Zipf draws for a third of the time. Then, on each, the first
 * request of 10 owners no request has used, against a second one right after.
 */

const CACHE = 256
/** The server's cache of verified keys (`Authenticator.verified`): past it, keys are verified again. */
const AUTH_CACHE = 10_000
const OWNERS = Math.max(50, Number(process.env.BENCH_OWNERS ?? 10_000))
const SECONDS = Math.max(5, Number(process.env.BENCH_OWNERS_SECONDS ?? 60))
const WINDOW_MS = 5000
/** Owners kept out of the Zipf draws, for the first-request probes. */
const PROBES = 10

interface BenchOwner {
  id: string
  key: string
  /** An OAuth access token of the owner (CONTRACT §28): found by its SHA-256, never argon2. */
  token: string
}

/** Makes `count` owners with a key each; returns them and the account every file holds. */
export async function makeOwners(dataDir: string, count: number): Promise<{ owners: BenchOwner[]; accountId: string }> {
  mkdirSync(join(dataDir, 'tenants'), { recursive: true, mode: 0o700 })
  const control = new ControlStore(dataDir)
  const tenants = new TenantRegistry(dataDir, 1)
  try {
    const profile = { email: null, country: 'DE', defaultCurrency: 'EUR', preferredLanguage: null }
    const first = createOwner(control, tenants, { name: 'Owner 1', ...profile })
    tenants.closeAll()
    const template = tenants.pathFor(first.id)
    const accountId = seed(template)
    const minted = await mintApiKey(first.id)
    const secret = minted.plaintext.slice(-43)
    const owners: BenchOwner[] = []
    const now = Date.now()
    const client = { id: newId('cli'), name: 'Bench', redirectUris: ['http://127.0.0.1/callback'], createdAt: now }
    control.sqlite.transaction(() => {
      control.oauth.createClient(client)
      for (let i = 0; i < count; i++) {
        const id = i === 0 ? first.id : newId('own')
        if (i > 0) control.createOwner({ id, name: `Owner ${i + 1}`, ...profile, tier: 'pro', createdAt: now })
        const keyId = newId('key')
        control.createKey({
          id: keyId,
          ownerId: id,
          name: 'bench',
          scopes: [...DEFAULT_SCOPES],
          secretHash: minted.secretHash,
          createdAt: now,
          lastUsedAt: null,
          expiresAt: null,
          revokedAt: null,
          replacedBy: null,
          namesOwner: 1,
        })
        const grantId = newId('app')
        control.db
          .insert(oauthGrants)
          .values({
            id: grantId,
            ownerId: id,
            clientId: client.id,
            scopes: [...DEFAULT_SCOPES],
            createdAt: now,
            lastUsedAt: null,
            expiresAt: now + 86_400_000,
            revokedAt: null,
          })
          .run()
        const tokens = mintTokens(id, grantId, now)
        control.db.insert(oauthTokens).values(tokens.rows).run()
        owners.push({ id, key: `pfk_${id}_${keyId}_${secret}`, token: tokens.access })
      }
    })()
    for (const owner of owners.slice(1)) {
      const path = tenants.pathFor(owner.id)
      copyFileSync(template, path)
      const db = new Database(path)
      // One writer, no fsync: no shared-memory index to make, nothing to wait for (the files are new).
      db.run('PRAGMA locking_mode = EXCLUSIVE')
      db.run('PRAGMA synchronous = OFF')
      db.query('UPDATE profile SET id = ?, name = ?, created_at = ?').run(owner.id, `Owner ${owners.indexOf(owner) + 1}`, now)
      db.close(false)
    }
    return { owners, accountId }
  } finally {
    tenants.closeAll()
    control.close()
  }
}

/** Zipf (s = 1) over ranks 0 … n−1: rank 0 the most frequent. */
function zipf(n: number, random: () => number): () => number {
  const cdf = new Float64Array(n)
  let sum = 0
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1)
  return () => {
    const target = random() * sum
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((cdf[mid] as number) < target) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** A least-recently-used set: `touch` says whether the key was in it. */
class LruSet {
  private readonly items = new Set<number>()
  constructor(private readonly capacity: number) {}
  touch(key: number): boolean {
    const had = this.items.delete(key)
    this.items.add(key)
    if (this.items.size > this.capacity) this.items.delete(this.items.values().next().value as number)
    return had
  }
}

type Kind = 'list' | 'me' | 'upsert'
const CLASSES = ['argon2 (first use of a key)', 'first open of a file', 'reopen (evicted)', 'hit'] as const
type Class = (typeof CLASSES)[number]

interface Sample {
  at: number
  ms: number
  kind: Kind
  cls: Class
}

interface Window {
  second: number
  requests: number
  p50: number
  p99: number
  argon2: number
  opens: number
  rssMiB: number
  fds: number
}

interface Side {
  label: string
  request: (rank: number, kind: Kind, n: number) => Promise<Response>
  /** Whether requests carry API keys (argon2 on a key's first use in the process). */
  keys: boolean
}

/** What the client knows of one server's caches: the owner files it holds (as the server's LRU would) and every file it opened. */
interface CacheView {
  files: LruSet
  keys: LruSet
  opened: Set<number>
}

const newView = (): CacheView => ({ files: new LruSet(CACHE), keys: new LruSet(AUTH_CACHE), opened: new Set() })

/** BENCH_CONNECTIONS loops over the Zipf draws for `seconds`; every 5 s a row of figures. */
async function zipfLoad(
  side: Side,
  service: Service,
  seconds: number,
  view: CacheView = newView(),
): Promise<{ samples: Sample[]; windows: Window[]; statuses: Map<number, number>; cpuUsPerRequest: number }> {
  const draw = zipf(OWNERS - PROBES, seededRandom(OWNERS))
  const mix = seededRandom(7)
  const { files, keys, opened } = view
  const samples: Sample[] = []
  const statuses = new Map<number, number>()
  const windows: Window[] = []
  const started = performance.now()
  const end = started + seconds * 1000
  let n = 0
  let from = 0
  const sampleWindow = () => {
    const now = performance.now()
    const inWindow = samples.slice(from)
    from = samples.length
    windows.push({
      second: Math.round((now - started) / 1000),
      requests: inWindow.length,
      p50: percentile(
        inWindow.map((s) => s.ms),
        50,
      ),
      p99: percentile(
        inWindow.map((s) => s.ms),
        99,
      ),
      argon2: inWindow.filter((s) => s.cls === CLASSES[0]).length,
      opens: inWindow.filter((s) => s.cls === CLASSES[1] || s.cls === CLASSES[2]).length,
      ...processFootprint(service.proc.pid),
    })
  }
  windows.push({ second: 0, requests: 0, p50: Number.NaN, p99: Number.NaN, argon2: 0, opens: 0, ...processFootprint(service.proc.pid) })
  const cpuBefore = processCpuMs(service.proc.pid)
  const timer = setInterval(sampleWindow, WINDOW_MS)
  const loop = async () => {
    while (performance.now() < end) {
      const rank = draw()
      const roll = mix()
      const kind: Kind = roll < 0.7 ? 'list' : roll < 0.9 ? 'me' : 'upsert'
      let cls: Class = 'hit'
      if (side.keys && !keys.touch(rank)) cls = CLASSES[0]
      if (kind !== 'me') {
        const cached = files.touch(rank)
        if (cls === 'hit' && !cached) cls = opened.has(rank) ? CLASSES[2] : CLASSES[1]
        opened.add(rank)
      }
      const at = performance.now()
      const response = await side.request(rank, kind, n++)
      await response.arrayBuffer()
      samples.push({ at, ms: performance.now() - at, kind, cls })
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    }
  }
  await Promise.all(Array.from({ length: settings.connections }, loop))
  clearInterval(timer)
  const cpuUsPerRequest = ((processCpuMs(service.proc.pid) - cpuBefore) * 1000) / samples.length
  sampleWindow()
  return { samples, windows, statuses, cpuUsPerRequest }
}

/** The first request of owners no request has used, and a second one right after, in ms. */
async function probeFirstRequests(side: Side): Promise<{ first: number[]; second: number[] }> {
  const first: number[] = []
  const second: number[] = []
  for (let rank = OWNERS - PROBES; rank < OWNERS; rank++) {
    // Find the credential first (GET /v1/me reads only control.db): the list then pays for the file alone.
    if (side.label === 'pfin') await (await side.request(rank, 'me', 0)).arrayBuffer()
    for (const into of [first, second]) {
      const at = performance.now()
      const response = await side.request(rank, 'list', 0)
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`${side.label}: a probe answered ${response.status}`)
      into.push(performance.now() - at)
    }
  }
  return { first, second }
}

const row = (cells: (string | number)[], widths: number[]) => cells.map((c, i) => String(c).padStart(widths[i] as number)).join('  ')

function report(label: string, result: Awaited<ReturnType<typeof zipfLoad>>, seconds: number): { p50: number; p99: number; byClass: Map<Class, number[]> } {
  const { samples, windows } = result
  const all = samples.map((s) => s.ms)
  console.log(
    `${label}: ${samples.length.toLocaleString('en-US')} requests in ${seconds} s (${fmt.rps(samples.length / seconds)}), p50 ${fmt.ms(percentile(all, 50))}, p99 ${fmt.ms(percentile(all, 99))}, server CPU ${result.cpuUsPerRequest.toFixed(0)} µs/request`,
  )
  const widths = [5, 8, 9, 9, 7, 6, 9, 5]
  console.log(`  ${row(['s', 'requests', 'p50 ms', 'p99 ms', 'argon2', 'opens', 'RSS MiB', 'fds'], widths)}`)
  for (const w of windows)
    console.log(`  ${row([w.second, w.requests, w.p50.toFixed(2), w.p99.toFixed(2), w.argon2, w.opens, w.rssMiB.toFixed(1), w.fds], widths)}`)
  const byClass = new Map<Class, number[]>()
  for (const s of samples) {
    const into = byClass.get(s.cls) ?? []
    into.push(s.ms)
    byClass.set(s.cls, into)
  }
  for (const cls of CLASSES) {
    const ms = byClass.get(cls)
    if (ms)
      console.log(
        `  ${cls.padEnd(28)} ${String(ms.length).padStart(7)} requests   p50 ${fmt.ms(percentile(ms, 50)).padStart(9)}   p99 ${fmt.ms(percentile(ms, 99)).padStart(9)}`,
      )
  }
  return { p50: percentile(all, 50), p99: percentile(all, 99), byClass }
}

function checkStatuses(label: string, statuses: Map<number, number>): void {
  const bad = [...statuses].filter(([status]) => status < 200 || status > 299)
  if (bad.length) throw new Error(`${label} answered ${bad.map(([s, c]) => `${s}×${c}`).join(', ')}`)
}

const median = (values: number[]) => percentile(values, 50)

export const benchmark: Benchmark = {
  name: 'owners',
  description: `${OWNERS.toLocaleString('en-US')} owners, TENANT_CACHE_SIZE=${CACHE}, Zipf-like load for ${SECONDS} s: p50/p99, RSS and descriptors over time, the cost of an owner open`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const dataDir = cleanup.dir(tempDir())
      let at = performance.now()
      const { owners, accountId } = await makeOwners(dataDir, OWNERS)
      console.log(`setup: ${OWNERS.toLocaleString('en-US')} owners, keys, tokens and files in ${((performance.now() - at) / 1000).toFixed(1)} s`)
      const shortSeconds = Math.max(5, Math.round(SECONDS / 3))
      const upsertBody = (n: number) =>
        JSON.stringify({ externalId: `owners-bench-${n % 4}`, accountId, amount: 1 + (n % 997), date: '2026-11-01', note: `request ${n}` })

      const pfin = await startPfin(dataDir, { TENANT_CACHE_SIZE: String(CACHE) })
      cleanup.add(() => pfin.stop())
      const pfinSide = (credential: 'key' | 'token'): Side => ({
        label: 'pfin',
        keys: credential === 'key',
        request(rank, kind, n) {
          const owner = owners[rank] as BenchOwner
          const headers: Record<string, string> = { authorization: `Bearer ${credential === 'key' ? owner.key : owner.token}` }
          if (kind === 'me') return fetch(`${pfin.url}/v1/me`, { headers })
          if (kind === 'list') return fetch(`${pfin.url}/v1/transactions?limit=50`, { headers })
          headers['content-type'] = 'application/json'
          headers['idempotency-key'] = `owners-${credential}-${n}`
          return fetch(`${pfin.url}/v1/transactions/upsert`, { method: 'POST', headers, body: upsertBody(n) })
        },
      })

      // The file cache under load, every owner signed in with an OAuth token (no argon2).
      at = performance.now()
      const view = newView()
      const ours = await zipfLoad(pfinSide('token'), pfin, SECONDS, view)
      const oursSeconds = Math.round((performance.now() - at) / 1000)
      checkStatuses('pfin', ours.statuses)
      const oursProbes = await probeFirstRequests(pfinSide('token'))
      const oursFigures = report('pfin, OAuth tokens', ours, oursSeconds)

      // The same server, the same draws with the owners' API keys: none verified yet in this process.
      at = performance.now()
      const keyed = await zipfLoad(pfinSide('key'), pfin, shortSeconds, view)
      const keyedSeconds = Math.round((performance.now() - at) / 1000)
      checkStatuses('pfin with keys', keyed.statuses)
      const keyedFigures = report('pfin, API keys (each verified once per process)', keyed, keyedSeconds)
      const code = await pfin.stop()
      if (code !== 0) throw new Error(`pfin exited ${code} on SIGTERM`)

      const baseline = await startTenantBaseline(cleanup, dataDir, { CACHE_SIZE: String(CACHE) })
      const baseSide: Side = {
        label: 'baseline',
        keys: false,
        request(rank, kind, n) {
          const owner = (owners[rank] as BenchOwner).id
          if (kind === 'me') return fetch(`${baseline.url}/v1/me`)
          if (kind === 'list') return fetch(`${baseline.url}/v1/transactions?owner=${owner}&limit=50`)
          return fetch(`${baseline.url}/v1/transactions/upsert?owner=${owner}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: upsertBody(n),
          })
        },
      }
      at = performance.now()
      const base = await zipfLoad(baseSide, baseline, shortSeconds)
      const baseSeconds = Math.round((performance.now() - at) / 1000)
      checkStatuses('baseline', base.statuses)
      const baseProbes = await probeFirstRequests(baseSide)
      const baseFigures = report(`baseline (bare Bun.serve + bun:sqlite, LRU of ${CACHE})`, base, baseSeconds)

      const pick = (figures: typeof oursFigures, cls: Class, p: number) => percentile(figures.byClass.get(cls) ?? [], p)
      const throughput = ours.samples.length / oursSeconds / (base.samples.length / baseSeconds)
      const cpu = base.cpuUsPerRequest / ours.cpuUsPerRequest
      console.log(
        `pfin (tokens) ÷ baseline: requests/s ${fmt.ratio(throughput)}; server CPU per request, baseline ÷ pfin ${fmt.ratio(cpu)}; latency p50 (p99):`,
      )
      for (const cls of [CLASSES[1], CLASSES[2], CLASSES[3]])
        console.log(
          `  ${cls.padEnd(28)} ${fmt.ratio(pick(oursFigures, cls, 50) / pick(baseFigures, cls, 50))} (${fmt.ratio(pick(oursFigures, cls, 99) / pick(baseFigures, cls, 99))})`,
        )
      console.log(
        `first request of ${PROBES} never-used owners, idle server (median): pfin ${fmt.ms(median(oursProbes.first))} (second ${fmt.ms(median(oursProbes.second))}), baseline ${fmt.ms(median(baseProbes.first))} (second ${fmt.ms(median(baseProbes.second))}); ratio ${fmt.ratio(median(oursProbes.first) / median(baseProbes.first))}`,
      )
      const firstFull = ours.windows.find((w) => w.fds >= CACHE * 3) ?? (ours.windows[1] as Window)
      const last = ours.windows.at(-1) as Window
      const growth = (a: number, b: number) => `${fmt.ratio(b / a)}×`
      console.log(
        `pfin (tokens), from the first sample with the cache full (${firstFull.second} s) to the end (${last.second} s): RSS ${firstFull.rssMiB.toFixed(1)} → ${last.rssMiB.toFixed(1)} MiB (${growth(firstFull.rssMiB, last.rssMiB)}), descriptors ${firstFull.fds} → ${last.fds} (${growth(firstFull.fds, last.fds)})`,
      )
      const argon2 = keyed.samples.filter((s) => s.cls === CLASSES[0]).length
      console.log(
        `argon2 checks with keys: ${argon2} in ${keyedSeconds} s (${(argon2 / keyedSeconds).toFixed(1)}/s), the first request of a key waited p50 ${fmt.ms(pick(keyedFigures, CLASSES[0], 50))}, p99 ${fmt.ms(pick(keyedFigures, CLASSES[0], 99))}; at that rate ${OWNERS.toLocaleString('en-US')} keys take ${Math.round(OWNERS / (argon2 / keyedSeconds))} s to verify after a restart (key cache ${AUTH_CACHE.toLocaleString('en-US')})`,
      )
      return {
        summary: `${OWNERS.toLocaleString('en-US')} owners (tokens): p50 ${fmt.ms(oursFigures.p50)}, p99 ${fmt.ms(oursFigures.p99)}, ${fmt.ratio(throughput)}× bare req/s (CPU ${fmt.ratio(cpu)}); RSS ${growth(firstFull.rssMiB, last.rssMiB)}, fds ${growth(firstFull.fds, last.fds)}; reopen p50 ${fmt.ms(pick(oursFigures, CLASSES[2], 50))}; keys: ${(argon2 / keyedSeconds).toFixed(1)} argon2/s`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
