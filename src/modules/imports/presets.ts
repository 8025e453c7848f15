import { eq } from 'drizzle-orm'
import { isId, newId } from '../../db/ids.ts'
import { settleCreated } from '../../db/tenant/change-log.ts'
import { importPresets } from '../../db/tenant/schema.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, notFound, ruleViolation } from '../../platform/errors.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { parseDateFormat } from './dates.ts'
import type { CsvLayout } from './formats/csv.ts'
import type { CsvColumns } from './formats/csv.ts'
import type { ImportPresetInput, PresetColumnsInput } from './preset-model.ts'
import { findPreset, listPresetRows, type PresetRow, toPreset } from './preset-queries.ts'

/**
 * Import presets (CONTRACT §24): a CSV layout saved under a name. The rules a layout must keep
 * are checked when it is saved, and again when one is given inline with an import.
 */

type Changes = Partial<Omit<PresetRow, 'id' | 'createdAt' | 'updatedAt'>>

/** The roles a request maps: a null role is not mapped, as an absent one. */
export function compactColumns(columns: PresetColumnsInput | null | undefined): CsvColumns | null {
  if (!columns) return null
  const out: Record<string, string | number> = {}
  for (const [role, ref] of Object.entries(columns)) if (ref !== null && ref !== undefined) out[role] = typeof ref === 'string' ? ref.trim() : ref
  return out as CsvColumns
}

/** A layout's rules across its fields: a date column and one form of the amount; positions when there is no header. */
export function assertLayout(layout: { headerRow?: boolean; dateFormat?: string | null; columns?: CsvColumns | null }, label = ''): void {
  if (layout.dateFormat !== undefined && layout.dateFormat !== null && !parseDateFormat(layout.dateFormat)) {
    throw new ApiError(
      'validation_failed',
      `${label}dateFormat: ${JSON.stringify(layout.dateFormat)} is not a date format such as DD/MM/YYYY, MM/DD/YY or YYYY-MM-DD`,
    )
  }
  const columns = layout.columns
  if (!columns) return
  const pair = columns.inflow !== undefined || columns.outflow !== undefined
  if (columns.date === undefined) throw ruleViolation(`${label}columns.date: the date column is required`)
  if (columns.amount === undefined && !pair) throw ruleViolation(`${label}columns: name the amount: amount, amount with indicator, or inflow with outflow`)
  if (columns.amount !== undefined && pair) throw ruleViolation(`${label}columns: name amount or inflow and outflow, not both`)
  if (pair && (columns.inflow === undefined || columns.outflow === undefined)) throw ruleViolation(`${label}columns: inflow and outflow go together`)
  if (columns.indicator !== undefined && columns.amount === undefined)
    throw ruleViolation(`${label}columns.indicator: an indicator needs the amount column it marks`)
  if (layout.headerRow === false) {
    const named = Object.entries(columns).find(([, ref]) => typeof ref === 'string')
    if (named) throw ruleViolation(`${label}columns.${named[0]}: without a header row, columns are named by position (1, 2, …), not by name`)
  }
}

function changesFrom(body: ImportPresetInput): Changes {
  const changes: Changes = {}
  if (body.name !== undefined) changes.name = body.name.trim()
  if (body.delimiter !== undefined) changes.delimiter = body.delimiter
  if (body.headerRow !== undefined) changes.headerRow = body.headerRow
  if (body.skipRows !== undefined) changes.skipRows = body.skipRows
  if (body.skipFooterRows !== undefined) changes.skipFooterRows = body.skipFooterRows
  if (body.decimalSeparator !== undefined) changes.decimalSeparator = body.decimalSeparator
  if (body.dateFormat !== undefined) changes.dateFormat = body.dateFormat === null ? null : body.dateFormat.trim()
  if (body.amountPositiveIs !== undefined) changes.amountPositiveIs = body.amountPositiveIs
  if (body.columns !== undefined) changes.columns = compactColumns(body.columns) as Changes['columns']
  return changes
}

export function getPreset(tenant: Tenant, id: string): PresetRow {
  const row = findPreset(tenant, id)
  if (!row) throw notFound('Import preset', id)
  return row
}

export function createPreset(tenant: Tenant, body: ImportPresetInput & { name: string }): PresetRow {
  return tenant.write(() => {
    const now = Date.now()
    const row: PresetRow = {
      id: newId('imp'),
      name: body.name.trim(),
      delimiter: null,
      headerRow: true,
      skipRows: 0,
      skipFooterRows: null,
      decimalSeparator: null,
      dateFormat: null,
      amountPositiveIs: 'income',
      columns: null,
      createdAt: now,
      updatedAt: now,
      ...changesFrom(body),
    }
    assertLayout({ ...row, columns: row.columns as CsvColumns | null })
    tenant.db.insert(importPresets).values(row).run()
    settleCreated(tenant, 'import_presets', row.id)
    return row
  })
}

export function updatePreset(tenant: Tenant, id: string, body: ImportPresetInput): PresetRow {
  return tenant.write(() => {
    const current = getPreset(tenant, id)
    const changes = changesFrom(body)
    const next = { ...current, ...changes }
    assertLayout({ ...next, columns: next.columns as CsvColumns | null })
    if (Object.keys(changes).length === 0) return current
    tenant.db.update(importPresets).set(changes).where(eq(importPresets.id, id)).run()
    // Read back: the feed's trigger stamped updatedAt if anything changed (CONTRACT §25).
    return getPreset(tenant, id)
  })
}

/** Deleted for good (a preset is only a way to read files); the feed keeps a tombstone. */
export function deletePreset(tenant: Tenant, id: string): PresetRow {
  return tenant.write(() => {
    const current = getPreset(tenant, id)
    tenant.db.delete(importPresets).where(eq(importPresets.id, id)).run()
    return current
  })
}

export function listPresets(tenant: Tenant, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'ns') as [number, string] | undefined
  if (after && !isId('imp', after[1])) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  return page(listPresetRows(tenant, { limit: limit + 1, after }), limit, (row) => [row.createdAt, row.id], toPreset)
}

/** Every preset, oldest first: the agent context's. */
export const allPresets = (tenant: Tenant) => listPresetRows(tenant, { limit: -1 }).map(toPreset)

/** A preset (stored or inline) as the CSV reader takes it: nulls are "detect". */
export function layoutOf(preset: Partial<Omit<PresetRow, 'id' | 'createdAt' | 'name'>>): CsvLayout & { dateFormat: string | null } {
  return {
    delimiter: preset.delimiter ?? null,
    headerRow: preset.headerRow ?? true,
    skipRows: preset.skipRows ?? 0,
    skipFooterRows: preset.skipFooterRows ?? undefined,
    decimalSeparator: preset.decimalSeparator ?? null,
    amountPositiveIs: preset.amountPositiveIs ?? 'income',
    columns: (preset.columns as CsvLayout['columns']) ?? null,
    dateFormat: preset.dateFormat ?? null,
  }
}
