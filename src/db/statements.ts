import { getTableColumns, type Placeholder, type SQL, sql } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { TenantDrizzle } from './tenant/registry.ts'

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

type Builders = Record<string, (db: TenantDrizzle) => unknown>

/**
 * A file's prepared statements, each built on its first use rather than all at once when the
 * file opens: building one (drizzle's SQL, then SQLite's prepare) costs ~0.2 ms, and the first
 * request of a rarely seen owner needs one or two of a module's statements, not all of them.
 * For `Tenant.prepared`, which keeps the result per open file.
 */
export function lazyStatements<B extends Builders>(builders: B): (db: TenantDrizzle) => { readonly [K in keyof B]: ReturnType<B[K]> } {
  return (db) => {
    const statements = {} as Record<string, unknown>
    for (const [name, build] of Object.entries(builders)) {
      Object.defineProperty(statements, name, {
        configurable: true,
        enumerable: true,
        get() {
          const value = build(db)
          // From now on a plain property: the getter runs once.
          Object.defineProperty(statements, name, { value, enumerable: true })
          return value
        },
      })
    }
    return statements as { readonly [K in keyof B]: ReturnType<B[K]> }
  }
}
