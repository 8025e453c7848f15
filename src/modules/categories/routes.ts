import type { AuthContext } from '../../platform/auth.ts'
import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import {
  CategoryCreate,
  CategoryListQuery,
  CategoryListResponse,
  CategoryParams,
  CategoryResponse,
  CategoryUpdate,
  CategoryUpsert,
  CategoryUpsertResponse,
} from './model.ts'
import { archiveCategory, createCategory, getCategory, listCategories, toCategory, updateCategory, upsertCategory } from './service.ts'

const tag = 'Categories'
const example = { name: 'Farmers market', parentId: 'cat_sys_groceries', type: 'expense', icon: 'carrot', color: '#27AE60' }

/** The resource as GET shows it (404 when absent): what an If-Match is checked against. */
const current = ({ tenant, auth, params }: { tenant: Tenant; auth: AuthContext; params: { categoryId: string } }) =>
  toCategory(tenant, getCategory(tenant, auth.subject.country, params.categoryId))

export const categoryRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/categories',
    operationId: 'listCategories',
    summary: 'List categories (system first, then custom; oldest first)',
    description: 'System categories for everyone and for your country, then your own. `depth` and `fullName` reflect the current hierarchy.',
    tag,
    scopes: ['categories:read'],
    query: CategoryListQuery,
    response: CategoryListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, auth, query }) => ({ status: 200, body: listCategories(tenant, auth.subject.country, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/categories',
    operationId: 'createCategory',
    summary: 'Create a custom category',
    description: '`parentId` may name a system category or one of your own; categories nest at most 5 levels (depth 0–4).',
    tag,
    scopes: ['categories:write'],
    body: CategoryCreate,
    response: CategoryResponse,
    statuses: [201],
    errors: ['invalid_reference', 'rule_violation', 'external_id_conflict', 'limit_reached'],
    requestExample: example,
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const row = createCategory(tenant, auth.subject.country, body)
      return { status: 201, body: { data: toCategory(tenant, row) }, location: `/v1/categories/${row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/categories/upsert',
    operationId: 'upsertCategory',
    summary: 'Create or update a custom category by externalId (sync)',
    description: 'Fields not sent keep their values; an archived match is updated and stays archived.',
    tag,
    scopes: ['categories:write'],
    body: CategoryUpsert,
    response: CategoryUpsertResponse,
    statuses: [201, 200],
    errors: ['invalid_reference', 'rule_violation', 'system_category_read_only', 'limit_reached'],
    requestExample: { externalId: 'budget-app-42', ...example },
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const { created, row } = upsertCategory(tenant, auth.subject.country, body)
      return upsertReply(created, toCategory(tenant, row), `/v1/categories/${row.id}`)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/categories/:categoryId',
    operationId: 'getCategory',
    summary: 'Get a category',
    tag,
    scopes: ['categories:read'],
    params: CategoryParams,
    response: CategoryResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, auth, params }) => ({
      status: 200,
      body: { data: toCategory(tenant, getCategory(tenant, auth.subject.country, params.categoryId)) },
    }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/categories/:categoryId',
    operationId: 'updateCategory',
    summary: 'Change a custom category',
    description:
      '`null` clears `externalId`, `icon`, `color` and `type`; `parentId: null` moves the category to the top level. ' +
      'Moving a category moves its subtree; a move that would make a cycle or nest deeper than depth 4 is a `rule_violation`.',
    tag,
    scopes: ['categories:write'],
    params: CategoryParams,
    body: CategoryUpdate,
    response: CategoryResponse,
    statuses: [200],
    errors: ['not_found', 'system_category_read_only', 'invalid_reference', 'rule_violation', 'external_id_conflict'],
    requestExample: { name: 'Farmers markets', parentId: null },
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, auth, params, body }) => ({
      status: 200,
      body: { data: toCategory(tenant, updateCategory(tenant, auth.subject.country, params.categoryId, body)) },
    }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/categories/:categoryId',
    operationId: 'archiveCategory',
    summary: 'Archive a custom category and its descendants',
    description: 'Categories are archived, never removed; archiving again returns the category unchanged.',
    tag,
    scopes: ['categories:write'],
    params: CategoryParams,
    response: CategoryResponse,
    statuses: [200],
    errors: ['not_found', 'system_category_read_only'],
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, auth, params }) => ({
      status: 200,
      body: { data: toCategory(tenant, archiveCategory(tenant, auth.subject.country, params.categoryId)) },
    }),
  }),
]
