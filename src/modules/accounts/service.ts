import { eq } from 'drizzle-orm'
import { settleCreated } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { accounts } from '../../db/tenant/schema.ts'
import { ApiError, externalIdConflict, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { isId, newId } from '../../db/ids.ts'
import { readMoney } from '../../platform/money.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import type { AccountCreateInput, AccountUpdateInput } from './model.ts'
import { assertRoomFor } from '../../platform/owner-limits.ts'
import { type AccountRow, findAccount, findAccountByExternalId, listAccountRows, toAccount } from './queries.ts'

/** Accounts: create, change, archive, upsert by externalId, list. Synchronous; callers hold the transaction. */

export function getAccount(tenant: Tenant, id: string): AccountRow {
  const row = findAccount(tenant, id)
  if (!row) throw notFound('Account', id)
  return row
}

function assertExternalIdFree(tenant: Tenant, externalId: string | null | undefined, selfId?: string): void {
  if (externalId == null) return
  const holder = findAccountByExternalId(tenant, externalId)
  if (holder && holder.id !== selfId) {
    throw externalIdConflict('account', externalId, holder.id)
  }
}

function assertLinkable(tenant: Tenant, linkedAccountId: string | null | undefined, selfId?: string): void {
  if (linkedAccountId == null) return
  if (!findAccount(tenant, linkedAccountId)) throw invalidReference('linkedAccountId', linkedAccountId)
  if (linkedAccountId === selfId) throw ruleViolation('linkedAccountId must be another account, not the account itself')
}

type Changes = Partial<Omit<AccountRow, 'id' | 'createdAt' | 'updatedAt' | 'isArchived'>>

/** The column values a request body sets: text trimmed, money exact, absent fields left out. */
function changesFrom(body: AccountUpdateInput): Changes {
  const changes: Changes = {}
  const text = ['externalId', 'name', 'subtype', 'providerSlug', 'secondaryProviderSlug', 'color', 'icon', 'notes', 'accountNumber'] as const
  for (const field of text) {
    if (body[field] !== undefined) (changes as Record<string, unknown>)[field] = trimmed(body[field])
  }
  // Ids are matched as sent, never trimmed.
  if (body.linkedAccountId !== undefined) changes.linkedAccountId = body.linkedAccountId
  if (body.type !== undefined) changes.type = body.type
  if (body.currency !== undefined) changes.currency = body.currency
  if (body.balance !== undefined) changes.balance = readMoney(body, 'balance')
  if (body.sortOrder !== undefined) changes.sortOrder = body.sortOrder
  if (body.customFields !== undefined) changes.customFields = body.customFields.map((f) => ({ label: f.label.trim(), value: f.value.trim() }))
  for (const flag of ['isLiability', 'isFavourite', 'showInDashboard', 'isHidden'] as const) {
    if (body[flag] !== undefined) changes[flag] = body[flag]
  }
  return changes
}

export function createAccount(tenant: Tenant, body: AccountCreateInput): AccountRow {
  return tenant.write(() => {
    const changes = changesFrom(body)
    assertExternalIdFree(tenant, changes.externalId)
    assertLinkable(tenant, changes.linkedAccountId)
    const now = Date.now()
    const row: AccountRow = {
      id: newId('acct'),
      externalId: null,
      subtype: null,
      providerSlug: null,
      secondaryProviderSlug: null,
      color: null,
      icon: null,
      linkedAccountId: null,
      isArchived: false,
      isLiability: false,
      isFavourite: false,
      showInDashboard: true,
      isHidden: false,
      notes: null,
      sortOrder: null,
      accountNumber: null,
      customFields: [],
      createdAt: now,
      updatedAt: now,
      ...(changes as Pick<AccountRow, 'name' | 'type' | 'balance' | 'currency'>),
    }
    assertRoomFor(tenant, 'accounts')
    tenant.db.insert(accounts).values(row).run()
    settleCreated(tenant, 'accounts', row.id)
    return row
  })
}

export function updateAccount(tenant: Tenant, id: string, body: AccountUpdateInput): AccountRow {
  return tenant.write(() => {
    // 404 before anything else.
    getAccount(tenant, id)
    const changes = changesFrom(body)
    assertExternalIdFree(tenant, changes.externalId, id)
    assertLinkable(tenant, changes.linkedAccountId, id)
    if (Object.keys(changes).length > 0) tenant.db.update(accounts).set(changes).where(eq(accounts.id, id)).run()
    return getAccount(tenant, id)
  })
}

/** DELETE archives: the account and its history stay; archiving twice changes nothing. */
export function archiveAccount(tenant: Tenant, id: string): AccountRow {
  return tenant.write(() => {
    const current = getAccount(tenant, id)
    if (current.isArchived) return current
    tenant.db.update(accounts).set({ isArchived: true }).where(eq(accounts.id, id)).run()
    return getAccount(tenant, id)
  })
}

/** Creates or updates by externalId; an archived match is updated and stays archived. */
export function upsertAccount(tenant: Tenant, body: AccountCreateInput & { externalId: string }): { created: boolean; row: AccountRow } {
  return tenant.write(() => {
    const existing = findAccountByExternalId(tenant, body.externalId.trim())
    if (!existing) return { created: true, row: createAccount(tenant, body) }
    return { created: false, row: updateAccount(tenant, existing.id, body) }
  })
}

export function listAccounts(tenant: Tenant, query: { limit?: number; cursor?: string; includeArchived?: boolean }) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'ns') as [number, string] | undefined
  // Payee cursors have the same [createdAt, id] shape: the id says which list a cursor is from.
  if (after && !isId('acct', after[1])) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  const rows = listAccountRows(tenant, { limit: limit + 1, after, includeArchived: query.includeArchived ?? false })
  return page(rows, limit, (row) => [row.createdAt, row.id], toAccount)
}
