import { describe, expect, test } from 'bun:test'
import { expectProblem, serverWithOwner } from '../support/harness.ts'
import { createAccount, get, type Json, listAll, patch, tableRows, unknownId } from './helpers.ts'

/** Accounts: linkedAccountId, externalId uniqueness, upsert, archive (DELETE), not found. */

const { server, owner } = serverWithOwner()

describe('linkedAccountId', () => {
  test('another of the owner’s accounts is accepted on create and PATCH', async () => {
    const a = await createAccount(server, owner.key, { name: 'A' })
    const b = await createAccount(server, owner.key, { name: 'B', linkedAccountId: a.id })
    expect(b.linkedAccountId).toBe(a.id)
    const c = await createAccount(server, owner.key, { name: 'C' })
    expect((await patch(server, owner.key, `/v1/accounts/${b.id}`, { linkedAccountId: c.id })).linkedAccountId).toBe(c.id)
  })

  test('an unknown id → 422 invalid_reference, nothing created or changed', async () => {
    const before = tableRows(server, owner.id, 'accounts')
    for (const linkedAccountId of [unknownId('acct'), 'acct_nope', '']) {
      const res = await server.request('POST', '/v1/accounts', {
        key: owner.key,
        body: { name: 'X', type: 'bank', balance: 0, currency: 'EUR', linkedAccountId },
      })
      expect(expectProblem(res, 422, 'invalid_reference').detail).toContain('linkedAccountId')
    }
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
    const account = await createAccount(server, owner.key)
    const res = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { name: 'Y', linkedAccountId: unknownId('acct') } })
    expectProblem(res, 422, 'invalid_reference')
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(account)
  })

  test('another owner’s account → 422 invalid_reference', async () => {
    const other = await server.owner()
    const theirs = await createAccount(server, other.key, { name: 'Theirs' })
    const res = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      body: { name: 'Mine', type: 'bank', balance: 0, currency: 'EUR', linkedAccountId: theirs.id },
    })
    expectProblem(res, 422, 'invalid_reference')
    const mine = await createAccount(server, owner.key)
    expectProblem(await server.request('PATCH', `/v1/accounts/${mine.id}`, { key: owner.key, body: { linkedAccountId: theirs.id } }), 422, 'invalid_reference')
    const upsert = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: 'link-theirs', name: 'Mine', type: 'bank', balance: 0, currency: 'EUR', linkedAccountId: theirs.id },
    })
    expectProblem(upsert, 422, 'invalid_reference')
    expect((await get(server, other.key, `/v1/accounts/${theirs.id}`)).linkedAccountId).toBeNull()
  })

  test('the account itself → 422 rule_violation', async () => {
    const account = await createAccount(server, owner.key, { externalId: 'self-link' })
    const res = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { linkedAccountId: account.id } })
    expectProblem(res, 422, 'rule_violation')
    const upsert = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: 'self-link', name: 'Self', type: 'bank', balance: 0, currency: 'EUR', linkedAccountId: account.id },
    })
    expectProblem(upsert, 422, 'rule_violation')
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(account)
  })
})

describe('externalId', () => {
  test('a duplicate on create → 409 external_id_conflict (also after trimming), nothing created', async () => {
    const first = await createAccount(server, owner.key, { externalId: 'dup-1' })
    const before = tableRows(server, owner.id, 'accounts')
    for (const externalId of ['dup-1', '  dup-1 ']) {
      const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Dup', type: 'bank', balance: 0, currency: 'EUR', externalId } })
      expect(expectProblem(res, 409, 'external_id_conflict').detail).toContain('dup-1')
    }
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
    expect(await get(server, owner.key, `/v1/accounts/${first.id}`)).toEqual(first)
  })

  test('a duplicate on PATCH → 409, the account unchanged; its own externalId is fine', async () => {
    await createAccount(server, owner.key, { externalId: 'dup-2' })
    const b = await createAccount(server, owner.key, { externalId: 'dup-3', name: 'B' })
    const res = await server.request('PATCH', `/v1/accounts/${b.id}`, { key: owner.key, body: { name: 'Renamed', externalId: 'dup-2' } })
    expectProblem(res, 409, 'external_id_conflict')
    expect(await get(server, owner.key, `/v1/accounts/${b.id}`)).toEqual(b)
    const same = await patch(server, owner.key, `/v1/accounts/${b.id}`, { externalId: 'dup-3', name: 'Same id' })
    expect(same).toEqual({ ...b, name: 'Same id', updatedAt: same.updatedAt })
  })

  test('an archived account still holds its externalId', async () => {
    const archived = await createAccount(server, owner.key, { externalId: 'dup-archived' })
    expect((await server.request('DELETE', `/v1/accounts/${archived.id}`, { key: owner.key })).status).toBe(200)
    const res = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      body: { name: 'X', type: 'bank', balance: 0, currency: 'EUR', externalId: 'dup-archived' },
    })
    expectProblem(res, 409, 'external_id_conflict')
  })
})

describe('upsert', () => {
  test('created (201 + Location), then updated (200); fields not sent keep their values; balance set outright', async () => {
    const body = {
      externalId: 'sync-1',
      name: 'Synced',
      type: 'bank',
      balance: 10.5,
      currency: 'EUR',
      notes: 'from the bank',
      color: '#ABCDEF',
      sortOrder: 1.5,
      customFields: [{ label: 'IBAN', value: 'X' }],
      isFavourite: true,
    }
    const first = await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body })
    expect(first.status).toBe(201)
    expect(Object.keys(first.json).sort()).toEqual(['data', 'operation'])
    expect(first.json.operation).toBe('created')
    const created = first.json.data
    expect(first.headers.get('location')).toBe(`/v1/accounts/${created.id}`)
    expect(created).toMatchObject({ ...body, isArchived: false, showInDashboard: true, subtype: null })
    expect(await get(server, owner.key, `/v1/accounts/${created.id}`)).toEqual(created)

    const second = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: ' sync-1 ', name: ' Synced again ', type: 'card', balance: 7.25, currency: 'EUR', subtype: 'debit' },
    })
    expect(second.status).toBe(200)
    expect(second.json.operation).toBe('updated')
    expect(second.json.data).toEqual({ ...created, name: 'Synced again', type: 'card', balance: 7.25, subtype: 'debit', updatedAt: second.json.data.updatedAt })
    expect(await get(server, owner.key, `/v1/accounts/${created.id}`)).toEqual(second.json.data)
    const all = await listAll(server, owner.key, '/v1/accounts', { includeArchived: 'true' })
    expect(all.filter((a: Json) => a.externalId === 'sync-1')).toHaveLength(1)
  })

  test('an archived match is updated and stays archived', async () => {
    const created = (
      await server.request('POST', '/v1/accounts/upsert', {
        key: owner.key,
        body: { externalId: 'sync-arch', name: 'Old', type: 'bank', balance: 1, currency: 'EUR' },
      })
    ).json.data
    const archived = (await server.request('DELETE', `/v1/accounts/${created.id}`, { key: owner.key })).json.data
    expect(archived.isArchived).toBe(true)
    const res = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: 'sync-arch', name: 'New', type: 'bank', balance: 2, currency: 'EUR' },
    })
    expect(res.status).toBe(200)
    expect(res.json.operation).toBe('updated')
    expect(res.json.data).toEqual({ ...archived, name: 'New', balance: 2, isArchived: true, updatedAt: res.json.data.updatedAt })
    expect(await get(server, owner.key, `/v1/accounts/${created.id}`)).toEqual(res.json.data)
    expect((await listAll(server, owner.key, '/v1/accounts')).map((a: Json) => a.id)).not.toContain(created.id)
  })

  test('an upsert-create applies create’s defaults and validation', async () => {
    const res = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: 'sync-def', name: 'D', type: 'ewallet', balance: 0, currency: 'usd' },
    })
    expectProblem(res, 422, 'validation_failed')
    const ok = await server.request('POST', '/v1/accounts/upsert', {
      key: owner.key,
      body: { externalId: 'sync-def', name: 'D', type: 'ewallet', balance: 0, currency: 'USD' },
    })
    expect(ok.status).toBe(201)
    expect(ok.json.data).toMatchObject({ isArchived: false, isLiability: false, isFavourite: false, showInDashboard: true, isHidden: false, customFields: [] })
  })
})

describe('DELETE archives', () => {
  test('200 with isArchived true; again 200 unchanged; hidden by default, listed with includeArchived=true', async () => {
    const account = await createAccount(server, owner.key, { name: 'To archive', balance: 42 })
    const first = await server.request('DELETE', `/v1/accounts/${account.id}`, { key: owner.key })
    expect(first.status).toBe(200)
    expect(Object.keys(first.json)).toEqual(['data'])
    expect(first.json.data).toEqual({ ...account, isArchived: true, updatedAt: first.json.data.updatedAt })
    const again = await server.request('DELETE', `/v1/accounts/${account.id}`, { key: owner.key })
    expect(again.status).toBe(200)
    expect(again.json.data).toEqual(first.json.data)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(first.json.data)

    const active = await listAll(server, owner.key, '/v1/accounts')
    expect(active.map((a: Json) => a.id)).not.toContain(account.id)
    expect(active.every((a: Json) => a.isArchived === false)).toBe(true)
    for (const query of [{ includeArchived: 'false' }, {}] as Record<string, string>[]) {
      expect((await listAll(server, owner.key, '/v1/accounts', query)).map((a: Json) => a.id)).not.toContain(account.id)
    }
    const all = await listAll(server, owner.key, '/v1/accounts', { includeArchived: 'true' })
    expect(all.find((a: Json) => a.id === account.id)).toEqual(first.json.data)
    expect(all.length).toBe(active.length + all.filter((a: Json) => a.isArchived).length)
  })

  test('an archived account can still be changed by PATCH and stays archived', async () => {
    const account = await createAccount(server, owner.key)
    await server.request('DELETE', `/v1/accounts/${account.id}`, { key: owner.key })
    const changed = await patch(server, owner.key, `/v1/accounts/${account.id}`, { name: 'Still archived', balance: 3 })
    expect(changed).toEqual({ ...account, name: 'Still archived', balance: 3, isArchived: true, updatedAt: changed.updatedAt })
  })

  test('includeArchived must be true or false', async () => {
    for (const value of ['yes', '1', '']) {
      expectProblem(await server.request('GET', `/v1/accounts?includeArchived=${value}`, { key: owner.key }), 422, 'validation_failed')
    }
  })
})

describe('not found', () => {
  test('unknown and malformed ids → 404 on GET, PATCH and DELETE; nothing changes', async () => {
    const before = tableRows(server, owner.id, 'accounts')
    for (const id of [unknownId('acct'), 'acct_123', 'nope', unknownId('pay'), encodeURIComponent('acct_ x')]) {
      expectProblem(await server.request('GET', `/v1/accounts/${id}`, { key: owner.key }), 404, 'not_found')
      expectProblem(await server.request('PATCH', `/v1/accounts/${id}`, { key: owner.key, body: { name: 'X' } }), 404, 'not_found')
      expectProblem(await server.request('DELETE', `/v1/accounts/${id}`, { key: owner.key }), 404, 'not_found')
    }
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
  })
})
