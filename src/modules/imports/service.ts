import type { Tenant } from '../../db/tenant/tenant.ts'
import { RawFile } from '../../platform/body.ts'
import { ApiError, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { moneyJson, type Units } from '../../platform/money.ts'
import { type AccountRow, findAccount } from '../accounts/queries.ts'
import { importTransactions } from '../transactions/batch.ts'
import type { TransactionBatchInput } from '../transactions/batch-model.ts'
import { findTransactionByExternalId } from '../transactions/queries.ts'
import { parseDateFormat, preferredOrders } from './dates.ts'
import { EncodingError, encodingName } from './encoding.ts'
import type { CsvLayout } from './formats/csv.ts'
import { FormatError, type RawStatement, TooManyRowsError } from './formats/types.ts'
import { type BatchItemPlan, toBatchItem } from './items.ts'
import { MAX_FILE_BYTES } from './limits.ts'
import type { ImportItemOut, ImportJsonBodyInput, ImportOperation, ImportQueryInput, ImportResultOut } from './model.ts'
import { PayeeMatcher } from './payee-text.ts'
import { COLUMN_ROLES } from './preset-model.ts'
import { assertLayout, compactColumns, getPreset, layoutOf } from './presets.ts'
import { type ReadFile, type ReadFileOptions, readStatementFile } from './read.ts'
import { readInWorker } from './parser-pool.ts'
import { type ResolvedRow, resolveRows } from './statement.ts'
import { sameAccountNumber } from './statement-account.ts'
import { readAmountText } from './money-text.ts'

/**
 * `POST /v1/accounts/{accountId}/imports` (CONTRACT §24): a statement file read into rows, each
 * row made into a transaction upsert with a deterministic externalId, and the rows applied by
 * the batch (CONTRACT §16) in the request's one database transaction: all of them or none, one
 * fsync. A dry run reports every row and writes nothing.
 */

export interface ImportOptions {
  format: NonNullable<ImportQueryInput['format']>
  dryRun: boolean
  ifDeleted: 'skip' | 'recreate'
  applyRules: boolean
  dateFormat: string | null
  encoding: string | undefined
  csv: CsvLayout
}

const QUERY_OPTIONS = ['format', 'dryRun', 'ifDeleted', 'applyRules', 'presetId', 'dateFormat', 'encoding'] as const

/** The file and the options, from the raw form (file body, options in the query) or the JSON form. */
export function importInput(tenant: Tenant, body: RawFile | ImportJsonBodyInput, query: ImportQueryInput): { bytes: Uint8Array; options: ImportOptions } {
  let bytes: Uint8Array
  let given: ImportQueryInput & { preset?: ImportJsonBodyInput['preset'] }
  if (body instanceof RawFile) {
    bytes = body.bytes
    given = query
  } else {
    const named = QUERY_OPTIONS.filter((name) => query[name] !== undefined)
    if (named.length > 0) {
      throw new ApiError('validation_failed', `query parameter '${named[0]}': with a JSON body the options go in the body, beside the file`)
    }
    given = body
    if ((body.content === undefined) === (body.contentBase64 === undefined)) {
      throw new ApiError('validation_failed', 'send the file as content (its text) or as contentBase64 (its bytes), one of them')
    }
    bytes = body.content === undefined ? decodeBase64(body.contentBase64 as string) : new TextEncoder().encode(body.content)
    // Text sent as text is already characters: only a file's own bytes have an encoding to find.
    if (body.content !== undefined) given = { ...given, encoding: 'utf-8' }
  }
  const size = bytes.byteLength
  if (size > MAX_FILE_BYTES) throw new ApiError('payload_too_large', `The file must not exceed ${MAX_FILE_BYTES} bytes`)
  if (size === 0) throw ruleViolation('the file is empty')
  let encoding: string | undefined
  if (given.encoding !== undefined) {
    encoding = encodingName(given.encoding) ?? undefined
    if (!encoding)
      throw new ApiError(
        'validation_failed',
        `encoding: ${JSON.stringify(given.encoding)} is not an encoding this server reads (windows-1252, iso-8859-15, utf-16le, …)`,
      )
  }
  if (given.dateFormat !== undefined && !parseDateFormat(given.dateFormat)) {
    throw new ApiError('validation_failed', `dateFormat: ${JSON.stringify(given.dateFormat)} is not a date format such as DD/MM/YYYY, MM/DD/YY or YYYY-MM-DD`)
  }
  if (given.presetId !== undefined && given.preset !== undefined) throw ruleViolation('send presetId or preset, not both')
  let layout: CsvLayout & { dateFormat: string | null } = layoutOf({})
  if (given.presetId !== undefined) {
    try {
      layout = layoutOf(getPreset(tenant, given.presetId))
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') throw invalidReference('presetId', given.presetId)
      throw error
    }
  } else if (given.preset !== undefined) {
    const columns = compactColumns(given.preset.columns)
    assertLayout({ ...given.preset, columns }, 'preset.')
    layout = layoutOf({ ...given.preset, columns: columns as never })
  }
  return {
    bytes,
    options: {
      format: given.format ?? 'auto',
      dryRun: given.dryRun ?? false,
      ifDeleted: given.ifDeleted ?? 'skip',
      applyRules: given.applyRules ?? true,
      dateFormat: given.dateFormat ?? layout.dateFormat,
      encoding,
      csv: layout,
    },
  }
}

function decodeBase64(text: string): Uint8Array {
  const compact = text.replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact)) throw new ApiError('validation_failed', 'contentBase64: is not base64')
  return new Uint8Array(Buffer.from(compact, 'base64'))
}

/** A statement file read before its import runs: in the worker over HTTP (prepareImport), here otherwise (readImport). */
export interface PreparedImport {
  read: ReadFile
  options: ImportOptions
}

/** A reading that failed: the file's fault (a 422 that says why), or the server's. */
function readFailure(error: { known: boolean; message: string }): Error {
  return error.known ? ruleViolation(error.message) : new Error(`reading the statement failed: ${error.message}`)
}

/**
 * The route's `prepare` (CONTRACT §14): the options checked and the file read in the worker, so
 * that no other request waits while a large or hostile file is read. Never rejects: a refusal is
 * returned for the handler to answer with.
 */
export async function prepareImport(tenant: Tenant, body: RawFile | ImportJsonBodyInput, query: ImportQueryInput): Promise<PreparedImport | Error> {
  try {
    const { bytes, options } = importInput(tenant, body, query)
    const outcome = await readInWorker(bytes, readOptions(options))
    return 'read' in outcome ? { read: outcome.read, options } : readFailure(outcome.error)
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

/** The same, on this thread, for a caller that did not prepare. */
export function readImport(tenant: Tenant, body: RawFile | ImportJsonBodyInput, query: ImportQueryInput): PreparedImport {
  const { bytes, options } = importInput(tenant, body, query)
  try {
    return { read: readStatementFile(bytes, readOptions(options)), options }
  } catch (error) {
    if (error instanceof FormatError || error instanceof EncodingError || error instanceof TooManyRowsError) throw ruleViolation(error.message)
    throw error
  }
}

const readOptions = (options: ImportOptions): ReadFileOptions => ({ format: options.format, encoding: options.encoding, csv: options.csv })

/**
 * The statements of the file this account's import takes: those for its accountNumber when it has
 * one (a statement for another account is refused), all of them when the file is for one account.
 */
function statementsFor(account: AccountRow, statements: RawStatement[]): RawStatement[] {
  const named = [...new Set(statements.map((statement) => statement.account).filter((id): id is string => id !== null))]
  if (account.accountNumber) {
    const mine = statements.filter((statement) => statement.account === null || sameAccountNumber(statement.account, account.accountNumber as string))
    if (mine.length === 0) {
      throw ruleViolation(
        `the statement is for account ${named.map((id) => JSON.stringify(id)).join(', ')}, but this account's accountNumber is ${JSON.stringify(account.accountNumber)}; import it into that account, or correct accountNumber`,
      )
    }
    return mine
  }
  if (named.length > 1) {
    throw ruleViolation(
      `the file holds statements of ${named.length} accounts (${named.map((id) => JSON.stringify(id)).join(', ')}); set this account's accountNumber to the one to import`,
    )
  }
  return statements
}

/** The statement's own currency against the account's. */
function assertCurrency(account: AccountRow, statements: RawStatement[]): string | null {
  const currency = statements.find((statement) => statement.currency !== null)?.currency ?? null
  if (currency !== null && currency.toUpperCase() !== account.currency) {
    throw ruleViolation(`the statement is in ${currency.slice(0, 10)}, but the account is in ${account.currency}`)
  }
  return currency
}

type Row = ResolvedRow

interface Planned {
  row: Row
  plan: BatchItemPlan | null
  warnings: string[]
  stored: { amount: Units; hasSplits: boolean } | undefined
}

export function runImport(tenant: Tenant, country: string | null, accountId: string, prepared: PreparedImport): ImportResultOut {
  const account = findAccount(tenant, accountId)
  if (!account) throw notFound('Account', accountId)
  const { options } = prepared
  const { decoded, file } = prepared.read
  const statements = statementsFor(account, file.statements)
  const currency = assertCurrency(account, statements) ?? file.statements[0]?.currency ?? null
  const raw = statements.flatMap((statement) => statement.rows)
  const resolution = resolveRows(file, raw, {
    accountId,
    accountCurrency: account.currency,
    dateFormat: options.dateFormat,
    preference: preferredOrders(country),
    encodingGuessed: decoded.guessed,
  })
  if (resolution.dateFormatAmbiguous && !options.dryRun) {
    throw ruleViolation(
      `dateFormat required: dates are ambiguous (no day is above 12, so the file reads as ${resolution.dateCandidates.join(' and as ')}); send dateFormat`,
    )
  }
  tenant.widenCacheForImport()
  const payees = new PayeeMatcher(tenant)
  const planned: Planned[] = resolution.rows.map((row) => {
    const warnings = [...row.warnings]
    if (row.errors.length > 0 || row.duplicate || row.externalId === null || row.date === null || row.units === null) {
      return { row, plan: null, warnings, stored: undefined }
    }
    const found = findTransactionByExternalId(tenant, row.externalId)
    const stored = found ? { amount: found.amount, hasSplits: found.hasSplits } : undefined
    const ready = row as Row & { externalId: string; date: string; units: Units }
    return { row, plan: toBatchItem(ready, accountId, payees, stored, warnings, file.descriptionNamesPayee), warnings, stored }
  })
  if (!options.dryRun) {
    const failing = planned.find(({ row }) => row.errors.length > 0)
    if (failing) {
      const error = failing.row.errors[0] as { field: string | null; detail: string }
      const others = planned.filter(({ row }) => row.errors.length > 0).length - 1
      throw new ApiError(
        'validation_failed',
        `line ${failing.row.line}: ${error.field ? `${error.field}: ` : ''}${error.detail}${others > 0 ? ` (and ${others} more rows with errors: send dryRun=true to see them all)` : ''}`,
      )
    }
  }
  const sent = planned.filter((entry) => entry.plan !== null)
  const results = runBatch(tenant, country, sent, options)
  const items: ImportItemOut[] = planned.map((entry) => {
    const result = results.get(entry)
    const operation: ImportOperation | null = entry.row.duplicate ? 'duplicate_in_file' : (result?.operation ?? null)
    const errors = [...entry.row.errors.map((error) => ({ field: error.field, code: 'validation_failed', detail: error.detail })), ...(result?.errors ?? [])]
    return {
      line: entry.row.line,
      externalId: entry.row.externalId,
      operation: errors.length > 0 ? null : operation,
      data: entry.plan?.shown ?? null,
      rulesApplied: result?.rulesApplied ?? [],
      warnings: entry.warnings,
      errors,
    }
  })
  return {
    detected: {
      format: file.format,
      encoding: decoded.encoding,
      dateFormat: resolution.dateFormat,
      dateFormatAmbiguous: resolution.dateFormatAmbiguous,
      delimiter: file.delimiter,
      columns: file.columns && (Object.fromEntries(COLUMN_ROLES.map((role) => [role, file.columns?.[role] ?? null])) as ImportResultOut['detected']['columns']),
      currency,
      statementAccount: statements.find((statement) => statement.account !== null)?.account ?? null,
    },
    items,
    summary: summarize(items),
    statement: statementCheck(tenant, account, statements, planned, results, options.dryRun),
  }
}

interface BatchResult {
  operation: ImportOperation | null
  /** For a row that adopted an auto-posted transaction: that transaction's amount before. */
  adoptedAmount?: bigint
  errors: ImportItemOut['errors']
  rulesApplied: string[]
}

/** The rows through the batch (CONTRACT §16); a real run's refusal names the row's line instead of its index. */
function runBatch(tenant: Tenant, country: string | null, sent: Planned[], options: ImportOptions): Map<Planned, BatchResult> {
  const out = new Map<Planned, BatchResult>()
  if (sent.length === 0) return out
  const batch = {
    items: sent.map((entry) => entry.plan?.item),
    dryRun: options.dryRun,
    ifDeleted: options.ifDeleted,
    applyRules: options.applyRules,
  } as TransactionBatchInput
  const fallbacks = sent.map((entry) => (entry.plan?.fallbackPayeeName ? { payeeName: entry.plan.fallbackPayeeName } : undefined))
  const adopted = new Map<number, bigint>()
  let answer: ReturnType<typeof importTransactions>
  try {
    answer = importTransactions(tenant, country, batch, { fallbacks, onAdopt: (index, before) => adopted.set(index, before) })
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    const detail = error.detail.replace(/items\[(\d+)\]\.?/g, (_, index: string) => `line ${sent[Number(index)]?.row.line ?? '?'}: `).replace(/: : /g, ': ')
    throw new ApiError(error.code, detail, error.headers)
  }
  for (const [index, result] of answer.data.entries()) {
    out.set(sent[index] as Planned, {
      operation: result.operation,
      adoptedAmount: adopted.get(index),
      errors: result.errors,
      rulesApplied: result.rulesApplied ?? [],
    })
  }
  return out
}

function summarize(items: ImportItemOut[]): ImportResultOut['summary'] {
  const count = (operation: ImportOperation) => items.filter((item) => item.operation === operation).length
  return {
    created: count('created'),
    updated: count('updated'),
    unchanged: count('unchanged'),
    matched: count('matched'),
    skippedDeleted: count('skipped_deleted'),
    duplicateInFile: count('duplicate_in_file'),
    failed: items.filter((item) => item.errors.length > 0).length,
  }
}

/**
 * The statement's closing balance against the account's balance after the import (CONTRACT §24),
 * reported, never applied. A dry run's balance is the one the import would leave: today's, less
 * the rows it would create, less what it would change of the rows it would update.
 */
function statementCheck(
  tenant: Tenant,
  account: AccountRow,
  statements: RawStatement[],
  planned: Planned[],
  results: Map<Planned, BatchResult>,
  dryRun: boolean,
): ImportResultOut['statement'] {
  const closing = statements.findLast((statement) => statement.closingBalance !== null)?.closingBalance
  if (closing === undefined || closing === null) return null
  const closingUnits = readAmountText(closing, '.', false)
  if (typeof closingUnits !== 'bigint') return null
  let after: Units
  if (dryRun) {
    after = account.balance
    for (const entry of planned) {
      const result = results.get(entry)
      const units = entry.row.units ?? 0n
      if (result?.operation === 'created') after -= units
      else if (result?.operation === 'updated') after -= units - (entry.stored?.amount ?? 0n)
      else if (result?.operation === 'matched') after -= units - (result.adoptedAmount ?? 0n)
    }
  } else {
    after = findAccount(tenant, account.id)?.balance ?? account.balance
  }
  return { closingBalance: moneyJson(closingUnits), accountBalanceAfter: moneyJson(after), difference: moneyJson(after - closingUnits) }
}
