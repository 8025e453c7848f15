import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expectProblem, startTestServer, type TestServer } from '../support/harness.ts'

/**
 * Pins that a really full filesystem recovers: DATA_DIR on a small tmpfs is filled until
 * writes get 507, a little space is freed, and then every refused write (retried with its
 * own Idempotency-Key) and new writes succeed. `max_page_count` cannot stand in here: it
 * caps the database, not the write-ahead log, which is what filled the disk.
 */

const SIZE_MIB = 8
const BALLAST_BYTES = 2 * 1024 * 1024
const mountPoint = mkdtempSync(join(tmpdir(), 'pfin-full-disk-'))
const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE_MIB}m,mode=0700`, 'tmpfs', mountPoint]).status === 0
if (!mounted) {
  console.warn(`skipping the full-disk test: could not mount a ${SIZE_MIB} MiB tmpfs (it needs root)`)
  rmSync(mountPoint, { recursive: true, force: true })
}

let server: TestServer
const logs: string[] = []

beforeAll(async () => {
  if (!mounted) return
  server = await startTestServer({
    dataDir: join(mountPoint, 'data'),
    env: { RATE_LIMIT_PER_MINUTE: '10000000', RATE_LIMIT_PER_DAY: '10000000' },
  })
  server.platform.log = (message) => logs.push(message)
})

afterAll(async () => {
  if (!mounted) return
  await server?.stop({ remove: false })
  spawnSync('umount', ['-l', mountPoint])
  rmSync(mountPoint, { recursive: true, force: true })
})

const freeBytes = () => {
  const stats = statfsSync(mountPoint)
  return Number(stats.bavail) * Number(stats.bsize)
}

describe.skipIf(!mounted)('a full filesystem', () => {
  test('writes refused with 507 succeed on retry once a little space returns, and new writes too', async () => {
    const owner = await server.owner()
    const account = (await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Main', type: 'bank', balance: 1000, currency: 'EUR' } }))
      .json.data
    // Space the operator can free later: deleting it is "space returns".
    const ballast = join(mountPoint, 'ballast')
    writeFileSync(ballast, Buffer.alloc(BALLAST_BYTES, 1))

    const body = (i: number) => ({
      accountId: account.id,
      amount: 1.25,
      date: '2026-11-20',
      note: `receipt ${i} ${'x'.repeat(400)}`,
      payeeName: `Shop ${i % 7}`,
    })
    const write = (i: number, key = `write-${i}`) => server.request('POST', '/v1/transactions', { key: owner.key, idempotencyKey: key, body: body(i) })

    const refused: number[] = []
    let written = 0
    for (let i = 0; i < 2000 && refused.length < 40; i++) {
      const res = await write(i)
      if (res.status === 507) {
        expectProblem(res, 507, 'insufficient_storage')
        refused.push(i)
      } else {
        expect(res.status).toBe(201)
        written++
      }
    }
    expect(refused.length).toBe(40)
    expect(logs.some((line) => line.includes('disk full'))).toBe(true)

    // A 507 changed nothing: the balance moved for the written transactions only.
    const before = await server.request('GET', `/v1/accounts/${account.id}`, { key: owner.key })
    expect(before.json.data.balance).toBe(1000 - 1.25 * written)

    rmSync(ballast)
    const retried = []
    for (const i of refused) retried.push((await write(i)).status)
    const fresh = []
    for (let i = 0; i < 5; i++) fresh.push((await write(10_000 + i)).status)
    expect({ retried: retried.filter((s) => s !== 201).length, fresh }).toEqual({ retried: 0, fresh: [201, 201, 201, 201, 201] })

    const after = await server.request('GET', `/v1/accounts/${account.id}`, { key: owner.key })
    expect(after.json.data.balance).toBe(1000 - 1.25 * (written + refused.length + 5))
    // Not merely squeezed in: the recovered server still has room to keep working.
    expect(freeBytes()).toBeGreaterThan(256 * 1024)
  }, 120_000)
})
