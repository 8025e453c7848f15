import { describe, expect, test } from 'bun:test'
import { expectProblem, serverWithOwner } from '../support/harness.ts'
import { ACCOUNT_FIELDS, createAccount, createTransaction, get, type Json, listAll, patch, tableRows } from './helpers.ts'

/** Accounts: every field of SPEC §2.3, defaults, trimming, PATCH/null, validation and exact money. */

const { server, owner } = serverWithOwner({ owner: { country: 'PT' } })

const FULL = {
  name: '  Main checking  ',
  type: 'bank',
  balance: 1250.12345678,
  currency: 'EUR',
  externalId: '  bank-1  ',
  subtype: ' current ',
  providerSlug: ' millennium ',
  secondaryProviderSlug: ' visa ',
  color: ' #2255AA ',
  icon: ' bank ',
  isLiability: true,
  notes: '  salary lands here  ',
  sortOrder: 2.75,
  accountNumber: ' PT50 0000 ',
  customFields: [
    { label: ' IBAN ', value: ' PT50 0033 ' },
    { label: 'Branch', value: '' },
  ],
  isFavourite: true,
  showInDashboard: false,
  isHidden: true,
}

describe('create → get → list', () => {
  test('every field round-trips, text trimmed', async () => {
    const linked = await createAccount(server, owner.key, { name: 'Savings' })
    const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { ...FULL, linkedAccountId: linked.id } })
    expect(res.status).toBe(201)
    expect(Object.keys(res.json)).toEqual(['data'])
    const created = res.json.data
    expect(Object.keys(created).sort()).toEqual(ACCOUNT_FIELDS)
    expect(created.id).toMatch(/^acct_[0-9a-f]{32}$/)
    expect(res.headers.get('location')).toBe(`/v1/accounts/${created.id}`)
    expect(res.headers.get('content-type')).toStartWith('application/json')
    expect(created).toEqual({
      id: created.id,
      externalId: 'bank-1',
      name: 'Main checking',
      type: 'bank',
      subtype: 'current',
      providerSlug: 'millennium',
      secondaryProviderSlug: 'visa',
      balance: 1250.12345678,
      currency: 'EUR',
      color: '#2255AA',
      icon: 'bank',
      linkedAccountId: linked.id,
      isArchived: false,
      isLiability: true,
      isFavourite: true,
      showInDashboard: false,
      isHidden: true,
      notes: 'salary lands here',
      sortOrder: 2.75,
      accountNumber: 'PT50 0000',
      customFields: [
        { label: 'IBAN', value: 'PT50 0033' },
        { label: 'Branch', value: '' },
      ],
      createdAt: created.createdAt,
      // A new object has not changed since it was made (CONTRACT §25).
      updatedAt: created.createdAt,
    })
    expect(Number.isInteger(created.createdAt)).toBe(true)
    expect(Math.abs(created.createdAt - Date.now())).toBeLessThan(60_000)

    expect(await get(server, owner.key, `/v1/accounts/${created.id}`)).toEqual(created)
    const list = await listAll(server, owner.key, '/v1/accounts')
    expect(list.find((a: Json) => a.id === created.id)).toEqual(created)
  })

  test('defaults: only the required fields', async () => {
    const created = await createAccount(server, owner.key, { name: 'Wallet', type: 'physical', balance: 20, currency: 'USD' })
    expect(created).toEqual({
      id: created.id,
      externalId: null,
      name: 'Wallet',
      type: 'physical',
      subtype: null,
      providerSlug: null,
      secondaryProviderSlug: null,
      balance: 20,
      currency: 'USD',
      color: null,
      icon: null,
      linkedAccountId: null,
      isArchived: false,
      isLiability: false,
      isFavourite: false,
      showInDashboard: true,
      isHidden: false,
      notes: null,
      sortOrder: null,
      accountNumber: null,
      customFields: [],
      createdAt: created.createdAt,
      updatedAt: created.createdAt,
    })
    expect(await get(server, owner.key, `/v1/accounts/${created.id}`)).toEqual(created)
  })

  test('every account type is accepted, and crypto tickers as currency', async () => {
    for (const type of ['physical', 'bank', 'ewallet', 'card', 'investment', 'crypto', 'loan', 'other']) {
      const created = await createAccount(server, owner.key, { type, currency: type === 'crypto' ? 'USDT' : 'EUR' })
      expect(created.type).toBe(type)
    }
    expect((await createAccount(server, owner.key, { currency: 'BTC', balance: 0.00000001 })).balance).toBe(0.00000001)
  })

  test('sortOrder keeps fractions and negatives', async () => {
    for (const sortOrder of [0.5, -3.125, 1e-7, 1000000.25]) {
      const created = await createAccount(server, owner.key, { sortOrder })
      expect(created.sortOrder).toBe(sortOrder)
      expect((await get(server, owner.key, `/v1/accounts/${created.id}`)).sortOrder).toBe(sortOrder)
    }
  })
})

describe('PATCH', () => {
  test('changes every field; the response is what GET then returns', async () => {
    const linked = await createAccount(server, owner.key, { name: 'Other' })
    const account = await createAccount(server, owner.key, { name: 'Card', type: 'card', balance: 5 })
    const body = {
      name: ' Credit card ',
      type: 'loan',
      balance: -300.5,
      currency: 'GBP',
      externalId: ' cc-9 ',
      subtype: 'gold',
      providerSlug: 'amex',
      secondaryProviderSlug: 'mastercard',
      color: '#000000',
      icon: 'card',
      linkedAccountId: linked.id,
      isLiability: true,
      notes: 'pay monthly',
      sortOrder: 0.125,
      accountNumber: '1234',
      customFields: [{ label: 'Limit', value: '5000' }],
      isFavourite: true,
      showInDashboard: false,
      isHidden: true,
    }
    const changed = await patch(server, owner.key, `/v1/accounts/${account.id}`, body)
    expect(changed).toEqual({
      ...body,
      id: account.id,
      createdAt: account.createdAt,
      updatedAt: changed.updatedAt,
      isArchived: false,
      name: 'Credit card',
      externalId: 'cc-9',
    })
    expect(changed.updatedAt).toBeGreaterThanOrEqual(account.updatedAt)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(changed)
  })

  test('null clears every nullable field (CONTRACT §13)', async () => {
    const linked = await createAccount(server, owner.key, { name: 'Linked' })
    const account = await createAccount(server, owner.key, { ...FULL, externalId: 'clear-me', linkedAccountId: linked.id })
    const nulls = {
      externalId: null,
      subtype: null,
      providerSlug: null,
      secondaryProviderSlug: null,
      color: null,
      icon: null,
      linkedAccountId: null,
      notes: null,
      sortOrder: null,
      accountNumber: null,
    }
    const cleared = await patch(server, owner.key, `/v1/accounts/${account.id}`, nulls)
    expect(cleared).toEqual({ ...account, ...nulls, updatedAt: cleared.updatedAt })
    expect(cleared.updatedAt).toBeGreaterThanOrEqual(account.updatedAt)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(cleared)
    // The cleared externalId is free again.
    expect((await createAccount(server, owner.key, { externalId: 'clear-me' })).externalId).toBe('clear-me')
  })

  test('fields not sent keep their values; {} changes nothing', async () => {
    const account = await createAccount(server, owner.key, { ...FULL, externalId: 'keep-1' })
    expect(await patch(server, owner.key, `/v1/accounts/${account.id}`, {})).toEqual(account)
    const renamed = await patch(server, owner.key, `/v1/accounts/${account.id}`, { name: 'Renamed' })
    expect(renamed).toEqual({ ...account, name: 'Renamed', updatedAt: renamed.updatedAt })
    expect(renamed.updatedAt).toBeGreaterThanOrEqual(account.updatedAt)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(renamed)
  })

  test('balance is set outright, whatever transactions did before', async () => {
    const account = await createAccount(server, owner.key, { balance: 100 })
    await createTransaction(server, owner.key, { accountId: account.id, amount: 30 })
    expect((await get(server, owner.key, `/v1/accounts/${account.id}`)).balance).toBe(70)
    expect((await patch(server, owner.key, `/v1/accounts/${account.id}`, { balance: 512.25 })).balance).toBe(512.25)
    expect((await get(server, owner.key, `/v1/accounts/${account.id}`)).balance).toBe(512.25)
    await createTransaction(server, owner.key, { accountId: account.id, amount: 12.25 })
    expect((await get(server, owner.key, `/v1/accounts/${account.id}`)).balance).toBe(500)
  })

  test('required fields never accept null', async () => {
    const account = await createAccount(server, owner.key)
    const before = tableRows(server, owner.id, 'accounts')
    for (const field of ['name', 'type', 'balance', 'currency', 'customFields', 'isLiability', 'isFavourite', 'showInDashboard', 'isHidden']) {
      const res = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: { [field]: null } })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain(field)
    }
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
  })
})

describe('rejected bodies change nothing', () => {
  const valid = { name: 'Valid', type: 'bank', balance: 1, currency: 'EUR' }
  const invalid: [string, Record<string, unknown>, string][] = [
    ['isArchived on create', { ...valid, isArchived: false }, 'isArchived'],
    ['unknown field', { ...valid, nickname: 'x' }, 'nickname'],
    ['missing name', { type: 'bank', balance: 1, currency: 'EUR' }, 'name'],
    ['missing type', { name: 'x', balance: 1, currency: 'EUR' }, 'type'],
    ['missing balance', { name: 'x', type: 'bank', currency: 'EUR' }, 'balance'],
    ['missing currency', { name: 'x', type: 'bank', balance: 1 }, 'currency'],
    ['empty name', { ...valid, name: '' }, 'name'],
    ['blank name', { ...valid, name: '   ' }, 'name'],
    ['name of 201 characters', { ...valid, name: 'n'.repeat(201) }, 'name'],
    ['name as a number', { ...valid, name: 42 }, 'name'],
    ['type not in the enum', { ...valid, type: 'savings' }, 'type'],
    ['lower-case currency', { ...valid, currency: 'eur' }, 'currency'],
    ['short currency', { ...valid, currency: 'EU' }, 'currency'],
    ['currency with a symbol', { ...valid, currency: 'EUR$' }, 'currency'],
    ['balance as a string', { ...valid, balance: '10' }, 'balance'],
    ['balance null', { ...valid, balance: null }, 'balance'],
    ['balance with 9 decimals', { ...valid, balance: 0.123456789 }, 'balance'],
    ['balance 0.1 + 0.2 as a double', { ...valid, balance: 0.30000000000000004 }, 'balance'],
    ['balance above the range', { ...valid, balance: 92233720369 }, 'balance'],
    ['balance below the range', { ...valid, balance: -92233720369 }, 'balance'],
    ['isLiability as a string', { ...valid, isLiability: 'yes' }, 'isLiability'],
    ['showInDashboard as a number', { ...valid, showInDashboard: 1 }, 'showInDashboard'],
    ['sortOrder as a string', { ...valid, sortOrder: '1' }, 'sortOrder'],
    ['customFields not an array', { ...valid, customFields: { label: 'a', value: 'b' } }, 'customFields'],
    ['customField without value', { ...valid, customFields: [{ label: 'a' }] }, 'customFields[0].value'],
    ['customField with an extra key', { ...valid, customFields: [{ label: 'a', value: 'b', kind: 'c' }] }, 'customFields[0].kind'],
    ['notes over 2000 characters', { ...valid, notes: 'x'.repeat(2001) }, 'notes'],
    ['subtype over 200 characters', { ...valid, subtype: 'x'.repeat(201) }, 'subtype'],
    ['externalId empty', { ...valid, externalId: '' }, 'externalId'],
    ['externalId null on create', { ...valid, externalId: null }, 'externalId'],
    ['linkedAccountId as a number', { ...valid, linkedAccountId: 7 }, 'linkedAccountId'],
  ]
  for (const [label, body, field] of invalid) {
    test(`POST: ${label} → 422 naming ${field}`, async () => {
      const before = tableRows(server, owner.id, 'accounts')
      const res = await server.request('POST', '/v1/accounts', { key: owner.key, body })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain(field)
      expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
    })
  }

  test('a customField label that is blank once trimmed → 422 (the Account schema promises a label of 1+ characters)', async () => {
    // Trimming "   " leaves "", which the published response schema (label minLength 1) forbids.
    const before = tableRows(server, owner.id, 'accounts')
    const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { ...valid, customFields: [{ label: '   ', value: 'v' }] } })
    expect(expectProblem(res, 422, 'validation_failed').detail).toContain('customFields[0].label')
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
  })

  test('a body that is not an object → 422', async () => {
    for (const body of [[], 'null', '"text"', '12']) {
      const res = await server.request('POST', '/v1/accounts', { key: owner.key, body })
      expectProblem(res, 422, 'validation_failed')
    }
  })

  test('PATCH: isArchived, unknown fields, wrong types and formats → 422, nothing changed', async () => {
    const account = await createAccount(server, owner.key, { name: 'Stable', balance: 10 })
    const before = tableRows(server, owner.id, 'accounts')
    const bodies: [Record<string, unknown>, string][] = [
      [{ isArchived: true }, 'isArchived'],
      [{ isArchived: false }, 'isArchived'],
      [{ name: 'Changed', colour: '#fff' }, 'colour'],
      [{ id: account.id }, 'id'],
      [{ createdAt: 1 }, 'createdAt'],
      [{ name: 'Changed', type: 'savings' }, 'type'],
      [{ name: 'Changed', currency: 'eur' }, 'currency'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 'Changed', balance: 1.000000001 }, 'balance'],
      [{ name: 'Changed', balance: 92233720368.5 }, 'balance'],
      [{ isHidden: 'true' }, 'isHidden'],
      [{ customFields: [{ label: '', value: 'x' }] }, 'customFields[0].label'],
    ]
    for (const [body, field] of bodies) {
      const res = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain(field)
    }
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
    expect(await get(server, owner.key, `/v1/accounts/${account.id}`)).toEqual(account)
  })

  test('upsert: isArchived and unknown fields → 422, nothing created', async () => {
    const before = tableRows(server, owner.id, 'accounts')
    for (const body of [
      { ...valid, externalId: 'u-arch', isArchived: true },
      { ...valid, externalId: 'u-arch', other: 1 },
      { ...valid }, // externalId is required on upsert
    ]) {
      expectProblem(await server.request('POST', '/v1/accounts/upsert', { key: owner.key, body }), 422, 'validation_failed')
    }
    expect(tableRows(server, owner.id, 'accounts')).toEqual(before)
  })
})

describe('money', () => {
  test('the edges of the range are accepted exactly', async () => {
    // biome-ignore lint/correctness/noPrecisionLoss: sent as written (JSON.stringify prints the double, the edge of what a double holds)
    for (const balance of [92233720368, -92233720368, 92233720367.99999999, -0.00000001]) {
      const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: { name: 'Edge', type: 'other', balance, currency: 'EUR' } })
      expect(res.status).toBe(201)
      expect(res.json.data.balance).toBe(balance)
    }
    // 92233720368.12345678 is not exact as a double: send and read the text.
    const res = await server.request('POST', '/v1/accounts', {
      key: owner.key,
      body: '{"name":"Big","type":"other","currency":"EUR","balance":92233720367.12345678}',
    })
    expect(res.status).toBe(201)
    expect(res.text).toContain('"balance":92233720367.12345678,')
    const got = await server.request('GET', `/v1/accounts/${res.json.data.id}`, { key: owner.key })
    expect(got.text).toContain('"balance":92233720367.12345678,')
  })

  test('as written: 1e2 is 100; too precise, not finite or a hair out of range → 422', async () => {
    const ok = await server.request('POST', '/v1/accounts', { key: owner.key, body: '{"name":"Exp","type":"bank","currency":"EUR","balance":1e2}' })
    expect(ok.status).toBe(201)
    expect(ok.json.data.balance).toBe(100)
    expect(ok.text).toContain('"balance":100,')
    const small = await server.request('POST', '/v1/accounts', { key: owner.key, body: '{"name":"Exp","type":"bank","currency":"EUR","balance":2.5e-7}' })
    expect(small.status).toBe(201)
    expect(small.text).toContain('"balance":0.00000025,')
    // Raw text: a JS double cannot even hold 92233720368.00000001.
    for (const lexeme of ['1.5E-9', '1e400', '-1e12', '92233720368.00000001', '-92233720368.00000001', '0.000000001', '1.123456789']) {
      const res = await server.request('POST', '/v1/accounts', { key: owner.key, body: `{"name":"Exp","type":"bank","currency":"EUR","balance":${lexeme}}` })
      expect(expectProblem(res, 422, 'validation_failed').detail).toContain('balance')
    }
  })

  test('balances are plain JSON numbers and exact: 0.1 - 0.2 income makes 0.3, not 0.30000000000000004', async () => {
    const account = await createAccount(server, owner.key, { balance: 0.1 })
    await createTransaction(server, owner.key, { accountId: account.id, amount: -0.2 })
    const res = await server.request('GET', `/v1/accounts/${account.id}`, { key: owner.key })
    expect(res.json.data.balance).toBe(0.3)
    expect(res.text).toContain('"balance":0.3,')
    expect(res.text).not.toContain('0.30000000000000004')

    const expenses = await createAccount(server, owner.key, { balance: 100 })
    await createTransaction(server, owner.key, { accountId: expenses.id, amount: 0.1 })
    await createTransaction(server, owner.key, { accountId: expenses.id, amount: 0.2 })
    const after = await server.request('GET', `/v1/accounts/${expenses.id}`, { key: owner.key })
    expect(after.text).toContain('"balance":99.7,')
    const list = await server.request('GET', '/v1/accounts?limit=200', { key: owner.key })
    expect(list.text).toContain(`"id":"${expenses.id}"`)
    expect(list.text).not.toMatch(/"balance":-?\d+\.\d{9,}/)
    expect(list.text).not.toMatch(/"balance":"/)
  })

  test('a PATCH balance of 0.30000000000000004 is refused; 0.3 is kept exactly', async () => {
    const account = await createAccount(server, owner.key)
    const bad = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: '{"balance":0.30000000000000004}' })
    expectProblem(bad, 422, 'validation_failed')
    const res = await server.request('PATCH', `/v1/accounts/${account.id}`, { key: owner.key, body: '{"balance":0.30}' })
    expect(res.status).toBe(200)
    expect(res.text).toContain('"balance":0.3,')
  })
})
