import { beforeAll, describe, expect, test } from 'bun:test'
import { createPayee, get, type Json, listAll, patch, PAYEE_FIELDS, tableRows, unknownId } from '../accounts/helpers.ts'
import { expectProblem, serverWithOwner } from '../support/harness.ts'

/** Payees: fields, normalizedName, uniqueness, aliases, `q`, categoryId, upsert, validation, not found. */

const { server, owner } = serverWithOwner({ owner: { country: 'PT' } })

const linkedPersonIdOf = (ownerId: string, payeeId: string) =>
  (server.platform.tenants.get(ownerId).sqlite.query('SELECT linked_person_id AS v FROM payees WHERE id = ?').get(payeeId) as { v: string | null } | null)?.v

function expectNoLinkedPersonId(text: string) {
  expect(text).not.toContain('linkedPersonId')
  expect(text).not.toContain('person-')
}

describe('fields', () => {
  test('every field round-trips through create, get and list; linkedPersonId is stored, never returned', async () => {
    const res = await server.request('POST', '/v1/payees', {
      key: owner.key,
      body: {
        name: '  Pingo Doce  ',
        externalId: ' merchant-42 ',
        aliases: [' PINGO DOCE LISBOA ', 'PD'],
        categoryId: 'cat_sys_groceries',
        linkedPersonId: 'person-123',
        isMerchant: true,
      },
    })
    expect(res.status).toBe(201)
    expect(Object.keys(res.json)).toEqual(['data'])
    const created = res.json.data
    expect(Object.keys(created).sort()).toEqual(PAYEE_FIELDS)
    expect(created.id).toMatch(/^pay_[0-9a-f]{32}$/)
    expect(res.headers.get('location')).toBe(`/v1/payees/${created.id}`)
    expect(created).toEqual({
      id: created.id,
      externalId: 'merchant-42',
      name: 'Pingo Doce',
      normalizedName: 'pingo doce',
      aliases: ['PINGO DOCE LISBOA', 'PD'],
      categoryId: 'cat_sys_groceries',
      isMerchant: true,
      transactionCount: 0,
      totalSpent: 0,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    })
    expect(Number.isInteger(created.createdAt)).toBe(true)
    expectNoLinkedPersonId(res.text)
    expect(linkedPersonIdOf(owner.id, created.id)).toBe('person-123')

    const got = await server.request('GET', `/v1/payees/${created.id}`, { key: owner.key })
    expect(got.json.data).toEqual(created)
    expect('linkedPersonId' in got.json.data).toBe(false)
    expectNoLinkedPersonId(got.text)
    const list = await server.request('GET', '/v1/payees?limit=200', { key: owner.key })
    expect(list.json.data.find((p: Json) => p.id === created.id)).toEqual(created)
    expectNoLinkedPersonId(list.text)
  })

  test('defaults: only a name (categoryId and linkedPersonId may be sent as null)', async () => {
    const created = await createPayee(server, owner.key, { name: 'Corner shop', categoryId: null, linkedPersonId: null })
    expect(created).toEqual({
      id: created.id,
      externalId: null,
      name: 'Corner shop',
      normalizedName: 'corner shop',
      aliases: [],
      categoryId: null,
      isMerchant: false,
      transactionCount: 0,
      totalSpent: 0,
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    })
    expect(linkedPersonIdOf(owner.id, created.id)).toBeNull()
  })

  test('PATCH changes every field; null clears externalId, categoryId and linkedPersonId', async () => {
    const payee = await createPayee(server, owner.key, { name: 'Old name', externalId: 'p-old', aliases: ['x'], linkedPersonId: 'person-1' })
    const changed = await server.request('PATCH', `/v1/payees/${payee.id}`, {
      key: owner.key,
      body: {
        name: ' New  Name ',
        externalId: 'p-new',
        aliases: ['NN', 'New Co'],
        categoryId: 'cat_sys_restaurants',
        linkedPersonId: 'person-2',
        isMerchant: true,
      },
    })
    expect(changed.status).toBe(200)
    expect(changed.json.data).toEqual({
      ...payee,
      name: 'New  Name',
      normalizedName: 'new name',
      externalId: 'p-new',
      aliases: ['NN', 'New Co'],
      categoryId: 'cat_sys_restaurants',
      isMerchant: true,
      updatedAt: changed.json.data.updatedAt,
    })
    expect(changed.json.data.updatedAt).toBeGreaterThanOrEqual(payee.updatedAt)
    expectNoLinkedPersonId(changed.text)
    expect(linkedPersonIdOf(owner.id, payee.id)).toBe('person-2')
    expect(await get(server, owner.key, `/v1/payees/${payee.id}`)).toEqual(changed.json.data)

    const cleared = await patch(server, owner.key, `/v1/payees/${payee.id}`, { externalId: null, categoryId: null, linkedPersonId: null, aliases: [] })
    expect(cleared).toEqual({ ...changed.json.data, externalId: null, categoryId: null, aliases: [], updatedAt: cleared.updatedAt })
    expect(linkedPersonIdOf(owner.id, payee.id)).toBeNull()
    expect(await patch(server, owner.key, `/v1/payees/${payee.id}`, {})).toEqual(cleared)
  })
})

describe('normalizedName and uniqueness', () => {
  test('lower case, accents stripped, whitespace collapsed and trimmed', async () => {
    const created = await createPayee(server, owner.key, { name: '  Café   Ñandú ' })
    expect(created.name).toBe('Café   Ñandú')
    expect(created.normalizedName).toBe('cafe nandu')
    const tabs = await createPayee(server, owner.key, { name: 'ÉCOLE\t\tÀ  Paris' })
    expect(tabs.normalizedName).toBe('ecole a paris')
  })

  test('a duplicate normalized name on create → 409 payee_exists, nothing created', async () => {
    const original = await createPayee(server, owner.key, { name: 'Açougue Central' })
    const before = tableRows(server, owner.id, 'payees')
    for (const name of ['Açougue Central', 'ACOUGUE CENTRAL', '  açougue   central ', 'Açóugue Céntral']) {
      const res = await server.request('POST', '/v1/payees', { key: owner.key, body: { name } })
      expectProblem(res, 409, 'payee_exists')
    }
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    expect(await get(server, owner.key, `/v1/payees/${original.id}`)).toEqual(original)
  })

  test('PATCH to another payee’s normalized name → 409, unchanged; to its own in another spelling → 200', async () => {
    const a = await createPayee(server, owner.key, { name: 'Zara' })
    const b = await createPayee(server, owner.key, { name: 'H&M' })
    expectProblem(await server.request('PATCH', `/v1/payees/${b.id}`, { key: owner.key, body: { name: 'ZARA ', isMerchant: true } }), 409, 'payee_exists')
    expect(await get(server, owner.key, `/v1/payees/${b.id}`)).toEqual(b)
    const renamed = await patch(server, owner.key, `/v1/payees/${a.id}`, { name: 'ZARA' })
    expect(renamed).toEqual({ ...a, name: 'ZARA', updatedAt: renamed.updatedAt })
  })

  test('upsert: a create with a taken name → 409 and nothing created; an update renaming onto a taken name → 409', async () => {
    await createPayee(server, owner.key, { name: 'Lidl' })
    const before = tableRows(server, owner.id, 'payees')
    expectProblem(await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { externalId: 'up-lidl', name: 'LIDL' } }), 409, 'payee_exists')
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    const other = await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { externalId: 'up-aldi', name: 'Aldi' } })
    expect(other.status).toBe(201)
    expectProblem(await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { externalId: 'up-aldi', name: 'lidl' } }), 409, 'payee_exists')
    expect(await get(server, owner.key, `/v1/payees/${other.json.data.id}`)).toEqual(other.json.data)
  })

  test('a duplicate externalId on create and PATCH → 409 external_id_conflict', async () => {
    await createPayee(server, owner.key, { name: 'Ext A', externalId: 'pay-ext' })
    const before = tableRows(server, owner.id, 'payees')
    expectProblem(await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Ext B', externalId: ' pay-ext ' } }), 409, 'external_id_conflict')
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    const c = await createPayee(server, owner.key, { name: 'Ext C' })
    expectProblem(
      await server.request('PATCH', `/v1/payees/${c.id}`, { key: owner.key, body: { name: 'Ext C2', externalId: 'pay-ext' } }),
      409,
      'external_id_conflict',
    )
    expect(await get(server, owner.key, `/v1/payees/${c.id}`)).toEqual(c)
  })
})

describe('aliases', () => {
  test('deduplicated by normal form, first spelling kept, trimmed', async () => {
    const created = await createPayee(server, owner.key, {
      name: 'Continente',
      aliases: ['  MC Sonae ', 'mc  sonae', 'MC Sónae', 'Continente Bom Dia', 'CONTINENTE BOM DIA'],
    })
    expect(created.aliases).toEqual(['MC Sonae', 'Continente Bom Dia'])
    const patched = await patch(server, owner.key, `/v1/payees/${created.id}`, { aliases: ['A', 'a', 'Á', 'B'] })
    expect(patched.aliases).toEqual(['A', 'B'])
    expect((await get(server, owner.key, `/v1/payees/${created.id}`)).aliases).toEqual(['A', 'B'])
  })

  test('an alias with nothing left once normalized (only marks) → 422 naming it, as for a name; nothing changed', async () => {
    const before = tableRows(server, owner.id, 'payees')
    const created = await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Marks Only', aliases: ['MO', '\u0301\u0308'] } })
    expect(expectProblem(created, 422, 'validation_failed').detail).toBe("field 'aliases[1]' must contain letters or digits, not only marks or spaces")
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    const payee = await createPayee(server, owner.key, { name: 'Marks Later', aliases: ['ML'] })
    expectProblem(await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { aliases: ['\u0300'] } }), 422, 'validation_failed')
    expect(await get(server, owner.key, `/v1/payees/${payee.id}`)).toEqual(payee)
  })

  test('payeeName finds a payee by its name before another payee’s alias of that spelling', async () => {
    const named = await createPayee(server, owner.key, { name: 'Corner Bakery' })
    await createPayee(server, owner.key, { name: 'Bakery Chain', aliases: ['CORNER BAKERY'] })
    const account = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Alias test', type: 'bank', balance: 0, currency: 'EUR' } })
    const txn = await server.request('POST', '/v1/transactions', {
      key: owner.key,
      body: { accountId: account.json.data.id, amount: 3.2, date: '2026-11-21', payeeName: 'corner bakery' },
    })
    expect(txn.status).toBe(201)
    expect(txn.json.data.payeeId).toBe(named.id)
  })
})

describe('q filter', () => {
  let q: { owner: { id: string; key: string }; ids: Record<string, string> }
  beforeAll(async () => {
    const o = await server.owner()
    const ids: Record<string, string> = {}
    for (const [label, body] of [
      ['cafe', { name: 'Café Ñandú', aliases: ['CN Lisboa'] }],
      ['pingo', { name: 'Pingo Doce', aliases: ['PD Porto', 'Pingo Doce Lisboa'] }],
      ['percent', { name: '100% Natural' }],
      ['underscore', { name: 'A_B Store' }],
      ['plain', { name: 'AxB Store' }],
      ['backslash', { name: 'Back\\slash' }],
    ] as const) {
      ids[label] = (await createPayee(server, o.key, body)).id
    }
    q = { owner: o, ids }
  })

  const search = async (text: string, limit = 200) =>
    (await listAll(server, q.owner.key, '/v1/payees', { q: text }, limit)).map((p: Json) => Object.entries(q.ids).find(([, id]) => id === p.id)?.[0])

  test('case- and accent-insensitive substring of the name', async () => {
    expect(await search('CAFÉ')).toEqual(['cafe'])
    expect(await search('cafe')).toEqual(['cafe'])
    expect(await search('ÑANDÚ')).toEqual(['cafe'])
    expect(await search('fé ñ')).toEqual(['cafe'])
    expect(await search('ngo do')).toEqual(['pingo'])
    expect(await search('  pingo    DOCE ')).toEqual(['pingo'])
    expect(await search('store')).toEqual(['underscore', 'plain'])
    expect(await search('nothing like it')).toEqual([])
  })

  test('matches any alias', async () => {
    expect(await search('lisboa')).toEqual(['cafe', 'pingo'])
    expect(await search('PORTO')).toEqual(['pingo'])
    expect(await search('cn lis')).toEqual(['cafe'])
  })

  test('% and _ (and \\) are literal characters', async () => {
    expect(await search('%')).toEqual(['percent'])
    expect(await search('100%')).toEqual(['percent'])
    expect(await search('_')).toEqual(['underscore'])
    expect(await search('a_b')).toEqual(['underscore'])
    expect(await search('\\')).toEqual(['backslash'])
  })

  test('follows renames and alias changes', async () => {
    const o = q.owner
    const p = await createPayee(server, o.key, { name: 'Mercadona', aliases: ['MRC Valencia'] })
    q.ids.mercadona = p.id
    expect(await search('valencia')).toEqual(['mercadona'])
    await patch(server, o.key, `/v1/payees/${p.id}`, { name: 'Mercadona Sevilla' })
    expect(await search('sevilla')).toEqual(['mercadona'])
    expect(await search('valencia')).toEqual(['mercadona'])
    await patch(server, o.key, `/v1/payees/${p.id}`, { name: 'Hipercor', aliases: ['MRC Madrid'] })
    expect(await search('valencia')).toEqual([])
    expect(await search('mercadona')).toEqual([])
    expect(await search('madrid')).toEqual(['mercadona'])
    expect(await search('hiper')).toEqual(['mercadona'])
    await patch(server, o.key, `/v1/payees/${p.id}`, { aliases: [] })
    expect(await search('madrid')).toEqual([])
    expect(await search('hiper')).toEqual(['mercadona'])
  })

  test('pages of a filtered list hold only matches, each once', async () => {
    expect(await search('o', 1)).toEqual(await search('o', 200))
    expect((await search('o', 1)).length).toBeGreaterThan(2)
  })

  test('q over 200 characters → 422', async () => {
    expectProblem(await server.request('GET', `/v1/payees?q=${'a'.repeat(201)}`, { key: q.owner.key }), 422, 'validation_failed')
  })
})

describe('categoryId', () => {
  test('a visible system category is accepted; the owner’s custom category too', async () => {
    expect((await createPayee(server, owner.key, { name: 'Cat sys', categoryId: 'cat_sys_groceries' })).categoryId).toBe('cat_sys_groceries')
    // PT owners see the BR/PT-only "13th salary" category.
    expect((await createPayee(server, owner.key, { name: 'Cat pt', categoryId: 'cat_sys_thirteenth_salary' })).categoryId).toBe('cat_sys_thirteenth_salary')
    const custom = (await server.request('POST', '/v1/categories', { key: owner.key, body: { name: 'Pets' } })).json.data
    expect((await createPayee(server, owner.key, { name: 'Cat custom', categoryId: custom.id })).categoryId).toBe(custom.id)
  })

  test('an unknown, malformed or invisible category → 422 invalid_reference, nothing written', async () => {
    const payee = await createPayee(server, owner.key, { name: 'Cat target' })
    const before = tableRows(server, owner.id, 'payees')
    // cat_sys_kirchensteuer exists in every file but is for DE owners only.
    for (const categoryId of [unknownId('cat'), 'cat_sys_nope', 'groceries', 'cat_sys_kirchensteuer']) {
      expect(
        expectProblem(await server.request('POST', '/v1/payees', { key: owner.key, body: { name: 'Cat bad', categoryId } }), 422, 'invalid_reference').detail,
      ).toContain('categoryId')
      expectProblem(await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body: { categoryId } }), 422, 'invalid_reference')
      expectProblem(
        await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { externalId: 'cat-bad', name: 'Cat bad', categoryId } }),
        422,
        'invalid_reference',
      )
    }
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
  })
})

describe('upsert', () => {
  test('created (201 + Location), then updated (200); fields not sent keep their values', async () => {
    const first = await server.request('POST', '/v1/payees/upsert', {
      key: owner.key,
      body: { externalId: 'up-1', name: 'Upsert Co', aliases: ['UC'], categoryId: 'cat_sys_groceries', linkedPersonId: 'person-up', isMerchant: true },
    })
    expect(first.status).toBe(201)
    expect(first.json.operation).toBe('created')
    expect(Object.keys(first.json).sort()).toEqual(['data', 'operation'])
    const created = first.json.data
    expect(first.headers.get('location')).toBe(`/v1/payees/${created.id}`)
    expect(created).toMatchObject({
      externalId: 'up-1',
      name: 'Upsert Co',
      normalizedName: 'upsert co',
      aliases: ['UC'],
      categoryId: 'cat_sys_groceries',
      isMerchant: true,
    })
    expectNoLinkedPersonId(first.text)

    const second = await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { externalId: ' up-1 ', name: 'Upsert Company' } })
    expect(second.status).toBe(200)
    expect(second.json.operation).toBe('updated')
    expect(second.json.data).toEqual({ ...created, name: 'Upsert Company', normalizedName: 'upsert company', updatedAt: second.json.data.updatedAt })
    expect(linkedPersonIdOf(owner.id, created.id)).toBe('person-up')
    expect(await get(server, owner.key, `/v1/payees/${created.id}`)).toEqual(second.json.data)
    // Upserting the same name again: the payee's own name is no conflict.
    expect((await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { externalId: 'up-1', name: 'UPSERT COMPANY' } })).status).toBe(200)
    expect((await listAll(server, owner.key, '/v1/payees')).filter((p: Json) => p.externalId === 'up-1')).toHaveLength(1)
  })
})

describe('validation and not found', () => {
  const invalid: [string, Record<string, unknown>, string][] = [
    ['missing name', { isMerchant: true }, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['blank name', { name: '  ' }, 'name'],
    ['name of 201 characters', { name: 'p'.repeat(201) }, 'name'],
    ['unknown field', { name: 'V', nickname: 'v' }, 'nickname'],
    ['normalizedName sent', { name: 'V', normalizedName: 'v' }, 'normalizedName'],
    ['transactionCount sent', { name: 'V', transactionCount: 3 }, 'transactionCount'],
    ['totalSpent sent', { name: 'V', totalSpent: 3 }, 'totalSpent'],
    ['aliases not an array', { name: 'V', aliases: 'v' }, 'aliases'],
    ['an empty alias', { name: 'V', aliases: ['ok', ''] }, 'aliases[1]'],
    ['an alias that is a number', { name: 'V', aliases: [1] }, 'aliases[0]'],
    ['isMerchant as a string', { name: 'V', isMerchant: 'yes' }, 'isMerchant'],
    ['categoryId as a number', { name: 'V', categoryId: 5 }, 'categoryId'],
    ['linkedPersonId as a number', { name: 'V', linkedPersonId: 5 }, 'linkedPersonId'],
    ['externalId null on create', { name: 'V', externalId: null }, 'externalId'],
  ]
  for (const [label, body, field] of invalid) {
    test(`POST: ${label} → 422 naming ${field}, nothing created`, async () => {
      const before = tableRows(server, owner.id, 'payees')
      expect(expectProblem(await server.request('POST', '/v1/payees', { key: owner.key, body }), 422, 'validation_failed').detail).toContain(field)
      expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    })
  }

  test('PATCH: null name, unknown fields, wrong types → 422, nothing changed', async () => {
    const payee = await createPayee(server, owner.key, { name: 'Patch target', aliases: ['pt'] })
    const before = tableRows(server, owner.id, 'payees')
    for (const body of [{ name: null }, { aliases: null }, { isMerchant: null }, { name: 'Q', id: 'x' }, { aliases: [''] }, { name: 'q'.repeat(201) }]) {
      expectProblem(await server.request('PATCH', `/v1/payees/${payee.id}`, { key: owner.key, body }), 422, 'validation_failed')
    }
    expect(tableRows(server, owner.id, 'payees')).toEqual(before)
    expectProblem(await server.request('POST', '/v1/payees/upsert', { key: owner.key, body: { name: 'No external id' } }), 422, 'validation_failed')
  })

  test('unknown and malformed ids → 404; there is no DELETE', async () => {
    for (const id of [unknownId('pay'), 'pay_1', 'nope', unknownId('acct')]) {
      expectProblem(await server.request('GET', `/v1/payees/${id}`, { key: owner.key }), 404, 'not_found')
      expectProblem(await server.request('PATCH', `/v1/payees/${id}`, { key: owner.key, body: { name: 'Ghost' } }), 404, 'not_found')
    }
    const payee = await createPayee(server, owner.key, { name: 'Undeletable' })
    expectProblem(await server.request('DELETE', `/v1/payees/${payee.id}`, { key: owner.key }), 405, 'method_not_allowed')
    expect(await get(server, owner.key, `/v1/payees/${payee.id}`)).toEqual(payee)
  })

  test('list: bad limit and cursor → 422; limit=2 pages walk every payee once', async () => {
    const o = await server.owner()
    const made: Json[] = []
    for (let i = 0; i < 5; i++) made.push(await createPayee(server, o.key, { name: `Page ${i}` }))
    expect(await listAll(server, o.key, '/v1/payees', {}, 2)).toEqual(made)
    for (const query of ['limit=0', 'limit=201', 'limit=abc', 'cursor=zzz', 'unknown=1']) {
      expectProblem(await server.request('GET', `/v1/payees?${query}`, { key: o.key }), 422, 'validation_failed')
    }
  })
})
