import { eq } from 'drizzle-orm'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { categories } from '../../db/tenant/schema.ts'
import { ApiError, externalIdConflict, invalidReference, notFound, ruleViolation } from '../../platform/errors.ts'
import { newId } from '../../db/ids.ts'
import { decodeCursor, page } from '../../platform/pagination.ts'
import { trimmed } from '../../platform/schemas.ts'
import { recordCategoryChanges, settleCreated } from '../../db/tenant/change-log.ts'
import { type CategoryCreateInput, type CategoryOut, type CategoryUpdateInput, type CategoryUpsertInput, MAX_CATEGORY_DEPTH } from './model.ts'
import { assertRoomFor } from '../../platform/owner-limits.ts'
import {
  ancestorIds,
  archiveCategoryRows,
  type CategoryCursor,
  type CategoryRow,
  cursorOf,
  descendantIds,
  findCategory,
  findCategoryByExternalId,
  isVisibleTo,
  listCategoryRows,
  loadCategoryTree,
  subtreeHeight,
  categoryOut,
} from './queries.ts'

/**
 * Categories: the owner's custom ones (create, change, archive, upsert by externalId) and the
 * read-only system presets seeded into every file. `country` is the owner's country, which
 * decides which country-specific system categories the owner sees (CONTRACT §10).
 * Synchronous; callers hold the transaction.
 */

export type { CategoryRow } from './queries.ts'

/** The category when it exists and the owner may see it; undefined otherwise. For references from other modules. */
export function findVisibleCategory(tenant: Tenant, country: string | null, id: string): CategoryRow | undefined {
  const row = findCategory(tenant, id)
  return row && isVisibleTo(row, country) ? row : undefined
}

/** Maps rows to response objects, reading the category tree once. */
export function categoryMapper(tenant: Tenant): (row: CategoryRow) => CategoryOut {
  const tree = loadCategoryTree(tenant)
  return (row) => categoryOut(row, tree)
}

/** The response object of one row, with `depth` and `fullName` as they are now. */
export function toCategory(tenant: Tenant, row: CategoryRow): CategoryOut {
  return categoryMapper(tenant)(row)
}

export function getCategory(tenant: Tenant, country: string | null, id: string): CategoryRow {
  const row = findVisibleCategory(tenant, country, id)
  if (!row) throw notFound('Category', id)
  return row
}

/** A category as stored now, after a write to it. */
function storedCategory(tenant: Tenant, id: string): CategoryRow {
  const row = findCategory(tenant, id)
  if (!row) throw new Error(`category ${id} vanished during its own write`)
  return row
}

/** A custom category of the owner; a (visible) system category is read-only. */
function getWritableCategory(tenant: Tenant, country: string | null, id: string): CategoryRow {
  const row = getCategory(tenant, country, id)
  if (row.isSystem) throw systemReadOnly(row.id)
  return row
}

const systemReadOnly = (id: string) =>
  new ApiError('system_category_read_only', `category ${JSON.stringify(id)} is a system category; system categories cannot be changed or archived`)

function assertExternalIdFree(tenant: Tenant, externalId: string | null | undefined, selfId?: string): void {
  if (externalId == null) return
  const holder = findCategoryByExternalId(tenant, externalId)
  if (holder && holder.id !== selfId) {
    throw externalIdConflict('category', externalId, holder.id)
  }
}

/**
 * Checks that `parentId` may become the parent of `selfId` (or of a new category): it must be
 * a category the owner sees, must not be the category or one of its descendants, and the
 * deepest category of the moved subtree must stay within depth 4.
 */
function assertPlacement(tenant: Tenant, country: string | null, parentId: string, selfId?: string): void {
  if (!findVisibleCategory(tenant, country, parentId)) throw invalidReference('parentId', parentId)
  const tree = loadCategoryTree(tenant)
  const parentAncestors = ancestorIds(tree, parentId)
  if (selfId !== undefined && (parentId === selfId || parentAncestors.includes(selfId))) {
    throw ruleViolation(
      parentId === selfId
        ? 'parentId: a category cannot be its own parent'
        : `parentId: ${JSON.stringify(parentId)} is below this category; the move would make a cycle`,
    )
  }
  const height = selfId === undefined ? 0 : subtreeHeight(tree, selfId)
  const deepest = parentAncestors.length + 1 + height
  if (deepest > MAX_CATEGORY_DEPTH) {
    throw ruleViolation(
      `parentId: categories nest at most ${MAX_CATEGORY_DEPTH + 1} levels (depth 0–${MAX_CATEGORY_DEPTH}); ` +
        `under ${JSON.stringify(parentId)} ${height > 0 ? 'the deepest category of this subtree' : 'the category'} would be at depth ${deepest}`,
    )
  }
}

type Changes = Partial<Pick<CategoryRow, 'externalId' | 'name' | 'icon' | 'color' | 'type' | 'parentId'>>

/** The column values a request body sets: text trimmed, absent fields left out. */
function changesFrom(body: CategoryUpdateInput): Changes {
  const changes: Changes = {}
  for (const field of ['externalId', 'name', 'icon', 'color'] as const) {
    if (body[field] !== undefined) (changes as Record<string, unknown>)[field] = trimmed(body[field])
  }
  // Ids are matched as sent, never trimmed.
  if (body.parentId !== undefined) changes.parentId = body.parentId
  if (body.type !== undefined) changes.type = body.type
  return changes
}

export function createCategory(tenant: Tenant, country: string | null, body: CategoryCreateInput): CategoryRow {
  return tenant.write(() => {
    const changes = changesFrom(body)
    assertExternalIdFree(tenant, changes.externalId)
    if (changes.parentId != null) assertPlacement(tenant, country, changes.parentId)
    const now = Date.now()
    const row: CategoryRow = {
      id: newId('cat'),
      externalId: null,
      icon: null,
      color: null,
      type: null,
      parentId: null,
      presetKey: null,
      isArchived: false,
      isSystem: false,
      countries: null,
      createdAt: now,
      updatedAt: now,
      ...(changes as Changes & Pick<CategoryRow, 'name'>),
    }
    assertRoomFor(tenant, 'categories')
    tenant.db.insert(categories).values(row).run()
    settleCreated(tenant, 'categories', row.id)
    return row
  })
}

export function updateCategory(tenant: Tenant, country: string | null, id: string, body: CategoryUpdateInput): CategoryRow {
  return tenant.write(() => {
    const current = getWritableCategory(tenant, country, id)
    const changes = changesFrom(body)
    assertExternalIdFree(tenant, changes.externalId, current.id)
    if (changes.parentId != null && changes.parentId !== current.parentId) assertPlacement(tenant, country, changes.parentId, current.id)
    if (Object.keys(changes).length > 0) tenant.db.update(categories).set(changes).where(eq(categories.id, current.id)).run()
    const renamed = changes.name !== undefined && changes.name !== current.name
    const moved = changes.parentId !== undefined && changes.parentId !== current.parentId
    // The categories below carry this one in their fullName (and depth): they changed too.
    if (renamed || moved) recordCategoryChanges(tenant, descendantIds(loadCategoryTree(tenant), current.id))
    return storedCategory(tenant, current.id)
  })
}

/** DELETE archives the category and every category below it; archiving again changes nothing. */
export function archiveCategory(tenant: Tenant, country: string | null, id: string): CategoryRow {
  return tenant.write(() => {
    const current = getWritableCategory(tenant, country, id)
    archiveCategoryRows(tenant, [current.id, ...descendantIds(loadCategoryTree(tenant), current.id)])
    return storedCategory(tenant, current.id)
  })
}

/** Creates or updates by externalId; an archived match is updated and stays archived. */
export function upsertCategory(tenant: Tenant, country: string | null, body: CategoryUpsertInput): { created: boolean; row: CategoryRow } {
  return tenant.write(() => {
    const existing = findCategoryByExternalId(tenant, body.externalId.trim())
    if (!existing) return { created: true, row: createCategory(tenant, country, body) }
    if (existing.isSystem) throw systemReadOnly(existing.id)
    return { created: false, row: updateCategory(tenant, country, existing.id, body) }
  })
}

export function listCategories(
  tenant: Tenant,
  country: string | null,
  query: { limit?: number; cursor?: string; includeArchived?: boolean; type?: 'expense' | 'income'; parentId?: string },
) {
  const limit = query.limit ?? 50
  const after = decodeCursor(query.cursor, 'nns') as CategoryCursor | undefined
  const rows = listCategoryRows(tenant, {
    country,
    includeArchived: query.includeArchived ?? false,
    type: query.type,
    parentId: query.parentId,
    after,
    limit: limit + 1,
  })
  return page(rows, limit, cursorOf, categoryMapper(tenant))
}

/** Every category the owner sees, in list order, as response objects (for the agent context). */
export function listAllCategoriesForContext(tenant: Tenant, country: string | null, includeArchived: boolean): CategoryOut[] {
  return listCategoryRows(tenant, { country, includeArchived }).map(categoryMapper(tenant))
}
