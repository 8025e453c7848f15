import type { Statement } from 'bun:sqlite'
import { getTableColumns, Placeholder, type SQL, sql } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { TenantDrizzle } from './tenant/tenant.ts'

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

/** A drizzle query that can say its SQL: any builder, before `.prepare()`. */
type Buildable = { toSQL(): { sql: string; params: unknown[] } }

/**
 * A query's SQL, built by drizzle once for every owner file, for statements whose rows are read
 * as bare value arrays (no drizzle mapping to lose): each file then prepares the text with SQLite
 * itself (~0.02 ms) instead of drizzle building the same text again (~0.25 ms) at an owner's
 * first request. Every parameter must be a named placeholder; `values` binds them by name.
 */
export class SharedQuery {
  private built?: { text: string; names: string[] }

  constructor(private readonly build: (db: TenantDrizzle) => Buildable) {}

  prepare(db: TenantDrizzle): Statement {
    if (!this.built) {
      const { sql: text, params } = this.build(db).toSQL()
      const names = params.map((param) => {
        if (!(param instanceof Placeholder)) throw new Error(`a shared query binds placeholders only: ${text}`)
        return param.name
      })
      this.built = { text, names }
    }
    return db.$client.prepare(this.built.text)
  }

  /** The statement's rows as value arrays, its placeholders bound from `values` by name. */
  values(statement: Statement, values: Readonly<Record<string, string | number | bigint>> = {}): unknown[][] {
    const names = this.built?.names ?? []
    const args = new Array<string | number | bigint>(names.length)
    for (let i = 0; i < names.length; i++) args[i] = values[names[i] as string] as string | number | bigint
    return statement.values(...args) as unknown[][]
  }
}

/** `?, ?, ?` for an IN list of `arity` values. */
export const inList = (arity: number): string => Array.from({ length: arity }, () => '?').join(', ')

/**
 * One statement per number of bound values (an IN list of a page's ids), prepared on first use
 * and kept: binding the ids as they are costs a quarter less than passing them as one JSON array
 * to `json_each`, and a page's ids come in few different counts.
 */
export class ByArity<S> {
  private readonly made = new Map<number, S>()
  constructor(private readonly prepare: (arity: number) => S) {}

  of(arity: number): S {
    let statement = this.made.get(arity)
    if (statement === undefined) {
      statement = this.prepare(arity)
      this.made.set(arity, statement)
    }
    return statement
  }
}
