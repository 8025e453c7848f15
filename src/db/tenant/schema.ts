import { sql } from 'drizzle-orm'
import { type AnySQLiteColumn, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { flag, int, json, money, storedResponseColumns, updatedAt } from '../columns.ts'

/**
 * One owner's database: everything the owner owns and nothing else, so a copy of the
 * file is a complete export.
 */

/** Who this file belongs to, copied from the control database when the owner is made. */
export const profile = sqliteTable('profile', {
  id: text('id').primaryKey(),
  name: text('name'),
  email: text('email'),
  country: text('country'),
  defaultCurrency: text('default_currency'),
  preferredLanguage: text('preferred_language'),
  createdAt: int('created_at').notNull(),
})

export type CustomField = { label: string; value: string }

export const accounts = sqliteTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    type: text('type', { enum: ['physical', 'bank', 'ewallet', 'card', 'investment', 'crypto', 'loan', 'other'] }).notNull(),
    subtype: text('subtype'),
    providerSlug: text('provider_slug'),
    secondaryProviderSlug: text('secondary_provider_slug'),
    balance: money('balance').notNull(),
    currency: text('currency').notNull(),
    color: text('color'),
    icon: text('icon'),
    linkedAccountId: text('linked_account_id').references((): AnySQLiteColumn => accounts.id),
    isArchived: flag('is_archived').notNull(),
    isLiability: flag('is_liability').notNull(),
    isFavourite: flag('is_favourite').notNull(),
    showInDashboard: flag('show_in_dashboard').notNull(),
    isHidden: flag('is_hidden').notNull(),
    notes: text('notes'),
    sortOrder: real('sort_order'),
    accountNumber: text('account_number'),
    customFields: json<CustomField[]>('custom_fields').notNull(),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('accounts_external_id_idx').on(t.externalId),
    index('accounts_list_idx').on(t.isArchived, t.createdAt, t.id),
    index('accounts_created_idx').on(t.createdAt, t.id),
  ],
)

export const categories = sqliteTable(
  'categories',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    icon: text('icon'),
    color: text('color'),
    type: text('type', { enum: ['expense', 'income'] }),
    parentId: text('parent_id').references((): AnySQLiteColumn => categories.id),
    presetKey: text('preset_key'),
    isArchived: flag('is_archived').notNull(),
    isSystem: flag('is_system').notNull(),
    countries: json<string[] | null>('countries'),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('categories_external_id_idx').on(t.externalId),
    index('categories_list_idx').on(t.isSystem, t.createdAt, t.id),
    index('categories_parent_idx').on(t.parentId),
  ],
)

export const payees = sqliteTable(
  'payees',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    normalizedName: text('normalized_name').notNull(),
    aliases: json<string[]>('aliases').notNull(),
    /** Normalized name and aliases joined by newlines: what `q` searches. */
    searchText: text('search_text').notNull(),
    categoryId: text('category_id').references(() => categories.id),
    linkedPersonId: text('linked_person_id'),
    isMerchant: flag('is_merchant').notNull(),
    transactionCount: int('transaction_count').notNull(),
    totalSpent: money('total_spent').notNull(),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('payees_external_id_idx').on(t.externalId),
    uniqueIndex('payees_normalized_name_idx').on(t.normalizedName),
    index('payees_created_idx').on(t.createdAt, t.id),
    index('payees_usage_idx').on(sql`${t.transactionCount} DESC`, t.createdAt, t.id),
  ],
)

/** Normalized aliases, so `payeeName` resolves an alias with one index lookup. */
export const payeeAliases = sqliteTable(
  'payee_aliases',
  {
    payeeId: text('payee_id')
      .notNull()
      .references(() => payees.id, { onDelete: 'cascade' }),
    normalizedAlias: text('normalized_alias').notNull(),
  },
  (t) => [uniqueIndex('payee_aliases_pk').on(t.payeeId, t.normalizedAlias), index('payee_aliases_lookup_idx').on(t.normalizedAlias)],
)

export const transactions = sqliteTable(
  'transactions',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    categoryId: text('category_id').references(() => categories.id),
    payeeId: text('payee_id').references(() => payees.id),
    amount: money('amount').notNull(),
    date: text('date').notNull(),
    note: text('note'),
    /** The bank's own text for the transaction, kept as imported (CONTRACT §23); read-only once written except by upsert. */
    originalDescription: text('original_description'),
    time: text('time'),
    isTransfer: flag('is_transfer').notNull(),
    transferToAccountId: text('transfer_to_account_id').references(() => accounts.id),
    destinationAmount: money('destination_amount'),
    /** Stored as sent (its JSON text), so it reads back unchanged. */
    exchangeRate: text('exchange_rate'),
    createdAt: int('created_at').notNull(),
    /** Whether the transaction has legs (`transaction_splits`) and tags: a page reads those tables only when a row has some. */
    hasSplits: flag('has_splits').notNull().default(sql`0`),
    hasTags: flag('has_tags').notNull().default(sql`0`),
    updatedAt: updatedAt(),
    /** Who wrote it (CONTRACT §30): the owner whose key made it, the subject's own id in self mode; null on rows older than households. */
    createdBy: text('created_by'),
    /** Who last changed it (moves only with a change, as `updatedAt` does); null on rows older than households. */
    updatedBy: text('updated_by'),
    /** The schedule that posted it (CONTRACT §29); kept when the schedule is deleted, so no foreign key. */
    scheduleId: text('schedule_id'),
  },
  (t) => [
    uniqueIndex('transactions_external_id_idx').on(t.externalId),
    index('transactions_list_idx').on(t.date, t.createdAt, t.id),
    index('transactions_account_idx').on(t.accountId, t.date, t.createdAt, t.id),
    index('transactions_transfer_to_idx').on(t.transferToAccountId, t.date, t.createdAt, t.id).where(sql`transfer_to_account_id IS NOT NULL`),
    index('transactions_category_idx').on(t.categoryId, t.date, t.createdAt, t.id),
    index('transactions_payee_idx').on(t.payeeId, t.date, t.createdAt, t.id),
    // `categoryId=none` (CONTRACT §9): exactly the unsplit, non-transfer transactions without a category, in list order.
    // Auto-posted transactions a bank's row may adopt (CONTRACT §29), found by account and date.
    // Only those still holding their posting externalId: once a bank row adopted one it leaves the index.
    index('transactions_schedule_idx').on(t.accountId, t.date).where(sql`schedule_id IS NOT NULL AND external_id LIKE 'sched:%'`),
    index('transactions_uncategorized_idx').on(t.date, t.createdAt, t.id).where(sql`category_id IS NULL AND has_splits = 0 AND is_transfer = 0`),
    // transactions_budget_idx, on the month (substr(date, 1, 7)) and what a budget sums by, is
    // written by hand in migration 0012_budgets: drizzle-kit cannot write an index on an expression.
  ],
)

/**
 * The legs of a split transaction (CONTRACT §21), in the order given. `date` and `createdAt`
 * copy the transaction's (a trigger keeps `date` in step, migration 0007), so a filter by a
 * leg's category or payee walks one index in list order, as the transactions' own do.
 */
export const transactionSplits = sqliteTable(
  'transaction_splits',
  {
    id: text('id').primaryKey(),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => transactions.id, { onDelete: 'cascade' }),
    position: int('position').notNull(),
    amount: money('amount').notNull(),
    categoryId: text('category_id').references(() => categories.id),
    payeeId: text('payee_id').references(() => payees.id),
    note: text('note'),
    date: text('date').notNull(),
    createdAt: int('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('transaction_splits_order_idx').on(t.transactionId, t.position),
    index('transaction_splits_category_idx').on(t.categoryId, t.date, t.createdAt, t.transactionId).where(sql`category_id IS NOT NULL`),
    index('transaction_splits_payee_idx').on(t.payeeId, t.date, t.createdAt, t.transactionId).where(sql`payee_id IS NOT NULL`),
    // `categoryId=none`: the legs without a category, in list order.
    index('transaction_splits_uncategorized_idx').on(t.date, t.createdAt, t.transactionId).where(sql`category_id IS NULL`),
    // transaction_splits_budget_idx, the month's legs for its budget: by hand in migration 0012_budgets.
  ],
)

/**
 * What `q` searches in a transaction (CONTRACT §26): its own texts, normalized as payee names are
 * and joined by newlines (`transactions/search-text.ts` builds it; a transaction without text has
 * no row). Its integer key is the rowid of the FTS5 trigram index over `text`
 * (`transaction_search_fts`, migration 0015, kept by triggers): unlike `transactions`' implicit
 * rowid, an INTEGER PRIMARY KEY survives VACUUM unchanged.
 */
export const transactionSearch = sqliteTable(
  'transaction_search',
  {
    id: integer('id').primaryKey(),
    transactionId: text('transaction_id')
      .notNull()
      .references(() => transactions.id, { onDelete: 'cascade' }),
    text: text('text').notNull(),
  },
  (t) => [uniqueIndex('transaction_search_transaction_idx').on(t.transactionId)],
)

/**
 * One row (id 1): the version of the text builder `transaction_search` was last filled with. A
 * file whose version is older (a new text field, or a file made before search) is filled again
 * from its transactions before its first search.
 */
export const searchState = sqliteTable('search_state', {
  id: integer('id').primaryKey(),
  version: int('version').notNull(),
})

/** Labels on transactions (CONTRACT §22): unique by normalized name, archived rather than deleted. */
export const tags = sqliteTable(
  'tags',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    normalizedName: text('normalized_name').notNull(),
    color: text('color'),
    isArchived: flag('is_archived').notNull(),
    transactionCount: int('transaction_count').notNull(),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('tags_external_id_idx').on(t.externalId),
    uniqueIndex('tags_normalized_name_idx').on(t.normalizedName),
    index('tags_list_idx').on(t.isArchived, t.createdAt, t.id),
    index('tags_created_idx').on(t.createdAt, t.id),
  ],
)

/** Which tags a transaction carries, in the order given; `date` and `createdAt` as in `transaction_splits`, for the tag filter. */
export const transactionTags = sqliteTable(
  'transaction_tags',
  {
    transactionId: text('transaction_id')
      .notNull()
      .references(() => transactions.id, { onDelete: 'cascade' }),
    tagId: text('tag_id')
      .notNull()
      .references(() => tags.id),
    position: int('position').notNull(),
    date: text('date').notNull(),
    createdAt: int('created_at').notNull(),
  },
  (t) => [uniqueIndex('transaction_tags_pk').on(t.transactionId, t.tagId), index('transaction_tags_tag_idx').on(t.tagId, t.date, t.createdAt, t.transactionId)],
)

/**
 * Rules that fill in transactions (CONTRACT §23): conditions and actions are JSON, money in
 * them as integer strings of 10⁻⁸ units. They run in `(priority, created_at, id)` order, the
 * order the list shows them in, so one index serves both.
 */
export type StoredCondition = { field: string; op: string; value: string | string[] | null; valueTo: string | null }
export type StoredAction = { set: string; value: string | string[] }

export const rules = sqliteTable(
  'rules',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    priority: int('priority').notNull(),
    isActive: flag('is_active').notNull(),
    match: text('match', { enum: ['all', 'any'] }).notNull(),
    conditions: json<StoredCondition[]>('conditions').notNull(),
    actions: json<StoredAction[]>('actions').notNull(),
    stopProcessing: flag('stop_processing').notNull(),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('rules_external_id_idx').on(t.externalId), index('rules_order_idx').on(t.priority, t.createdAt, t.id)],
)

/**
 * A month's budget (CONTRACT §27), `YYYY-MM`: the currency its planned amounts are in. Made by
 * the month's first plan and kept; a month with no planned amount takes the owner's
 * `defaultCurrency` again at its next write.
 */
export const budgets = sqliteTable('budgets', {
  month: text('month').primaryKey(),
  currency: text('currency').notNull(),
})

/** One planned amount of a month, by category; an amount of 0 is no row. */
export const budgetLines = sqliteTable(
  'budget_lines',
  {
    month: text('month')
      .notNull()
      .references(() => budgets.month),
    categoryId: text('category_id')
      .notNull()
      .references(() => categories.id),
    planned: money('planned').notNull(),
    note: text('note'),
  },
  (t) => [primaryKey({ columns: [t.month, t.categoryId] })],
)

/**
 * A recurring transaction (CONTRACT §29): the transaction it expects and when. `recurrence` is
 * the rule as the API shows it (JSON); money as 10⁻⁸ units. `postedThrough`: every occurrence
 * on or before this date has been handled by auto-posting (null while `autoPost` is off);
 * `nextPost` the next date auto-posting has work, indexed so the owner's next due date is one seek.
 */
export type StoredRecurrence = {
  freq: 'daily' | 'weekly' | 'monthly' | 'yearly'
  interval: number
  byMonthDay: number[] | null
  byWeekday: string[] | null
  start: string
  until: string | null
  count: number | null
  weekendAdjust: 'none' | 'before' | 'after'
}

export const schedules = sqliteTable(
  'schedules',
  {
    id: text('id').primaryKey(),
    externalId: text('external_id'),
    name: text('name').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    amount: money('amount').notNull(),
    amountTolerance: money('amount_tolerance').notNull(),
    payeeId: text('payee_id').references(() => payees.id),
    categoryId: text('category_id').references(() => categories.id),
    tagIds: json<string[]>('tag_ids').notNull(),
    note: text('note'),
    isTransfer: flag('is_transfer').notNull(),
    transferToAccountId: text('transfer_to_account_id').references(() => accounts.id),
    destinationAmount: money('destination_amount'),
    recurrence: json<StoredRecurrence>('recurrence').notNull(),
    autoPost: flag('auto_post').notNull(),
    matchWindowDays: int('match_window_days').notNull(),
    isActive: flag('is_active').notNull(),
    postedThrough: text('posted_through'),
    nextPost: text('next_post'),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('schedules_external_id_idx').on(t.externalId),
    index('schedules_created_idx').on(t.createdAt, t.id),
    index('schedules_next_post_idx').on(t.nextPost).where(sql`next_post IS NOT NULL`),
  ],
)

/**
 * What happened to one occurrence beyond the rule: `skipped` by the owner, or `posted` by
 * auto-posting (with the transaction it made, which keeps the link when a bank's row adopts it).
 * At most one row per schedule and date: a date is never posted twice.
 */
export const scheduleOccurrences = sqliteTable(
  'schedule_occurrences',
  {
    scheduleId: text('schedule_id').notNull(),
    date: text('date').notNull(),
    state: text('state', { enum: ['skipped', 'posted'] }).notNull(),
    transactionId: text('transaction_id'),
  },
  (t) => [primaryKey({ columns: [t.scheduleId, t.date] }), index('schedule_occurrences_transaction_idx').on(t.transactionId)],
)

/**
 * How to read a bank's CSV export (CONTRACT §24): the columns and conventions of one layout,
 * saved once and named by `presetId` on each import. Nulls mean "detect it from the file".
 */
export const importPresets = sqliteTable(
  'import_presets',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    delimiter: text('delimiter'),
    headerRow: flag('header_row').notNull(),
    skipRows: int('skip_rows').notNull(),
    skipFooterRows: int('skip_footer_rows'),
    decimalSeparator: text('decimal_separator', { enum: ['.', ','] }),
    dateFormat: text('date_format'),
    amountPositiveIs: text('amount_positive_is', { enum: ['income', 'expense'] }).notNull(),
    columns: json<Record<string, string | number> | null>('columns'),
    createdAt: int('created_at').notNull(),
    updatedAt: updatedAt(),
  },
  (t) => [index('import_presets_created_idx').on(t.createdAt, t.id)],
)

/**
 * The idempotency keys whose writes this file holds, written in the same transaction as
 * the write itself: a retry after a crash finds its response here and never writes twice.
 */
export const appliedRequests = sqliteTable(
  'applied_requests',
  {
    key: text('key').primaryKey(),
    ...storedResponseColumns(),
  },
  (t) => [index('applied_requests_created_idx').on(t.createdAt)],
)

/**
 * The change feed (CONTRACT §15): one row per entity, at its latest change. `seq` is an
 * AUTOINCREMENT rowid, so it grows with every change and is never reused, even after rows
 * are replaced or tombstones purged. Rows are written by triggers on the resource tables
 * (migration 0004), in the same transaction as the change itself; a `delete` row is a
 * deleted transaction's tombstone.
 */
export const changeLog = sqliteTable(
  'change_log',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    resource: text('resource', { enum: ['account', 'category', 'payee', 'transaction', 'tag', 'rule', 'budget', 'import_preset', 'schedule'] }).notNull(),
    entityId: text('entity_id').notNull(),
    op: text('op', { enum: ['upsert', 'delete'] }).notNull(),
    changedAt: int('changed_at').notNull(),
    externalId: text('external_id'),
  },
  (t) => [
    uniqueIndex('change_log_entity_idx').on(t.resource, t.entityId),
    index('change_log_resource_seq_idx').on(t.resource, t.seq),
    index('change_log_tombstone_age_idx').on(t.changedAt).where(sql`op = 'delete'`),
    index('change_log_tombstone_external_idx').on(t.resource, t.externalId).where(sql`op = 'delete'`),
  ],
)

/**
 * One row (id 1): the feed's epoch, which a restore replaces so that cursors from before it
 * expire; the secret that signs this file's cursors; the highest purged tombstone's seq.
 */
export const feedState = sqliteTable('feed_state', {
  id: integer('id').primaryKey(),
  epoch: text('epoch').notNull(),
  secret: text('secret').notNull(),
  purgedSeq: int('purged_seq').notNull(),
})
