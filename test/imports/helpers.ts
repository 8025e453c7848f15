import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CsvLayout } from '../../src/modules/imports/formats/csv.ts'
import type { ImportFormat } from '../../src/modules/imports/formats/types.ts'
import { readStatementFile } from '../../src/modules/imports/read.ts'
import { resolveRows } from '../../src/modules/imports/statement.ts'

/** Shared by the import tests: the fixture files, and a file read and resolved the way the import route does. */

export const FIXTURES = join(import.meta.dir, 'fixtures')
export const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)))

export function readAndResolve(
  bytes: Uint8Array,
  options: { format?: ImportFormat | 'auto'; csv?: CsvLayout; dateFormat?: string; accountCurrency?: string; country?: 'US' | null } = {},
) {
  const { decoded, file } = readStatementFile(bytes, { format: options.format ?? 'auto', csv: options.csv ?? {} })
  const statement = file.statements[0]
  if (!statement) throw new Error('no statement')
  const resolution = resolveRows(file, statement.rows, {
    accountId: 'acct_test',
    accountCurrency: options.accountCurrency ?? statement.currency ?? 'EUR',
    dateFormat: options.dateFormat ?? null,
    preference: options.country === 'US' ? ['MDY', 'DMY', 'YMD'] : ['DMY', 'MDY', 'YMD'],
    encodingGuessed: decoded.guessed,
  })
  return { decoded, file, statement, resolution, rows: resolution.rows }
}

/** A row as the tests compare it: date, amount as a decimal string in pfin's sign, payee, description. */
export const brief = (row: { date: string | null; units: bigint | null; payee: string | null; description: string | null }) => [
  row.date,
  row.units === null ? null : decimal(row.units),
  row.payee,
  row.description,
]

export function decimal(units: bigint): string {
  const negative = units < 0n
  const digits = (negative ? -units : units).toString().padStart(9, '0')
  const whole = digits.slice(0, -8)
  const fraction = digits.slice(-8).replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`
}

/** A file POSTed as the body of `POST /v1/accounts/{id}/imports`, as `curl --data-binary` sends it; options in the query. */
export async function importFile(
  server: { url: string },
  key: string,
  accountId: string,
  file: Uint8Array | string,
  query: Record<string, string | boolean> = {},
  headers: Record<string, string> = {},
) {
  const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)])).toString()
  const response = await fetch(`${server.url}/v1/accounts/${accountId}/imports${search ? `?${search}` : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/octet-stream', ...headers },
    body: file,
  })
  const text = await response.text()
  // biome-ignore lint/suspicious/noExplicitAny: response JSON
  let json: any
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: response.status, headers: response.headers, text, json }
}

export interface OfxRow {
  fitid: string
  date: string
  amount: string
  name: string
}

/** An OFX 1.x statement of `rows` (a bank's download of one period), as the tests need many of them. */
export function ofxFile(rows: OfxRow[], options: { account?: string; currency?: string; closing?: string } = {}): string {
  const transactions = rows
    .map(
      (row) =>
        `<STMTTRN>\r\n<TRNTYPE>${row.amount.startsWith('-') ? 'DEBIT' : 'CREDIT'}\r\n<DTPOSTED>${row.date.replaceAll('-', '')}120000\r\n<TRNAMT>${row.amount}\r\n<FITID>${row.fitid}\r\n<NAME>${row.name}\r\n</STMTTRN>`,
    )
    .join('\r\n')
  const balance = options.closing === undefined ? '' : `<LEDGERBAL>\r\n<BALAMT>${options.closing}\r\n<DTASOF>20260131\r\n</LEDGERBAL>\r\n`
  return `OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:USASCII\r\nCHARSET:1252\r\n\r\n<OFX>\r\n<BANKMSGSRSV1>\r\n<STMTTRNRS>\r\n<STMTRS>\r\n<CURDEF>${options.currency ?? 'EUR'}\r\n<BANKACCTFROM>\r\n<ACCTID>${options.account ?? '12345678'}\r\n</BANKACCTFROM>\r\n<BANKTRANLIST>\r\n${transactions}\r\n</BANKTRANLIST>\r\n${balance}</STMTRS>\r\n</STMTTRNRS>\r\n</BANKMSGSRSV1>\r\n</OFX>\r\n`
}
