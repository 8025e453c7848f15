import { describe, expect, test } from 'bun:test'
import { FormatError, TooManyRowsError } from '../../src/modules/imports/formats/types.ts'
import { brief, fixture, readAndResolve } from './helpers.ts'

/**
 * Each format's reader on the fixture files (test/imports/fixtures/README.md says which bank's
 * export each imitates): the rows, pfin's sign (positive = expense), dates, ids, and what the
 * statement says of its account and closing balance (CONTRACT §24).
 */

describe('OFX', () => {
  test('OFX 1.x SGML, windows-1252 by its CHARSET: leaves without end tags, FITIDs, amounts negated, LEDGERBAL', () => {
    const { decoded, file, statement, rows } = readAndResolve(fixture('ofx1-checking.ofx'))
    expect([file.format, decoded.encoding, decoded.guessed]).toEqual(['ofx', 'windows-1252', false])
    expect([statement.account, statement.currency, statement.closingBalance]).toEqual(['0001234567', 'USD', '2336.76'])
    expect(rows.map(brief)).toEqual([
      ['2026-01-02', '4.75', 'STARBUCKS STORE 10234', 'PURCHASE AUTHORIZED ON 01/01 STARBUCKS STORE 10234 SEATTLE WA'],
      ['2026-01-05', '-2500', 'ACME CORP PAYROLL', 'DIRECT DEP PPD ID: 1234567890'],
      ['2026-01-07', '0.29', 'MONTHLY SERVICE FEE', null],
      ['2026-01-10', '120', null, 'Check 1042'],
      ['2026-01-12', '38.2', 'CAFÉ DE FLORE', 'CARD 1234 € 38.20'],
    ])
    expect(rows.map((row) => row.externalId)).toEqual(
      ['202601021', '202601051', '202601071', '202601101', '202601121'].map((id) => `imp:acct_test:fitid:${id}`),
    )
    expect(rows.map((row) => row.line)).toEqual([39, 47, 55, 62, 69])
  })

  test('OFX 2.x XML credit card: CCACCTFROM, entities, a negative closing balance (owed)', () => {
    const { file, statement, rows } = readAndResolve(fixture('ofx2-creditcard.ofx'))
    expect(file.format).toBe('ofx')
    expect([statement.account, statement.closingBalance]).toEqual(['XXXXXXXXXXXX4821', '-1286.89'])
    expect(rows.map(brief)).toEqual([
      ['2026-01-03', '62.4', 'WHOLE FOODS MARKET #10', 'GROCERY STORES'],
      ['2026-01-09', '15.99', 'NETFLIX.COM', '866-579-7172 CA'],
      ['2026-01-20', '-500', 'PAYMENT - THANK YOU', null],
      ['2026-01-25', '8.5', 'AT&T MOBILITY', null],
    ])
  })

  test('QFX: OFX with INTU.BID, everything on one line, an empty MEMO that does not swallow the next tag', () => {
    const { file, rows } = readAndResolve(fixture('quicken.qfx'))
    expect(file.format).toBe('qfx')
    expect(rows.map(brief)).toEqual([
      ['2026-01-04', '54.12', 'SHELL OIL 57444', 'CARD PURCHASE'],
      ['2026-01-06', '1200', 'RENT PAYMENT ZELLE', null],
      ['2026-01-15', '-1800', 'EMPLOYER INC DIR DEP', null],
    ])
    expect(rows[0]?.externalId).toBe('imp:acct_test:fitid:20260104 54.12 0000001')
  })

  test('a FITID reused on a different row gets :2 and a warning; the same row repeated is a duplicate', () => {
    const trn = (fitid: string, amount: string, name: string) =>
      `<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260105<TRNAMT>${amount}<FITID>${fitid}<NAME>${name}</STMTTRN>`
    const ofx = `OFXHEADER:100\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR<BANKACCTFROM><ACCTID>1</BANKACCTFROM><BANKTRANLIST>${trn('A', '-1.00', 'One')}${trn('A', '-2.00', 'Two')}${trn('A', '-1.00', 'One')}${trn('A', '-3.00', 'Three')}</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>`
    const { rows } = readAndResolve(new TextEncoder().encode(ofx))
    expect(rows.map((row) => [row.externalId, row.duplicate])).toEqual([
      ['imp:acct_test:fitid:A', false],
      ['imp:acct_test:fitid:A:2', false],
      ['imp:acct_test:fitid:A', true],
      ['imp:acct_test:fitid:A:3', false],
    ])
    expect(rows[1]?.warnings[0]).toContain('also used by line 2')
  })

  test('an investment statement is refused, and a file without statements says so', () => {
    expect(() =>
      readAndResolve(new TextEncoder().encode('<OFX><INVSTMTMSGSRSV1><INVSTMTTRNRS><INVSTMTRS></INVSTMTRS></INVSTMTTRNRS></INVSTMTMSGSRSV1></OFX>')),
    ).toThrow(FormatError)
    expect(() => readAndResolve(new TextEncoder().encode('OFXHEADER:100\n<OFX><SIGNONMSGSRSV1></SIGNONMSGSRSV1></OFX>'))).toThrow(
      'no bank or credit-card statement',
    )
  })
})

describe('QIF', () => {
  test('US Quicken: apostrophe years, month first, grouped amounts; two equal rows stay two (row ids :1 and :2)', () => {
    const { resolution, rows } = readAndResolve(fixture('quicken-us.qif'))
    expect([resolution.dateFormat, resolution.dateFormatAmbiguous]).toEqual(["MM/DD'YY", false])
    expect(rows.map(brief)).toEqual([
      ['2026-01-02', '4.75', 'Starbucks', 'Coffee'],
      ['2026-01-05', '-2500', 'Acme Corp Payroll', null],
      ['2026-01-13', '89.99', 'City Power & Light', null],
      ['2026-01-13', '89.99', 'City Power & Light', null],
    ])
    expect(rows.slice(2).map((row) => row.externalId)).toEqual(['imp:acct_test:row:2026-01-13:8999000000:1', 'imp:acct_test:row:2026-01-13:8999000000:2'])
  })

  test('European Quicken: DD.MM.YYYY and a decimal comma', () => {
    const { resolution, rows } = readAndResolve(fixture('european.qif'))
    expect(resolution.dateFormat).toBe('DD.MM.YYYY')
    expect(rows.map(brief)).toEqual([
      ['2026-01-02', '1234.56', 'MediaMarkt Berlin', 'Fernseher'],
      ['2026-01-13', '7.5', 'Bäckerei Müller', null],
      ['2026-01-20', '-250', 'Gutschrift', null],
    ])
  })

  test('an investment list is refused', () => {
    expect(() => readAndResolve(new TextEncoder().encode('!Type:Invst\nD1/1/26\n^\n'))).toThrow('investment')
  })
})

describe('camt.053', () => {
  test('DBIT positive, CRDT negative, 0.29 exact, IBAN and CLBD, booking date, pending entries left out', () => {
    const { file, statement, rows } = readAndResolve(fixture('camt053-batch.xml'))
    expect(file.format).toBe('camt053')
    expect([statement.account, statement.currency, statement.closingBalance]).toEqual(['DE89370400440532013000', 'EUR', '2849.71'])
    expect(rows.map(brief)).toEqual([
      ['2026-01-02', '0.29', 'Commerzbank AG', 'Kontoführung Januar'],
      ['2026-01-05', '-3200', 'Beispiel GmbH', 'Lohn/Gehalt 01/2026'],
      ['2026-01-10', '1850', null, 'SAMMLER-UEBERWEISUNG 3 POSTEN'],
    ])
    expect(rows.map((row) => row.externalId)).toEqual(['2026010200001', '2026010500002', '2026011000003'].map((ref) => `imp:acct_test:camt:${ref}`))
  })

  test('an entry of several TxDtls keeps each detail’s amount, counterparty and text as legs summing to the entry', () => {
    const { rows } = readAndResolve(fixture('camt053-batch.xml'))
    expect(rows[2]?.legs?.map((leg) => [String(leg.units), leg.payee, leg.description])).toEqual([
      ['120000000000', 'Hausverwaltung Schmidt', 'Miete Januar 2026'],
      ['45000000000', 'Stadtwerke München', 'Abschlag Strom Vertrag 4711'],
      ['20000000000', 'Allianz Versicherungs-AG', 'Beitrag Hausrat'],
    ])
  })

  test('details that do not sum to the entry: one transaction and a warning', () => {
    const text = new TextDecoder().decode(fixture('camt053-batch.xml')).replace('<Amt Ccy="EUR">200.00</Amt>', '<Amt Ccy="EUR">199.99</Amt>')
    const { rows } = readAndResolve(new TextEncoder().encode(text))
    expect(rows[2]?.legs).toBeNull()
    expect(rows[2]?.warnings[0]).toContain('do not sum')
  })

  test('a DOCTYPE is refused before anything is expanded; other ISO 20022 messages are named', () => {
    expect(() => readAndResolve(new TextEncoder().encode('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]><Document/>'))).toThrow(
      'document type declaration',
    )
    expect(() => readAndResolve(new TextEncoder().encode('<Document><BkToCstmrAcctRpt/></Document>'))).toThrow('BkToCstmrAcctRpt')
  })
})

describe('CSV', () => {
  test('English (Chase): comma, MM/DD/YYYY, one signed column, the description as the text', () => {
    const { file, resolution, rows } = readAndResolve(fixture('csv-en-chase.csv'))
    expect([file.delimiter, resolution.dateFormat]).toEqual([',', 'MM/DD/YYYY'])
    expect(file.columns).toEqual({ description: 'Description', date: 'Posting Date', amount: 'Amount' })
    expect(rows.map(brief)[0]).toEqual(['2026-01-30', '23.97', null, 'AMAZON MKTPL*2K4LL0J72 Amzn.com/bill WA'])
    expect(rows[1]?.units).toBe(-180_000_000_000n)
  })

  test('English (UK): account lines above the header, Paid out / Paid in with £', () => {
    const { file, rows } = readAndResolve(fixture('csv-uk-paid-out-in.csv'))
    expect(file.columns).toEqual({ date: 'Date', description: 'Description', outflow: 'Paid out', inflow: 'Paid in' })
    expect(rows.map(brief)).toEqual([
      ['2026-01-02', '24.18', null, 'TESCO STORES 3217'],
      ['2026-01-05', '38', null, 'THAMES WATER'],
      ['2026-01-13', '-2150', null, 'EMPLOYER LTD SALARY'],
      ['2026-01-20', '1250', null, 'RENT JANUARY'],
      ['2026-01-28', '6.45', null, 'PRET A MANGER'],
    ])
    expect(rows[0]?.line).toBe(6)
  })

  test('German (Sparkasse): semicolon, DD.MM.YY, decimal comma, windows-1252 guessed and warned on the rows it touched', () => {
    const { decoded, file, resolution, rows } = readAndResolve(fixture('csv-de-sparkasse.csv'))
    expect([decoded.encoding, decoded.guessed, file.delimiter, resolution.dateFormat]).toEqual(['windows-1252', true, ';', 'DD.MM.YY'])
    expect(file.columns).toMatchObject({ date: 'Buchungstag', amount: 'Betrag', payee: 'Beguenstigter/Zahlungspflichtiger', description: 'Verwendungszweck' })
    expect(rows.map(brief)).toEqual([
      ['2026-01-30', '23.45', 'REWE Markt GmbH', '2026-01-29T18:22 Debitk.1 2028-12'],
      ['2026-01-15', '-2850', 'Muster AG', 'Gehalt Januar'],
      ['2026-01-13', '89', 'Stadtwerke Düsseldorf', 'Strom Abschlag 01/26'],
      ['2026-01-02', '4.8', 'Bäckerei Schäfer', '2026-01-01 Debitk.1'],
    ])
    expect(rows.map((row) => row.warnings.length)).toEqual([0, 0, 1, 1])
  })

  test('French: lines above the header, Débit / Crédit, "1 234,56", a footer with the balance', () => {
    const { decoded, rows } = readAndResolve(fixture('csv-fr-debit-credit.csv'))
    expect(decoded.encoding).toBe('utf-8')
    expect(rows.map(brief)).toEqual([
      ['2026-01-02', '54.3', null, 'CARTE X1234 01/01 CARREFOUR MARKET'],
      ['2026-01-05', '72', null, 'PRLV SEPA EDF SA'],
      ['2026-01-10', '-2650', null, 'VIR SEPA SALAIRE JANVIER SOCIETE DUPONT'],
      ['2026-01-13', '6.9', null, 'CARTE X1234 12/01 BOULANGERIE PAUL'],
      ['2026-01-25', '1234.56', null, 'CHQ 0001234'],
    ])
  })

  test('Dutch (ING): YYYYMMDD, an Af/Bij indicator, the currency in the header', () => {
    const { file, statement, resolution, rows } = readAndResolve(fixture('csv-nl-ing.csv'))
    expect([resolution.dateFormat, statement.currency]).toEqual(['YYYYMMDD', 'EUR'])
    expect(file.columns).toMatchObject({ indicator: 'Af Bij', amount: 'Bedrag (EUR)', payee: 'Naam / Omschrijving' })
    expect(rows.map((row) => brief(row).slice(0, 3))).toEqual([
      ['2026-01-31', '23.17', 'Albert Heijn 1234 AMSTERDAM NLD'],
      ['2026-01-25', '-3150', 'Werkgever B.V.'],
      ['2026-01-14', '104.5', 'NS Groep IZ NS Reizigers'],
      ['2026-01-03', '61', 'Gemeente Amsterdam'],
    ])
  })

  test('Spanish: a title line, Fecha / Concepto / Importe, "1.980,00"', () => {
    const { rows } = readAndResolve(fixture('csv-es-movimientos.csv'))
    expect(rows.map(brief)[1]).toEqual(['2026-01-28', '-1980', null, 'TRANSFERENCIA RECIBIDA NOMINA EMPRESA SL'])
  })

  test('Portuguese (Nubank): an id column makes ref ids; two equal boletos stay two', () => {
    const { file, rows } = readAndResolve(fixture('csv-pt-nubank.csv'))
    expect(file.columns).toMatchObject({ date: 'Data', amount: 'Valor', externalId: 'Identificador', description: 'Descrição' })
    expect(rows.map((row) => row.externalId?.split(':').slice(2, 3)[0])).toEqual(['ref', 'ref', 'ref', 'ref'])
    expect(new Set(rows.map((row) => row.externalId)).size).toBe(4)
  })

  test('a preset names the columns by header or position, the sign, the header row and what to skip', () => {
    const text = 'Bank export\nwhen;what;out/in\n15/01/2026;Coffee;3,20\n16/01/2026;Refund;-1,00\nend\n'
    const { rows } = readAndResolve(new TextEncoder().encode(text), {
      csv: {
        delimiter: ';',
        skipRows: 2,
        headerRow: false,
        skipFooterRows: 1,
        decimalSeparator: ',',
        amountPositiveIs: 'expense',
        columns: { date: 1, amount: 3, description: 2 },
      },
    })
    expect(rows.map(brief)).toEqual([
      ['2026-01-15', '3.2', null, 'Coffee'],
      ['2026-01-16', '-1', null, 'Refund'],
    ])
  })

  test('columns that cannot be found: the error lists the columns found', () => {
    expect(() => readAndResolve(new TextEncoder().encode('Wann,Was,Wieviel\n1,2,3\n'))).toThrow('columns found: "Wann", "Was", "Wieviel"')
  })

  test('a quoted field that never closes, and a row of more than 200 fields, are refused', () => {
    expect(() => readAndResolve(new TextEncoder().encode('Date,Amount\n"2026-01-01,1\n'))).toThrow('never closed')
    expect(() => readAndResolve(new TextEncoder().encode(`Date,Amount\n${','.repeat(300)}\n`))).toThrow('more than 200 fields')
  })

  test('more than 5,000 rows is refused as soon as the 5,001st is seen', () => {
    const text = `Date,Amount\n${'2026-01-01,1.00\n'.repeat(5001)}`
    expect(() => readAndResolve(new TextEncoder().encode(text))).toThrow(TooManyRowsError)
  })
})
