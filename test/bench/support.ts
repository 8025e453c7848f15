import type { Subprocess } from 'bun'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Shared pieces for benchmarks: pfin and baseline processes, the CLI, and a load generator. */

export const ROOT = join(import.meta.dir, '..', '..')
export const MAIN = join(ROOT, 'src', 'main.ts')

/** Limits high enough that no benchmark is ever throttled. */
export const UNLIMITED = {
  RATE_LIMIT_PER_MINUTE: '1000000000',
  RATE_LIMIT_PER_DAY: '1000000000',
  ANON_RATE_LIMIT_PER_MINUTE: '1000000000',
  ANON_RATE_LIMIT_PER_DAY: '1000000000',
}

export const settings = {
  /** Seconds of measured load per run (BENCH_DURATION, default 10). */
  duration: Number(process.env.BENCH_DURATION ?? 10),
  /** Seconds of unmeasured load first, so the JIT and caches are warm (BENCH_WARMUP, default 2). */
  warmup: Number(process.env.BENCH_WARMUP ?? 2),
  /** Interleaved baseline/pfin rounds where a benchmark compares the two (BENCH_ROUNDS, default 3). */
  rounds: Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3)),
  /** Concurrent connections (BENCH_CONNECTIONS, default 16). */
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  /** `wrk` or `autocannon` (BENCH_TOOL); default: wrk when installed. */
  tool: (process.env.BENCH_TOOL ?? (Bun.which('wrk') ? 'wrk' : 'autocannon')) as 'wrk' | 'autocannon',
}

/** The middle value (the mean of the two middle ones for an even count). */
/** A small deterministic PRNG (mulberry32), so every run of a benchmark seeds the same data. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

export function tempDir(prefix = 'pfin-bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Things to undo when the benchmark ends, last first. */
export class Cleanup {
  private readonly steps: (() => unknown)[] = []
  add(step: () => unknown): void {
    this.steps.push(step)
  }
  dir(path: string): string {
    this.add(() => rmSync(path, { recursive: true, force: true }))
    return path
  }
  async run(): Promise<void> {
    for (const step of this.steps.reverse()) {
      try {
        await step()
      } catch (error) {
        console.error(`cleanup: ${String(error)}`)
      }
    }
    this.steps.length = 0
  }
}

/** Runs the admin CLI with `--json` and returns its one JSON object. */
// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON is read freely
export async function admin(dataDir: string, ...args: string[]): Promise<any> {
  const proc = Bun.spawn(['bun', MAIN, ...args, '--json'], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir }, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`pfin ${args.join(' ')} exited ${code}: ${stderr}`)
  return JSON.parse(stdout)
}

/** An owner with a key holding every scope. */
export async function makeOwnerAndKey(dataDir: string, name = 'Bench Owner'): Promise<{ ownerId: string; keyId: string; key: string }> {
  const owner = await admin(dataDir, 'owner', 'create', '--name', name, '--country', 'DE', '--currency', 'EUR')
  const key = await admin(dataDir, 'key', 'create', '--owner', owner.id, '--name', 'bench')
  return { ownerId: owner.id, keyId: key.id, key: key.key }
}

export interface Service {
  url: string
  proc: Subprocess
  stop(): Promise<number>
}

/**
 * Compiles `cold-floor.ts`, the floor of pfin's stack (Elysia, with FLOOR=stack also drizzle,
 * TypeBox and the swagger plugin, over one SQLite file), the way `bun run build` compiles pfin.
 */
export function buildFloor(cleanup: Cleanup): Promise<string> {
  return compileBench(cleanup, 'cold-floor.ts')
}

/** Compiles test/bench/`entry` as `bun run build` compiles pfin (one file, bytecode, ESM); returns the binary's path. */
export async function compileBench(cleanup: Cleanup, entry: string): Promise<string> {
  const outfile = join(cleanup.dir(tempDir('pfin-compiled-')), entry.replace(/\.ts$/, ''))
  const proc = Bun.spawn(['bun', 'build', join(import.meta.dir, entry), '--compile', '--bytecode', '--format=esm', '--outfile', outfile], {
    cwd: ROOT,
    stdout: 'ignore',
    stderr: 'inherit',
  })
  if ((await proc.exited) !== 0) throw new Error(`compiling test/bench/${entry} failed`)
  return outfile
}

/** Spawns a server process and waits for its `… listening on http://HOST:PORT` line. */
export async function spawnServer(cmd: string[], env: Record<string, string>, label: string): Promise<Service> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env }, stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Date.now() + 30_000
  let port: string | undefined
  // One read at a time, kept across the waits: a read abandoned when the timer won would take
  // the next chunk with it (a server slower than a second to print lost its "listening" line).
  let next = reader.read()
  while (!port) {
    if (Date.now() > deadline) {
      proc.kill('SIGKILL')
      throw new Error(`${label} did not start; printed:\n${text}`)
    }
    const chunk = await Promise.race([next, Bun.sleep(1000).then(() => null)])
    if (chunk === null) continue
    if (chunk.done) throw new Error(`${label} exited before listening; printed:\n${text}`)
    text += decoder.decode(chunk.value, { stream: true })
    port = /listening on http:\/\/[^\s:]+:(\d+)/.exec(text)?.[1]
    next = reader.read()
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  void (async () => {
    if ((await next).done) return
    while (!(await reader.read()).done) {}
  })().catch(() => {})
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    async stop() {
      proc.kill('SIGTERM')
      const code = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => null)])
      if (code === null) {
        proc.kill('SIGKILL')
        return await proc.exited
      }
      return code
    },
  }
}

/** `bun src/main.ts serve` over `dataDir`, without rate limits getting in the way. */
export function startPfin(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  // Access logs off unless asked for (BENCH_LOG_FORMAT=json): the baseline writes none either.
  return spawnServer(['bun', MAIN, 'serve'], { DATA_DIR: dataDir, LOG_FORMAT: process.env.BENCH_LOG_FORMAT ?? 'off', ...UNLIMITED, ...env }, 'pfin')
}

/** pfin over a fresh DATA_DIR with one owner and an all-scope key; `cleanup` stops it and removes the folder. */
export async function startPfinWithOwner(cleanup: Cleanup): Promise<{ pfin: Service; key: string }> {
  const dataDir = cleanup.dir(tempDir())
  const { key } = await makeOwnerAndKey(dataDir)
  const pfin = await startPfin(dataDir)
  cleanup.add(() => pfin.stop())
  return { pfin, key }
}

/** The bare `Bun.serve` baseline answering `body` to everything. */
export function startBaseline(body: string): Promise<Service> {
  return spawnServer(['bun', join(import.meta.dir, 'baseline.ts')], { BODY: body }, 'baseline')
}

/** A DATA_DIR for `tenant-baseline.ts`, its `tenants/` folder made; `cleanup` removes it. Owner files go in as `tenants/<name>.db`. */
export function bareTenantDir(cleanup: Cleanup): string {
  const dir = cleanup.dir(tempDir('pfin-bench-bare-'))
  mkdirSync(join(dir, 'tenants'))
  return dir
}

/** `tenant-baseline.ts` (a bare `Bun.serve` + bun:sqlite) over `dataDir`; `cleanup` stops it. */
export async function startTenantBaseline(cleanup: Cleanup, dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  const baseline = await spawnServer(['bun', join(import.meta.dir, 'tenant-baseline.ts')], { DATA_DIR: dataDir, ...env }, 'baseline')
  cleanup.add(() => baseline.stop())
  return baseline
}

export interface LoadOptions {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: string
  connections?: number
  /** Seconds. */
  duration?: number
  /** The server's process id: its CPU time per request is measured too (Linux only). */
  pid?: number
}

export interface LoadResult {
  tool: string
  requests: number
  seconds: number
  rps: number
  latencyMs: { p50: number; p99: number; mean: number }
  /** Responses outside 2xx/3xx: a benchmark with any of these is not measuring what it claims. */
  non2xx: number
  errors: number
  /**
   * The server process's CPU time (user + system, all threads) per request, in µs, when a
   * pid was given and /proc is there. Steadier than requests/s on a shared machine.
   */
  serverCpuUs?: { user: number; system: number; total: number }
}

/** Drives `url` with a real load generator (wrk, else autocannon) in its own process. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const { pid, ...rest } = options
  const opts = { method: 'GET', headers: {}, connections: settings.connections, duration: settings.duration, ...rest }
  const before = pid === undefined ? null : cpuTicks(pid)
  const result = settings.tool === 'wrk' ? await loadWithWrk(opts) : await loadWithAutocannon(opts)
  const after = pid === undefined ? null : cpuTicks(pid)
  if (before && after && result.requests > 0) {
    const us = (ticks: number) => (ticks * 1e6) / CLOCK_TICKS / result.requests
    const user = us(after.user - before.user)
    const system = us(after.system - before.system)
    result.serverCpuUs = { user, system, total: user + system }
  }
  return result
}

const CLOCK_TICKS = Number(Bun.spawnSync(['getconf', 'CLK_TCK']).stdout?.toString().trim()) || 100

/** utime and stime of a process, in clock ticks, from /proc (null elsewhere). */
function cpuTicks(pid: number): { user: number; system: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return { user: Number(fields[11]), system: Number(fields[12]) }
  } catch {
    return null
  }
}

/** Unmeasured load, to warm up the JIT and caches. */
export async function warm(options: LoadOptions): Promise<void> {
  if (settings.warmup > 0) await load({ ...options, duration: settings.warmup })
}

async function output(cmd: string[]): Promise<string> {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd[0]} exited ${code}: ${stderr}`)
  return stdout
}

function luaString(text: string): string {
  let out = '"'
  for (const byte of new TextEncoder().encode(text)) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`
  }
  return `${out}"`
}

type ResolvedLoad = Required<Omit<LoadOptions, 'body' | 'pid'>> & { body?: string }

const MARK = '@@pfin-bench@@'

async function loadWithWrk(o: ResolvedLoad): Promise<LoadResult> {
  // A script sets the request and reports exact figures as JSON when wrk is done.
  const lines = [`wrk.method = ${luaString(o.method)}`]
  for (const [name, value] of Object.entries(o.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`)
  if (o.body !== undefined) lines.push(`wrk.body = ${luaString(o.body)}`)
  lines.push(
    'function done(summary, latency, requests)',
    '  local e = summary.errors',
    `  io.write(string.format("${MARK}{\\"requests\\":%d,\\"duration_us\\":%d,\\"p50\\":%d,\\"p99\\":%d,\\"mean\\":%f,\\"status\\":%d,\\"errors\\":%d}\\n",`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,',
    '    e.status, e.connect + e.read + e.write + e.timeout))',
    'end',
  )
  const dir = tempDir('pfin-wrk-')
  try {
    const script = join(dir, 'load.lua')
    writeFileSync(script, `${lines.join('\n')}\n`)
    const connections = Math.max(1, o.connections)
    const stdout = await output(['wrk', '-t1', `-c${connections}`, `-d${o.duration}s`, '-s', script, o.url])
    const json = stdout.split('\n').find((line) => line.startsWith(MARK))
    if (!json) throw new Error(`wrk printed no summary:\n${stdout}`)
    const r = JSON.parse(json.slice(MARK.length))
    const seconds = r.duration_us / 1e6
    return {
      tool: `wrk -t1 -c${connections} -d${o.duration}s`,
      requests: r.requests,
      seconds,
      rps: r.requests / seconds,
      latencyMs: { p50: r.p50 / 1000, p99: r.p99 / 1000, mean: r.mean / 1000 },
      non2xx: r.status,
      errors: r.errors,
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function loadWithAutocannon(o: ResolvedLoad): Promise<LoadResult> {
  const cli = join(ROOT, 'node_modules', 'autocannon', 'autocannon.js')
  const runtime = Bun.which('node') ?? 'bun'
  const args = [runtime, cli, '--json', '--no-progress', '-c', String(o.connections), '-d', String(o.duration), '-m', o.method]
  for (const [name, value] of Object.entries(o.headers)) args.push('-H', `${name}=${value}`)
  if (o.body !== undefined) args.push('-b', o.body)
  args.push(o.url)
  const r = JSON.parse(await output(args))
  return {
    tool: `autocannon -c ${o.connections} -d ${o.duration} (${runtime === 'bun' ? 'bun' : 'node'})`,
    requests: r.requests.total,
    seconds: r.duration,
    rps: r.requests.total / r.duration,
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.average },
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  }
}

export const fmt = {
  rps: (n: number) => `${Math.round(n).toLocaleString('en-US')} req/s`,
  ms: (n: number) => `${n.toFixed(2)} ms`,
  ratio: (n: number) => n.toFixed(2),
}

export interface ThreeWayRound {
  bare: LoadResult
  floor: LoadResult
  pfin: LoadResult
}

export interface ThreeWayFigures {
  rounds: ThreeWayRound[]
  /** Medians over the rounds of pfin ÷ bare, floor ÷ bare and pfin ÷ floor, by requests per second. */
  rps: { pfinToBare: number; floorToBare: number; pfinToFloor: number }
  /** The same by server CPU per request (the other's µs ÷ pfin's): steadier on a busy machine; undefined without /proc. */
  cpu?: { pfinToBare: number; floorToBare: number; pfinToFloor: number }
}

/**
 * A bare `Bun.serve`, the stack's floor (Elysia doing the same work with the same headers) and
 * pfin under the same load in `settings.rounds` rounds, the order turning each round so none
 * always meets a warmer or busier machine. Each ratio is the median of the per-round ratios.
 */
export async function threeWayRounds(loads: { bare: LoadOptions; floor: LoadOptions; pfin: LoadOptions }): Promise<ThreeWayFigures> {
  const order = ['bare', 'floor', 'pfin'] as const
  for (const name of order) await warm(loads[name])
  const rounds: ThreeWayRound[] = []
  for (let round = 0; round < settings.rounds; round++) {
    const results: Partial<ThreeWayRound> = {}
    for (let i = 0; i < order.length; i++) {
      const name = order[(round + i) % order.length] as (typeof order)[number]
      const result = await load(loads[name])
      if (result.non2xx || result.errors) throw new Error(`responses other than 2xx during the run:\n${describe(name, result)}`)
      results[name] = result
    }
    const done = results as ThreeWayRound
    rounds.push(done)
    for (const name of order) console.log(`round ${round + 1}: ${describe(name, done[name]).trimEnd()}`)
  }
  const ratios = (of: (r: LoadResult) => number | undefined, inverse: boolean) => {
    const pick = (a: LoadResult, b: LoadResult) => {
      const x = of(a)
      const y = of(b)
      return x === undefined || y === undefined ? undefined : inverse ? y / x : x / y
    }
    const each = (a: keyof ThreeWayRound, b: keyof ThreeWayRound) => rounds.map((r) => pick(r[a], r[b]))
    const mid = (values: (number | undefined)[]) => (values.every((v) => v !== undefined) ? median(values as number[]) : undefined)
    const pfinToBare = mid(each('pfin', 'bare'))
    const floorToBare = mid(each('floor', 'bare'))
    const pfinToFloor = mid(each('pfin', 'floor'))
    return pfinToBare === undefined || floorToBare === undefined || pfinToFloor === undefined ? undefined : { pfinToBare, floorToBare, pfinToFloor }
  }
  const rps = ratios((r) => r.rps, false) as ThreeWayFigures['rps']
  const cpu = ratios((r) => r.serverCpuUs?.total, true)
  return { rounds, rps, cpu }
}

/**
 * Loads every variant for every owner, one after another, each after its own warm-up; the
 * results are keyed `variant.name/owner.label`. Any response other than 2xx stops the run.
 */
export async function loadEach<V extends { name: string }, O extends { label: string }>(
  variants: readonly V[],
  owners: readonly O[],
  options: (variant: V, owner: O) => LoadOptions,
): Promise<Map<string, LoadResult>> {
  const results = new Map<string, LoadResult>()
  for (const variant of variants) {
    for (const owner of owners) {
      await warm(options(variant, owner))
      const result = await load(options(variant, owner))
      if (result.non2xx || result.errors) throw new Error(`responses other than 2xx: ${describe(owner.label, result)}`)
      if (result.requests < 2000) console.log(`note: only ${result.requests} requests in the ${owner.label} ${variant.name} run`)
      results.set(`${variant.name}/${owner.label}`, result)
    }
  }
  return results
}

/** One line per load result, aligned. */
export function describe(label: string, r: LoadResult): string {
  const health = r.non2xx || r.errors ? `  !! ${r.non2xx} non-2xx, ${r.errors} socket errors` : ''
  const cpu = r.serverCpuUs ? `   server CPU ${r.serverCpuUs.total.toFixed(1).padStart(6)} µs/req` : ''
  return `${label.padEnd(28)} ${fmt.rps(r.rps).padStart(14)}   p50 ${fmt.ms(r.latencyMs.p50).padStart(9)}   p99 ${fmt.ms(r.latencyMs.p99).padStart(9)}${cpu}${health}`
}

/** A process's resident set (VmRSS) in MiB and its open descriptors (entries of /proc/<pid>/fd); NaN without /proc. */
export function processFootprint(pid: number): { rssMiB: number; fds: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN)
    return { rssMiB: rss / 1024, fds: readdirSync(`/proc/${pid}/fd`).length }
  } catch {
    return { rssMiB: Number.NaN, fds: Number.NaN }
  }
}

/** The `p`th percentile (0–100, nearest rank) of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number
}

/** A process's CPU time so far (user + system, all threads), in ms, from /proc; NaN elsewhere. */
export function processCpuMs(pid: number): number {
  const ticks = cpuTicks(pid)
  return ticks ? ((ticks.user + ticks.system) * 1000) / CLOCK_TICKS : Number.NaN
}
