import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import {
  BooleanQuery,
  Cursor,
  ExternalId,
  Id,
  Limit,
  ListOf,
  Name,
  Nullable,
  PathId,
  ShortText,
  SingleOf,
  UpdatedAt,
  UpsertOf,
} from '../../platform/schemas.ts'

export const CATEGORY_TYPES = ['expense', 'income'] as const
export const MAX_CATEGORY_DEPTH = 4

export const CategoryType = t.Union(
  CATEGORY_TYPES.map((type) => t.Literal(type)),
  { description: 'expense or income' },
)
const NullableCategoryType = t.Union([t.Literal('expense'), t.Literal('income'), t.Null()], { description: 'expense, income or null' })

export const Category = t.Object(
  {
    id: Id('cat', 'cat_sys_groceries'),
    externalId: Nullable(t.String()),
    name: t.String(),
    icon: Nullable(t.String()),
    color: Nullable(t.String()),
    type: NullableCategoryType,
    parentId: Nullable(t.String({ description: 'the parent category; null at the top level' })),
    depth: Type.Integer({ minimum: 0, maximum: MAX_CATEGORY_DEPTH, description: 'number of ancestors (0 at the top level, at most 4)' }),
    fullName: t.String({ description: 'the ancestors’ names and its own, joined with " / "', examples: ['Food & Drinks / Groceries'] }),
    presetKey: Nullable(t.String({ description: 'stable key of a system category; null for custom ones' })),
    isArchived: t.Boolean(),
    isSystem: t.Boolean({ description: 'system categories are a fixed preset list, read-only' }),
    countries: Nullable(t.Array(t.String(), { description: 'the countries a system category is meant for; null = everywhere' })),
    updatedAt: UpdatedAt,
  },
  { title: 'Category', additionalProperties: false },
)

const optionalFields = {
  icon: t.Optional(ShortText),
  color: t.Optional(ShortText),
  type: t.Optional(CategoryType),
  parentId: t.Optional(t.String({ description: 'a visible system category or one of your own' })),
}

export const CategoryCreate = t.Object(
  { name: Name, externalId: t.Optional(ExternalId), ...optionalFields },
  { title: 'CategoryCreate', additionalProperties: false },
)

export const CategoryUpsert = t.Object({ externalId: ExternalId, name: Name, ...optionalFields }, { title: 'CategoryUpsert', additionalProperties: false })

export const CategoryUpdate = t.Object(
  {
    externalId: t.Optional(Nullable(ExternalId)),
    name: t.Optional(Name),
    icon: t.Optional(Nullable(ShortText)),
    color: t.Optional(Nullable(ShortText)),
    type: t.Optional(NullableCategoryType),
    parentId: t.Optional(Nullable(t.String({ description: 'the new parent; null moves the category to the top level' }))),
  },
  { title: 'CategoryUpdate', additionalProperties: false },
)

export const CategoryListQuery = t.Object(
  {
    limit: t.Optional(Limit),
    cursor: t.Optional(Cursor),
    includeArchived: t.Optional(BooleanQuery('include archived categories')),
    type: t.Optional(CategoryType),
    parentId: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'only the direct children of this category' })),
  },
  { additionalProperties: false },
)

export const CategoryParams = PathId('categoryId')
export const CategoryResponse = SingleOf(Category, 'CategoryResponse')
export const CategoryListResponse = ListOf(Category, 'CategoryListResponse')
export const CategoryUpsertResponse = UpsertOf(Category, 'CategoryUpsertResponse')

export type CategoryOut = typeof Category.static
export type CategoryCreateInput = typeof CategoryCreate.static
export type CategoryUpsertInput = typeof CategoryUpsert.static
export type CategoryUpdateInput = typeof CategoryUpdate.static
