import { describe, expect, test } from 'bun:test'
import { createAccount, createPayee, get, type Json, listAll, tableRows } from '../accounts/helpers.ts'
import { expectProblem, expectReplayOf, serverWithOwner } from '../support/harness.ts'

/** CONTRACT §8 on every payee POST and PATCH, and on a transaction whose payeeName creates a payee. */

const { server, owner } = serverWithOwner()

const count = async () => (await listAll(server, owner.key, '/v1/payees')).length
const newKey = () => `pay-${crypto.randomUUID()}`

describe('POST /v1/payees', () => {
  test('a replay returns the same bytes with Idempotent-Replayed (not a 409 payee_exists) and creates nothing', async () => {
    const key = newKey()
    const body = { name: 'Idem Shop', aliases: ['IS'], isMerchant: true, linkedPersonId: 'person-idem' }
    const before = await count()
    const first = await server.request('POST', '/v1/payees', { key: owner.key, body, idempotencyKey: key })
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const replay = await server.request('POST', '/v1/payees', { key: owner.key, body, idempotencyKey: key })
    expectReplayOf(replay, first)
    expect(await count()).toBe(before + 1)
    // Without the key, the same body is a new request: the name is taken.
    expectProblem(await server.request('POST', '/v1/payees', { key: owner.key, body }), 409, 'payee_exists')
  })

  test('same key, different body → 409 idempotency_key_reused, nothing created', async () => {
    const key = newKey()
    expect((await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Reuse A' }, idempotencyKey: key })).status).toBe(201)
    const before = tableRows(server, owner.id, 'payees')
    for (const body of [{ name: 'Reuse B' }, { name: 'Reuse A', isMerchant: true }, { name: 'Reuse A', linkedPersonId: 'p' }]) {
      expectProblem(await server.request('POST', '/v1/payees', { key: owner.key, body, idempotencyKey: key }), 409, 'idempotency_key_reused')
    }
    expectProblem(
      await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { name: 'Reuse A', externalId: 'r' }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
  })

  test('a stored 409 payee_exists replays as it was', async () => {
    await createPayee(server, owner.key, { name: 'Taken Name' })
    const key = newKey()
    const first = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'TAKEN name' }, idempotencyKey: key })
    expectProblem(first, 409, 'payee_exists')
    const replay = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'TAKEN name' }, idempotencyKey: key })
    expectReplayOf(replay, first)
    expectProblem(replay, 409, 'payee_exists')
  })
})

describe('POST /v1/payees/upsert', () => {
  test('replays of the create and of an update; nothing created twice, nothing applied twice', async () => {
    const createKey = newKey()
    const body = { externalId: 'idem-up', name: 'Idem Upsert', isMerchant: false }
    const before = await count()
    const created = await server.request('POST', '/v1/payees/upsert', { key: owner.key, body, idempotencyKey: createKey })
    expect(created.status).toBe(201)
    expectReplayOf(await server.request('POST', '/v1/payees/upsert', { key: owner.key, body, idempotencyKey: createKey }), created)
    expect(await count()).toBe(before + 1)

    const updateKey = newKey()
    const updated = await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { ...body, isMerchant: true }, idempotencyKey: updateKey })
    expect(updated.status).toBe(200)
    await server.request('PATCH', `/v1/payees/${created.json.data.id}`, { key: owner.key, body: { isMerchant: false, name: 'Idem Later' } })
    const replay = await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { ...body, isMerchant: true }, idempotencyKey: updateKey })
    expectReplayOf(replay, updated)
    expect(await get(server, owner.key, `/v1/payees/${created.json.data.id}`)).toMatchObject({ isMerchant: false, name: 'Idem Later' })
    expectProblem(
      await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { ...body, name: 'Other' }, idempotencyKey: updateKey }),
      409,
      'idempotency_key_reused',
    )
    expect(await count()).toBe(before + 1)
  })
})

describe('PATCH /v1/payees/{id}', () => {
  test('a replay does not apply the change again; another body or payee with the key → 409', async () => {
    const payee = await createPayee(server, owner.key, { name: 'Patch Idem' })
    const key = newKey()
    const first = await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { aliases: ['one'] }, idempotencyKey: key })
    expect(first.status).toBe(200)
    await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { aliases: ['two'] } })
    expectReplayOf(await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { aliases: ['one'] }, idempotencyKey: key }), first)
    expect((await get(server, owner.key, `/v1/payees/${payee.id}`)).aliases).toEqual(['two'])
    expectProblem(
      await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { aliases: ['three'] }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    const other = await createPayee(server, owner.key, { name: 'Patch Idem Other' })
    expectProblem(
      await server.request('PATCH', `/v1/payees/${other.id}`, { key: owner.key, body: { aliases: ['one'] }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    expect(await get(server, owner.key, `/v1/payees/${other.id}`)).toEqual(other)
  })
})

describe('a transaction that creates a payee by name', () => {
  test('a replay creates neither a second transaction nor a second payee, and counts once', async () => {
    const account = await createAccount(server, owner.key, { balance: 10 })
    const key = newKey()
    const body = { accountId: account.id, amount: 2.5, date: '2025-05-05', payeeName: 'Replay Bakery' }
    const first = await server.request('POST', '/v1/transactions', { key: owner.key, body, idempotencyKey: key })
    expect(first.status).toBe(201)
    expectReplayOf(await server.request('POST', '/v1/transactions', { key: owner.key, body, idempotencyKey: key }), first)
    const found = await listAll(server, owner.key, '/v1/payees', { q: 'replay bakery' })
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({ id: first.json.data.payeeId, transactionCount: 1, totalSpent: 2.5 })
    expect((await get(server, owner.key, `/v1/accounts/${account.id}`)).balance).toBe(7.5)
  })

  test('concurrent transactions naming the same new payee make exactly one payee', async () => {
    const account = await createAccount(server, owner.key, { balance: 0 })
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        server.request('POST', '/v1/transactions', {
          key: owner.key,
          body: { accountId: account.id, amount: 1, date: '2025-05-06', payeeName: i % 2 ? 'Race Shop' : '  RACE  shop ' },
        }),
      ),
    )
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201))
    const payeeIds = new Set(results.map((r) => r.json.data.payeeId))
    expect(payeeIds.size).toBe(1)
    const found: Json[] = await listAll(server, owner.key, '/v1/payees', { q: 'race shop' })
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({ transactionCount: 12, totalSpent: 12 })
  })
})
