import { index, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import { int, json, storedResponseColumns } from '../columns.ts'

/** The shared control database: who may call, and the bookkeeping of calls. */
export const owners = sqliteTable('owners', {
  id: text('id').primaryKey(),
  name: text('name'),
  email: text('email'),
  country: text('country'),
  defaultCurrency: text('default_currency'),
  preferredLanguage: text('preferred_language'),
  tier: text('tier', { enum: ['pro', 'free'] }).notNull(),
  createdAt: int('created_at').notNull(),
})

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => owners.id),
    name: text('name'),
    scopes: json<string[]>('scopes').notNull(),
    /** argon2id hash of the secret part; the plaintext is never stored. */
    secretHash: text('secret_hash').notNull(),
    createdAt: int('created_at').notNull(),
    lastUsedAt: int('last_used_at'),
    expiresAt: int('expires_at'),
    revokedAt: int('revoked_at'),
    /** The key made by rotating this one (`key rotate`): a key has at most one live replacement. */
    replacedBy: text('replaced_by'),
  },
  (table) => [index('api_keys_owner_idx').on(table.ownerId, table.createdAt)],
)

export const idempotencyRecords = sqliteTable(
  'idempotency_records',
  {
    ownerId: text('owner_id').notNull(),
    key: text('key').notNull(),
    ...storedResponseColumns(),
  },
  (table) => [primaryKey({ columns: [table.ownerId, table.key] }), index('idempotency_created_idx').on(table.createdAt)],
)

export const rateLimitCounters = sqliteTable('rate_limit_counters', {
  bucket: text('bucket').primaryKey(),
  minuteWindow: int('minute_window').notNull(),
  minuteCount: int('minute_count').notNull(),
  dayWindow: int('day_window').notNull(),
  dayCount: int('day_count').notNull(),
})

/**
 * The next date each owner has a schedule to auto-post (CONTRACT §29), so the timer opens only
 * the owners with work due instead of every owner file. A date earlier than the truth costs one
 * needless open (which corrects it); the owner's file is the truth.
 */
export const scheduleDue = sqliteTable(
  'schedule_due',
  {
    ownerId: text('owner_id').primaryKey(),
    nextDue: text('next_due').notNull(),
  },
  (table) => [index('schedule_due_next_idx').on(table.nextDue)],
)
