import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import { TagCreate, TagListQuery, TagListResponse, TagParams, TagResponse, TagUpdate, TagUpsert, TagUpsertResponse } from './model.ts'
import { toTag } from './queries.ts'
import { archiveTag, createTag, getTag, listTags, updateTag, upsertTag } from './service.ts'

/** Tags are labels on transactions: they take the transaction scopes (CONTRACT §22). */
const tag = 'Tags'

/** The resource as GET shows it (404 when absent): what an If-Match is checked against. */
const current = ({ tenant, params }: { tenant: Tenant; params: { tagId: string } }) => toTag(getTag(tenant, params.tagId))

export const tagRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/tags',
    operationId: 'listTags',
    summary: 'List tags (oldest first)',
    tag,
    scopes: ['transactions:read'],
    query: TagListQuery,
    response: TagListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listTags(tenant, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/tags',
    operationId: 'createTag',
    summary: 'Create a tag',
    description: 'Names are unique after normalizing (case, accents and spaces ignored): a second "Lisbon 2026" is 409 `tag_exists`.',
    tag,
    scopes: ['transactions:write'],
    body: TagCreate,
    response: TagResponse,
    statuses: [201],
    errors: ['external_id_conflict', 'tag_exists', 'limit_reached'],
    requestExample: { name: 'Lisbon 2026', color: '#e07a5f' },
    etag: true,
    handle: ({ tenant, body }) => {
      const row = createTag(tenant, body)
      return { status: 201, body: { data: toTag(row) }, location: `/v1/tags/${row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/tags/upsert',
    operationId: 'upsertTag',
    summary: 'Create or update a tag by externalId (sync)',
    tag,
    scopes: ['transactions:write'],
    body: TagUpsert,
    response: TagUpsertResponse,
    statuses: [201, 200],
    errors: ['tag_exists', 'limit_reached'],
    requestExample: { externalId: 'trip-lisbon-2026', name: 'Lisbon 2026' },
    etag: true,
    handle: ({ tenant, body }) => {
      const { created, row } = upsertTag(tenant, body)
      return upsertReply(created, toTag(row), `/v1/tags/${row.id}`)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/tags/:tagId',
    operationId: 'getTag',
    summary: 'Get a tag',
    tag,
    scopes: ['transactions:read'],
    params: TagParams,
    response: TagResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toTag(getTag(tenant, params.tagId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/tags/:tagId',
    operationId: 'updateTag',
    summary: 'Change a tag (rename, recolour, archive or restore)',
    tag,
    scopes: ['transactions:write'],
    params: TagParams,
    body: TagUpdate,
    response: TagResponse,
    statuses: [200],
    errors: ['not_found', 'external_id_conflict', 'tag_exists'],
    requestExample: { name: 'Lisbon trip 2026' },
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, params, body }) => ({ status: 200, body: { data: toTag(updateTag(tenant, params.tagId, body)) } }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/tags/:tagId',
    operationId: 'archiveTag',
    summary: 'Archive a tag',
    description: 'Tags are archived, never removed: the transactions that have it keep it; archiving again returns the tag unchanged.',
    tag,
    scopes: ['transactions:write'],
    params: TagParams,
    response: TagResponse,
    statuses: [200],
    errors: ['not_found'],
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toTag(archiveTag(tenant, params.tagId)) } }),
  }),
]
