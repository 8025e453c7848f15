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
