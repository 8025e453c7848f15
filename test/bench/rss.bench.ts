import { copyFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Benchmark } from './benchmark.ts'
import { describeKeyed, type KeyedLoadOptions, keyedLoad } from './keyed-load.ts'
import {
  buildFloor,
  Cleanup,
  describe,
  fmt,
  type LoadOptions,
  load,
  makeOwnerAndKey,
  type Service,
  settings,
  spawnServer,
  bareTenantDir,
  startPfin,
  startTenantBaseline,
  tempDir,
} from './support.ts'
import { seed } from './tenant.bench.ts'

/**
 * Memory: the server process's resident set (VmRSS in /proc/<pid>/status) after
 * load phases of RSS_DURATION seconds each (default 5): `GET /v1/me`, `GET /v1/transactions?limit=50`
 * and `POST /v1/transactions/upsert` (a new externalId per request), BENCH_CONNECTIONS connections.
 * Baseline: `test/bench/tenant-baseline.ts`, a bare `Bun.serve` + bun:sqlite answering the
 * same three routes over a copy of the same tenant file, loaded the same way. The two take
 * turns (BENCH_ROUNDS interleaved rounds of all three phases, the order alternating); RSS is
 * read after every phase, and the figure is the median round's RSS after the upsert phase,
 * with the median of the rounds' ratios. Target: pfin ≤ 60 MiB.
 *
 * Then the floor of pfin's stack (`cold-floor.ts` with FLOOR=stack, compiled: Elysia, drizzle,
 * TypeBox and the swagger plugin over one SQLite file) takes the same three phases of load, on
 * `GET /healthz`: the least memory a server on this stack holds after such loads.
 *
 * RSS right after a load holds the garbage the load left for the next collection; after
 * RSS_SETTLE seconds without requests (default 10) Bun has collected it by itself, and what is
 * left is what the server keeps. Both are reported for pfin and the floor, each split into
 * anonymous memory and the pages of files (the executable above all: clean, shared, and given
 * back by the kernel under pressure). `test/bench/memory-probe.ts` sorts the rest further.
 */

const TARGET_MIB = 60
const DURATION = Number(process.env.RSS_DURATION ?? 5)
const SETTLE_S = Number(process.env.RSS_SETTLE ?? 10)
const PHASES = ['me', 'list', 'upsert'] as const

/** VmRSS, VmHWM (peak), RssAnon and RssFile of a process, in MiB. */
function memory(pid: number): { rss: number; peak: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024 }
}

const mib = (n: number) => `${n.toFixed(1)} MiB`
const split = (m: { rss: number; anon: number; file: number }) => `${mib(m.rss)} (anonymous ${mib(m.anon)}, files ${mib(m.file)})`

interface Side {
  label: string
  service: Service
  me: LoadOptions
  list: LoadOptions
  upsert: (round: number) => KeyedLoadOptions
  /** RSS after each phase, per round. */
  after: { start: number; me: number; list: number; upsert: number; peak: number }[]
}

async function phases(side: Side, round: number): Promise<void> {
  const pid = side.service.proc.pid
  const row = { start: memory(pid).rss, me: 0, list: 0, upsert: 0, peak: 0 }
  for (const phase of PHASES) {
    if (phase === 'upsert') {
      const r = await keyedLoad(side.upsert(round))
      if (r.non2xx || r.errors || r.replayed) throw new Error(`upsert load: ${describeKeyed(side.label, r)}`)
    } else {
      const r = await load({ ...side[phase], duration: DURATION })
      if (r.non2xx || r.errors) throw new Error(`${phase} load: ${describe(side.label, r)}`)
    }
    row[phase] = memory(pid).rss
  }
  row.peak = memory(pid).peak
  side.after.push(row)
  console.log(
    `round ${round + 1}: ${side.label.padEnd(26)} RSS at start ${mib(row.start)}, after me ${mib(row.me)}, after list ${mib(row.list)}, after upsert ${mib(row.upsert)} (peak ${mib(row.peak)})`,
  )
}

type Reading = ReturnType<typeof memory>

/** The stack's floor server, idle, after PHASES × DURATION seconds of `GET /healthz`, and settled SETTLE_S seconds later. */
async function floorAfterLoads(cleanup: Cleanup): Promise<{ idle: number; after: Reading; settled: Reading }> {
  const floor = await spawnServer([await buildFloor(cleanup)], { DATA_DIR: cleanup.dir(tempDir('pfin-floor-data-')), FLOOR: 'stack' }, 'floor')
  cleanup.add(() => floor.stop())
  const idle = memory(floor.proc.pid).rss
  for (const _ of PHASES) {
    const r = await load({ url: `${floor.url}/healthz`, duration: DURATION })
    if (r.non2xx || r.errors) throw new Error(`floor load: ${describe('floor', r)}`)
  }
  const after = memory(floor.proc.pid)
  await Bun.sleep(SETTLE_S * 1000)
  return { idle, after, settled: memory(floor.proc.pid) }
}

export const benchmark: Benchmark = {
  name: 'rss',
  description: `server RSS after me, list and upsert loads vs a bare Bun.serve + bun:sqlite under the same loads; target ≤ ${TARGET_MIB} MiB`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const dataDir = cleanup.dir(tempDir())
      const baseDir = bareTenantDir(cleanup)
      const { ownerId, key } = await makeOwnerAndKey(dataDir)
      const file = join(dataDir, 'tenants', `${ownerId}.db`)
      const bareFile = join(baseDir, 'tenants', 'bare.db')
      copyFileSync(file, bareFile)
      const accountId = seed(file)
      const bareAccountId = seed(bareFile)

      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())
      const headers = { authorization: `Bearer ${key}` }
      const first = await fetch(`${pfin.url}/v1/me`, { headers })
      const body = await first.text()
      if (first.status !== 200) throw new Error(`GET /v1/me answered ${first.status}: ${body}`)
      const baseline = await startTenantBaseline(cleanup, baseDir, { BODY: body })

      const upsertBody = (account: string) => `{"externalId":"new-{key}","accountId":"${account}","amount":{amount},"date":"2026-01-15","note":"bench rss"}`
      const sides: Side[] = [
        {
          label: 'bare Bun.serve + bun:sqlite',
          service: baseline,
          me: { url: `${baseline.url}/v1/me`, headers },
          list: { url: `${baseline.url}/v1/transactions?owner=bare&limit=50`, headers },
          upsert: (round) => ({
            url: `${baseline.url}/v1/transactions/upsert?owner=bare`,
            headers,
            body: upsertBody(bareAccountId),
            keyPrefix: `b${round}-`,
            connections: settings.connections,
            duration: DURATION,
          }),
          after: [],
        },
        {
          label: 'pfin',
          service: pfin,
          me: { url: `${pfin.url}/v1/me`, headers },
          list: { url: `${pfin.url}/v1/transactions?limit=50`, headers },
          upsert: (round) => ({
            url: `${pfin.url}/v1/transactions/upsert`,
            headers,
            body: upsertBody(accountId),
            keyPrefix: `p${round}-`,
            connections: settings.connections,
            duration: DURATION,
          }),
          after: [],
        },
      ]
      for (const side of sides) {
        const idle = memory(side.service.proc.pid)
        console.log(`${side.label.padEnd(26)} RSS idle after start ${mib(idle.rss)}`)
      }
      for (let round = 0; round < settings.rounds; round++) {
        const order = round % 2 === 0 ? sides : [...sides].reverse()
        for (const side of order) await phases(side, round)
      }
      const [bare, ours] = sides as [Side, Side]
      const ratios = ours.after.map((row, i) => row.upsert / (bare.after[i]?.upsert as number))
      const middle = [...ratios.keys()].sort((a, b) => (ratios[a] as number) - (ratios[b] as number))[Math.floor(ratios.length / 2)] as number
      const o = ours.after[middle] as Side['after'][number]
      const b = bare.after[middle] as Side['after'][number]
      const final = { ours: (ours.after.at(-1) as Side['after'][number]).upsert, bare: (bare.after.at(-1) as Side['after'][number]).upsert }
      console.log(`${DURATION}s per phase, ${settings.connections} connections, ${settings.rounds} interleaved round(s); median round (${middle + 1}):`)
      console.log(`  after me:     pfin ${mib(o.me)}, baseline ${mib(b.me)}`)
      console.log(`  after list:   pfin ${mib(o.list)}, baseline ${mib(b.list)}`)
      console.log(
        `  after upsert: pfin ${mib(o.upsert)}, baseline ${mib(b.upsert)}, ratio ${fmt.ratio(ratios[middle] as number)} (rounds: ${ratios.map(fmt.ratio).join(', ')})`,
      )
      console.log(`  peak (VmHWM): pfin ${mib(o.peak)}, baseline ${mib(b.peak)}; after the last round: pfin ${mib(final.ours)}, baseline ${mib(final.bare)}`)
      const loaded = { ours: memory(ours.service.proc.pid), bare: memory(bare.service.proc.pid) }
      await Bun.sleep(SETTLE_S * 1000)
      const settled = { ours: memory(ours.service.proc.pid), bare: memory(bare.service.proc.pid) }
      console.log(`  after the last round: pfin ${split(loaded.ours)}, baseline ${split(loaded.bare)}`)
      console.log(`  settled (${SETTLE_S}s without requests): pfin ${split(settled.ours)}, baseline ${split(settled.bare)}`)
      const floor = await floorAfterLoads(cleanup)
      console.log(
        `  the stack's floor (compiled Elysia + drizzle + TypeBox + swagger, ${PHASES.length} × ${DURATION}s of GET /healthz): idle ${mib(floor.idle)}, after the loads ${split(floor.after)}, settled ${split(floor.settled)}`,
      )
      console.log(
        `  pfin above the floor: after the loads ${mib(loaded.ours.rss - floor.after.rss)} (anonymous ${mib(loaded.ours.anon - floor.after.anon)}), settled ${mib(settled.ours.rss - floor.settled.rss)} (anonymous ${mib(settled.ours.anon - floor.settled.anon)})`,
      )
      return {
        targetMet: o.upsert <= TARGET_MIB,
        summary: `RSS after me+list+upsert loads: pfin ${mib(o.upsert)}, baseline ${mib(b.upsert)}, ratio ${fmt.ratio(ratios[middle] as number)}; target ≤ ${TARGET_MIB} MiB; the stack's floor after as many /healthz loads ${mib(floor.after.rss)}; settled ${SETTLE_S}s: pfin ${mib(settled.ours.rss)}, floor ${mib(floor.settled.rss)}`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
