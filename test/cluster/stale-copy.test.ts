import { afterAll, expect, test } from 'bun:test'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { haproxyPath, routedCluster, startFront } from '../support/cluster.ts'
import { adminJson, call, cleanup, type GroupServer, groupGone, integrity, processEnv, startGroupServer } from '../support/processes.ts'

/**
 * Pins: an owner moved onto a node that still holds an old copy of it (a node killed, failed
 * over, and back with its disk) gets the new copy alone. The old copy's write-ahead log, left by
 * the kill, is put aside with it; left beside the new file under the same name, SQLite would
 * read the old log's pages as the new file's (CONTRACT §31, §14). Also that the owner's control
 * rows there (keys above all) become the source's, not a mix with the old ones, and that a node
 * marked lost is in service again once an owner is moved onto it.
 */

const haproxy = haproxyPath
let router: ReturnType<typeof Bun.spawn> | undefined

afterAll(async () => {
  router?.kill('SIGKILL')
  await router?.exited
  await cleanup()
})

test.skipIf(!haproxy)(
  "after a failover, a move back onto the node that kept the owner's old copy, log and keys serves the moved data and keys alone",
  async () => {
    const { root, directory, socket, map, dataDir, replica, envOf } = routedCluster('pfin-stale-', ['a', 'b'])
    const made = await adminJson(envOf('a'), 'owner', 'create', '--name', 'Mover', '--currency', 'EUR', '--with-key')
    const owner = made.id as string
    const key = (made.key as { key: string }).key
    const servers: Record<string, GroupServer> = { a: await startGroupServer(envOf('a')), b: await startGroupServer(envOf('b')) }
    const started = await startFront(root, {
      directory,
      socket,
      map,
      nodes: Object.fromEntries(['a', 'b'].map((n) => [n, { url: (servers[n] as GroupServer).url, dataDir: dataDir(n), replica: replica(n) }])),
    })
    router = started.router
    const { front, clusterFile } = started
    const clusterEnv = processEnv(root)
    await adminJson(clusterEnv, 'cluster', 'place', owner, '--on', 'a', '--cluster', clusterFile)

    const write = async (note: string) => {
      const res = await call(front, 'POST', '/v1/transactions', {
        key,
        body: `{"accountId":"${account}","amount":-1.25,"date":"2026-01-15","note":"${note}"}`,
        idempotencyKey: note,
      })
      expect(`${note}: ${res.status}`).toBe(`${note}: 201`)
    }
    const created = await call(front, 'POST', '/v1/accounts', {
      key,
      body: '{"name":"Main","type":"bank","balance":100,"currency":"EUR"}',
      idempotencyKey: 'account',
    })
    expect(created.status).toBe(201)
    const account = JSON.parse(created.text).data.id as string
    for (let n = 0; n < 40; n++) await write(`before-${n}`)
    // Litestream ships each second; then node a dies with its log unfolded (Litestream is its only
    // checkpointer), the last writes just before the kill so that the log surely holds frames.
    await Bun.sleep(2500)
    for (let n = 0; n < 3; n++) await write(`late-${n}`)
    process.kill(-(servers.a as GroupServer).pgid, 'SIGKILL')
    expect(await groupGone((servers.a as GroupServer).pgid, 5000)).toBe(true)
    const staleLog = join(dataDir('a'), 'tenants', `${owner}.db-wal`)
    expect({ log: existsSync(staleLog) ? statSync(staleLog).size > 32 : 'missing' }).toEqual({ log: true })

    // A key that only node a's control.db holds (made there while it was down): the cluster never had it.
    const strayKey = ((await adminJson(envOf('a'), 'key', 'create', '--owner', owner)) as { key: string }).key
    await adminJson(clusterEnv, 'cluster', 'failover', 'a', '--cluster', clusterFile)
    // On node b the owner's ledger goes on: more transactions, and most of the old ones deleted.
    for (let n = 0; n < 40; n++) await write(`after-${n}`)
    const listed = await call(front, 'GET', '/v1/transactions?limit=200', { key })
    // Whatever of node a's last writes reached the replica: all but five of the old ones go.
    const before = (JSON.parse(listed.text).data as { id: string; note: string }[]).filter((t) => !t.note.startsWith('after-'))
    for (const t of before.slice(5)) expect((await call(front, 'DELETE', `/v1/transactions/${t.id}`, { key, idempotencyKey: `del-${t.id}` })).status).toBe(200)
    const expected = (await call(front, 'GET', '/v1/accounts', { key })).text

    // Node a comes back with its disk, on its address, then the owner is moved back onto it.
    servers.a = await startGroupServer({ ...envOf('a'), PORT: new URL((servers.a as GroupServer).url).port })
    expect((await call((servers.a as GroupServer).url, 'GET', '/v1/accounts', { key })).status).toBe(421)
    expect((await adminJson(clusterEnv, 'cluster', 'status', '--cluster', clusterFile)).lost).toEqual(['a'])
    const moved = await adminJson(clusterEnv, 'cluster', 'move', owner, '--to', 'a', '--cluster', clusterFile)
    expect(moved.to).toBe('a')
    // Serving an owner again, node a is no longer marked lost: a later failover may restore onto it.
    expect((await adminJson(clusterEnv, 'cluster', 'status', '--cluster', clusterFile)).lost).toBeUndefined()

    const after = await call(front, 'GET', '/v1/transactions?limit=200', { key })
    expect(`${after.status} ${after.status === 200 ? '' : after.text}`).toBe('200 ')
    const notes = (JSON.parse(after.text).data as { note: string }[]).map((t) => t.note).sort()
    expect(notes.length).toBe(45)
    expect(notes.filter((note) => note.startsWith('after-')).length).toBe(40)
    expect((await call(front, 'GET', '/v1/accounts', { key })).text).toBe(expected)
    // The owner's keys on node a are now node b's: the stray one is refused.
    expect((await call(front, 'GET', '/v1/accounts', { key: strayKey })).status).toBe(401)
    // The old copy is kept aside, log and all, not deleted: whoever wants it can look.
    const aside = readdirSync(join(dataDir('a'), 'moved')).filter((name) => name.startsWith(owner))
    expect(aside.some((name) => name.endsWith('.db-wal'))).toBe(true)

    router.kill('SIGTERM')
    await router.exited
    for (const node of ['a', 'b']) {
      process.kill(-(servers[node] as GroupServer).pgid, 'SIGTERM')
      expect(await groupGone((servers[node] as GroupServer).pgid, 10_000)).toBe(true)
    }
    expect(integrity(join(dataDir('a'), 'tenants', `${owner}.db`))).toBe('ok')
  },
  120_000,
)
