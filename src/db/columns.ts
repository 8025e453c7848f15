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
