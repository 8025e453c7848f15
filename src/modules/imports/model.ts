import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Nullable } from '../../platform/schemas.ts'
import { IMPORT_FORMATS } from './formats/types.ts'
import { COLUMN_ROLES, type ColumnRole, InlinePreset } from './preset-model.ts'

/** The import route's shapes (CONTRACT §24). */

const Format = t.Union([t.Literal('auto'), ...IMPORT_FORMATS.map((format) => t.Literal(format))], {
  default: 'auto',
  description: '`auto` (default): told from the file',
})
const IfDeleted = t.Union([t.Literal('skip'), t.Literal('recreate')], {
  default: 'skip',
  description: '`skip` (default here): a row whose transaction was deleted is reported `skipped_deleted`; `recreate` creates it again',
})
const DateFormatOption = t.String({
  minLength: 4,
  maxLength: 12,
  description: 'the file’s date format, `DD/MM/YYYY`, `MM/DD/YY`, `YYYY-MM-DD`, … (needed when every day is 12 or less)',
})
const Encoding = t.String({
  minLength: 1,
  maxLength: 40,
  description: 'the file’s encoding (`windows-1252`, `iso-8859-15`, …) when it does not say and is not UTF-8',
})

const options = {
  format: t.Optional(Format),
  dryRun: t.Optional(t.Boolean({ default: false, description: 'report every row, write nothing' })),
  ifDeleted: t.Optional(IfDeleted),
  applyRules: t.Optional(t.Boolean({ default: true, description: 'run the owner’s rules on the imported rows' })),
  presetId: t.Optional(t.String({ minLength: 1, description: 'a saved CSV layout (`imp_…`)' })),
  dateFormat: t.Optional(DateFormatOption),
  encoding: t.Optional(Encoding),
}

export const ImportQuery = t.Object(options, { additionalProperties: false })

export const ImportJsonBody = t.Object(
  {
    content: t.Optional(t.String({ description: 'the file’s text, for a text file' })),
    contentBase64: t.Optional(t.String({ description: 'the file’s bytes in base64' })),
    ...options,
    preset: t.Optional(InlinePreset),
  },
  {
    title: 'ImportRequest',
    additionalProperties: false,
    description: 'For clients that cannot send the file itself: the file as `content` or `contentBase64`, with the options the query takes otherwise.',
  },
)

export const ImportParams = t.Object({ accountId: t.String() })

export const IMPORT_OPERATIONS = ['created', 'updated', 'unchanged', 'skipped_deleted', 'duplicate_in_file', 'matched'] as const
export type ImportOperation = (typeof IMPORT_OPERATIONS)[number]

const ImportedLeg = t.Object(
  { amount: t.Number(), payeeName: Nullable(t.String()), note: Nullable(t.String()) },
  { title: 'ImportedLeg', additionalProperties: false },
)

export const ImportedRow = t.Object(
  {
    externalId: t.String(),
    date: t.String({ description: 'YYYY-MM-DD' }),
    amount: t.Number({ description: 'exact decimal in pfin’s sign: positive = expense' }),
    payeeName: Nullable(
      t.String({ description: 'a payee whose alias the bank’s text holds, else that text cleaned; null for a row already imported (its payee is kept)' }),
    ),
    note: Nullable(t.String({ description: 'a CSV note column; null for a row already imported (its note is kept)' })),
    originalDescription: Nullable(t.String({ description: 'the bank’s own text for the row, kept as the transaction’s originalDescription' })),
    splits: t.Array(ImportedLeg, { description: 'a camt.053 entry of several payments: one leg each; [] otherwise' }),
  },
  { title: 'ImportedRow', additionalProperties: false },
)

const ItemError = t.Object({ field: Nullable(t.String()), code: t.String(), detail: t.String() }, { title: 'ImportItemError', additionalProperties: false })

export const ImportItem = t.Object(
  {
    line: Type.Integer({ minimum: 1, description: 'the line of the file the row starts on' }),
    externalId: Nullable(t.String()),
    operation: Nullable(
      t.Union(
        IMPORT_OPERATIONS.map((op) => t.Literal(op)),
        { description: 'null for a row with errors' },
      ),
    ),
    data: Nullable(ImportedRow),
    rulesApplied: t.Array(t.String(), { description: 'the ids of the rules that changed the row' }),
    warnings: t.Array(t.String()),
    errors: t.Array(ItemError),
  },
  { title: 'ImportItem', additionalProperties: false },
)

const DetectedColumns = t.Object(
  Object.fromEntries(COLUMN_ROLES.map((role) => [role, Nullable(t.String())])) as Record<ColumnRole, ReturnType<typeof columnName>>,
  {
    title: 'ImportDetectedColumns',
    additionalProperties: false,
    description: 'CSV: the header (or `column N`) each role was read from; null where the file has none',
  },
)

function columnName() {
  return Nullable(t.String())
}

export const Detected = t.Object(
  {
    format: t.String({ description: 'csv, ofx, qfx, qif or camt053' }),
    encoding: t.String({ description: 'the encoding the file was read in' }),
    dateFormat: Nullable(t.String()),
    dateFormatAmbiguous: t.Boolean({ description: 'every day is 12 or less: the file reads in more than one order; a real import then needs dateFormat' }),
    delimiter: Nullable(t.String()),
    columns: Nullable(DetectedColumns),
    currency: Nullable(t.String()),
    statementAccount: Nullable(t.String({ description: 'the account the statement says it is for (OFX ACCTID, camt.053 IBAN)' })),
  },
  { title: 'ImportDetected', additionalProperties: false },
)

export const ImportSummary = t.Object(
  {
    created: Type.Integer(),
    updated: Type.Integer(),
    unchanged: Type.Integer(),
    matched: Type.Integer({ description: 'rows that adopted a transaction a schedule had posted (CONTRACT §29)' }),
    skippedDeleted: Type.Integer(),
    duplicateInFile: Type.Integer(),
    failed: Type.Integer(),
  },
  { title: 'ImportSummary', additionalProperties: false },
)

export const StatementCheck = t.Object(
  {
    closingBalance: t.Number({ description: 'the balance the statement closes with' }),
    accountBalanceAfter: t.Number({ description: 'the account’s balance after this import (after it would run, for a dry run)' }),
    difference: t.Number({ description: 'accountBalanceAfter − closingBalance; 0 when they agree. Never applied.' }),
  },
  { title: 'ImportStatementCheck', additionalProperties: false },
)

export const ImportResponse = t.Object(
  {
    data: t.Object(
      { detected: Detected, items: t.Array(ImportItem), summary: ImportSummary, statement: Nullable(StatementCheck) },
      { title: 'ImportResult', additionalProperties: false },
    ),
  },
  { title: 'ImportResponse', additionalProperties: false },
)

export type ImportJsonBodyInput = typeof ImportJsonBody.static
export type ImportQueryInput = typeof ImportQuery.static
export type ImportItemOut = typeof ImportItem.static
export type ImportedRowOut = typeof ImportedRow.static
export type ImportResultOut = (typeof ImportResponse.static)['data']
