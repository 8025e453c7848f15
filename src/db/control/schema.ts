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
    /**
     * 1: the key's text names its owner (`pfk_<ownerId>_…`, CONTRACT §31), so a cluster's router
     * can place it; 0: made before pfin recorded this, in the old form `pfk_<keyId>_…` (to reissue).
     */
    namesOwner: int('names_owner').notNull().default(0),
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
 * How an owner signs in (CONTRACT §28): a login name, unique once normalized, and an argon2id
 * hash of the password (null until one is set through an invitation).
 */
export const ownerLogins = sqliteTable('owner_logins', {
  ownerId: text('owner_id')
    .primaryKey()
    .references(() => owners.id),
  /** Normalized (NFKC, lower case, trimmed): what sign-in compares. */
  login: text('login').notNull().unique(),
  passwordHash: text('password_hash'),
  passwordSetAt: int('password_set_at'),
  createdAt: int('created_at').notNull(),
})

/** One-time links to set a password (`owner invite`): only the SHA-256 of the token is kept. */
export const ownerInvites = sqliteTable(
  'owner_invites',
  {
    tokenHash: text('token_hash').primaryKey(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => owners.id),
    createdAt: int('created_at').notNull(),
    expiresAt: int('expires_at').notNull(),
    usedAt: int('used_at'),
  },
  (table) => [index('owner_invites_owner_idx').on(table.ownerId)],
)

/** OAuth clients, registered dynamically (RFC 7591). All are public clients: PKCE stands in for a secret. */
export const oauthClients = sqliteTable(
  'oauth_clients',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    redirectUris: json<string[]>('redirect_uris').notNull(),
    createdAt: int('created_at').notNull(),
  },
  (table) => [index('oauth_clients_created_idx').on(table.createdAt)],
)

/**
 * What a person allowed one client: the owner, the scopes (as narrowed on the consent page) and
 * its life. Listed beside the owner's keys (`GET /v1/keys`); revoking it ends every token of it.
 */
export const oauthGrants = sqliteTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    ownerId: text('owner_id')
      .notNull()
      .references(() => owners.id),
    clientId: text('client_id')
      .notNull()
      .references(() => oauthClients.id),
    scopes: json<string[]>('scopes').notNull(),
    createdAt: int('created_at').notNull(),
    lastUsedAt: int('last_used_at'),
    /** When its newest refresh token expires: the grant cannot be used past it. */
    expiresAt: int('expires_at').notNull(),
    revokedAt: int('revoked_at'),
  },
  (table) => [index('oauth_grants_owner_idx').on(table.ownerId, table.createdAt), index('oauth_grants_client_idx').on(table.clientId)],
)

/** Authorization codes: one use, a minute of life, bound to the client, the redirect URI and the PKCE challenge. */
export const oauthCodes = sqliteTable('oauth_codes', {
  codeHash: text('code_hash').primaryKey(),
  ownerId: text('owner_id')
    .notNull()
    .references(() => owners.id),
  clientId: text('client_id')
    .notNull()
    .references(() => oauthClients.id),
  scopes: json<string[]>('scopes').notNull(),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  createdAt: int('created_at').notNull(),
  expiresAt: int('expires_at').notNull(),
  /** The grant its redemption made: a second redemption revokes it (RFC 6749 §4.1.2). */
  grantId: text('grant_id'),
})

/** Access and refresh tokens: only the SHA-256 of each is kept. A used refresh token stays, so its reuse is seen. */
export const oauthTokens = sqliteTable(
  'oauth_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => oauthGrants.id),
    kind: text('kind', { enum: ['access', 'refresh'] }).notNull(),
    createdAt: int('created_at').notNull(),
    expiresAt: int('expires_at').notNull(),
    usedAt: int('used_at'),
  },
  (table) => [index('oauth_tokens_grant_idx').on(table.grantId), index('oauth_tokens_expires_idx').on(table.expiresAt)],
)

/**
 * Households (CONTRACT §30): the subject owner lets the grantee owner's keys act on the subject's
 * ledger with these scopes. At most one live grant per (subject, grantee), checked when one is made;
 * revoked and expired ones stay, as history.
 */
export const ledgerGrants = sqliteTable(
  'ledger_grants',
  {
    id: text('id').primaryKey(),
    subjectOwnerId: text('subject_owner_id')
      .notNull()
      .references(() => owners.id),
    granteeOwnerId: text('grantee_owner_id')
      .notNull()
      .references(() => owners.id),
    scopes: json<string[]>('scopes').notNull(),
    label: text('label'),
    createdAt: int('created_at').notNull(),
    expiresAt: int('expires_at'),
    revokedAt: int('revoked_at'),
  },
  (table) => [
    index('ledger_grants_subject_idx').on(table.subjectOwnerId, table.createdAt),
    index('ledger_grants_grantee_idx').on(table.granteeOwnerId, table.subjectOwnerId),
  ],
)

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
