import { Cleanup, load, makeOwnerAndKey, median, type Service, spawnServer, tempDir, UNLIMITED } from './support.ts'

/**
 * Two or more checkouts of pfin, each serving one route under the same load in turns: for a
 * change's before and after, where `bun run bench` measures only the code it runs from. Not a
 * benchmark the runner picks up: run it by hand.
 *
 *   git worktree add /tmp/before <commit>   # then `bun install` there
 *   bun test/bench/ab.ts /tmp/before .
 *   AB_PATH='/v1/transactions?limit=50' AB_ROUNDS=8 bun test/bench/ab.ts /tmp/before .
 *
 * Each argument is a checkout's folder (its `src/main.ts serve` is run from source). Each gets its
 * own data folder with one owner and a key, a warm-up, then AB_ROUNDS rounds (default 6) of
 * AB_DURATION seconds (default 3) at BENCH_CONNECTIONS connections, the order turning each round.
 * Prints each one's server CPU per request and requests per second, per round and the median:
 * on this class of VM the same build drifts ±5 µs a request between runs, so only a difference
 * that holds in most rounds means anything.
 */

const roots = process.argv.slice(2)
if (roots.length < 2) {
  console.error('usage: bun test/bench/ab.ts CHECKOUT CHECKOUT [CHECKOUT…]  (AB_PATH, AB_ROUNDS, AB_DURATION)')
  process.exit(2)
}
const rounds = Number(process.env.AB_ROUNDS ?? 6)
const duration = Number(process.env.AB_DURATION ?? 3)
const path = process.env.AB_PATH ?? '/v1/me'

interface Contender {
  root: string
  service: Service
  headers: Record<string, string>
  cpu: number[]
  rps: number[]
}

const cleanup = new Cleanup()
try {
  const contenders: Contender[] = []
  for (const root of roots) {
    const dataDir = cleanup.dir(tempDir())
    const { key } = await makeOwnerAndKey(dataDir)
    const service = await spawnServer(['bun', `${root}/src/main.ts`, 'serve'], { DATA_DIR: dataDir, LOG_FORMAT: 'off', ...UNLIMITED }, root)
    cleanup.add(() => service.stop())
    const headers = { authorization: `Bearer ${key}` }
    const first = await fetch(`${service.url}${path}`, { headers })
    if (first.status !== 200) throw new Error(`${root} answered ${path} with ${first.status}`)
    await load({ url: `${service.url}${path}`, headers, duration: 2, pid: service.proc.pid })
    contenders.push({ root, service, headers, cpu: [], rps: [] })
  }
  for (let round = 0; round < rounds; round++) {
    for (const contender of round % 2 ? [...contenders].reverse() : contenders) {
      const result = await load({ url: `${contender.service.url}${path}`, headers: contender.headers, duration, pid: contender.service.proc.pid })
      contender.cpu.push(result.serverCpuUs?.total ?? Number.NaN)
      contender.rps.push(result.rps)
    }
  }
  console.log(`GET ${path}, ${rounds} rounds of ${duration} s`)
  for (const { root, cpu, rps } of contenders) {
    console.log(
      `${root.padEnd(24)} CPU ${median(cpu).toFixed(1)} µs/request (${cpu.map((us) => us.toFixed(1)).join(', ')}), ${Math.round(median(rps)).toLocaleString('en-US')} requests/s`,
    )
  }
} finally {
  await cleanup.run()
}
