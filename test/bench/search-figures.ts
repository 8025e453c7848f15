/**
 * The figures of docs/performance.md "Finding and summing" (CONTRACT §26), in process:
 *
 *   bun test/bench/search-figures.ts        (N=30 by default: requests per variant and size)
 *
 * Seeds a 10k and a 1M ledger as the `list` benchmark does (about 3 minutes on a 2-vCPU VM),
 * times the first search of each (which fills the search text of a file made before search),
 * then the p50 of N sequential requests for each list filter and report at both sizes, and the
 * CPU a transaction written with a note costs beside one without. Not a `*.bench.ts`: it prints
 * figures, it does not hold a target.
 */
import { join } from 'node:path'
import { seed, type Owner } from './list.bench.ts'
import { startTestServer } from '../support/harness.ts'

const server = await startTestServer({ env: { RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_PER_DAY: '100000000' } })
const owners: Owner[] = []
for (const size of [10_000, 1_000_000]) {
  const made = await server.owner({ name: `Bench ${size}` })
  const owner: Owner = { label: size >= 1e6 ? '1M' : '10k', size, ownerId: made.id, key: made.key, accounts: ['', ''], payees: [], tags: [] }
  const post = async (path: string, body: unknown) => (await server.request('POST', path, { key: made.key, body })).json.data.id
  owner.accounts = [
    await post('/v1/accounts', { name: 'Checking', type: 'bank', balance: 5000, currency: 'EUR' }),
    await post('/v1/accounts', { name: 'Card', type: 'card', balance: 0, currency: 'EUR' }),
  ]
  for (let i = 0; i < 20; i++) owner.payees.push(await post('/v1/payees', { name: `Shop ${i + 1}` }))
  for (const name of ['Lisbon 2026', 'Work', 'Claims']) owner.tags.push(await post('/v1/tags', { name }))
  server.platform.tenants.evict(made.id)
  const result = seed(join(server.dataDir, 'tenants', `${made.id}.db`), owner, size)
  console.log(`seeded ${size} in ${result.seconds.toFixed(1)} s, ${(result.bytes / 2 ** 20).toFixed(0)} MiB`)
  owners.push(owner)
}
// The first search fills the search text (a file made before search): timed.
for (const owner of owners) {
  const t0 = performance.now()
  const res = await server.request('GET', '/v1/transactions?q=zzzz&limit=1', { key: owner.key })
  const ms = performance.now() - t0
  const db = server.platform.tenants.get(owner.ownerId).sqlite
  const rows = Number((db.query('SELECT count(*) AS n FROM transaction_search').get() as { n: bigint }).n)
  const ftsBytes = Number((db.query("SELECT sum(pgsize) AS n FROM dbstat WHERE name LIKE 'transaction_search%'").get() as { n: bigint | null })?.n ?? 0)
  console.log(
    `${owner.label}: first search (fills ${rows} rows of search text) ${ms.toFixed(0)} ms, status ${res.status}, search tables ${(ftsBytes / 2 ** 20).toFixed(1)} MiB`,
  )
}
const month = new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 7)
const variants: [string, string][] = [
  ['newest 50', '/v1/transactions?limit=50'],
  ['categoryId=none', '/v1/transactions?limit=50&categoryId=none'],
  ['q few (index)', '/v1/transactions?limit=50&q=note%204242'],
  ['q many (walk)', '/v1/transactions?limit=50&q=note'],
  ['q payee name', '/v1/transactions?limit=50&q=shop%207'],
  ['q absent (walk to bound)', '/v1/transactions?limit=50&q=zz'],
  ['minAmount=150', '/v1/transactions?limit=50&minAmount=150'],
  ['minAmount none match', '/v1/transactions?limit=50&minAmount=1000000'],
  ['report category, 1 month', `/v1/reports/spending?groupBy=category&from=${month}-01&to=${month}-28`],
  ['report payee, 1 year', `/v1/reports/spending?groupBy=payee&from=${new Date().getUTCFullYear() - 1}-01-01&to=${new Date().getUTCFullYear() - 1}-12-31`],
]
const N = Number(process.env.N ?? 30)
for (const [name, path] of variants) {
  const p50s: number[] = []
  const info: string[] = []
  for (const owner of owners) {
    const times: number[] = []
    // biome-ignore lint/suspicious/noExplicitAny: response JSON
    let last: any
    for (let i = 0; i < N; i++) {
      const t0 = performance.now()
      const res = await server.request('GET', path, { key: owner.key })
      times.push(performance.now() - t0)
      last = res.json
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${res.text}`)
    }
    times.sort((a, b) => a - b)
    p50s.push(times[Math.floor(N / 2)] as number)
    info.push(
      `${owner.label} ${(times[Math.floor(N / 2)] as number).toFixed(2)} ms (${last.data.groups ? `${last.data.groups.length} groups` : `${last.data.length} items, hasMore ${last.hasMore}`})`,
    )
  }
  console.log(`${name.padEnd(26)} ${info.join('   ')}   ratio ${((p50s[1] as number) / (p50s[0] as number)).toFixed(2)}`)
}

// A transaction written with a note (a search text and its index entry) against one without, interleaved.
const writer = owners[0] as Owner
const cpu = { note: 0, none: 0 }
for (let round = 0; round < 20; round++) {
  for (const kind of ['note', 'none'] as const) {
    for (let i = 0; i < 20; i++) {
      const body = {
        accountId: writer.accounts[0],
        amount: 1,
        date: '2026-01-01',
        ...(kind === 'note' ? { note: `card payment ${round}-${i} at the corner shop` } : {}),
      }
      const before = process.cpuUsage()
      const res = await server.request('POST', '/v1/transactions', { key: writer.key, body })
      const used = process.cpuUsage(before)
      cpu[kind] += used.user + used.system
      if (res.status !== 201) throw new Error(res.text)
    }
  }
}
console.log(
  `CPU per POST /v1/transactions (client and server, one process): with a note ${(cpu.note / 400).toFixed(0)} µs, without ${(cpu.none / 400).toFixed(0)} µs`,
)
await server.stop()
