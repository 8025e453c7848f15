import { asc, eq, sql } from 'drizzle-orm'
import { lazyStatements } from '../../db/statements.ts'
import { importPresets } from '../../db/tenant/schema.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { COLUMN_ROLES, type ImportPresetOut, type PresetColumnsOut } from './preset-model.ts'

export type PresetRow = typeof importPresets.$inferSelect

const pageAfter = (db: TenantDrizzle) =>
  db
    .select()
    .from(importPresets)
    .where(sql`(${importPresets.createdAt}, ${importPresets.id}) > (${sql.placeholder('createdAt')}, ${sql.placeholder('id')})`)
    .orderBy(asc(importPresets.createdAt), asc(importPresets.id))
    .limit(sql.placeholder('limit'))
    .prepare()

const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(importPresets)
      .where(eq(importPresets.id, sql.placeholder('id')))
      .prepare(),
  firstPage: (db) => db.select().from(importPresets).orderBy(asc(importPresets.createdAt), asc(importPresets.id)).limit(sql.placeholder('limit')).prepare(),
  nextPage: pageAfter,
})

const presetQueries = (tenant: Tenant) => tenant.prepared(statements)

export const findPreset = (tenant: Tenant, id: string): PresetRow | undefined => presetQueries(tenant).byId.get({ id })

/** Rows after the cursor, `limit` of them (-1: all), oldest first. */
export function listPresetRows(tenant: Tenant, opts: { limit: number; after?: [number, string] }): PresetRow[] {
  const q = presetQueries(tenant)
  if (!opts.after) return q.firstPage.all({ limit: opts.limit })
  const [createdAt, id] = opts.after
  return q.nextPage.all({ limit: opts.limit, createdAt, id })
}

export function toPreset(row: PresetRow): ImportPresetOut {
  return {
    id: row.id,
    name: row.name,
    delimiter: row.delimiter,
    headerRow: row.headerRow,
    skipRows: row.skipRows,
    skipFooterRows: row.skipFooterRows,
    decimalSeparator: row.decimalSeparator,
    dateFormat: row.dateFormat,
    amountPositiveIs: row.amountPositiveIs,
    columns: row.columns ? (Object.fromEntries(COLUMN_ROLES.map((role) => [role, row.columns?.[role] ?? null])) as PresetColumnsOut) : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}
