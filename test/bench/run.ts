import { basename, join } from 'node:path'
import type { Benchmark, BenchOutcome } from './benchmark.ts'
import { settings } from './support.ts'

/**
 * `bun run bench` runs every benchmark in test/bench/*.bench.ts; `bun run bench me` runs
 * the named ones; `bun run bench --list` lists them. Settings come from the environment:
 * BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_TOOL (see support.ts).
 */

async function discover(): Promise<Benchmark[]> {
  const found: Benchmark[] = []
  for (const file of [...new Bun.Glob('*.bench.ts').scanSync(import.meta.dir)].sort()) {
    const module = (await import(join(import.meta.dir, file))) as { benchmark?: Benchmark }
    if (!module.benchmark) throw new Error(`${file} does not export a "benchmark"`)
    if (module.benchmark.name !== basename(file, '.bench.ts')) throw new Error(`${file} exports a benchmark named "${module.benchmark.name}"`)
    found.push(module.benchmark)
  }
  return found
}

const benchmarks = await discover()
const args = process.argv.slice(2)

if (args.includes('--list') || args.includes('-l') || args.includes('--help')) {
  console.log('Benchmarks (bun run bench [name…]):')
  for (const b of benchmarks) console.log(`  ${b.name.padEnd(16)} ${b.description}`)
  process.exit(0)
}

const unknown = args.filter((name) => !benchmarks.some((b) => b.name === name))
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.name).join(', ')}`)
  process.exit(2)
}
const selected = args.length ? benchmarks.filter((b) => args.includes(b.name)) : benchmarks

console.log(
  `pfin benchmarks — bun ${Bun.version}, ${navigator.hardwareConcurrency} cpus, load by ${settings.tool}, ${settings.connections} connections, ${settings.warmup}s warm-up + ${settings.duration}s per run\n`,
)
const outcomes: [string, BenchOutcome | Error][] = []
for (const benchmark of selected) {
  console.log(`== ${benchmark.name}: ${benchmark.description}`)
  try {
    outcomes.push([benchmark.name, await benchmark.run()])
  } catch (error) {
    console.error(`${benchmark.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    outcomes.push([benchmark.name, error instanceof Error ? error : new Error(String(error))])
  }
  console.log('')
}

console.log('== summary')
for (const [name, outcome] of outcomes) {
  if (outcome instanceof Error) console.log(`${name.padEnd(16)} FAILED: ${outcome.message}`)
  else console.log(`${name.padEnd(16)} ${outcome.summary}${outcome.targetMet === undefined ? '' : outcome.targetMet ? '  (target met)' : '  (TARGET MISSED)'}`)
}
process.exit(outcomes.some(([, o]) => o instanceof Error) ? 1 : 0)
