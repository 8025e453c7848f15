import { getTableColumns, type Placeholder, type SQL, sql } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'

/**
 * Helpers for upserts prepared once with placeholders and then run with values, instead of
 * building SQL text on every write.
 */

/** `{ field: placeholder('field') }` for an insert's `.values()`; each column's own encoding still applies. */
export function placeholders<T extends SQLiteTable, K extends keyof T['$inferInsert'] & string>(_table: T, fields: readonly K[]): Record<K, Placeholder> {
  return Object.fromEntries(fields.map((field) => [field, sql.placeholder(field)])) as unknown as Record<K, Placeholder>
}

/** `ON CONFLICT … DO UPDATE SET column = excluded.column` for each of the table's `fields`. */
export function fromExcluded<T extends SQLiteTable, K extends keyof T['$inferInsert'] & string>(table: T, fields: readonly K[]): Record<K, SQL> {
  const columns = getTableColumns(table)
  return Object.fromEntries(fields.map((field) => [field, sql`excluded.${sql.identifier((columns[field] as { name: string }).name)}`])) as Record<K, SQL>
}
