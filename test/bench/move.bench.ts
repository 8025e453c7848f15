import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { litestreamBinary } from '../../src/ops/litestream.ts'
import { haproxyPath, startFront } from '../support/cluster.ts'
import { adminJson, call, cleanup, type GroupServer, groupGone, processEnv, startGroupServer, tempDir, withDb } from '../support/processes.ts'
import type { Benchmark } from './benchmark.ts'
import { postOnce } from './keyed-load.ts'
import { type Owner, seed } from './list.bench.ts'
import { makeOwnerAndKey, startPfin } from './support.ts'

/**
 * `pfin cluster move` of a big owner (CONTRACT §31): two nodes behind HAProxy, each with its
 * Litestream replicating to a local folder; one owner with MOVE_ROWS (default 100,000)
 * transactions written into its file with bun:sqlite before any node opens it (list.bench's
 * seed: splits, tags, payees, ten years of dates). Under a light write load on that owner (two
 * clients, each writing one transaction after another with its own Idempotency-Key, retrying
 * 503/421/502 every 20 ms) and a reader asking for its newest transaction every 10 ms, the owner
 * is moved from node a to node b. Figures: the freeze as the reader saw it (its first 503 →
 * its first 200, which the new node answered), the tool's own phases (freeze = router + directory
 * + the node's acknowledgement, copy = VACUUM INTO, check = high-water marks of both files,
 * control rows, flip), and acknowledged writes missing afterwards (must be 0).
 * Target: frozen ≤ 2 s as the reader saw it, and 0 lost.
 * Skipped, with a message, where HAProxy or the Litestream binary is missing.
 */

const TARGET_MS = 2000
const ROWS = Math.max(1000, Number(process.env.MOVE_ROWS ?? 100_000))

function litestreamAvailable(): boolean {
  try {
    return existsSync(litestreamBinary())
  } catch {
    return false
  }
}

const loadAverage = async () => (await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')

export const benchmark: Benchmark = {
  name: 'move',
  description: `pfin cluster move of a ${ROWS.toLocaleString('en-US')}-transaction owner under light writes, 2 nodes + HAProxy + Litestream; target frozen ≤ ${TARGET_MS} ms, 0 acknowledged writes lost`,
  async run() {
    if (!haproxyPath || !litestreamAvailable()) {
      const missing = [haproxyPath ? null : 'haproxy (apt-get install haproxy)', litestreamAvailable() ? null : 'the Litestream binary (bun install)'].filter(
        Boolean,
      )
      console.log(`skipped: ${missing.join(' and ')} not found`)
      return { summary: `skipped: ${missing.join(' and ')} not found` }
    }
    let router: ReturnType<typeof Bun.spawn> | undefined
    const servers: GroupServer[] = []
    let running = true
    try {
      const root = tempDir('pfin-bench-move-')
      const directory = join(root, 'directory.json')
      const socket = join(root, 'haproxy.sock')
      const map = join(root, 'owners.map')
      writeFileSync(map, '')
      const nodes = ['a', 'b'] as const
      const dataDir = (node: string) => join(root, `data-${node}`)
      const replica = (node: string) => `file://${join(root, 'replicas', node)}`
      const envOf = (node: string) =>
        processEnv(dataDir(node), { CLUSTER_NODE: node, CLUSTER_DIRECTORY: directory, CLUSTER_REPLICA: replica(node), LOG_FORMAT: 'off' })
      for (const node of nodes) mkdirSync(dataDir(node), { recursive: true })

      // The owner, its accounts, payees and tags through the CLI and the API on a plain server; then the rows.
      const { ownerId, key } = await makeOwnerAndKey(dataDir('a'), 'Mover')
      const owner: Owner = { label: 'mover', size: ROWS, ownerId, key, accounts: ['', ''], payees: [], tags: [] }
      const setup = await startPfin(dataDir('a'))
      try {
        owner.accounts = [
          (await postOnce(setup.url, key, '/v1/accounts', { name: 'Checking', type: 'bank', balance: 5000, currency: 'EUR' })).id,
          (await postOnce(setup.url, key, '/v1/accounts', { name: 'Card', type: 'card', balance: 0, currency: 'EUR' })).id,
        ]
        for (let i = 0; i < 20; i++) owner.payees.push((await postOnce(setup.url, key, '/v1/payees', { name: `Shop ${i + 1}` })).id)
        for (const name of ['Lisbon 2026', 'Work', 'Claims']) owner.tags.push((await postOnce(setup.url, key, '/v1/tags', { name })).id)
      } finally {
        await setup.stop()
      }
      const seeded = seed(join(dataDir('a'), 'tenants', `${ownerId}.db`), owner, ROWS)
      console.log(
        `seeded ${ROWS.toLocaleString('en-US')} transactions in ${seeded.seconds.toFixed(1)} s (file ${`${(seeded.bytes / 2 ** 20).toFixed(0)} MiB`})`,
      )

      for (const node of nodes) servers.push(await startGroupServer(envOf(node)))
      const started = await startFront(root, {
        directory,
        socket,
        map,
        nodes: Object.fromEntries(nodes.map((n, i) => [n, { url: (servers[i] as GroupServer).url, dataDir: dataDir(n), replica: replica(n) }])),
      })
      router = started.router
      const { front, clusterFile } = started
      const clusterEnv = processEnv(root)
      await adminJson(clusterEnv, 'cluster', 'place', ownerId, '--on', 'a', '--cluster', clusterFile)

      // Warm: the owner's file open on node a, and Litestream's first snapshot of it taken.
      const first = await call(front, 'GET', '/v1/transactions?limit=1', { key })
      if (first.status !== 200) throw new Error(`the owner's first page answered ${first.status}: ${first.text}`)
      const snapshots = join(root, 'replicas', 'a', 'owners', ownerId, 'generations')
      for (let i = 0; i < 300 && !existsSync(snapshots); i++) await Bun.sleep(100)
      await Bun.sleep(1000)

      // Light writes: two clients, one transaction after another, each retried with its key until acknowledged.
      const acked: string[] = []
      const writers = [0, 1].map(async (client) => {
        for (let n = 0; running; n++) {
          const note = `w-${client}-${n}`
          const body = JSON.stringify({ accountId: owner.accounts[0], amount: 1.25, date: '2026-01-15', note })
          for (;;) {
            const res = await call(front, 'POST', '/v1/transactions', { key, body, idempotencyKey: note, timeoutMs: 10_000 })
            if (res.status === 201) {
              acked.push(note)
              break
            }
            if (![0, 502, 503, 421].includes(res.status)) throw new Error(`write ${note}: ${res.status} ${res.text}`)
            await Bun.sleep(20)
          }
        }
      })
      // The reader: its first 503 and the first 200 after it.
      let first503 = 0
      let back200 = 0
      const reader = (async () => {
        while (running) {
          const res = await call(front, 'GET', '/v1/transactions?limit=1', { key, timeoutMs: 10_000 })
          const now = performance.now()
          if (res.status === 503 && first503 === 0) first503 = now
          else if (res.status === 200 && first503 !== 0 && back200 === 0) back200 = now
          await Bun.sleep(10)
        }
      })()
      await Bun.sleep(1500)

      const loadBefore = await loadAverage()
      const moved = await adminJson(clusterEnv, 'cluster', 'move', ownerId, '--to', 'b', '--cluster', clusterFile)
      for (let i = 0; i < 500 && back200 === 0; i++) await Bun.sleep(10)
      await Bun.sleep(1500)
      running = false
      await Promise.all([...writers, reader])

      router.kill('SIGTERM')
      await router.exited
      for (const server of servers) {
        process.kill(-server.pgid, 'SIGTERM')
        if (!(await groupGone(server.pgid, 15_000))) throw new Error(`node ${server.url} did not stop`)
      }
      const present = withDb(
        join(dataDir('b'), 'tenants', `${ownerId}.db`),
        (db) =>
          new Set(
            db
              .query<{ note: string }, []>("SELECT note FROM transactions WHERE note LIKE 'w-%'")
              .all()
              .map((r) => r.note),
          ),
        { readonly: true },
      )
      const lost = acked.filter((note) => !present.has(note)).length
      const seen = back200 && first503 ? Math.round(back200 - first503) : Number.NaN
      const phases = moved.phases as Record<string, number>
      console.log(`load average before the move: ${loadBefore}; after: ${await loadAverage()}`)
      console.log(
        `move of ${ROWS.toLocaleString('en-US')} transactions (${`${(seeded.bytes / 2 ** 20).toFixed(0)} MiB`}): frozen ${seen} ms as the reader saw it (first 503 → first 200 from node b); the tool's ${moved.frozenMs} ms = freeze ${phases.freezeMs}, VACUUM INTO ${phases.copyMs}, high-water check ${phases.checkMs}, control rows ${phases.controlMs}, flip ${phases.flipMs} ms`,
      )
      console.log(`writes: ${acked.length} acknowledged, ${lost} lost; source copy: ${moved.source}`)
      return {
        targetMet: seen <= TARGET_MS && lost === 0,
        summary: `move of ${ROWS.toLocaleString('en-US')} transactions: frozen ${seen} ms (tool ${moved.frozenMs} ms: copy ${phases.copyMs}, check ${phases.checkMs}); ${lost} of ${acked.length} acknowledged writes lost; load ${loadBefore}`,
      }
    } finally {
      running = false
      router?.kill('SIGKILL')
      await router?.exited
      await cleanup()
    }
  },
}
