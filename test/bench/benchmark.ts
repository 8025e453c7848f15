/**
 * A benchmark the runner (`bun run bench [name…]`) can find: a `test/bench/<name>.bench.ts`
 * file exporting `benchmark`. `run` starts what it needs, prints its own figures and
 * stops everything it started (also when it throws).
 */
export interface Benchmark {
  /** What `bun run bench <name>` selects; short and lower case. */
  name: string
  description: string
  run(): Promise<BenchOutcome>
}

export interface BenchOutcome {
  /** Whether the benchmark's stated target was met (undefined: it has none). */
  targetMet?: boolean
  /** One-line summary for the runner's closing table. */
  summary: string
}
