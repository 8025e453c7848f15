import type { Benchmark } from './benchmark.ts'
import { join } from 'node:path'
import { Cleanup, fmt, interleavedRounds, spawnServer, startBaseline, startPfinWithOwner } from './support.ts'

/**
 * Authenticated `GET /v1/me` with a warm key cache against a bare `Bun.serve` that returns
 * the same bytes. Target: pfin ≥ 0.70 × the baseline's requests per second. The same rounds then measure the floor of pfin's stack (me-floor.ts: Elysia
 * sending the same bytes with the headers every pfin response carries) against the same
 * baseline, so the run shows how much of the gap is the stack's and how much is pfin's.
 */
const TARGET = 0.7

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

      const floor = await spawnServer(['bun', join(import.meta.dir, 'me-floor.ts')], { BODY: body }, 'floor')
      cleanup.add(() => floor.stop())

      const pfinLoad = { url: `${pfin.url}/v1/me`, headers, pid: pfin.proc.pid }
      const baseLoad = { url: `${baseline.url}/v1/me`, headers, pid: baseline.proc.pid }
      const floorLoad = { url: `${floor.url}/v1/me`, headers, pid: floor.proc.pid }
      const { rounds, median: middle } = await interleavedRounds({ base: 'bare Bun.serve baseline', ours: 'pfin GET /v1/me' }, baseLoad, pfinLoad)
      const { base, ours, ratio } = middle
      const floorRounds = await interleavedRounds({ base: 'bare Bun.serve baseline', ours: 'floor: Elysia + headers' }, baseLoad, floorLoad)
      const floorRatio = floorRounds.median.ratio

      console.log(`load: ${ours.tool}, ${body.length}-byte body, ${rounds.length} interleaved round(s)`)
      console.log(
        `ratio pfin/baseline (median of rounds): ${fmt.ratio(ratio)} (target ≥ ${TARGET}); rounds: ${rounds.map((r) => fmt.ratio(r.ratio)).join(', ')}`,
      )
      console.log(
        `floor of the stack (Elysia, same bytes and headers, no key check): ratio ${fmt.ratio(floorRatio)}; rounds: ${floorRounds.rounds.map((r) => fmt.ratio(r.ratio)).join(', ')}`,
      )
      let cpuNote = ''
      const floorCpu = floorRounds.median.ours.serverCpuUs?.total
      if (ours.serverCpuUs && base.serverCpuUs) {
        // On a busy machine requests/s wander; CPU time per request is the steadier comparison.
        const cpuRatio = base.serverCpuUs.total / ours.serverCpuUs.total
        console.log(
          `server CPU per request (median round): baseline ${base.serverCpuUs.total.toFixed(1)} µs, pfin ${ours.serverCpuUs.total.toFixed(1)} µs (baseline/pfin ${fmt.ratio(cpuRatio)})` +
            (floorCpu ? `, floor ${floorCpu.toFixed(1)} µs` : ''),
        )
        cpuNote = `; CPU/request ratio ${fmt.ratio(cpuRatio)}`
      }
      return {
        targetMet: ratio >= TARGET,
        summary: `pfin ${fmt.rps(ours.rps)}, baseline ${fmt.rps(base.rps)}, ratio ${fmt.ratio(ratio)}${cpuNote}; the stack's floor ${fmt.ratio(floorRatio)}`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
