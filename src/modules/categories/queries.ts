import { and, asc, eq, inArray, type SQL, sql } from 'drizzle-orm'
import { lazyStatements, SharedQuery } from '../../db/statements.ts'
import type { Tenant, TenantDrizzle } from '../../db/tenant/tenant.ts'
import { categories } from '../../db/tenant/schema.ts'
import type { CategoryOut } from './model.ts'

export type CategoryRow = typeof categories.$inferSelect

/** Every category of the file, visible or not: enough to compute `depth` and `fullName`. */
export type CategoryTree = Map<string, { name: string; parentId: string | null }>

/** Prepared once per open tenant file. */
const statements = lazyStatements({
  byId: (db) =>
    db
      .select()
      .from(categories)
      .where(eq(categories.id, sql.placeholder('id')))
      .prepare(),
  byExternalId: (db) =>
    db
      .select()
      .from(categories)
      .where(eq(categories.externalId, sql.placeholder('externalId')))
      .prepare(),
  tree: (db) => db.select({ id: categories.id, name: categories.name, parentId: categories.parentId }).from(categories).prepare(),
})

export const categoryQueries = (tenant: Tenant) => tenant.prepared(statements)

/** Each category's `type`, by id: what a transaction's `categoryType` shows. */
export type CategoryTypes = ReadonlyMap<string, CategoryRow['type']>

const typesQuery = new SharedQuery((db) => db.select({ id: categories.id, type: categories.type }).from(categories))
const prepareTypes = (db: TenantDrizzle) => typesQuery.prepare(db)

const readCategoryTypes = (tenant: Tenant): CategoryTypes => new Map(typesQuery.values(tenant.prepared(prepareTypes)) as [string, CategoryRow['type']][])

/**
 * Every category's type, read once and kept until the file changes (`Tenant.unchanged`): a
 * page of transactions looks its categories up here instead of joining the categories table
 * row by row (a fifth of a page's SQLite time). Call it inside the page's `tenant.read`.
 */
export function categoryTypes(tenant: Tenant): CategoryTypes {
  return tenant.unchanged(readCategoryTypes)
}

export function findCategory(tenant: Tenant, id: string): CategoryRow | undefined {
  return categoryQueries(tenant).byId.get({ id })
}

export function findCategoryByExternalId(tenant: Tenant, externalId: string): CategoryRow | undefined {
  return categoryQueries(tenant).byExternalId.get({ externalId })
}

export function loadCategoryTree(tenant: Tenant): CategoryTree {
  const tree: CategoryTree = new Map()
  for (const row of categoryQueries(tenant).tree.all()) tree.set(row.id, { name: row.name, parentId: row.parentId })
  return tree
}

/** Custom categories, and the system ones meant for everyone or for `country`. */
export function isVisibleTo(row: Pick<CategoryRow, 'isSystem' | 'countries'>, country: string | null): boolean {
  return !row.isSystem || row.countries === null || (country !== null && row.countries.includes(country))
}

function visibleTo(country: string | null): SQL {
  if (country === null) return sql`(${categories.isSystem} = 0 OR ${categories.countries} IS NULL)`
  return sql`(${categories.isSystem} = 0 OR ${categories.countries} IS NULL OR EXISTS (SELECT 1 FROM json_each(${categories.countries}) WHERE json_each.value = ${country}))`
}

/** List order: system first (rank 0), then custom (rank 1); each by createdAt, then id. */
const rank = sql<number>`(1 - ${categories.isSystem})`
export type CategoryCursor = [rank: number, createdAt: number, id: string]
export const cursorOf = (row: CategoryRow): CategoryCursor => [row.isSystem ? 0 : 1, row.createdAt, row.id]

export interface CategoryFilter {
  country: string | null
  includeArchived: boolean
  type?: 'expense' | 'income'
  parentId?: string
  after?: CategoryCursor
  /** Absent: every matching row. */
  limit?: number
}

/** The visible rows after the cursor, in list order. */
export function listCategoryRows(tenant: Tenant, filter: CategoryFilter): CategoryRow[] {
  const conditions: SQL[] = [visibleTo(filter.country)]
  if (!filter.includeArchived) conditions.push(eq(categories.isArchived, false))
  if (filter.type !== undefined) conditions.push(eq(categories.type, filter.type))
  if (filter.parentId !== undefined) conditions.push(eq(categories.parentId, filter.parentId))
  if (filter.after) {
    const [afterRank, createdAt, id] = filter.after
    conditions.push(sql`(${rank}, ${categories.createdAt}, ${categories.id}) > (${afterRank}, ${createdAt}, ${id})`)
  }
  const query = tenant.db
    .select()
    .from(categories)
    .where(and(...conditions))
    .orderBy(rank, asc(categories.createdAt), asc(categories.id))
  return filter.limit === undefined ? query.all() : query.limit(filter.limit).all()
}

export function archiveCategoryRows(tenant: Tenant, ids: string[]): void {
  if (ids.length === 0) return
  tenant.db
    .update(categories)
    .set({ isArchived: true })
    .where(and(inArray(categories.id, ids), eq(categories.isArchived, false)))
    .run()
}

/** Ids from the parent up to the root. Stops on a loop, which the writes never make. */
export function ancestorIds(tree: CategoryTree, id: string): string[] {
  const ancestors: string[] = []
  let parentId = tree.get(id)?.parentId ?? null
  while (parentId !== null && !ancestors.includes(parentId) && parentId !== id) {
    ancestors.push(parentId)
    parentId = tree.get(parentId)?.parentId ?? null
  }
  return ancestors
}

/** Direct children of every category. */
export function childrenIndex(tree: CategoryTree): Map<string, string[]> {
  const children = new Map<string, string[]>()
  for (const [id, node] of tree) {
    if (node.parentId === null) continue
    const list = children.get(node.parentId)
    if (list) list.push(id)
    else children.set(node.parentId, [id])
  }
  return children
}

/** Every descendant of `id` (not `id` itself). */
export function descendantIds(tree: CategoryTree, id: string): string[] {
  const children = childrenIndex(tree)
  const found: string[] = []
  const seen = new Set([id])
  const queue = [id]
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (seen.has(child)) continue
      seen.add(child)
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

/** Levels below `id`: 0 for a leaf. */
export function subtreeHeight(tree: CategoryTree, id: string): number {
  const children = childrenIndex(tree)
  let height = 0
  let level = [id]
  const seen = new Set(level)
  for (;;) {
    const next = level.flatMap((node) => children.get(node) ?? []).filter((child) => !seen.has(child))
    if (next.length === 0) return height
    for (const child of next) seen.add(child)
    height += 1
    level = next
  }
}

/** The response object; `depth` and `fullName` are computed from the current tree. */
export function categoryOut(row: CategoryRow, tree: CategoryTree): CategoryOut {
  const ancestors = ancestorIds(tree, row.id)
  const names = ancestors.map((id) => tree.get(id)?.name ?? '').reverse()
  names.push(row.name)
  return {
    id: row.id,
    externalId: row.externalId,
    name: row.name,
    icon: row.icon,
    color: row.color,
    type: row.type,
    parentId: row.parentId,
    depth: ancestors.length,
    fullName: names.join(' / '),
    presetKey: row.presetKey,
    isArchived: row.isArchived,
    isSystem: row.isSystem,
    countries: row.countries,
    updatedAt: row.updatedAt,
  }
}
