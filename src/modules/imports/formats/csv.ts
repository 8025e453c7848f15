import { looksLikeDate } from '../dates.ts'
import { type CsvRecord, CsvError, csvRecords, detectDelimiter } from './csv-records.ts'
import { type AmountText, clean, FormatError, MAX_IMPORT_ROWS, type ParsedFile, type RawRow, TooManyRowsError } from './types.ts'

/**
 * CSV statements (CONTRACT §24): the columns come from a preset, or from the header's names in
 * English, German, French, Spanish, Portuguese and Dutch. The amount is one signed column (a
 * bank's sign: negative = money out, unless the preset says positive is an expense), an
 * outflow and an inflow column, or a number and a debit/credit indicator column.
 */

/** A column: its header name (compared without case, accents and punctuation) or its position, from 1. */
export type ColumnRef = string | number

export interface CsvColumns {
  date?: ColumnRef
  amount?: ColumnRef
  inflow?: ColumnRef
  outflow?: ColumnRef
  indicator?: ColumnRef
  payee?: ColumnRef
  description?: ColumnRef
  note?: ColumnRef
  externalId?: ColumnRef
  currency?: ColumnRef
}

/** A preset's CSV layout (CONTRACT §24); every field optional, null meaning "detect". */
export interface CsvLayout {
  delimiter?: string | null
  headerRow?: boolean
  skipRows?: number
  skipFooterRows?: number
  decimalSeparator?: '.' | ',' | null
  amountPositiveIs?: 'income' | 'expense'
  columns?: CsvColumns | null
}

type Role = keyof CsvColumns

/** Header names by role, normalized (see `normalizeHeader`); earlier names win. */
const NAMES: Record<Role, string[]> = {
  date: [
    'date',
    'transaction date',
    'posting date',
    'posted date',
    'booking date',
    'trans date',
    'datum',
    'buchungstag',
    'buchungsdatum',
    'fecha',
    'fecha operacion',
    'fecha de operacion',
    'fecha contable',
    'data',
    'data movimento',
    'data do movimento',
    'data lancamento',
    'data de lancamento',
    'data operacao',
    'date operation',
    'date de l operation',
    'date comptable',
    'transactiedatum',
    'boekdatum',
    'boekingsdatum',
    'date de comptabilisation',
    // Value dates only when nothing names the booking date.
    'value date',
    'valutadatum',
    'valuta',
    'wertstellung',
    'fecha valor',
    'data valor',
    'date de valeur',
    'rentedatum',
  ],
  amount: ['amount', 'transaction amount', 'betrag', 'umsatz', 'montant', 'importe', 'valor', 'bedrag', 'sum', 'amount in account currency'],
  outflow: [
    'debit',
    'debit amount',
    'withdrawal',
    'withdrawals',
    'paid out',
    'money out',
    'outflow',
    'out',
    'soll',
    'ausgang',
    'belastung',
    'lastschrift',
    'debito',
    'cargo',
    'cargos',
    'saida',
    'saidas',
    'debet',
    'af',
    'afschrijving',
    'uitgaven',
  ],
  inflow: [
    'credit',
    'credit amount',
    'deposit',
    'deposits',
    'paid in',
    'money in',
    'inflow',
    'in',
    'haben',
    'eingang',
    'gutschrift',
    'credito',
    'abono',
    'abonos',
    'entrada',
    'entradas',
    'bij',
    'bijschrijving',
    'inkomsten',
  ],
  indicator: [
    'debit credit',
    'credit debit',
    'd c',
    'dc',
    'c d',
    'dr cr',
    'cr dr',
    'credit debit indicator',
    'debit credit indicator',
    'af bij',
    'soll haben',
    's h',
    'sens',
    'debito credito',
    'debe haber',
    'cargo abono',
    'debet credit',
  ],
  payee: [
    'payee',
    'payee name',
    'name',
    'beneficiary',
    'counterparty',
    'counter party',
    'merchant',
    'recipient',
    'beguenstigter zahlungspflichtiger',
    'begunstigter zahlungspflichtiger',
    'zahlungspflichtiger beguenstigter',
    'auftraggeber empfanger',
    'auftraggeber beguenstigter',
    'name zahlungsbeteiligter',
    'empfanger',
    'empfaenger',
    'zahlungsempfanger',
    'auftraggeber',
    'beneficiaire',
    'tiers',
    'beneficiario',
    'ordenante',
    'nombre',
    'favorecido',
    'naam',
    'naam omschrijving',
    'tegenpartij',
    'naam tegenpartij',
  ],
  description: [
    'description',
    'details',
    'memo',
    'narrative',
    'transaction details',
    'purpose',
    'text',
    'verwendungszweck',
    'buchungstext',
    'beschreibung',
    'libelle',
    'libelle operation',
    'libelle de l operation',
    'intitule',
    'detail',
    'concepto',
    'descripcion',
    'movimiento',
    'descricao',
    'historico',
    'omschrijving',
    'mededelingen',
    'details transaction',
  ],
  note: ['note', 'notes', 'notiz', 'remarque', 'nota', 'notitie', 'opmerking', 'comment', 'comments', 'commentaire', 'comentario'],
  externalId: [
    'id',
    'transaction id',
    'transactionid',
    'transaction reference',
    'reference number',
    'fitid',
    'unique id',
    'transaktions id',
    'identificador',
    'numero de transaction',
    'id transaccion',
    'id transacao',
    'transactie id',
  ],
  currency: ['currency', 'currency code', 'wahrung', 'waehrung', 'devise', 'moneda', 'divisa', 'moeda', 'munt'],
}

const ROLES = Object.keys(NAMES) as Role[]
const LOOKUP = new Map<string, { role: Role; rank: number }>()
for (const role of ROLES) for (const [rank, name] of NAMES[role].entries()) if (!LOOKUP.has(name)) LOOKUP.set(name, { role, rank })

/**
 * A currency code a header carries: `Betrag (EUR)`, `Amount EUR`. A bare word only when it is a
 * common currency, so that `PAID OUT` stays itself.
 */
const HEADER_CURRENCY = /(?:\s*\(([A-Z]{3})\)|\s+(EUR|USD|GBP|CHF|JPY|CAD|AUD|NZD|SEK|NOK|DKK|PLN|CZK|HUF|BRL|MXN|ARS|CLP|COP|PEN|ZAR|INR|CNY|HKD|SGD))\s*$/

/** A header as compared: accents, case and punctuation ignored, a currency code cut off. */
export function normalizeHeader(text: string): string {
  return text
    .replace(HEADER_CURRENCY, '')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/ß/g, 'ss')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

interface Mapping {
  /** Column index (0-based) by role. */
  index: Partial<Record<Role, number>>
  /** What each role was read from, as the response names it. */
  names: Record<string, string>
  currency: string | null
}

/** The roles a header names, each at its best-ranked column. */
function mapHeader(header: string[]): Mapping {
  const best = new Map<Role, { at: number; rank: number }>()
  for (const [at, cell] of header.entries()) {
    const found = LOOKUP.get(normalizeHeader(cell))
    if (!found) continue
    const held = best.get(found.role)
    if (!held || found.rank < held.rank) best.set(found.role, { at, rank: found.rank })
  }
  const index: Mapping['index'] = {}
  const names: Record<string, string> = {}
  for (const [role, { at }] of best) {
    index[role] = at
    names[role] = (header[at] as string).trim()
  }
  let currency: string | null = null
  const amountHeader = [index.amount, index.outflow, index.inflow].find((at) => at !== undefined)
  if (amountHeader !== undefined) {
    const found = HEADER_CURRENCY.exec((header[amountHeader] as string).trim())
    currency = found ? (found[1] ?? found[2] ?? null) : null
  }
  return { index, names, currency }
}

const hasAmount = (index: Mapping['index']) => index.amount !== undefined || (index.inflow !== undefined && index.outflow !== undefined)
const describeColumns = (header: string[]) =>
  header
    .slice(0, 30)
    .map((cell) => JSON.stringify(cell.trim().slice(0, 60)))
    .join(', ')

/** The preset's columns resolved against the header (names) or taken as positions. */
function mapPreset(columns: CsvColumns, header: string[] | null): Mapping {
  const index: Mapping['index'] = {}
  const names: Record<string, string> = {}
  const normalized = header?.map(normalizeHeader)
  for (const role of ROLES) {
    const ref = columns[role]
    if (ref === undefined) continue
    if (typeof ref === 'number') {
      index[role] = ref - 1
      names[role] = header?.[ref - 1]?.trim() || `column ${ref}`
      continue
    }
    const at = normalized ? normalized.indexOf(normalizeHeader(ref)) : -1
    if (at < 0) {
      throw new FormatError(
        header
          ? `the preset's ${role} column ${JSON.stringify(ref)} is not in the header (columns found: ${describeColumns(header)})`
          : `the preset's ${role} column is named ${JSON.stringify(ref)}, but the preset says the file has no header row: name columns by their position (1, 2, …)`,
      )
    }
    index[role] = at
    names[role] = (header?.[at] ?? ref).trim()
  }
  return { index, names, currency: null }
}

/** Debit (money out) and credit markers of an indicator column, normalized as headers are. */
const DEBIT = new Set(['d', 'dr', 'debit', 'dbit', 'debet', 's', 'soll', 'af', 'debito', 'cargo', 'db', 'out', 'withdrawal', 'dt'])
const CREDIT = new Set(['c', 'cr', 'credit', 'crdt', 'h', 'haben', 'bij', 'credito', 'abono', 'in', 'deposit', 'ct'])

/** Whether an indicator cell marks money out (true), in (false), or neither (null). */
export function isDebit(indicator: string): boolean | null {
  const text = indicator.trim()
  if (text === '-') return true
  if (text === '+') return false
  const normalized = normalizeHeader(text)
  if (DEBIT.has(normalized)) return true
  if (CREDIT.has(normalized)) return false
  return null
}

const SLACK_RECORDS = 100

export function readCsv(text: string, layout: CsvLayout): ParsedFile {
  const delimiter = layout.delimiter ?? detectDelimiter(text)
  const skipRows = layout.skipRows ?? 0
  const skipFooter = layout.skipFooterRows ?? 0
  let records: CsvRecord[]
  try {
    const read = csvRecords(text, delimiter, { maxRecords: skipRows + skipFooter + MAX_IMPORT_ROWS + SLACK_RECORDS, maxFields: 200 })
    if (read.truncated) throw new TooManyRowsError()
    records = read.records
  } catch (error) {
    if (error instanceof CsvError) throw new FormatError(`the CSV file cannot be read: ${error.message}`)
    throw error
  }
  records = records.slice(skipRows, records.length - skipFooter)
  let mapping: Mapping
  let body: CsvRecord[]
  const headerRow = layout.headerRow ?? true
  if (layout.columns && (layout.columns.date !== undefined || hasAmountRef(layout.columns))) {
    const header = headerRow ? (records[0]?.cells ?? []) : null
    mapping = mapPreset(layout.columns, header)
    body = headerRow ? records.slice(1) : records
  } else {
    // The header is the first row that names a date and an amount: banks put lines of their own above it.
    const at = headerRow
      ? records.slice(0, 30).findIndex((record) => {
          const found = mapHeader(record.cells).index
          return found.date !== undefined && hasAmount(found)
        })
      : -1
    if (at < 0) {
      const first = records[0]?.cells ?? []
      throw new FormatError(
        `the date and amount columns could not be found (columns found: ${describeColumns(first)}); name them in a preset (columns.date, columns.amount or columns.inflow and columns.outflow)`,
      )
    }
    mapping = mapHeader((records[at] as CsvRecord).cells)
    body = records.slice(at + 1)
  }
  if (mapping.index.date === undefined || !hasAmount(mapping.index)) {
    throw new FormatError('the preset must name the date column and the amount (columns.amount, or columns.inflow and columns.outflow)')
  }
  if (layout.skipFooterRows === undefined) body = dropFooter(body, mapping.index.date)
  if (body.length > MAX_IMPORT_ROWS) throw new TooManyRowsError()
  const negate = (layout.amountPositiveIs ?? 'income') === 'income'
  return {
    format: 'csv',
    idKind: 'ref',
    decimalSeparator: layout.decimalSeparator ?? null,
    amountAffixes: true,
    fixedDateFormat: null,
    delimiter,
    columns: mapping.names,
    descriptionNamesPayee: mapping.index.payee === undefined,
    statements: [{ account: null, currency: mapping.currency, closingBalance: null, rows: body.map((record) => toRow(record, mapping.index, negate)) }],
  }
}

const hasAmountRef = (columns: CsvColumns) => columns.amount !== undefined || columns.inflow !== undefined || columns.outflow !== undefined

/** Lines after the last row whose date cell holds a date: a footer (`Saldo;…`, `Total`), not rows. */
function dropFooter(body: CsvRecord[], dateAt: number): CsvRecord[] {
  let end = body.length
  while (end > 0 && !looksLikeDate((body[end - 1] as CsvRecord).cells[dateAt] ?? '')) end--
  return end === 0 ? body : body.slice(0, end)
}

function toRow(record: CsvRecord, index: Mapping['index'], negate: boolean): RawRow {
  const cell = (role: Role) => {
    const at = index[role]
    return at === undefined ? null : (record.cells[at] ?? '')
  }
  let amount: AmountText
  if (index.amount !== undefined && index.indicator !== undefined)
    amount = { kind: 'indicated', text: cell('amount') ?? '', indicator: cell('indicator') ?? '' }
  else if (index.amount !== undefined) amount = { kind: 'signed', text: cell('amount') ?? '', negate }
  else amount = { kind: 'pair', outflow: cell('outflow') ?? '', inflow: cell('inflow') ?? '' }
  return {
    line: record.line,
    dateText: cell('date') ?? '',
    amount,
    bankId: clean(cell('externalId')),
    payee: clean(cell('payee')),
    description: clean(cell('description')),
    note: clean(cell('note')),
    currency: clean(cell('currency')),
    legs: null,
    errors: [],
  }
}
