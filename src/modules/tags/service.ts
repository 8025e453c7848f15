import { eq } from 'drizzle-orm'
import { isId, newId } from '../../db/ids.ts'
import { settleCreated } from '../../db/tenant/change-log.ts'
import { tags } from '../../db/tenant/schema.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { ApiError, externalIdConflict, notFound } from '../../platform/errors.ts'
import { assertRoomFor } from '../../platform/owner-limits.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import { normalizeName } from '../payees/normalize.ts'
import type { TagUpdateInput } from './model.ts'
import { findTag, findTagByExternalId, findTagByNormalizedName, listTagRows, type TagRow, toTag } from './queries.ts'

/**
 * Tags (CONTRACT §22): names unique per owner in the payees' normal form (CONTRACT §10),
 * archived instead of deleted, `transactionCount` kept exact by the transaction writes.
 */

export function getTag(tenant: Tenant, id: string): TagRow {
  const row = findTag(tenant, id)
  if (!row) throw notFound('Tag', id)
  return row
}

type Changes = Partial<Omit<TagRow, 'id' | 'createdAt' | 'updatedAt' | 'transactionCount'>>

/** The normal form of a tag's name; `label` names it in the 422 (`field 'name'`, a transaction's `tagNames[2]`). */
function normalizedTagName(name: string, label: string): string {
  const normalized = normalizeName(name)
  if (!normalized) throw new ApiError('validation_failed', `${label} must contain letters or digits, not only marks or spaces`)
  return normalized
}

function changesFrom(tenant: Tenant, body: TagUpdateInput, selfId?: string): Changes {
  const changes: Changes = {}
  if (body.externalId !== undefined) {
    const externalId = trimmed(body.externalId)
    const holder = externalId === null ? undefined : findTagByExternalId(tenant, externalId)
    if (holder && holder.id !== selfId) throw externalIdConflict('tag', externalId, holder.id)
    changes.externalId = externalId
  }
  if (body.name !== undefined) {
    const name = body.name.trim()
    const normalizedName = normalizedTagName(name, "field 'name'")
    const holder = findTagByNormalizedName(tenant, normalizedName)
    if (holder && holder.id !== selfId) throw new ApiError('tag_exists', `A tag named ${JSON.stringify(holder.name)} already exists (${holder.id})`)
    changes.name = name
    changes.normalizedName = normalizedName
  }
  if (body.color !== undefined) changes.color = trimmed(body.color)
  if (body.isArchived !== undefined) changes.isArchived = body.isArchived
  return changes
}

/** `field`: what a limit_reached names when the tag is made on the way (a transaction's `tagNames[2]`). */
export function createTag(tenant: Tenant, body: TagUpdateInput & { name: string }, field?: string): TagRow {
  return tenant.write(() => {
    const changes = changesFrom(tenant, body)
    assertRoomFor(tenant, 'tags', field)
    const now = Date.now()
    const row: TagRow = {
      id: newId('tag'),
      externalId: null,
      color: null,
      isArchived: false,
      transactionCount: 0,
      createdAt: now,
      updatedAt: now,
      name: changes.name as string,
      normalizedName: changes.normalizedName as string,
      ...changes,
    }
    tenant.db.insert(tags).values(row).run()
    settleCreated(tenant, 'tags', row.id)
    return row
  })
}

export function updateTag(tenant: Tenant, id: string, body: TagUpdateInput): TagRow {
  return tenant.write(() => {
    // 404 before anything else.
    getTag(tenant, id)
    const changes = changesFrom(tenant, body, id)
    if (Object.keys(changes).length > 0) tenant.db.update(tags).set(changes).where(eq(tags.id, id)).run()
    return getTag(tenant, id)
  })
}

/** DELETE archives: the tag stays on its transactions; archiving twice changes nothing. */
export function archiveTag(tenant: Tenant, id: string): TagRow {
  return tenant.write(() => {
    const current = getTag(tenant, id)
    if (current.isArchived) return current
    tenant.db.update(tags).set({ isArchived: true }).where(eq(tags.id, id)).run()
    return getTag(tenant, id)
  })
}

/** Creates or updates by externalId; an archived match is updated and stays archived unless `isArchived: false` is sent. */
export function upsertTag(tenant: Tenant, body: TagUpdateInput & { externalId: string; name: string }) {
  return tenant.write(() => {
    const existing = findTagByExternalId(tenant, body.externalId.trim())
    if (!existing) return { created: true, row: createTag(tenant, body) }
    return { created: false, row: updateTag(tenant, existing.id, body) }
  })
}

/** The tag a transaction's tag name means: the one with the same normalized name, else a new one. */
export function resolveTagName(tenant: Tenant, name: string, field: string): TagRow {
  const found = findTagByNormalizedName(tenant, normalizedTagName(name, field))
  return found ?? createTag(tenant, { name }, field)
}

export function listTags(tenant: Tenant, query: { limit?: number; cursor?: string; includeArchived?: boolean }) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'ns') as [number, string] | undefined
  // Account and payee cursors have the same [createdAt, id] shape: the id says which list a cursor is from.
  if (after && !isId('tag', after[1])) throw new ApiError('validation_failed', "query parameter 'cursor' is not a cursor from this list")
  const rows = listTagRows(tenant, { limit: limit + 1, after, includeArchived: query.includeArchived ?? false })
  return page(rows, limit, (row) => [row.createdAt, row.id], toTag)
}

/** Every tag (archived ones too when asked), in list order: the agent context's. */
export const allTags = (tenant: Tenant, includeArchived: boolean) => listTagRows(tenant, { limit: -1, includeArchived }).map(toTag)
