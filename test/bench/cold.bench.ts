import { readdirSync, statSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { Benchmark } from './benchmark.ts'
import { buildFloor, Cleanup, fmt, ROOT, settings, tempDir, UNLIMITED, median } from './support.ts'

/**
 * Cold start: from spawn to the first 200 on `GET /healthz`, polled from this
 * process every ~2 ms on a fixed free port, each start over a fresh, empty DATA_DIR, for
 *  - pfin from source: `bun src/main.ts serve`;
 *  - pfin compiled: `dist/pfin serve` (built with `bun run build` when missing or older than src/);
 *  - the bare baseline: `test/bench/cold-baseline.ts`, a `Bun.serve` that opens one SQLite file;
 *  - the floor of pfin's stack: `test/bench/cold-floor.ts` compiled as pfin is, once serving with
 *    Elysia alone and once (FLOOR=stack) also loading drizzle, TypeBox and the swagger plugin;
 *    and the same two run from source, as `bun src/main.ts` runs pfin.
 *    No server on pfin's stack starts faster than these: they show how much of a start is pfin's.
 * They are started in interleaved rounds (the order rotating), COLD_ROUNDS of them
 * (default 10, at least BENCH_ROUNDS); the figures are medians. Target: pfin ≤ 50 ms.
 */

const TARGET_MS = 50
const POLL_MS = 2
const ROUNDS = Math.max(settings.rounds, Number(process.env.COLD_ROUNDS ?? 10))
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
}

/** Spawns `variant`, polls /healthz until a 200, stops it; returns the milliseconds to that 200. */
async function coldStart(variant: Variant, cleanup: Cleanup): Promise<number> {
  const dataDir = tempDir('pfin-cold-')
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
    cleanup.dir(dataDir)
  }
}

export const benchmark: Benchmark = {
  name: 'cold',
  description: `cold start (spawn → first 200 on /healthz) of bun src/main.ts serve and dist/pfin vs a bare Bun.serve + bun:sqlite; target ≤ ${TARGET_MS} ms`,
  async run() {
    const cleanup = new Cleanup()
    try {
      await ensureBinary()
      const floor = await buildFloor(cleanup)
      const env = { LOG_FORMAT: process.env.BENCH_LOG_FORMAT ?? 'off', ...UNLIMITED }
      const variants: Variant[] = [
        { label: 'baseline', cmd: ['bun', join(import.meta.dir, 'cold-baseline.ts')], env: {} },
        { label: 'pfin (bun src/main.ts)', cmd: ['bun', join(ROOT, 'src', 'main.ts'), 'serve'], env },
        { label: 'pfin (dist/pfin)', cmd: [BINARY, 'serve'], env },
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
        const line: string[] = []
        for (const variant of order) {
          const ms = await coldStart(variant, cleanup)
          times.get(variant.label)?.push(ms)
        }
        for (const variant of variants) line.push(`${variant.label} ${fmt.ms(times.get(variant.label)?.[round] as number)}`)
        console.log(`round ${String(round + 1).padStart(2)}: ${line.join(', ')}`)
      }
      const base = times.get('baseline') as number[]
      const measured = variants.slice(1).map((variant) => {
        const ours = times.get(variant.label) as number[]
        const ratios = ours.map((ms, i) => ms / (base[i] as number))
        return { label: variant.label, ms: median(ours), min: Math.min(...ours), max: Math.max(...ours), ratio: median(ratios) }
      })
      console.log(`poll every ${POLL_MS} ms on a fixed free port, fresh DATA_DIR per start, ${ROUNDS} interleaved rounds; medians:`)
      console.log(`  baseline (Bun.serve + bun:sqlite)  ${fmt.ms(median(base))}  (min ${fmt.ms(Math.min(...base))}, max ${fmt.ms(Math.max(...base))})`)
      for (const r of measured)
        console.log(
          `  ${r.label.padEnd(33)} ${fmt.ms(r.ms)}  (min ${fmt.ms(r.min)}, max ${fmt.ms(r.max)})  ratio to baseline ${fmt.ratio(r.ratio)} (median of paired ratios)`,
        )
      const pfin = measured.filter((r) => r.label.startsWith('pfin'))
      const floors = measured.filter((r) => r.label.startsWith('floor'))
      return {
        targetMet: pfin.every((r) => r.ms <= TARGET_MS),
        summary:
          `baseline ${fmt.ms(median(base))}; ${pfin.map((r) => `${r.label} ${fmt.ms(r.ms)} (${fmt.ratio(r.ratio)}×)`).join('; ')}; target ≤ ${TARGET_MS} ms; ` +
          `the stack's floor: ${floors.map((r) => `${r.label.slice('floor: '.length)} ${fmt.ms(r.ms)}`).join(', ')}`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
