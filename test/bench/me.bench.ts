import type { Benchmark } from './benchmark.ts'
import { Cleanup, describe, fmt, load, makeOwnerAndKey, startBaseline, startPfin, tempDir, warm } from './support.ts'

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
      const dataDir = cleanup.dir(tempDir())
      const { key } = await makeOwnerAndKey(dataDir)
      const pfin = await startPfin(dataDir)
      cleanup.add(() => pfin.stop())
      const headers = { authorization: `Bearer ${key}` }

      // One request pays for argon2 and fills the key cache; its body is what the baseline serves.
      const first = await fetch(`${pfin.url}/v1/me`, { headers })
      const body = await first.text()
      if (first.status !== 200) throw new Error(`GET /v1/me answered ${first.status}: ${body}`)
      const baseline = await startBaseline(body)
      cleanup.add(() => baseline.stop())
      const check = await fetch(`${baseline.url}/v1/me`)
      if ((await check.text()) !== body || check.headers.get('content-type') !== 'application/json') throw new Error('the baseline does not answer the same body')

      const pfinLoad = { url: `${pfin.url}/v1/me`, headers, pid: pfin.proc.pid }
      const baseLoad = { url: `${baseline.url}/v1/me`, headers, pid: baseline.proc.pid }
      await warm(baseLoad)
      await warm(pfinLoad)
      const base = await load(baseLoad)
      const ours = await load(pfinLoad)
      if (ours.non2xx || ours.errors || base.non2xx || base.errors) throw new Error(`responses other than 200 during the run:\n${describe('baseline', base)}\n${describe('pfin', ours)}`)

      const ratio = ours.rps / base.rps
      console.log(`load: ${ours.tool}, ${body.length}-byte body`)
      console.log(describe('bare Bun.serve baseline', base))
      console.log(describe('pfin GET /v1/me', ours))
      console.log(`ratio pfin/baseline: ${fmt.ratio(ratio)} (target ≥ ${TARGET})`)
      let cpuNote = ''
      if (ours.serverCpuUs && base.serverCpuUs) {
        // On a busy machine requests/s wander; CPU time per request is the steadier comparison.
        const cpuRatio = base.serverCpuUs.total / ours.serverCpuUs.total
        console.log(`server CPU per request: baseline ${base.serverCpuUs.total.toFixed(1)} µs, pfin ${ours.serverCpuUs.total.toFixed(1)} µs (baseline/pfin ${fmt.ratio(cpuRatio)})`)
        cpuNote = `; CPU/request ratio ${fmt.ratio(cpuRatio)}`
      }
      return { targetMet: ratio >= TARGET, summary: `pfin ${fmt.rps(ours.rps)}, baseline ${fmt.rps(base.rps)}, ratio ${fmt.ratio(ratio)}${cpuNote}` }
    } finally {
      await cleanup.run()
    }
  },
}
