import { sql } from 'drizzle-orm'
import { customType, text } from 'drizzle-orm/sqlite-core'

/**
 * Column types for databases opened with `safeIntegers`, where SQLite hands back every
 * INTEGER as a bigint. Money keeps the bigint; the rest become plain numbers and booleans.
 */
export const money = customType<{ data: bigint; driverData: bigint | number }>({
  dataType: () => 'integer',
  fromDriver: (value) => BigInt(value),
})

/** Unix epoch milliseconds (and small counters), exact as numbers. */
export const int = customType<{ data: number; driverData: bigint | number }>({
  dataType: () => 'integer',
  fromDriver: (value) => Number(value),
})

/**
 * A resource's `updatedAt` (CONTRACT §25): the time of its latest change, in epoch ms. The
 * owner's file keeps it by trigger, from the change feed: every change the feed records of an
 * entity (its own row, or what follows from others: a balance, a payee's totals, a category's
 * path) sets it to that change's time, never back. A resource that gains it adds this column
 * and, in the migration that adds it, a backfill and the trigger:
 *
 *   UPDATE <table> SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log
 *     WHERE resource = '<kind>' AND entity_id = <table>.id AND op = 'upsert'), 0));
 *   CREATE TRIGGER <table>_updated_at AFTER INSERT ON change_log
 *   WHEN NEW.resource = '<kind>' AND NEW.op = 'upsert'
 *   BEGIN UPDATE <table> SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at; END;
 *
 * (drizzle/tenant/0010_updated_at.sql, made again by 0016_updated_at_when_moved.sql). The default 0 lets the column be added to a table that has
 * rows; a new row starts at its `createdAt` and its first feed entry moves it on.
 */
export const updatedAt = () => int('updated_at').notNull().default(sql`0`)

export const flag = customType<{ data: boolean; driverData: bigint | number }>({
  dataType: () => 'integer',
  toDriver: (value) => (value ? 1 : 0),
  fromDriver: (value) => Number(value) === 1,
})

/** JSON stored as TEXT (string arrays, custom fields). */
export const json = <T>(name: string) =>
  customType<{ data: T; driverData: string }>({
    dataType: () => 'text',
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (value) => JSON.parse(value) as T,
  })(name)

/** A stored response to an idempotent request: in the control database and in each tenant file. */
/** The fields of a stored response, for the prepared statements that write one. */
export const STORED_RESPONSE_FIELDS = ['fingerprint', 'status', 'body', 'location', 'requestId', 'createdAt'] as const

export const storedResponseColumns = () => ({
  fingerprint: text('fingerprint').notNull(),
  status: int('status').notNull(),
  body: text('body').notNull(),
  location: text('location'),
  requestId: text('request_id').notNull(),
  createdAt: int('created_at').notNull(),
})
