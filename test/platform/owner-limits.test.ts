import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { CONTROL_COPY_MAX_BYTES } from '../../src/platform/idempotency.ts'
import { expectProblem, startTestServer, type TestServer } from '../support/harness.ts'

/**
 * What one owner may hold (CONTRACT §19): large stored answers kept once, the storage quota
 * (507 for that owner only), the caps on accounts, categories and payees (409
 * `limit_reached`, nothing written), and the space purges free given back to the filesystem.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({
    env: {
      RATE_LIMIT_PER_MINUTE: '10000000',
      RATE_LIMIT_PER_DAY: '10000000',
      OWNER_QUOTA_MB: '2',
      OWNER_MAX_ACCOUNTS: '3',
      OWNER_MAX_CATEGORIES: '2',
      OWNER_MAX_PAYEES: '4',
    },
  })
})
afterAll(() => server.stop())

const newAccount = async (key: string, name = 'Main') =>
  (await server.request('POST', '/v1/accounts', { key, body: { name, type: 'bank', balance: 0, currency: 'EUR' } })).json.data

function controlRecords(ownerId: string): number {
  const db = new Database(join(server.dataDir, 'control.db'), { readonly: true })
  try {
    return Number(db.query<{ n: number }, [string]>('SELECT count(*) AS n FROM idempotency_records WHERE owner_id = ?').get(ownerId)?.n)
  } finally {
    db.close()
  }
}

describe('stored answers', () => {
  test('an answer too large to copy is kept in the owner file only, and still replays byte for byte', async () => {
    const owner = await server.owner()
    const account = await newAccount(owner.key)
    const items = Array.from({ length: 60 }, (_, i) => ({
      externalId: `big-${i}`,
      accountId: account.id,
      amount: 1,
      date: '2026-11-20',
      note: 'n'.repeat(300),
    }))
    const first = await server.request('POST', '/v1/transactions/batch', { key: owner.key, idempotencyKey: 'large-answer', body: { items } })
    expect(first.status).toBe(200)
    expect(first.text.length).toBeGreaterThan(CONTROL_COPY_MAX_BYTES)
    const small = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      idempotencyKey: 'small-answer',
      body: { name: 'Side', type: 'bank', balance: 0, currency: 'EUR' },
    })
    expect(small.status).toBe(201)
    await Bun.sleep(20) // the control copy is written once the event loop turns
    // The account creations (small) are copied; the batch answer is not.
    expect(controlRecords(owner.id)).toBe(2)
    const replay = await server.request('POST', '/v1/transactions/batch', { key: owner.key, idempotencyKey: 'large-answer', body: { items } })
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.text).toBe(first.text)
    expect(controlRecords(owner.id)).toBe(2)
  })
})

describe('the storage quota', () => {
  test('an owner at its quota gets 507 naming the quota and nothing changes; others write on; deleting makes room again', async () => {
    const owner = await server.owner()
    const bystander = await server.owner()
    const account = await newAccount(owner.key)
    const note = 'q'.repeat(1900)
    let written = 0
    let refusal: Awaited<ReturnType<typeof server.request>> | undefined
    const ids: string[] = []
    for (let i = 0; i < 3000 && !refusal; i++) {
      const res = await server.request('POST', '/v1/transactions', {
        key: owner.key,
        body: { accountId: account.id, amount: 1, date: '2026-11-20', note: `${i} ${note}` },
      })
      if (res.status === 507) refusal = res
      else {
        expect(res.status).toBe(201)
        ids.push(res.json.data.id)
        written++
      }
    }
    expect(refusal).toBeDefined()
    expectProblem(refusal as never, 507, 'insufficient_storage')
    expect(refusal?.json.detail).toContain("owner's storage quota (2.0 MiB)")
    const file = server.platform.tenants.pathFor(owner.id)
    expect(statSync(file).size).toBeLessThanOrEqual(3 * 1024 * 1024) // the quota and its reserve
    const balance = (await server.request('GET', `/v1/accounts/${account.id}`, { key: owner.key })).json.data.balance
    expect(balance).toBe(-written)

    expect(
      (await server.request('POST', '/v1/accounts', { key: bystander.key, body: { name: 'Fine', type: 'bank', balance: 0, currency: 'EUR' } })).status,
    ).toBe(201)

    for (const id of ids.slice(0, 20)) expect((await server.request('DELETE', `/v1/transactions/${id}`, { key: owner.key })).status).toBe(200)
    const again = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: { accountId: account.id, amount: 1, date: '2026-11-21', note: 'room again' },
    })
    expect(again.status).toBe(201)
  }, 60_000)
})

describe('caps on what an owner holds', () => {
  test('accounts: the one past OWNER_MAX_ACCOUNTS is 409 limit_reached, by create and by upsert', async () => {
    const owner = await server.owner()
    for (const name of ['A', 'B', 'C']) await newAccount(owner.key, name)
    const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'D', type: 'bank', balance: 0, currency: 'EUR' } })
    expectProblem(res, 409, 'limit_reached')
    expect(res.json.detail).toContain('3 accounts')
    expect(res.json.detail).toContain('OWNER_MAX_ACCOUNTS')
    const upsert = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: 'x-1', name: 'D', type: 'bank', balance: 0, currency: 'EUR' },
    })
    expectProblem(upsert, 409, 'limit_reached')
    const list = await server.request('GET', '/v1/accounts', { key: owner.key })
    expect(list.json.data).toHaveLength(3)
    // Archived accounts still count: archiving is not deleting.
    await server.request('DELETE', `/v1/accounts/${list.json.data[0].id}`, { key: owner.key })
    expectProblem(
      await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'E', type: 'bank', balance: 0, currency: 'EUR' } }),
      409,
      'limit_reached',
    )
  })

  test('categories: system categories do not count, custom ones do', async () => {
    const owner = await server.owner()
    for (const name of ['Pets', 'Garden']) {
      expect((await server.request('POST', '/v1/categories', { key: owner.key, body: { name, type: 'expense' } })).status).toBe(201)
    }
    const res = await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Boat', type: 'expense' } })
    expectProblem(res, 409, 'limit_reached')
    expect(res.json.detail).toContain('2 custom categories')
  })

  test('payees: a batch that would pass the cap is refused whole, naming the item; its dry run reports it', async () => {
    const owner = await server.owner()
    const account = await newAccount(owner.key)
    const items = Array.from({ length: 6 }, (_, i) => ({ externalId: `p-${i}`, accountId: account.id, amount: 2, date: '2026-11-20', payeeName: `Payee ${i}` }))
    const dry = await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items, dryRun: true } })
    expect(dry.status).toBe(200)
    expect(dry.json.summary.failed).toBeGreaterThan(0)
    const failedItem = dry.json.data.find((item: { errors: unknown[] }) => item.errors.length > 0)
    expect(failedItem.index).toBe(4)
    expect(failedItem.errors[0]).toMatchObject({ field: 'payeeName', code: 'limit_reached' })

    const res = await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items } })
    expectProblem(res, 409, 'limit_reached')
    expect(res.json.detail).toStartWith('items[4].payeeName: ')
    expect((await server.request('GET', '/v1/payees', { key: owner.key })).json.data).toHaveLength(0)
    expect((await server.request('GET', '/v1/transactions', { key: owner.key })).json.data).toHaveLength(0)

    // Existing payees are found, not made, so naming them again is fine at the cap.
    expect((await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items: items.slice(0, 4) } })).status).toBe(200)
    const reuse = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: { accountId: account.id, amount: 1, date: '2026-11-20', payeeName: 'payee 0' },
    })
    expect(reuse.status).toBe(201)
    const fifth = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Fifth' } })
    expectProblem(fifth, 409, 'limit_reached')
  })
})

describe('space given back', () => {
  test('the pages that a purge of stored answers freed go back to the filesystem', async () => {
    const owner = await server.owner()
    const account = await newAccount(owner.key)
    const items = Array.from({ length: 40 }, (_, i) => ({ externalId: `g-${i}`, accountId: account.id, amount: 1, date: '2026-11-20', note: 'g'.repeat(400) }))
    // The same items again and again: each answer ("unchanged") is stored, and nothing else grows.
    for (let i = 0; i < 30; i++) expect((await server.request('POST', '/v1/transactions/batch', { key: owner.key, body: { items } })).status).toBe(200)
    const tenant = server.platform.tenants.get(owner.id)
    const pages = () => Number(tenant.sqlite.query<{ page_count: number }, []>('PRAGMA page_count').get()?.page_count)
    const before = pages()
    tenant.purgeAppliedRequests(Date.now() + 1)
    expect(pages()).toBe(before) // a delete only moves pages to the free list
    const given = tenant.giveBackFreePages()
    expect(given).toBeGreaterThan(100)
    expect(pages()).toBeLessThan(before - 100)
    tenant.foldLog()
    expect(statSync(server.platform.tenants.pathFor(owner.id)).size).toBe(pages() * 4096)
  })
})
