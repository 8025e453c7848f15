import { eq } from 'drizzle-orm'
import { settleCreated } from '../../db/tenant/change-log.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { payeeAliases, payees } from '../../db/tenant/schema.ts'
import { ApiError, externalIdConflict, invalidReference, notFound } from '../../platform/errors.ts'
import { isId, newId } from '../../db/ids.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import { findVisibleCategory } from '../categories/service.ts'
import type { PayeeUpdateInput } from './model.ts'
import { normalizeName } from './normalize.ts'
import { assertRoomFor } from '../../platform/owner-limits.ts'
import { findPayee, findPayeeByAlias, findPayeeByExternalId, findPayeeByNormalizedName, listPayeeRows, type PayeeRow, toPayee } from './queries.ts'

/** Payees: unique by normalized name, found by name or alias, with exact usage aggregates. */

export function getPayee(tenant: Tenant, id: string): PayeeRow {
  const row = findPayee(tenant, id)
  if (!row) throw notFound('Payee', id)
  return row
}

function searchText(normalizedName: string, aliases: string[]): string {
  return [normalizedName, ...aliases.map(normalizeName)].join('\n')
}

function writeAliases(tenant: Tenant, payeeId: string, aliases: string[]): void {
  tenant.db.delete(payeeAliases).where(eq(payeeAliases.payeeId, payeeId)).run()
  const normalized = [...new Set(aliases.map(normalizeName))].filter(Boolean)
  if (normalized.length)
    tenant.db
      .insert(payeeAliases)
      .values(normalized.map((normalizedAlias) => ({ payeeId, normalizedAlias })))
      .run()
}

/** Aliases as given (trimmed), without repeats of the same normal form. */
function cleanAliases(aliases: string[]): string[] {
  const seen = new Set<string>()
  return aliases
    .map((alias) => alias.trim())
    .filter((alias, index) => {
      const key = normalizeName(alias)
      // Like a name: an alias with nothing left to match once normalized could never be found.
      if (!key) throw new ApiError('validation_failed', `field 'aliases[${index}]' must contain letters or digits, not only marks or spaces`)
      if (seen.has(key)) return false
      seen.add(key)
      return true
    })
}

type Changes = Partial<Omit<PayeeRow, 'id' | 'createdAt' | 'updatedAt' | 'transactionCount' | 'totalSpent'>>

function changesFrom(tenant: Tenant, country: string | null, body: PayeeUpdateInput, selfId?: string): Changes {
  const changes: Changes = {}
  if (body.externalId !== undefined) {
    const externalId = trimmed(body.externalId)
    const holder = externalId === null ? undefined : findPayeeByExternalId(tenant, externalId)
    if (holder && holder.id !== selfId) {
      throw externalIdConflict('payee', externalId, holder.id)
    }
    changes.externalId = externalId
  }
  if (body.name !== undefined) {
    const name = body.name.trim()
    const normalizedName = normalizeName(name)
    if (!normalizedName) throw new ApiError('validation_failed', "field 'name' must contain letters or digits, not only marks or spaces")
    const holder = findPayeeByNormalizedName(tenant, normalizedName)
    if (holder && holder.id !== selfId) throw new ApiError('payee_exists', `A payee named ${JSON.stringify(holder.name)} already exists (${holder.id})`)
    changes.name = name
    changes.normalizedName = normalizedName
  }
  if (body.aliases !== undefined) changes.aliases = cleanAliases(body.aliases)
  if (body.categoryId !== undefined) {
    if (body.categoryId !== null && !findVisibleCategory(tenant, country, body.categoryId)) throw invalidReference('categoryId', body.categoryId)
    changes.categoryId = body.categoryId
  }
  if (body.linkedPersonId !== undefined) changes.linkedPersonId = trimmed(body.linkedPersonId)
  if (body.isMerchant !== undefined) changes.isMerchant = body.isMerchant
  return changes
}

export function createPayee(tenant: Tenant, country: string | null, body: PayeeUpdateInput & { name: string }): PayeeRow {
  return tenant.write(() => {
    const changes = changesFrom(tenant, country, body)
    const normalizedName = changes.normalizedName as string
    const aliases = changes.aliases ?? []
    const now = Date.now()
    const row: PayeeRow = {
      id: newId('pay'),
      externalId: null,
      categoryId: null,
      linkedPersonId: null,
      isMerchant: false,
      transactionCount: 0,
      totalSpent: 0n,
      createdAt: now,
      updatedAt: now,
      name: changes.name as string,
      ...changes,
      normalizedName,
      aliases,
      searchText: searchText(normalizedName, aliases),
    }
    assertRoomFor(tenant, 'payees')
    tenant.db.insert(payees).values(row).run()
    writeAliases(tenant, row.id, aliases)
    settleCreated(tenant, 'payees', row.id)
    return row
  })
}

export function updatePayee(tenant: Tenant, country: string | null, id: string, body: PayeeUpdateInput): PayeeRow {
  return tenant.write(() => {
    const current = getPayee(tenant, id)
    const changes = changesFrom(tenant, country, body, id)
    const next = { ...current, ...changes }
    if (changes.normalizedName !== undefined || changes.aliases !== undefined)
      changes.searchText = next.searchText = searchText(next.normalizedName, next.aliases)
    if (Object.keys(changes).length > 0) tenant.db.update(payees).set(changes).where(eq(payees.id, id)).run()
    if (changes.aliases !== undefined) writeAliases(tenant, id, next.aliases)
    return getPayee(tenant, id)
  })
}

export function upsertPayee(tenant: Tenant, country: string | null, body: PayeeUpdateInput & { externalId: string; name: string }) {
  return tenant.write(() => {
    const existing = findPayeeByExternalId(tenant, body.externalId.trim())
    if (!existing) return { created: true, row: createPayee(tenant, country, body) }
    return { created: false, row: updatePayee(tenant, country, existing.id, body) }
  })
}

/** The payee a transaction's `payeeName` means: same normalized name, else an alias, else a new payee. */
/** The payee a name means (by normalized name, then alias), if there is one yet: nothing is created. */
export function findPayeeNamed(tenant: Tenant, name: string): PayeeRow | undefined {
  const normalized = normalizeName(name)
  return normalized ? (findPayeeByNormalizedName(tenant, normalized) ?? findPayeeByAlias(tenant, normalized)) : undefined
}

export function resolvePayeeName(tenant: Tenant, name: string, field = 'payeeName'): PayeeRow {
  // Named after the transaction's field (or a leg's): the payee's own `name` is not in the request.
  if (!normalizeName(name)) throw new ApiError('validation_failed', `${field} must contain letters or digits, not only marks or spaces`)
  const found = findPayeeNamed(tenant, name)
  if (found) return found
  assertRoomFor(tenant, 'payees', field)
  return createPayee(tenant, null, { name })
}

export function listPayees(tenant: Tenant, query: { limit?: number; cursor?: string; q?: string }) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'ns') as [number, string] | undefined
  // Account cursors have the same [createdAt, id] shape: the id says which list a cursor is from.
  if (after && !isId('pay', after[1])) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  const q = query.q === undefined ? undefined : normalizeName(query.q)
  const rows = listPayeeRows(tenant, { limit: limit + 1, after, q })
  return page(rows, limit, (row) => [row.createdAt, row.id], toPayee)
}
