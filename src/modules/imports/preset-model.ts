import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Cursor, EpochMs, Id, Limit, ListOf, Name, Nullable, PathId, SingleOf, UpdatedAt } from '../../platform/schemas.ts'

/** Import presets (CONTRACT §24): how to read one bank's CSV layout. */

const ColumnRef = t.Union([t.String({ minLength: 1, maxLength: 200, pattern: '\\S' }), Type.Integer({ minimum: 1, maximum: 200 })], {
  description: 'the column’s header name (compared without case, accents and punctuation) or its position, from 1',
})

const ROLES = ['date', 'amount', 'inflow', 'outflow', 'indicator', 'payee', 'description', 'note', 'externalId', 'currency'] as const
export type ColumnRole = (typeof ROLES)[number]
export const COLUMN_ROLES: readonly ColumnRole[] = ROLES

const COLUMNS_DESCRIPTION =
  '`date`, and the amount as one of: `amount` (signed), `amount` + `indicator` (a debit/credit marker column), or `outflow` + `inflow`. The other columns are optional; null or absent: not read.'

/** What a request sends: the roles it maps (null or absent: not mapped). */
export const PresetColumns = t.Object(
  Object.fromEntries(ROLES.map((role) => [role, t.Optional(Nullable(ColumnRef))])) as Record<ColumnRole, ReturnType<typeof optionalRef>>,
  {
    title: 'ImportPresetColumnsInput',
    additionalProperties: false,
    description: COLUMNS_DESCRIPTION,
  },
)

function optionalRef() {
  return t.Optional(Nullable(ColumnRef))
}

/** What a preset shows: every role, null where unmapped. */
const PresetColumnsOut = t.Object(Object.fromEntries(ROLES.map((role) => [role, Nullable(ColumnRef)])) as Record<ColumnRole, ReturnType<typeof requiredRef>>, {
  title: 'ImportPresetColumns',
  additionalProperties: false,
  description: COLUMNS_DESCRIPTION,
})

function requiredRef() {
  return Nullable(ColumnRef)
}

const Delimiter = t.String({ minLength: 1, maxLength: 1, pattern: '^[^"\\r\\n\\uD800-\\uDFFF]$', description: 'one character: `,`, `;`, a tab, `|`, …' })
const DecimalSeparator = t.Union([t.Literal('.'), t.Literal(',')])
const DateFormat = t.String({
  minLength: 4,
  maxLength: 12,
  description: '`DD/MM/YYYY`, `MM/DD/YYYY`, `YYYY-MM-DD`, `DD.MM.YY`, `YYYYMMDD`, … (D, M and Y once each)',
})
const AmountPositiveIs = t.Union([t.Literal('income'), t.Literal('expense')], {
  description: '`income` (the default, as banks write it: negative = money out) or `expense` (as some card exports do)',
})
const SkipRows = Type.Integer({ minimum: 0, maximum: 1000, description: 'lines to skip at the top before the header (or the first row)' })
const SkipFooterRows = Type.Integer({ minimum: 0, maximum: 1000, description: 'lines to drop at the end; null: lines after the last dated row are dropped' })

export const ImportPreset = t.Object(
  {
    id: Id('imp', 'imp_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    name: t.String(),
    delimiter: Nullable(t.String({ description: 'null: detected' })),
    headerRow: t.Boolean({ description: 'whether the first row after `skipRows` is a header' }),
    skipRows: Type.Integer({ minimum: 0 }),
    skipFooterRows: Nullable(Type.Integer({ minimum: 0, description: 'null: lines after the last dated row are dropped' })),
    decimalSeparator: Nullable(t.String({ description: '`.` or `,`; null: detected from the amounts' })),
    dateFormat: Nullable(t.String({ description: 'null: detected from all the dates' })),
    amountPositiveIs: t.String({ description: '`income` or `expense`' }),
    columns: Nullable(PresetColumnsOut),
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
  },
  { title: 'ImportPreset', additionalProperties: false },
)

const fields = {
  delimiter: t.Optional(Nullable(Delimiter)),
  headerRow: t.Optional(t.Boolean({ default: true, description: 'default true' })),
  skipRows: t.Optional(SkipRows),
  skipFooterRows: t.Optional(Nullable(SkipFooterRows)),
  decimalSeparator: t.Optional(Nullable(DecimalSeparator)),
  dateFormat: t.Optional(Nullable(DateFormat)),
  amountPositiveIs: t.Optional(AmountPositiveIs),
  columns: t.Optional(Nullable(PresetColumns)),
}

export const ImportPresetCreate = t.Object({ name: Name, ...fields }, { title: 'ImportPresetCreate', additionalProperties: false })
export const ImportPresetUpdate = t.Object({ name: t.Optional(Name), ...fields }, { title: 'ImportPresetUpdate', additionalProperties: false })
/** A preset given inline in an import's JSON form: the same fields, without a name. */
export const InlinePreset = t.Object({ name: t.Optional(Name), ...fields }, { title: 'InlineImportPreset', additionalProperties: false })

export const ImportPresetListQuery = t.Object({ limit: t.Optional(Limit), cursor: t.Optional(Cursor) }, { additionalProperties: false })
export const ImportPresetParams = PathId('presetId')
export const ImportPresetResponse = SingleOf(ImportPreset, 'ImportPresetResponse')
export const ImportPresetListResponse = ListOf(ImportPreset, 'ImportPresetListResponse')

export type ImportPresetOut = typeof ImportPreset.static
export type ImportPresetInput = typeof ImportPresetUpdate.static
export type PresetColumnsInput = typeof PresetColumns.static
export type PresetColumnsOut = typeof PresetColumnsOut.static
