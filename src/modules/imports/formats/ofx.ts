import { child, childrenNamed, lineCounter, MarkupError, type MarkupNode, readMarkup, TooManyRows, textAt } from './markup.ts'
import { clean, FormatError, MAX_IMPORT_ROWS, type ParsedFile, type RawRow, type RawStatement, TooManyRowsError } from './types.ts'

/**
 * OFX and QFX statements (CONTRACT §24): OFX 1.x SGML (a `KEY:VALUE` header, then tags whose
 * leaf elements have no end tag) and OFX 2.x XML are read by the same tree builder in SGML mode,
 * since XML's end tags only close what SGML would close anyway. Bank and credit-card statements;
 * investment statements are refused. Dates are the first 8 digits of DTPOSTED; amounts are
 * negated (OFX: negative = money out; pfin: positive = expense).
 */

/** The OFX aggregates (elements that hold elements), so an empty leaf (`<MEMO>` then `<NAME>`) still ends at the next tag. */
const AGGREGATES = new Set([
  'OFX',
  'SIGNONMSGSRSV1',
  'SONRS',
  'STATUS',
  'FI',
  'BANKMSGSRSV1',
  'STMTTRNRS',
  'STMTRS',
  'BANKACCTFROM',
  'BANKACCTTO',
  'BANKTRANLIST',
  'STMTTRN',
  'PAYEE',
  'LEDGERBAL',
  'AVAILBAL',
  'BALLIST',
  'BAL',
  'CURRENCY',
  'ORIGCURRENCY',
  'CREDITCARDMSGSRSV1',
  'CCSTMTTRNRS',
  'CCSTMTRS',
  'CCACCTFROM',
  'CCACCTTO',
  'STMTENDTRNRS',
  'STMTENDRS',
  'CCSTMTENDTRNRS',
  'CCSTMTENDRS',
  'CLOSING',
  'INVSTMTMSGSRSV1',
  'INVSTMTTRNRS',
  'INVSTMTRS',
  'INVACCTFROM',
  'INVTRANLIST',
  'EXTBANKACCTTO',
  'SIGNUPMSGSRSV1',
  'ACCTINFOTRNRS',
  'ACCTINFORS',
  'ACCTINFO',
  'BANKACCTINFO',
  'CCACCTINFO',
  'MSGSETLIST',
  'IMAGEDATA',
])

// A 5,000-row statement has at most some 13 elements a row (STMTTRN, its fields, a PAYEE): 100,000 is room enough.
const LIMITS = { maxDepth: 32, maxTags: 200_000, maxElements: 100_000, rows: { name: 'STMTTRN', max: MAX_IMPORT_ROWS } }

/** `20260115120000.000[-5:EST]` → `2026-01-15`; the text itself when its first 8 characters are not digits (the row then fails on its date). */
function ofxDate(text: string | null): string {
  if (text === null) return ''
  const digits = /^\s*(\d{4})(\d{2})(\d{2})/.exec(text)
  return digits ? `${digits[1]}-${digits[2]}-${digits[3]}` : text
}

/** An OFX amount: `-30.00`, `+30.00`, `.5`; a few banks write a decimal comma (`-30,00`), read as such when there is no point. */
const ofxAmount = (text: string) => (text.includes(',') && !text.includes('.') ? text.replace(',', '.') : text)

function row(transaction: MarkupNode, lineOf: (at: number) => number): RawRow {
  const errors: RawRow['errors'] = []
  const posted = textAt(transaction, 'DTPOSTED') ?? textAt(transaction, 'DTUSER')
  if (posted === null) errors.push({ field: 'date', detail: 'the transaction has no DTPOSTED' })
  const amount = textAt(transaction, 'TRNAMT')
  if (amount === null) errors.push({ field: 'amount', detail: 'the transaction has no TRNAMT' })
  const name = textAt(transaction, 'NAME') ?? textAt(transaction, 'PAYEE', 'NAME') ?? textAt(transaction, 'EXTDNAME')
  const memo = textAt(transaction, 'MEMO')
  const check = textAt(transaction, 'CHECKNUM')
  return {
    line: lineOf(transaction.at),
    dateText: ofxDate(posted),
    amount: amount === null ? null : { kind: 'signed', text: ofxAmount(amount), negate: true },
    bankId: clean(textAt(transaction, 'FITID')),
    payee: clean(name),
    description: clean(memo ?? (check !== null && name === null ? `Check ${check}` : null)),
    note: null,
    currency: null,
    legs: null,
    errors,
  }
}

function statement(node: MarkupNode, lineOf: (at: number) => number): RawStatement {
  const account = textAt(node, 'BANKACCTFROM', 'ACCTID') ?? textAt(node, 'CCACCTFROM', 'ACCTID')
  const transactions = childrenNamed(child(node, 'BANKTRANLIST'), 'STMTTRN')
  return {
    account: clean(account),
    currency: clean(textAt(node, 'CURDEF')),
    closingBalance: textAt(node, 'LEDGERBAL', 'BALAMT'),
    rows: transactions.map((transaction) => row(transaction, lineOf)),
  }
}

/** Every STMTRS and CCSTMTRS of the file, wherever its message sets put them. */
function statementsIn(node: MarkupNode, found: MarkupNode[]): MarkupNode[] {
  for (const element of node.children) {
    if (element.name === 'STMTRS' || element.name === 'CCSTMTRS') found.push(element)
    else if (element.name === 'INVSTMTRS')
      throw new FormatError('the file is an investment statement (INVSTMTRS), which is not imported; export the bank or card account')
    else if (element.children.length > 0) statementsIn(element, found)
  }
  return found
}

export function readOfx(text: string, qfx: boolean): ParsedFile {
  const start = text.indexOf('<')
  if (start < 0 || !/<OFX>/i.test(text)) throw new FormatError('the file has no <OFX> element: it is not an OFX statement')
  let root: MarkupNode
  try {
    root = readMarkup(text, start, LIMITS, { aggregates: AGGREGATES })
  } catch (error) {
    if (error instanceof TooManyRows) throw new TooManyRowsError()
    if (error instanceof MarkupError) throw new FormatError(`the OFX file cannot be read: ${error.message}`)
    throw error
  }
  const lineOf = lineCounter(text)
  const statements = statementsIn(root, []).map((node) => statement(node, lineOf))
  if (statements.length === 0) throw new FormatError('the OFX file holds no bank or credit-card statement (STMTRS or CCSTMTRS)')
  return {
    format: qfx ? 'qfx' : 'ofx',
    idKind: 'fitid',
    decimalSeparator: '.',
    amountAffixes: false,
    fixedDateFormat: 'YYYYMMDD',
    delimiter: null,
    columns: null,
    descriptionNamesPayee: false,
    statements,
  }
}
