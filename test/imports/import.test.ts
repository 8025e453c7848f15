import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { expectProblem, startUnthrottledServer, type TestServer } from '../support/harness.ts'
import { balance, createAccount, type Json, listAll, units } from '../transactions/helpers.ts'
import { fixture, importFile, type OfxRow, ofxFile } from './helpers.ts'

/**
 * CONTRACT §24 over real HTTP: a statement file in, transactions out, through the batch (§16).
 * Re-imports change nothing, overlapping exports give the union of their rows, bank ids are
 * scoped per account, deleted rows stay deleted unless asked, dates and money are read exactly,
 * and a dry run says what the real run does, row by row.
 */

let server: TestServer
beforeAll(async () => {
  server = await startUnthrottledServer()
})
afterAll(() => server.stop())

async function setup(account: Json = {}, owner: Json = {}) {
  const made = await server.owner(owner)
  const acct = await createAccount(server, made.key, { balance: 0, ...account })
  return { key: made.key, ownerId: made.id, account: acct.id as string }
}

/** The change feed's position: what a client that read everything holds. */
async function feedEnd(key: string): Promise<string> {
  return (await server.request('GET', '/v1/changes?limit=500', { key })).json.nextCursor
}

const ops = (res: Json) => res.json.data.items.map((item: Json) => item.operation)

describe('idempotent by construction', () => {
  test('the same file twice: the second run is all unchanged and the change feed gains nothing', async () => {
    const { key, account } = await setup({ currency: 'USD' })
    const first = await importFile(server, key, account, fixture('ofx1-checking.ofx'))
    expect(first.status).toBe(200)
    expect(first.json.data.summary).toEqual({ created: 5, updated: 0, unchanged: 0, matched: 0, skippedDeleted: 0, duplicateInFile: 0, failed: 0 })
    const cursor = await feedEnd(key)
    const second = await importFile(server, key, account, fixture('ofx1-checking.ofx'))
    expect(second.json.data.summary).toEqual({ created: 0, updated: 0, unchanged: 5, matched: 0, skippedDeleted: 0, duplicateInFile: 0, failed: 0 })
    expect((await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })).json.data).toEqual([])
    expect(await listAll(server, key, `?accountId=${account}`)).toHaveLength(5)
  })

  test('three overlapping monthly OFX exports: exactly the union of their FITIDs', async () => {
    const { key, account } = await setup()
    const day = (n: number) => `2026-${String(1 + Math.floor(n / 28)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')}`
    const all: OfxRow[] = Array.from({ length: 84 }, (_, n) => ({
      fitid: `F${1000 + n}`,
      date: day(n),
      amount: `-${n + 1}.${String(n % 100).padStart(2, '0')}`,
      name: `Shop ${n % 7}`,
    }))
    // Each download covers its month plus a week either side, as banks' "last 45 days" do.
    const windows = [all.slice(0, 35), all.slice(21, 63), all.slice(49, 84)]
    for (const rows of windows) expect((await importFile(server, key, account, ofxFile(rows))).status).toBe(200)
    const stored = await listAll(server, key, `?accountId=${account}`)
    expect(stored.map((t: Json) => t.externalId).sort()).toEqual(all.map((row) => `imp:${account}:fitid:${row.fitid}`).sort())
    // The second and third files each found the overlap already there.
    const again = await importFile(server, key, account, ofxFile(windows[1] as OfxRow[]))
    expect(again.json.data.summary.unchanged).toBe(42)
  })

  test('one FITID in two accounts is two transactions', async () => {
    const { key, account } = await setup()
    const other = (await createAccount(server, key, { name: 'Savings', balance: 0 })).id
    const file = ofxFile([{ fitid: '0001', date: '2026-01-05', amount: '-10.00', name: 'Same id' }])
    const a = await importFile(server, key, account, file)
    const b = await importFile(server, key, other, file)
    expect([ops(a), ops(b)]).toEqual([['created'], ['created']])
    expect(a.json.data.items[0].externalId).not.toBe(b.json.data.items[0].externalId)
    expect(await listAll(server, key, '?limit=200')).toHaveLength(2)
  })

  test('a deleted row imported again is skipped_deleted; with ifDeleted=recreate it is created again', async () => {
    const { key, account } = await setup({ currency: 'USD' })
    const first = await importFile(server, key, account, fixture('ofx2-creditcard.ofx'))
    const netflix = (await listAll(server, key, `?externalId=${encodeURIComponent(first.json.data.items[1].externalId)}`))[0]
    expect((await server.request('DELETE', `/v1/transactions/${netflix.id}`, { key })).status).toBe(200)
    const skipped = await importFile(server, key, account, fixture('ofx2-creditcard.ofx'))
    expect(ops(skipped)).toEqual(['unchanged', 'skipped_deleted', 'unchanged', 'unchanged'])
    expect(skipped.json.data.summary.skippedDeleted).toBe(1)
    const recreated = await importFile(server, key, account, fixture('ofx2-creditcard.ofx'), { ifDeleted: 'recreate' })
    expect(ops(recreated)).toEqual(['unchanged', 'created', 'unchanged', 'unchanged'])
  })

  test('a row the owner changed keeps its payee and note when the file comes again; a corrected amount is updated', async () => {
    const { key, account } = await setup()
    const file = (amount: string) => ofxFile([{ fitid: 'X1', date: '2026-01-05', amount, name: 'PINGO DOCE LISBOA 0042' }])
    const first = await importFile(server, key, account, file('-12.00'))
    expect(first.json.data.items[0].data.payeeName).toBe('PINGO DOCE LISBOA')
    const txn = (await listAll(server, key, `?accountId=${account}`))[0]
    await server.request('PATCH', `/v1/transactions/${txn.id}`, { key, body: { payeeName: 'Pingo Doce', note: 'weekly shop' } })
    const edited = (await listAll(server, key, `?accountId=${account}`))[0]
    expect(ops(await importFile(server, key, account, file('-12.00')))).toEqual(['unchanged'])
    const corrected = await importFile(server, key, account, file('-12.50'))
    expect(ops(corrected)).toEqual(['updated'])
    expect(corrected.json.data.items[0].data).toMatchObject({ amount: 12.5, payeeName: null, note: null })
    const after = (await listAll(server, key, `?accountId=${account}`))[0]
    expect(after).toMatchObject({ payeeId: edited.payeeId, note: 'weekly shop', amount: 12.5 })
  })

  test('an identical row repeated in one file is duplicate_in_file and written once', async () => {
    const { key, account } = await setup()
    const row = { fitid: 'D1', date: '2026-01-05', amount: '-5.00', name: 'Twice' }
    const res = await importFile(server, key, account, ofxFile([row, row, { ...row, amount: '-6.00' }]))
    expect(ops(res)).toEqual(['created', 'duplicate_in_file', 'created'])
    expect(res.json.data.items.map((item: Json) => item.externalId)).toEqual([
      `imp:${account}:fitid:D1`,
      `imp:${account}:fitid:D1`,
      `imp:${account}:fitid:D1:2`,
    ])
    expect(res.json.data.items[2].warnings[0]).toContain('also used by line')
    expect(res.json.data.summary).toMatchObject({ created: 2, duplicateInFile: 1 })
    expect(await listAll(server, key, `?accountId=${account}`)).toHaveLength(2)
  })
})

describe('dates', () => {
  test('DD/MM with a 13th: every row is read day first', async () => {
    const { key, account } = await setup()
    const csv = 'Date,Description,Amount\n01/02/2026,A,-1.00\n05/03/2026,B,-2.00\n13/03/2026,C,-3.00\n'
    const res = await importFile(server, key, account, csv, {}, { 'content-type': 'text/csv' })
    expect(res.json.data.detected).toMatchObject({ dateFormat: 'DD/MM/YYYY', dateFormatAmbiguous: false })
    expect(res.json.data.items.map((item: Json) => item.data.date)).toEqual(['2026-02-01', '2026-03-05', '2026-03-13'])
  })

  test('every day ≤ 12: a real import without dateFormat is 422 and writes nothing; the dry run says it is ambiguous; dateFormat decides', async () => {
    const { key, account } = await setup()
    const csv = 'Date;Betrag;Text\n01/02/2026;-1,00;A\n05/03/2026;-2,00;B\n'
    const refused = await importFile(server, key, account, csv)
    expectProblem(refused, 422, 'rule_violation')
    expect(refused.json.detail).toStartWith('dateFormat required: dates are ambiguous')
    expect(await listAll(server, key, `?accountId=${account}`)).toEqual([])
    const dry = await importFile(server, key, account, csv, { dryRun: true })
    expect(dry.json.data.detected).toMatchObject({ dateFormatAmbiguous: true, dateFormat: 'DD/MM/YYYY' })
    const us = await importFile(server, key, account, csv, { dateFormat: 'MM/DD/YYYY' })
    expect(us.json.data.items.map((item: Json) => item.data.date)).toEqual(['2026-01-02', '2026-05-03'])
    expect(us.json.data.detected.dateFormatAmbiguous).toBe(false)
  })

  test('an owner in the US reads an ambiguous file month first in a dry run', async () => {
    const { key, account } = await setup({}, { country: 'US' })
    const dry = await importFile(server, key, account, 'Date,Amount,Payee\n01/02/2026,-1.00,A\n', { dryRun: true })
    expect(dry.json.data.detected.dateFormat).toBe('MM/DD/YYYY')
    expect(dry.json.data.items[0].data.date).toBe('2026-01-02')
  })
})

describe('money and text', () => {
  test('0.29 is stored exactly (camt.053), and DBIT lowers the balance by exactly that', async () => {
    const { key, account } = await setup({ accountNumber: 'DE89 3704 0044 0532 0130 00' })
    const res = await importFile(server, key, account, fixture('camt053-batch.xml'), {}, { 'content-type': 'application/xml' })
    expect(res.status).toBe(200)
    const fee = (await listAll(server, key, `?externalId=${encodeURIComponent(`imp:${account}:camt:2026010200001`)}`))[0]
    expect(units(String(fee.amount))).toBe(29_000_000n)
    expect(await balance(server, key, account)).toBe(-29_000_000n + 320_000_000_000n - 185_000_000_000n)
  })

  test('an entry of several TxDtls is one transaction whose legs are its payments, summing exactly', async () => {
    const { key, account } = await setup()
    const res = await importFile(server, key, account, fixture('camt053-batch.xml'))
    const item = res.json.data.items[2]
    expect(item.data.splits).toEqual([
      { amount: 1200, payeeName: 'Hausverwaltung Schmidt', note: 'Miete Januar 2026' },
      { amount: 450, payeeName: 'Stadtwerke München', note: 'Abschlag Strom Vertrag 4711' },
      { amount: 200, payeeName: 'Allianz Versicherungs-AG', note: 'Beitrag Hausrat' },
    ])
    const txn = (await listAll(server, key, `?externalId=${encodeURIComponent(item.externalId)}`))[0]
    expect(txn.amount).toBe(1850)
    expect(txn.splits.map((leg: Json) => leg.amount)).toEqual([1200, 450, 200])
    expect(ops(await importFile(server, key, account, fixture('camt053-batch.xml')))).toEqual(['unchanged', 'unchanged', 'unchanged'])
  })

  test('windows-1252: OFX by its CHARSET and an undeclared Sparkasse CSV both give € and é, ä, ü as written', async () => {
    const { key, account } = await setup({ currency: 'USD' })
    const ofx = await importFile(server, key, account, fixture('ofx1-checking.ofx'))
    expect(ofx.json.data.detected.encoding).toBe('windows-1252')
    expect(ofx.json.data.items[4].data).toMatchObject({ payeeName: 'CAFÉ DE FLORE', originalDescription: 'CAFÉ DE FLORE — CARD 1234 € 38.20' })
    expect(ofx.json.data.items[4].warnings).toEqual([])
    const payees = (await server.request('GET', '/v1/payees?q=caf%C3%A9', { key })).json.data
    expect(payees.map((p: Json) => p.name)).toEqual(['CAFÉ DE FLORE'])

    const eur = await setup()
    const csv = await importFile(server, eur.key, eur.account, fixture('csv-de-sparkasse.csv'), {}, { 'content-type': 'text/csv' })
    expect(csv.json.data.detected).toMatchObject({ encoding: 'windows-1252', delimiter: ';', dateFormat: 'DD.MM.YY' })
    expect(csv.json.data.items.map((item: Json) => item.data.payeeName)).toEqual(['REWE Markt GmbH', 'Muster AG', 'Stadtwerke Düsseldorf', 'Bäckerei Schäfer'])
    expect(csv.json.data.items[3].warnings[0]).toContain('windows-1252')
  })

  test('a payee alias found in the bank’s text names the payee', async () => {
    const { key, account } = await setup({ currency: 'USD' })
    await server.request('POST', '/v1/payees', { key, body: { name: 'Starbucks', aliases: ['starbucks store'] } })
    const res = await importFile(server, key, account, fixture('ofx1-checking.ofx'))
    expect(res.json.data.items[0].data.payeeName).toBe('Starbucks')
    const txn = (await listAll(server, key, `?externalId=${encodeURIComponent(res.json.data.items[0].externalId)}`))[0]
    const payee = (await server.request('GET', `/v1/payees/${txn.payeeId}`, { key })).json.data
    expect(payee.name).toBe('Starbucks')
  })
})

describe('dry run', () => {
  test('a dry run equals the real run item by item, and writes nothing', async () => {
    for (const [name, account] of [
      ['csv-uk-paid-out-in.csv', {}],
      ['camt053-batch.xml', {}],
      ['quicken-us.qif', { currency: 'USD' }],
      ['csv-nl-ing.csv', {}],
    ] as const) {
      const { key, account: id } = await setup(account, { country: 'US' })
      const cursor = await feedEnd(key)
      const dry = await importFile(server, key, id, fixture(name), { dryRun: true })
      expect(dry.status).toBe(200)
      expect((await server.request('GET', `/v1/changes?cursor=${cursor}`, { key })).json.data).toEqual([])
      const real = await importFile(server, key, id, fixture(name))
      expect({ name, items: real.json.data.items, summary: real.json.data.summary, statement: real.json.data.statement }).toEqual({
        name,
        items: dry.json.data.items,
        summary: dry.json.data.summary,
        statement: dry.json.data.statement,
      })
    }
  })

  test('a dry run reports every row with all its errors; the real run refuses at the first, naming its line, and writes nothing', async () => {
    const { key, account } = await setup()
    const csv = 'Date,Description,Amount\n2026-01-05,Good,-1.00\n2026-02-30,Bad date,-2.00\n2026-01-07,Bad amount,12.3456789012\n2026-01-08,Also good,-3.00\n'
    const dry = await importFile(server, key, account, csv, { dryRun: true })
    expect(dry.json.data.items.map((item: Json) => [item.line, item.operation, item.errors.map((e: Json) => `${e.field}: ${e.detail}`)])).toEqual([
      [2, 'created', []],
      [3, null, ['date: "2026-02-30" is not a date in the file\'s format YYYY-MM-DD']],
      [4, null, ['amount: amount must have at most 8 decimal places']],
      [5, 'created', []],
    ])
    expect(dry.json.data.summary.failed).toBe(2)
    const real = await importFile(server, key, account, csv)
    expectProblem(real, 422, 'validation_failed')
    expect(real.json.detail).toBe(
      'line 3: date: "2026-02-30" is not a date in the file\'s format YYYY-MM-DD (and 1 more rows with errors: send dryRun=true to see them all)',
    )
    expect(await listAll(server, key, `?accountId=${account}`)).toEqual([])
  })

  test('a row the batch refuses names its line in the real run', async () => {
    const { key, account } = await setup()
    const long = 'x'.repeat(2100)
    const csv = `Date,Description,Amount,Note\n2026-01-05,Fine,-1.00,\n2026-01-06,Long note,-2.00,${long}\n`
    // A note over 2,000 characters is cut with a warning, not refused.
    const res = await importFile(server, key, account, csv)
    expect(res.json.data.items[1].warnings[0]).toContain('longer than 2000')
    // The row at which the balance would leave the money range (§4) is named by its line, and nothing is written.
    const other = await setup()
    const txn = await importFile(
      server,
      other.key,
      other.account,
      'Date,Payee,Amount\n2026-01-05,Fine,-1.00\n2026-01-06,Fine,-92233720368.00\n2026-01-07,Fine,-1\n',
    )
    expectProblem(txn, 422, 'rule_violation')
    expect(txn.json.detail).toStartWith('line 3: The balance of account')
    expect(await listAll(server, other.key, `?accountId=${other.account}`)).toEqual([])
  })
})

describe('the statement', () => {
  test('the statement’s account against accountNumber: a mismatch is refused, a masked card number matches its end', async () => {
    const { key, account } = await setup({ currency: 'USD', accountNumber: '9999999999' })
    const refused = await importFile(server, key, account, fixture('ofx1-checking.ofx'))
    expectProblem(refused, 422, 'rule_violation')
    expect(refused.json.detail).toContain('"0001234567"')
    expect(await listAll(server, key, `?accountId=${account}`)).toEqual([])
    const card = await setup({ currency: 'USD', accountNumber: '4000 1234 5678 4821' })
    const ok = await importFile(server, card.key, card.account, fixture('ofx2-creditcard.ofx'))
    expect(ok.json.data.detected.statementAccount).toBe('XXXXXXXXXXXX4821')
    expect(ok.status).toBe(200)
  })

  test('the closing balance is compared with the account after the import, and never applied', async () => {
    const { key, account } = await setup({ balance: 100 })
    const file = ofxFile([{ fitid: 'B1', date: '2026-01-05', amount: '-10.00', name: 'Spend' }], { closing: '95.50' })
    const dry = await importFile(server, key, account, file, { dryRun: true })
    expect(dry.json.data.statement).toEqual({ closingBalance: 95.5, accountBalanceAfter: 90, difference: -5.5 })
    const real = await importFile(server, key, account, file)
    expect(real.json.data.statement).toEqual(dry.json.data.statement)
    expect(await balance(server, key, account)).toBe(9_000_000_000n)
    const none = await importFile(server, key, account, 'Date,Amount,Payee\n2026-01-20,-1.00,A\n')
    expect(none.json.data.statement).toBeNull()
  })

  test('a statement in another currency is refused', async () => {
    const { key, account } = await setup({ currency: 'EUR' })
    expectProblem(await importFile(server, key, account, fixture('ofx1-checking.ofx')), 422, 'rule_violation')
  })
})

describe('the request', () => {
  test('the JSON form: content, contentBase64 and the options beside them; options in the query then are refused', async () => {
    const { key, account } = await setup({ currency: 'USD' })
    const text = new TextDecoder('windows-1252').decode(fixture('ofx2-creditcard.ofx'))
    const asText = await server.request('POST', `/v1/accounts/${account}/imports`, { key, body: { content: text, dryRun: true } })
    expect(asText.status).toBe(200)
    expect(asText.json.data.summary.created).toBe(4)
    const base64 = Buffer.from(fixture('ofx1-checking.ofx')).toString('base64')
    const asBase64 = await server.request('POST', `/v1/accounts/${account}/imports`, { key, body: { contentBase64: base64, format: 'ofx' } })
    expect([asBase64.status, asBase64.json.data.detected.encoding]).toEqual([200, 'windows-1252'])
    expectProblem(await server.request('POST', `/v1/accounts/${account}/imports?dryRun=true`, { key, body: { content: text } }), 422, 'validation_failed')
    expectProblem(
      await server.request('POST', `/v1/accounts/${account}/imports`, { key, body: { content: text, contentBase64: base64 } }),
      422,
      'validation_failed',
    )
    expectProblem(await server.request('POST', `/v1/accounts/${account}/imports`, { key, body: {} }), 422, 'validation_failed')
    expectProblem(await server.request('POST', `/v1/accounts/${account}/imports`, { key, body: { contentBase64: '***' } }), 422, 'validation_failed')
  })

  test('presets: by id, inline, and an unknown id', async () => {
    const { key, account } = await setup()
    const csv = 'Bank XYZ export\nwhen;what;sum\n15/01/2026;Coffee;3,20\n'
    const layout = { delimiter: ';', skipRows: 1, amountPositiveIs: 'expense', columns: { date: 'when', description: 'what', amount: 'sum' } }
    const preset = (await server.request('POST', '/v1/import-presets', { key, body: { name: 'XYZ', ...layout } })).json.data
    const byId = await importFile(server, key, account, csv, { presetId: preset.id, dryRun: true })
    expect(byId.json.data.items[0].data).toMatchObject({ date: '2026-01-15', amount: 3.2, payeeName: 'Coffee' })
    expect(byId.json.data.detected.columns).toMatchObject({ date: 'when', amount: 'sum', description: 'what', payee: null, inflow: null })
    const inline = await server.request('POST', `/v1/accounts/${account}/imports`, { key, body: { content: csv, dryRun: true, preset: layout } })
    expect(inline.json.data.items).toEqual(byId.json.data.items)
    expectProblem(await importFile(server, key, account, csv, { presetId: 'imp_nope' }), 422, 'invalid_reference')
    const columnsMissing = await importFile(server, key, account, 'Wann,Was\n1,2\n')
    expectProblem(columnsMissing, 422, 'rule_violation')
    expect(columnsMissing.json.detail).toContain('columns found: "Wann", "Was"')
  })

  test('Idempotency-Key: the same file again replays; a dry run and a real run of one file are different requests', async () => {
    const { key, account } = await setup()
    const file = ofxFile([{ fitid: 'I1', date: '2026-01-05', amount: '-1.00', name: 'Once' }])
    const post = (query: string, idempotencyKey: string) =>
      fetch(`${server.url}/v1/accounts/${account}/imports${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': idempotencyKey },
        body: file,
      })
    const first = await post('', 'k1')
    const replay = await post('', 'k1')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await replay.text()).toBe(await first.text())
    expect((await post('?dryRun=true', 'k1')).status).toBe(409)
    expect((await post('', 'k2')).status).toBe(200)
  })

  test('limits and refusals: 404 account, 413 past 4 MiB, 415 compressed, 5,000 rows, an empty body, a scope', async () => {
    const { key, account } = await setup()
    expectProblem(await importFile(server, key, 'acct_nope', 'Date,Amount\n2026-01-01,1\n'), 404, 'not_found')
    expectProblem(await importFile(server, key, account, new Uint8Array(4 * 1024 * 1024 + 1)), 413, 'payload_too_large')
    expectProblem(await importFile(server, key, account, 'x', {}, { 'content-encoding': 'gzip' }), 415, 'unsupported_media_type')
    const big = `Date,Amount,Payee\n${'2026-01-15,-1.00,A\n'.repeat(5001)}`
    const tooMany = await importFile(server, key, account, big)
    expectProblem(tooMany, 422, 'rule_violation')
    expect(tooMany.json.detail).toContain('more than 5000 rows')
    const empty = await fetch(`${server.url}/v1/accounts/${account}/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'e' },
    })
    expect(empty.status).toBe(422)
    expectProblem(await importFile(server, key, account, 'x', { format: 'pdf' }), 422, 'validation_failed')
    expectProblem(await importFile(server, key, account, 'x', { encoding: 'klingon' }), 422, 'validation_failed')
    const owner = await server.owner()
    const reader = await server.key(owner.id, { scopes: ['transactions:read'] })
    expectProblem(await importFile(server, reader.key, account, 'x'), 403, 'insufficient_scope')
  })
})

describe('every fixture', () => {
  test('each of the 13 fixture files imports whole', async () => {
    const expected: Record<string, [string, number, Json?]> = {
      'ofx1-checking.ofx': ['ofx', 5, { currency: 'USD' }],
      'ofx2-creditcard.ofx': ['ofx', 4, { currency: 'USD' }],
      'quicken.qfx': ['qfx', 3, { currency: 'USD' }],
      'quicken-us.qif': ['qif', 4],
      'european.qif': ['qif', 3],
      'camt053-batch.xml': ['camt053', 3],
      'csv-en-chase.csv': ['csv', 5],
      'csv-uk-paid-out-in.csv': ['csv', 5],
      'csv-de-sparkasse.csv': ['csv', 4],
      'csv-fr-debit-credit.csv': ['csv', 5],
      'csv-nl-ing.csv': ['csv', 4],
      'csv-es-movimientos.csv': ['csv', 4],
      'csv-pt-nubank.csv': ['csv', 4],
    }
    for (const [name, [format, rows, account]] of Object.entries(expected)) {
      const { key, account: id } = await setup(account ?? {}, { country: name.includes('chase') || name.includes('us') ? 'US' : 'PT' })
      const res = await importFile(server, key, id, fixture(name))
      expect({ name, status: res.status, format: res.json.data?.detected.format, created: res.json.data?.summary.created }).toEqual({
        name,
        status: 200,
        format,
        created: rows,
      })
    }
  })
})
