import { describe, expect, test } from 'bun:test'
import { expectProblem, expectReplayOf, serverWithOwner } from '../support/harness.ts'
import { createAccount, get, type Json, listAll } from './helpers.ts'

/** CONTRACT §8 on every account POST and PATCH: replays are byte-identical and nothing runs twice. */

const { server, owner } = serverWithOwner()

const count = async () => (await listAll(server, owner.key, '/v1/accounts', { includeArchived: 'true' })).length
const newKey = () => `acct-${crypto.randomUUID()}`

describe('POST /v1/accounts', () => {
  test('a replay returns the same bytes with Idempotent-Replayed and creates nothing', async () => {
    const key = newKey()
    const body = { name: 'Once', type: 'bank', balance: 10.1, currency: 'EUR', externalId: 'idem-create' }
    const before = await count()
    const first = await server.request('POST', '/v1/accounts', { key: owner.key, body, idempotencyKey: key })
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    // Same body, keys in another order and the number spelled differently: the same request.
    const replay = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      body: '{"externalId":"idem-create","currency":"EUR","balance":10.10,"type":"bank","name":"Once"}',
      idempotencyKey: key,
    })
    expectReplayOf(replay, first)
    expectReplayOf(await server.request('POST', '/v1/accounts', { key: owner.key, body, idempotencyKey: key }), first)
    expect(await count()).toBe(before + 1)
  })

  test('the same key with another body, path or method → 409 idempotency_key_reused, nothing created', async () => {
    const key = newKey()
    const body = { name: 'Reused', type: 'bank', balance: 1, currency: 'EUR' }
    expect((await server.request('POST', '/v1/accounts', { key: owner.key, body, idempotencyKey: key })).status).toBe(201)
    const before = await count()
    expectProblem(
      await server.request('POST', '/v1/accounts', { key: owner.key, body: { ...body, balance: 2 }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    expectProblem(
      await server.request('POST', '/v1/accounts', { key: owner.key, body: { ...body, notes: 'x' }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    expectProblem(
      await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body: { ...body, externalId: 'x' }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    expectProblem(await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Reused' }, idempotencyKey: key }), 409, 'idempotency_key_reused')
    expect(await count()).toBe(before)
    expect((await listAll(server, owner.key, '/v1/payees')).map((p: Json) => p.name)).not.toContain('Reused')
  })

  test('a handler’s 409 is stored and replayed; a 422 validation_failed is not stored', async () => {
    await createAccount(server, owner.key, { externalId: 'idem-taken' })
    const key = newKey()
    const body = { name: 'Conflict', type: 'bank', balance: 1, currency: 'EUR', externalId: 'idem-taken' }
    const first = await server.request('POST', '/v1/accounts', { key: owner.key, body, idempotencyKey: key })
    expectProblem(first, 409, 'external_id_conflict')
    const replay = await server.request('POST', '/v1/accounts', { key: owner.key, body, idempotencyKey: key })
    expectReplayOf(replay, first)
    expectProblem(replay, 409, 'external_id_conflict')

    const fixKey = newKey()
    const invalid = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      body: { ...body, externalId: 'idem-fixed', currency: 'eur' },
      idempotencyKey: fixKey,
    })
    expectProblem(invalid, 422, 'validation_failed')
    const fixed = await server.request('POST', '/v1/accounts', { key: owner.key, body: { ...body, externalId: 'idem-fixed' }, idempotencyKey: fixKey })
    expect(fixed.status).toBe(201)
  })

  test('Idempotency-Key is required: missing → 400, nothing created', async () => {
    const before = await count()
    const res = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      body: { name: 'No key', type: 'bank', balance: 1, currency: 'EUR' },
      idempotencyKey: null,
    })
    expectProblem(res, 400, 'idempotency_key_missing')
    expect(await count()).toBe(before)
  })

  test('keys are per owner: another owner’s identical key and body creates that owner’s own account', async () => {
    const other = await server.owner()
    const key = newKey()
    const body = { name: 'Shared key', type: 'bank', balance: 1, currency: 'EUR' }
    const mine = await server.request('POST', '/v1/accounts', { key: owner.key, body, idempotencyKey: key })
    const theirs = await server.request('POST', '/v1/accounts', { key: other.key, body, idempotencyKey: key })
    expect(mine.status).toBe(201)
    expect(theirs.status).toBe(201)
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(theirs.json.data.id).not.toBe(mine.json.data.id)
    expect((await listAll(server, other.key, '/v1/accounts')).map((a: Json) => a.id)).toEqual([theirs.json.data.id])
  })
})

describe('POST /v1/accounts/upsert', () => {
  test('a replayed create is the stored 201, even after the account changed; nothing created twice', async () => {
    const key = newKey()
    const body = { externalId: 'idem-upsert', name: 'Up', type: 'bank', balance: 5, currency: 'EUR' }
    const before = await count()
    const first = await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body, idempotencyKey: key })
    expect(first.status).toBe(201)
    const updated = await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body: { ...body, balance: 6 } })
    expect(updated.status).toBe(200)
    const replay = await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body, idempotencyKey: key })
    expectReplayOf(replay, first)
    expect(replay.json.operation).toBe('created')
    expect((await get(server, owner.key, `/v1/accounts/${first.json.data.id}`)).balance).toBe(6)
    expect(await count()).toBe(before + 1)

    const updateKey = newKey()
    const update = await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body: { ...body, balance: 7 }, idempotencyKey: updateKey })
    expect(update.status).toBe(200)
    expectReplayOf(await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body: { ...body, balance: 7 }, idempotencyKey: updateKey }), update)
    expectProblem(
      await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body: { ...body, balance: 8 }, idempotencyKey: updateKey }),
      409,
      'idempotency_key_reused',
    )
    expect((await get(server, owner.key, `/v1/accounts/${first.json.data.id}`)).balance).toBe(7)
  })
})

describe('PATCH /v1/accounts/{id}', () => {
  test('a replay does not apply the change again', async () => {
    const account = await createAccount(server, owner.key, { balance: 100 })
    const key = newKey()
    const first = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { balance: 10, name: 'P1' }, idempotencyKey: key })
    expect(first.status).toBe(200)
    await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { balance: 20, name: 'P2' } })
    const replay = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { balance: 10, name: 'P1' }, idempotencyKey: key })
    expectReplayOf(replay, first)
    expect(replay.json.data.balance).toBe(10)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toMatchObject({ balance: 20, name: 'P2' })

    expectProblem(
      await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { balance: 11, name: 'P1' }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    const otherAccount = await createAccount(server, owner.key)
    expectProblem(
      await server.request('PATCH', `/v1/accounts/${otherAccount.id}`, { key: owner.key, body: { balance: 10, name: 'P1' }, idempotencyKey: key }),
      409,
      'idempotency_key_reused',
    )
    expect(await get(server, owner.key, `/v1/accounts/${otherAccount.id}`)).toEqual(otherAccount)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toMatchObject({ balance: 20, name: 'P2' })
  })

  test('a stored 404 and a stored 422 invalid_reference replay as they were', async () => {
    const missing = `/v1/accounts/acct_${'0'.repeat(32)}`
    const key = newKey()
    const first = await server.request('PATCH', missing, { key: owner.key, body: { name: 'X' }, idempotencyKey: key })
    expectProblem(first, 404, 'not_found')
    expectReplayOf(await server.request('PATCH', missing, { key: owner.key, body: { name: 'X' }, idempotencyKey: key }), first)

    const account = await createAccount(server, owner.key)
    const refKey = newKey()
    const body = { linkedAccountId: `acct_${'f'.repeat(32)}` }
    const bad = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body, idempotencyKey: refKey })
    expectProblem(bad, 422, 'invalid_reference')
    const replay = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body, idempotencyKey: refKey })
    expectReplayOf(replay, bad)
    expectProblem(replay, 422, 'invalid_reference')
  })
})
