import { child, childrenNamed, lineCounter, MarkupError, type MarkupNode, readMarkup, TooManyRows, textAt } from './markup.ts'
import { clean, FormatError, MAX_IMPORT_ROWS, type ParsedFile, type RawLeg, type RawRow, TooManyRowsError } from './types.ts'

/**
 * ISO 20022 camt.053 bank-to-customer statements, versions .001.02 to .001.13 (CONTRACT §24).
 * One row per booked entry (`Ntry`; pending or informational ones are left out): its amount is
 * positive for `DBIT` (money out, an expense in pfin) and negative for `CRDT`; its date is the
 * booking date, else the value date; its id is AcctSvcrRef, else NtryRef. An entry that books
 * several payments at once (several `TxDtls`) carries each one's amount, counterparty and
 * remittance text, which become the legs of one transaction when they sum to the entry.
 */

const LIMITS = { maxDepth: 40, maxTags: 800_000, maxElements: 400_000, rows: { name: 'Ntry', max: MAX_IMPORT_ROWS } }

/** `2026-01-15` or the date of `2026-01-15T10:22:00+01:00`. */
const dateOf = (node: MarkupNode | undefined): string | null => {
  const text = textAt(node, 'Dt') ?? textAt(node, 'DtTm')
  return text === null ? null : text.slice(0, 10)
}

/** A party's name: `Cdtr/Nm` (up to version 7) or `Cdtr/Pty/Nm` (8 on). */
const partyName = (parties: MarkupNode | undefined, role: 'Cdtr' | 'Dbtr'): string | null =>
  textAt(parties, role, 'Nm') ?? textAt(parties, role, 'Pty', 'Nm') ?? textAt(parties, `Ultmt${role}`, 'Nm')

/** The remittance text: the unstructured lines joined, else the structured reference. */
function remittance(details: MarkupNode | undefined): string | null {
  const info = child(details, 'RmtInf')
  const lines = childrenNamed(info, 'Ustrd').map((node) => node.text)
  if (lines.length > 0) return clean(lines.join(' '))
  return clean(textAt(info, 'Strd', 'CdtrRefInf', 'Ref') ?? textAt(details, 'AddtlTxInf'))
}

/** The detail's own amount: `Amt` (version 3 on) or `AmtDtls/TxAmt/Amt`. */
const detailAmount = (details: MarkupNode): string | null => textAt(details, 'Amt') ?? textAt(details, 'AmtDtls', 'TxAmt', 'Amt')

function entryRow(entry: MarkupNode, lineOf: (at: number) => number): RawRow | null {
  // `Sts` is a code (BOOK) up to version 7 and `Sts/Cd` from 8 on.
  const status = textAt(entry, 'Sts') ?? textAt(entry, 'Sts', 'Cd')
  if (status !== null && status !== 'BOOK') return null
  const errors: RawRow['errors'] = []
  const indicator = textAt(entry, 'CdtDbtInd')
  if (indicator !== 'DBIT' && indicator !== 'CRDT')
    errors.push({ field: 'amount', detail: `CdtDbtInd must be DBIT or CRDT (it is ${JSON.stringify(indicator ?? '')})` })
  const amount = textAt(entry, 'Amt')
  if (amount === null) errors.push({ field: 'amount', detail: 'the entry has no Amt' })
  const date = dateOf(child(entry, 'BookgDt')) ?? dateOf(child(entry, 'ValDt'))
  if (date === null) errors.push({ field: 'date', detail: 'the entry has neither a booking date (BookgDt) nor a value date (ValDt)' })
  const details = childrenNamed(entry, 'NtryDtls').flatMap((node) => childrenNamed(node, 'TxDtls'))
  // The counterparty: the creditor of a payment out, the debtor of money in.
  const role = indicator === 'CRDT' ? 'Dbtr' : 'Cdtr'
  const first = details[0]
  const legs: RawLeg[] | null =
    details.length > 1 && details.every((detail) => detailAmount(detail) !== null)
      ? details.map((detail) => ({
          amount: detailAmount(detail) as string,
          payee: clean(partyName(child(detail, 'RltdPties'), role)),
          description: remittance(detail),
        }))
      : null
  return {
    line: lineOf(entry.at),
    dateText: date ?? '',
    amount: amount === null ? null : { kind: 'signed', text: amount, negate: indicator === 'CRDT' },
    bankId: clean(textAt(entry, 'AcctSvcrRef') ?? textAt(entry, 'NtryRef')),
    payee: details.length === 1 && first ? clean(partyName(child(first, 'RltdPties'), role)) : null,
    description: (details.length === 1 && first ? remittance(first) : null) ?? clean(textAt(entry, 'AddtlNtryInf')),
    note: null,
    currency: clean(child(entry, 'Amt')?.attributes?.Ccy),
    legs,
    errors,
  }
}

/** The closing booked balance (CLBD), signed: credit (money there) positive, debit (overdrawn) negative. */
function closingBalance(statement: MarkupNode): string | null {
  for (const balance of childrenNamed(statement, 'Bal')) {
    const code = textAt(balance, 'Tp', 'CdOrPrtry', 'Cd')
    const amount = textAt(balance, 'Amt')
    if (code !== 'CLBD' || amount === null) continue
    return textAt(balance, 'CdtDbtInd') === 'DBIT' ? `-${amount}` : amount
  }
  return null
}

export function readCamt053(text: string): ParsedFile {
  let root: MarkupNode
  try {
    root = readMarkup(text, 0, LIMITS)
  } catch (error) {
    if (error instanceof TooManyRows) throw new TooManyRowsError()
    if (error instanceof MarkupError) throw new FormatError(`the CAMT file cannot be read as XML: ${error.message}`)
    throw error
  }
  const report = child(root, 'Document', 'BkToCstmrStmt')
  if (!report) {
    const found = child(root, 'Document')?.children[0]?.name
    throw new FormatError(
      found
        ? `the file is ISO 20022 ${found}, not a camt.053 statement (BkToCstmrStmt)`
        : 'the file is not a camt.053 statement: it has no Document/BkToCstmrStmt',
    )
  }
  const lineOf = lineCounter(text)
  const statements = childrenNamed(report, 'Stmt').map((node) => ({
    account: clean(textAt(node, 'Acct', 'Id', 'IBAN') ?? textAt(node, 'Acct', 'Id', 'Othr', 'Id')),
    currency: clean(textAt(node, 'Acct', 'Ccy')),
    closingBalance: closingBalance(node),
    rows: childrenNamed(node, 'Ntry').flatMap((entry) => entryRow(entry, lineOf) ?? []),
  }))
  if (statements.length === 0) throw new FormatError('the camt.053 file holds no statement (Stmt)')
  return {
    format: 'camt053',
    idKind: 'camt',
    decimalSeparator: '.',
    amountAffixes: false,
    fixedDateFormat: 'YYYY-MM-DD',
    delimiter: null,
    columns: null,
    descriptionNamesPayee: false,
    statements,
  }
}
