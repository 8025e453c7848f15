import { readdirSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { Benchmark } from './benchmark.ts'
import { buildFloor, Cleanup, compileBench, fmt, median, ROOT, settings, tempDir, UNLIMITED } from './support.ts'

/**
 * Cold start, as a user waits for it: from spawn to the first 200 on `GET /healthz`, polled from
 * this process every ~2 ms on a fixed free port (no "listening" line is awaited), for
 *  - the target's baseline: `test/bench/cold-hello.ts` compiled as pfin is (`--compile
 *    --bytecode`), a hello-world `Bun.serve` with no database;
 *  - pfin compiled: `dist/pfin serve` (built with `bun run build` when missing or older than src/),
 *    on a fresh, empty DATA_DIR and on an existing one (an owner made once, started again each
 *    round: what a service restart or a failover waits for);
 *  - pfin from source: `bun src/main.ts serve`, fresh DATA_DIR;
 *  - the bare baseline from source: `test/bench/cold-baseline.ts`, a `Bun.serve` that opens one
 *    SQLite file;
 *  - the floor of pfin's stack: `test/bench/cold-floor.ts` compiled as pfin is, once serving with
 *    Elysia alone and once (FLOOR=stack) also loading drizzle, TypeBox and the swagger plugin;
 *    and the same two run from source, as `bun src/main.ts` runs pfin.
 * They are started in interleaved rounds (the order rotating), COLD_ROUNDS of them (default 9,
 * at least BENCH_ROUNDS), after one unmeasured start each; the figures are medians, and each
 * ratio is the median of the rounds' paired ratios to the hello binary. Target: `dist/pfin` on an
 * existing DATA_DIR ≤ 2× the hello binary.
 */

const TARGET_RATIO = 2
const POLL_MS = 2
const ROUNDS = Math.max(settings.rounds, Number(process.env.COLD_ROUNDS ?? 9))
const BINARY = join(ROOT, 'dist', 'pfin')

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs)
  }
  return newest
}

async function ensureBinary(): Promise<void> {
  let built = 0
  try {
    built = statSync(BINARY).mtimeMs
  } catch {}
  const sources = Math.max(newestMtime(join(ROOT, 'src')), newestMtime(join(ROOT, 'drizzle')))
  if (built >= sources) return
  console.log(built ? 'dist/pfin is older than src/: bun run build' : 'no dist/pfin: bun run build')
  const proc = Bun.spawn(['bun', 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'inherit' })
  if ((await proc.exited) !== 0) throw new Error('bun run build failed')
}

/** A port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

interface Variant {
  label: string
  cmd: string[]
  env: Record<string, string>
  /** An existing DATA_DIR to start on each time (else a fresh, empty one per start). */
  dataDir?: string
}

/** Spawns `variant`, polls /healthz until a 200, stops it; returns the milliseconds to that 200. */
async function coldStart(variant: Variant, cleanup: Cleanup): Promise<number> {
  const dataDir = variant.dataDir ?? tempDir('pfin-cold-')
  const port = await freePort()
  const url = `http://127.0.0.1:${port}/healthz`
  const started = performance.now()
  const proc = Bun.spawn(variant.cmd, {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, ...variant.env },
    stdout: 'ignore',
    stderr: 'pipe',
  })
  try {
    for (;;) {
      if (performance.now() - started > 30_000) throw new Error(`${variant.label} gave no 200 on /healthz within 30 s`)
      if (proc.exitCode !== null) throw new Error(`${variant.label} exited ${proc.exitCode}: ${await new Response(proc.stderr).text()}`)
      try {
        const response = await fetch(url)
        await response.arrayBuffer()
        if (response.status === 200) return performance.now() - started
      } catch {}
      await Bun.sleep(POLL_MS)
    }
  } finally {
    proc.kill('SIGTERM')
    const code = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => null)])
    if (code === null) proc.kill('SIGKILL')
    await proc.exited
    if (!variant.dataDir) cleanup.dir(dataDir)
  }
}

/** A DATA_DIR with one owner in it, as a running install has: `dist/pfin owner create`. */
async function existingDataDir(cleanup: Cleanup): Promise<string> {
  const dir = cleanup.dir(tempDir('pfin-cold-existing-'))
  const proc = Bun.spawn([BINARY, 'owner', 'create', '--name', 'Cold', '--with-key', '--json'], {
    env: { ...process.env, DATA_DIR: dir },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  if ((await proc.exited) !== 0) throw new Error('dist/pfin owner create failed')
  return dir
}

const HELLO = 'hello (compiled Bun.serve)'
const EXISTING = 'pfin (dist/pfin, existing DATA_DIR)'

export const benchmark: Benchmark = {
  name: 'cold',
  description: `spawn → first 200 on /healthz: dist/pfin (fresh and existing DATA_DIR) and bun src/main.ts vs a compiled hello-world Bun.serve; target dist/pfin ≤ ${TARGET_RATIO}× it`,
  async run() {
    const cleanup = new Cleanup()
    try {
      await ensureBinary()
      const floor = await buildFloor(cleanup)
      const hello = await compileBench(cleanup, 'cold-hello.ts')
      const existing = await existingDataDir(cleanup)
      const env = { LOG_FORMAT: process.env.BENCH_LOG_FORMAT ?? 'off', ...UNLIMITED }
      const variants: Variant[] = [
        { label: HELLO, cmd: [hello], env: {} },
        { label: EXISTING, cmd: [BINARY, 'serve'], env, dataDir: existing },
        { label: 'pfin (dist/pfin, fresh DATA_DIR)', cmd: [BINARY, 'serve'], env },
        { label: 'pfin (bun src/main.ts, fresh)', cmd: ['bun', join(ROOT, 'src', 'main.ts'), 'serve'], env },
        { label: 'baseline (bun, Bun.serve + bun:sqlite)', cmd: ['bun', join(import.meta.dir, 'cold-baseline.ts')], env: {} },
        { label: 'floor: Elysia (compiled)', cmd: [floor], env: {} },
        { label: 'floor: the stack (compiled)', cmd: [floor], env: { FLOOR: 'stack' } },
        { label: 'floor: Elysia (source)', cmd: ['bun', join(import.meta.dir, 'cold-floor.ts')], env: {} },
        { label: 'floor: the stack (source)', cmd: ['bun', join(import.meta.dir, 'cold-floor.ts')], env: { FLOOR: 'stack' } },
      ]
      // One unmeasured start each: the page cache holds the files afterwards, as it would on a restart.
      for (const variant of variants) await coldStart(variant, cleanup)
      const times = new Map<string, number[]>(variants.map((v) => [v.label, []]))
      for (let round = 0; round < ROUNDS; round++) {
        const order = variants.map((_, i) => variants[(i + round) % variants.length] as Variant)
        for (const variant of order) times.get(variant.label)?.push(await coldStart(variant, cleanup))
        console.log(`round ${String(round + 1).padStart(2)}: ${variants.map((v) => `${v.label} ${fmt.ms(times.get(v.label)?.[round] as number)}`).join(', ')}`)
      }
      const base = times.get(HELLO) as number[]
      const measured = variants.slice(1).map((variant) => {
        const ours = times.get(variant.label) as number[]
        const ratios = ours.map((ms, i) => ms / (base[i] as number))
        return { label: variant.label, ms: median(ours), min: Math.min(...ours), max: Math.max(...ours), ratio: median(ratios) }
      })
      console.log(`spawn → first 200, polled every ${POLL_MS} ms on a fixed free port, ${ROUNDS} interleaved rounds; medians:`)
      console.log(`  ${HELLO.padEnd(40)} ${fmt.ms(median(base))}  (min ${fmt.ms(Math.min(...base))}, max ${fmt.ms(Math.max(...base))})`)
      for (const r of measured)
        console.log(
          `  ${r.label.padEnd(40)} ${fmt.ms(r.ms)}  (min ${fmt.ms(r.min)}, max ${fmt.ms(r.max)})  ${fmt.ratio(r.ratio)}× the hello binary (median of paired ratios)`,
        )
      const target = measured.find((r) => r.label === EXISTING) as (typeof measured)[number]
      const pfin = measured.filter((r) => r.label.startsWith('pfin'))
      return {
        targetMet: target.ratio <= TARGET_RATIO,
        summary:
          `hello binary ${fmt.ms(median(base))}; ${pfin.map((r) => `${r.label} ${fmt.ms(r.ms)} (${fmt.ratio(r.ratio)}×)`).join('; ')}; ` +
          `target dist/pfin on an existing DATA_DIR ≤ ${TARGET_RATIO}× the hello binary`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
