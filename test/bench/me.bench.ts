import type { Benchmark } from './benchmark.ts'
import { Cleanup, describe, fmt, type LoadResult, load, settings, startBaseline, startPfinWithOwner, warm } from './support.ts'

/**
 * Authenticated `GET /v1/me` with a warm key cache against a bare `Bun.serve` that returns
 * the same bytes (issue 2 §10). Target: pfin ≥ 0.50 × the baseline's requests per second.
 */
const TARGET = 0.5

export const benchmark: Benchmark = {
  name: 'me',
  description: `GET /v1/me (warm key cache) vs a bare Bun.serve returning the same JSON; target ratio ≥ ${TARGET}`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const headers = { authorization: `Bearer ${key}` }

      // One request pays for argon2 and fills the key cache; its body is what the baseline serves.
      const first = await fetch(`${pfin.url}/v1/me`, { headers })
      const body = await first.text()
      if (first.status !== 200) throw new Error(`GET /v1/me answered ${first.status}: ${body}`)
      const baseline = await startBaseline(body)
      cleanup.add(() => baseline.stop())
      const check = await fetch(`${baseline.url}/v1/me`)
      if ((await check.text()) !== body || check.headers.get('content-type') !== 'application/json')
        throw new Error('the baseline does not answer the same body')

      const pfinLoad = { url: `${pfin.url}/v1/me`, headers, pid: pfin.proc.pid }
      const baseLoad = { url: `${baseline.url}/v1/me`, headers, pid: baseline.proc.pid }
      await warm(baseLoad)
      await warm(pfinLoad)
      // Interleaved rounds, the order alternating, so drift on a shared machine hits both
      // alike; the figure is the median of the rounds' ratios.
      const rounds: { base: LoadResult; ours: LoadResult; ratio: number }[] = []
      for (let round = 0; round < settings.rounds; round++) {
        let base: LoadResult
        let ours: LoadResult
        if (round % 2 === 0) {
          base = await load(baseLoad)
          ours = await load(pfinLoad)
        } else {
          ours = await load(pfinLoad)
          base = await load(baseLoad)
        }
        if (ours.non2xx || ours.errors || base.non2xx || base.errors)
          throw new Error(`responses other than 200 during the run:\n${describe('baseline', base)}\n${describe('pfin', ours)}`)
        rounds.push({ base, ours, ratio: ours.rps / base.rps })
        console.log(`round ${round + 1}: ${describe('bare Bun.serve baseline', base).trimEnd()}`)
        console.log(`round ${round + 1}: ${describe('pfin GET /v1/me', ours).trimEnd()}   ratio ${fmt.ratio(ours.rps / base.rps)}`)
      }
      const middle = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)] as (typeof rounds)[number]
      const { base, ours, ratio } = middle

      console.log(`load: ${ours.tool}, ${body.length}-byte body, ${rounds.length} interleaved round(s)`)
      console.log(
        `ratio pfin/baseline (median of rounds): ${fmt.ratio(ratio)} (target ≥ ${TARGET}); rounds: ${rounds.map((r) => fmt.ratio(r.ratio)).join(', ')}`,
      )
      let cpuNote = ''
      if (ours.serverCpuUs && base.serverCpuUs) {
        // On a busy machine requests/s wander; CPU time per request is the steadier comparison.
        const cpuRatio = base.serverCpuUs.total / ours.serverCpuUs.total
        console.log(
          `server CPU per request (median round): baseline ${base.serverCpuUs.total.toFixed(1)} µs, pfin ${ours.serverCpuUs.total.toFixed(1)} µs (baseline/pfin ${fmt.ratio(cpuRatio)})`,
        )
        cpuNote = `; CPU/request ratio ${fmt.ratio(cpuRatio)}`
      }
      return { targetMet: ratio >= TARGET, summary: `pfin ${fmt.rps(ours.rps)}, baseline ${fmt.rps(base.rps)}, ratio ${fmt.ratio(ratio)}${cpuNote}` }
    } finally {
      await cleanup.run()
    }
  },
}
