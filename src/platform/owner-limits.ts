import type { OwnerLimits, Tenant } from '../db/tenant/tenant.ts'
import { ApiError } from './errors.ts'

/**
 * The per-owner caps on what a loop of requests could otherwise multiply without end
 * (CONTRACT §19): one batch with new payee names makes 500 payees, with new tag names 10,000 tags. Transactions are bounded by
 * the owner's storage quota instead.
 */
type Capped = 'accounts' | 'categories' | 'payees' | 'tags' | 'rules'

/** Fixed SQL per kind (never client text). Only custom categories count: the system ones are pfin's. */
const COUNTS: Record<Capped, { top: string; count: string; setting: string; noun: string }> = {
  accounts: { top: 'SELECT max(rowid) AS n FROM accounts', count: 'SELECT count(*) AS n FROM accounts', setting: 'OWNER_MAX_ACCOUNTS', noun: 'accounts' },
  categories: {
    top: 'SELECT max(rowid) AS n FROM categories',
    count: 'SELECT count(*) AS n FROM categories WHERE is_system = 0',
    setting: 'OWNER_MAX_CATEGORIES',
    noun: 'custom categories',
  },
  payees: { top: 'SELECT max(rowid) AS n FROM payees', count: 'SELECT count(*) AS n FROM payees', setting: 'OWNER_MAX_PAYEES', noun: 'payees' },
  tags: { top: 'SELECT max(rowid) AS n FROM tags', count: 'SELECT count(*) AS n FROM tags', setting: 'OWNER_MAX_TAGS', noun: 'tags' },
  rules: { top: 'SELECT max(rowid) AS n FROM rules', count: 'SELECT count(*) AS n FROM rules', setting: 'OWNER_MAX_RULES', noun: 'rules' },
}

const numberFrom = (tenant: Tenant, sql: string): number => Number(tenant.sqlite.query<{ n: number | bigint | null }, []>(sql).get()?.n ?? 0)

/**
 * Refuses to make one more `kind` once the owner holds its limit: 409 `limit_reached`, naming
 * `field` when the record is made on the way (a transaction's `payeeName`). Rowids only grow,
 * so the largest is at least the count: below the limit (nearly always) one index lookup
 * answers; the exact count is read only near it.
 */
export function assertRoomFor(tenant: Tenant, kind: Capped, field?: string): void {
  const limit = tenant.limits[kind as keyof OwnerLimits]
  const counts = COUNTS[kind]
  if (numberFrom(tenant, counts.top) < limit) return
  if (numberFrom(tenant, counts.count) < limit) return
  const prefix = field ? `${field}: ` : ''
  throw new ApiError(
    'limit_reached',
    `${prefix}this owner already has ${limit.toLocaleString('en')} ${counts.noun}, the most the server allows (${counts.setting}); nothing was written`,
  )
}
