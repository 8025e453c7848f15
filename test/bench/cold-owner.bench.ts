import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import type { Benchmark } from './benchmark.ts'
import { postOnce } from './keyed-load.ts'
import { type Owner, seed } from './list.bench.ts'
import { makeOwners } from './owners.bench.ts'
import { Cleanup, fmt, makeOwnerAndKey, median, type Service, startPfin, tempDir } from './support.ts'

/**
 * An evicted big owner: `GET /v1/transactions?limit=50` of an owner with 100,000 transactions
 * (seeded as `bun run bench list` seeds, ~70 MB) on pfin with TENANT_CACHE_SIZE=4. Warm requests
 * against the first request after the owner was evicted (four other owners touched; each round's
 * first request is paired with the warm requests that follow it), and against the first request
 * after a restart: a clean one (the last server's list of checked files is taken over) and one
 * after SIGKILL or the first start, where `PRAGMA quick_check` reads the whole file. Also timed
 * alone: `quick_check` of the file in this process. The file stays in the OS page cache
 * throughout: a restart from a cold disk also reads it from disk.
 * Target: the first request after an eviction ≤ 3× a warm one.
 */

const TARGET = 3
const CACHE = 4
const SIZE = Number(process.env.COLD_OWNER_SIZE ?? 100_000)
const ROUNDS = 15
const RESTARTS = 3

async function timed(url: string, key: string): Promise<number> {
  const at = performance.now()
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  const text = await response.text()
  const ms = performance.now() - at
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text}`)
  return ms
}

export const benchmark: Benchmark = {
  name: 'cold-owner',
  description: `the first GET /v1/transactions?limit=50 of a ${SIZE.toLocaleString('en-US')}-transaction owner after eviction (TENANT_CACHE_SIZE=${CACHE}) and after a restart, vs warm; target ≤ ${TARGET}× warm`,
  async run() {
    const cleanup = new Cleanup()
    let pfin: Service | undefined
    cleanup.add(() => pfin?.stop())
    try {
      const dataDir = cleanup.dir(tempDir())
      const made = await makeOwnerAndKey(dataDir, 'Big')
      const big: Owner = { label: 'big', size: SIZE, ownerId: made.ownerId, key: made.key, accounts: ['', ''], payees: [], tags: [] }
      const others = (await makeOwners(dataDir, CACHE)).owners

      // Accounts, payees and tags through the API, then the transactions straight into the file (as list.bench.ts does).
      pfin = await startPfin(dataDir)
      const a = await postOnce(pfin.url, big.key, '/v1/accounts', { name: 'Checking', type: 'bank', balance: 5000, currency: 'EUR' })
      const b = await postOnce(pfin.url, big.key, '/v1/accounts', { name: 'Card', type: 'card', balance: 0, currency: 'EUR' })
      big.accounts = [a.id, b.id]
      for (let i = 0; i < 20; i++) big.payees.push((await postOnce(pfin.url, big.key, '/v1/payees', { name: `Shop ${i + 1}` })).id)
      for (const name of ['Lisbon 2026', 'Work', 'Claims']) big.tags.push((await postOnce(pfin.url, big.key, '/v1/tags', { name })).id)
      await pfin.stop()
      const file = join(dataDir, 'tenants', `${big.ownerId}.db`)
      const seeded = seed(file, big, SIZE)
      console.log(`seeded ${SIZE.toLocaleString('en-US')} transactions in ${seeded.seconds.toFixed(1)} s (file ${(seeded.bytes / 2 ** 20).toFixed(0)} MiB)`)

      const start = async () => {
        pfin = await startPfin(dataDir, { TENANT_CACHE_SIZE: String(CACHE) })
        // Keys verified first (GET /v1/me reads only control.db): argon2 stays out of the timings.
        for (const key of [big.key, ...others.map((o) => o.key)]) await timed(`${pfin.url}/v1/me`, key)
        return `${pfin.url}/v1/transactions?limit=50`
      }
      // The first start has no list of checked files (the seeded file was never checked): like a start after a kill.
      const afterKill: number[] = []
      const afterCleanRestart: number[] = []
      let url = await start()
      afterKill.push(await timed(url, big.key))
      const warm: number[] = []
      for (let i = 0; i < 30; i++) warm.push(await timed(url, big.key))

      // Each round: evict (touch CACHE other owners), the first request, then five more; the
      // round's warm figure is the median of the last three (the first ones still fill SQLite's
      // page cache of the reopened connection).
      const evicted: number[] = []
      const warmAfter: number[] = []
      for (let round = 0; round < ROUNDS; round++) {
        for (const other of others) await timed(url, other.key)
        evicted.push(await timed(url, big.key))
        const after: number[] = []
        for (let i = 0; i < 5; i++) after.push(await timed(url, big.key))
        warmAfter.push(median(after.slice(2)))
      }
      for (let restart = 0; restart < RESTARTS; restart++) {
        await pfin.stop()
        url = await start()
        afterCleanRestart.push(await timed(url, big.key))
      }
      for (let restart = 1; restart < RESTARTS; restart++) {
        pfin.proc.kill('SIGKILL')
        await pfin.proc.exited
        url = await start()
        afterKill.push(await timed(url, big.key))
      }
      await pfin.stop()
      pfin = undefined

      const checks: number[] = []
      for (let i = 0; i < 3; i++) {
        const db = new Database(file, { readonly: true })
        const at = performance.now()
        const result = db.query<{ quick_check: string }, []>('PRAGMA quick_check').get()?.quick_check
        checks.push(performance.now() - at)
        db.close()
        if (result !== 'ok') throw new Error(`quick_check: ${result}`)
      }

      const ratio = median(evicted.map((ms, i) => ms / (warmAfter[i] as number)))
      const list = (values: number[]) => values.map((v) => v.toFixed(1)).join(', ')
      console.log(
        `owner with ${SIZE.toLocaleString('en-US')} transactions (${(seeded.bytes / 2 ** 20).toFixed(0)} MiB), GET /v1/transactions?limit=50, one at a time:`,
      )
      console.log(`  warm (30 in a row):                     median ${fmt.ms(median(warm))}`)
      console.log(`  first after eviction (${ROUNDS} rounds):        median ${fmt.ms(median(evicted))} (${list(evicted)})`)
      console.log(`  warm, in each of those rounds:          median ${fmt.ms(median(warmAfter))}`)
      console.log(`  first after eviction ÷ warm:            ${fmt.ratio(ratio)} (median of paired ratios; target ≤ ${TARGET})`)
      console.log(
        `  first after a clean restart (${RESTARTS}):       median ${fmt.ms(median(afterCleanRestart))} (${list(afterCleanRestart)}), ${fmt.ratio(median(afterCleanRestart) / median(warm))}× warm`,
      )
      console.log(
        `  first after a kill or a first start (${RESTARTS}): median ${fmt.ms(median(afterKill))} (${list(afterKill)}), ${fmt.ratio(median(afterKill) / median(warm))}× warm (the file is checked)`,
      )
      console.log(`  PRAGMA quick_check of the file alone:   median ${fmt.ms(median(checks))} (${list(checks)}; the file in the page cache)`)
      return {
        targetMet: ratio <= TARGET,
        summary: `${SIZE.toLocaleString('en-US')}-transaction owner: warm ${fmt.ms(median(warm))}, after eviction ${fmt.ms(median(evicted))} (${fmt.ratio(ratio)}×), after a clean restart ${fmt.ms(median(afterCleanRestart))}, after a kill ${fmt.ms(median(afterKill))} (quick_check ${fmt.ms(median(checks))})`,
      }
    } finally {
      await cleanup.run()
    }
  },
}
