import { afterAll, expect, test } from 'bun:test'
import { renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, tempDir } from '../support/harness.ts'
import { withDb } from '../support/processes.ts'
import { createAccount } from '../transactions/helpers.ts'

/**
 * Auto-posting on a cluster node (CONTRACT §29, §31): the sweep posts only for owners the
 * directory places on this node and not moving. Pins the merge of schedules with the cluster:
 * the sweep read control.db's due dates and wrote into whatever file of the owner the node still
 * had, after the owner had moved away (a ledger nobody reads) or while it was frozen for a copy.
 */

const root = tempDir()
const dataDir = join(root, 'data')
const directory = join(root, 'directory.json')
let server: TestServer | undefined
afterAll(async () => {
  await server?.stop({ remove: true })
})

function place(ownerId: string, node: string, version: number, frozen = false): void {
  writeFileSync(`${directory}.tmp`, JSON.stringify({ version, owners: { [ownerId]: { node, epoch: version, frozen } } }))
  renameSync(`${directory}.tmp`, directory)
}

const start = async (today: string) => {
  await server?.stop({ remove: false })
  server = await startTestServer({ dataDir, env: { PFIN_TODAY: today, CLUSTER_NODE: 'a', CLUSTER_DIRECTORY: directory } })
  return server
}

const postedCount = (ownerId: string) =>
  withDb(
    join(dataDir, 'tenants', `${ownerId}.db`),
    (db) => Number((db.query('SELECT count(*) AS n FROM transactions WHERE schedule_id IS NOT NULL').get() as { n: number }).n),
    {
      readonly: true,
    },
  )

test('the sweep skips an owner placed on another node or moving, and posts once it is placed here again', async () => {
  place('own_00000000000000000000000000000000', 'a', 1)
  let s = await start('2026-01-10')
  const { id, key } = await s.owner()
  place(id, 'a', 2)
  await Bun.sleep(100)
  const account = await createAccount(s, key, { balance: 5000 })
  const created = await s.request('POST', '/v1/schedules', {
    key,
    body: { name: 'Rent', accountId: account.id, amount: 1200.5, autoPost: true, recurrence: { freq: 'monthly', byMonthDay: [10], start: '2026-01-10' } },
  })
  expect(created.status).toBe(201)
  expect(postedCount(id)).toBe(1)

  // Down across February's and March's dates, the owner meanwhile placed on node b: nothing is posted here.
  await s.stop({ remove: false })
  server = undefined
  place(id, 'b', 3)
  s = await start('2026-03-20')
  await Bun.sleep(500)
  expect(postedCount(id)).toBe(1)

  // Placed here but moving: still nothing.
  await s.stop({ remove: false })
  server = undefined
  place(id, 'a', 4, true)
  s = await start('2026-03-20')
  await Bun.sleep(500)
  expect(postedCount(id)).toBe(1)

  // Placed here again: the start-up sweep catches up (the observation can fail).
  await s.stop({ remove: false })
  server = undefined
  place(id, 'a', 5)
  s = await start('2026-03-20')
  const deadline = Date.now() + 5000
  while (postedCount(id) < 3 && Date.now() < deadline) await Bun.sleep(50)
  expect(postedCount(id)).toBe(3)
})
