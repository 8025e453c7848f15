import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { postOnce } from './keyed-load.ts'
import { Cleanup, load, MAIN, makeOwnerAndKey, spawnServer, settings, tempDir, UNLIMITED } from './support.ts'

/**
 * A CPU profile of one request path under load, for finding where a request's time goes before
 * changing anything (CONTRACT-free tooling; not a benchmark, prints no ratio):
 *
 *   bun test/bench/profile.ts list     # GET /v1/transactions?limit=50 over 10,000 rows
 *   bun test/bench/profile.ts me       # GET /v1/me
 *
 * pfin runs with Bun's `--cpu-prof-md`; the markdown profile is written to PROFILE_DIR
 * (default a temp folder, printed) when the server stops.
 */

const target = process.argv[2] ?? 'list'
const cleanup = new Cleanup()
try {
  const dataDir = cleanup.dir(tempDir())
  const { key } = await makeOwnerAndKey(dataDir)
  const profileDir = process.env.PROFILE_DIR ?? tempDir('pfin-profile-')
  const env = { DATA_DIR: dataDir, LOG_FORMAT: 'off', ...UNLIMITED }
  const pfin = await spawnServer(['bun', '--cpu-prof-md', `--cpu-prof-dir=${profileDir}`, MAIN, 'serve'], env, 'pfin')
  if (target === 'list') {
    const account = await postOnce(pfin.url, key, '/v1/accounts', { name: 'Bench', type: 'bank', balance: 0, currency: 'EUR' })
    const tag = await postOnce(pfin.url, key, '/v1/tags', { name: 'trip' })
    for (let chunk = 0; chunk < 20; chunk++) {
      const items = Array.from({ length: 500 }, (_, i) => {
        const n = chunk * 500 + i
        const split = n % 20 === 0
        return {
          externalId: `p-${n}`,
          accountId: account.id,
          amount: JSON.rawJSON('12.30'),
          date: `2026-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')}`,
          payeeName: `Merchant ${n % 40}`,
          note: `card payment ${n}`,
          ...(split
            ? {
                splits: [
                  { amount: JSON.rawJSON('10.00'), categoryId: 'cat_sys_groceries' },
                  { amount: JSON.rawJSON('2.30'), categoryId: 'cat_sys_fuel' },
                ],
              }
            : { categoryId: 'cat_sys_groceries' }),
          ...(n % 10 === 0 ? { tagIds: [tag.id] } : {}),
        }
      })
      await postOnce(pfin.url, key, '/v1/transactions/batch', { items })
    }
  }
  const path = target === 'list' ? '/v1/transactions?limit=50' : '/v1/me'
  const result = await load({
    url: `${pfin.url}${path}`,
    headers: { authorization: `Bearer ${key}` },
    connections: 16,
    duration: settings.duration,
    pid: pfin.proc.pid,
  })
  console.log(`${path}: ${Math.round(result.rps)} req/s, server CPU ${result.serverCpuUs?.total.toFixed(1)} µs/req`)
  await pfin.stop()
  for (const file of readdirSync(profileDir)) console.log(`profile: ${join(profileDir, file)}`)
} finally {
  await cleanup.run()
}
