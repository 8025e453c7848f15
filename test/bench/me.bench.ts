import type { Benchmark } from './benchmark.ts'
import { join } from 'node:path'
import { Cleanup, fmt, spawnServer, startBaseline, startPfinWithOwner, threeWayRounds } from './support.ts'

/**
 * Authenticated `GET /v1/me` with a warm key cache, measured in the same rounds against two
 * references: a bare `Bun.serve` returning the same bytes, and the floor of pfin's stack
 * (me-floor.ts: Elysia sending the same bytes with the headers every pfin answer carries, and
 * checking nothing). Targets: pfin ≥ 0.70 × the bare server (the spec's), and pfin ≥ 0.95 × the
 * floor (issue 29: the stack's cost is the owner's choice, everything above it is pfin's).
 * Requests per second wander on a shared machine; server CPU per request is printed beside them.
 */
const BARE_TARGET = 0.7
const FLOOR_TARGET = 0.95

export const benchmark: Benchmark = {
  name: 'me',
  description: `GET /v1/me (warm key cache) vs a bare Bun.serve and vs Elysia's floor, same bytes; targets ≥ ${BARE_TARGET} of bare, ≥ ${FLOOR_TARGET} of the floor`,
  async run() {
    const cleanup = new Cleanup()
    try {
      const { pfin, key } = await startPfinWithOwner(cleanup)
      const headers = { authorization: `Bearer ${key}` }

      // One request pays for argon2 and fills the key cache; its body is what the others serve.
      const first = await fetch(`${pfin.url}/v1/me`, { headers })
      const body = await first.text()
      if (first.status !== 200) throw new Error(`GET /v1/me answered ${first.status}: ${body}`)
      const baseline = await startBaseline(body)
      cleanup.add(() => baseline.stop())
      const floor = await spawnServer(['bun', join(import.meta.dir, 'me-floor.ts')], { BODY: body }, 'floor')
      cleanup.add(() => floor.stop())
      for (const other of [baseline, floor]) {
        const check = await fetch(`${other.url}/v1/me`, { headers })
        if ((await check.text()) !== body || check.headers.get('content-type') !== 'application/json')
          throw new Error(`${other.url} does not answer the same body`)
      }

      const figures = await threeWayRounds({
        bare: { url: `${baseline.url}/v1/me`, headers, pid: baseline.proc.pid },
        floor: { url: `${floor.url}/v1/me`, headers, pid: floor.proc.pid },
        pfin: { url: `${pfin.url}/v1/me`, headers, pid: pfin.proc.pid },
      })
      return report(figures, body.length)
    } finally {
      await cleanup.run()
    }
  },
}

/** Prints and summarizes a three-way run against both targets (shared with the list benchmark's throughput). */
export function report(figures: Awaited<ReturnType<typeof threeWayRounds>>, bytes: number, bareTarget = BARE_TARGET) {
  const { rps, cpu, rounds } = figures
  const middle = rounds.map((r) => r.pfin.rps).sort((a, b) => a - b)[Math.floor(rounds.length / 2)] as number
  console.log(`${bytes}-byte body, ${rounds.length} round(s), each ratio the median of the rounds'`)
  console.log(`requests/s: pfin/bare ${fmt.ratio(rps.pfinToBare)}, floor/bare ${fmt.ratio(rps.floorToBare)}, pfin/floor ${fmt.ratio(rps.pfinToFloor)}`)
  if (cpu) {
    const perRequest = (pick: (r: (typeof rounds)[number]) => number | undefined) =>
      rounds
        .map(pick)
        .map((us) => us?.toFixed(1))
        .join('/')
    console.log(
      `server CPU per request: pfin/bare ${fmt.ratio(cpu.pfinToBare)}, floor/bare ${fmt.ratio(cpu.floorToBare)}, pfin/floor ${fmt.ratio(cpu.pfinToFloor)} ` +
        `(µs by round: bare ${perRequest((r) => r.bare.serverCpuUs?.total)}, floor ${perRequest((r) => r.floor.serverCpuUs?.total)}, pfin ${perRequest((r) => r.pfin.serverCpuUs?.total)})`,
    )
  }
  const ofFloor = cpu?.pfinToFloor ?? rps.pfinToFloor
  return {
    targetMet: rps.pfinToBare >= bareTarget && ofFloor >= FLOOR_TARGET,
    summary:
      `pfin ${fmt.rps(middle)}; of bare ${fmt.ratio(rps.pfinToBare)} (target ≥ ${bareTarget}); of the floor ${fmt.ratio(rps.pfinToFloor)}` +
      (cpu ? `, by CPU ${fmt.ratio(cpu.pfinToFloor)}` : '') +
      ` (target ≥ ${FLOOR_TARGET}); the floor is ${fmt.ratio(rps.floorToBare)} of bare`,
  }
}
