import type { Tenant } from '../../db/tenant/tenant.ts'
import { defineRoute, upsertReply } from '../../platform/route.ts'
import { PayeeCreate, PayeeListQuery, PayeeListResponse, PayeeParams, PayeeResponse, PayeeUpdate, PayeeUpsert, PayeeUpsertResponse } from './model.ts'
import { toPayee } from './queries.ts'
import { createPayee, getPayee, listPayees, updatePayee, upsertPayee } from './service.ts'

const tag = 'Payees'

/** The resource as GET shows it (404 when absent): what an If-Match is checked against. */
const current = ({ tenant, params }: { tenant: Tenant; params: { payeeId: string } }) => toPayee(getPayee(tenant, params.payeeId))

export const payeeRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/payees',
    operationId: 'listPayees',
    summary: 'List payees (oldest first); `q` searches names and aliases',
    tag,
    scopes: ['payees:read'],
    query: PayeeListQuery,
    response: PayeeListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ tenant, query }) => ({ status: 200, body: listPayees(tenant, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/payees',
    operationId: 'createPayee',
    summary: 'Create a payee',
    tag,
    scopes: ['payees:write'],
    body: PayeeCreate,
    response: PayeeResponse,
    statuses: [201],
    errors: ['invalid_reference', 'external_id_conflict', 'payee_exists', 'limit_reached'],
    requestExample: { name: 'Pingo Doce', aliases: ['PINGO DOCE LISBOA'], isMerchant: true },
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const row = createPayee(tenant, auth.subject.country, body)
      return { status: 201, body: { data: toPayee(row) }, location: `/v1/payees/${row.id}` }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/payees/upsert',
    operationId: 'upsertPayee',
    summary: 'Create or update a payee by externalId (sync)',
    tag,
    scopes: ['payees:write'],
    body: PayeeUpsert,
    response: PayeeUpsertResponse,
    statuses: [201, 200],
    errors: ['invalid_reference', 'payee_exists', 'limit_reached'],
    requestExample: { externalId: 'merchant-42', name: 'Pingo Doce', isMerchant: true },
    etag: true,
    handle: ({ tenant, auth, body }) => {
      const { created, row } = upsertPayee(tenant, auth.subject.country, body)
      return upsertReply(created, toPayee(row), `/v1/payees/${row.id}`)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/payees/:payeeId',
    operationId: 'getPayee',
    summary: 'Get a payee',
    tag,
    scopes: ['payees:read'],
    params: PayeeParams,
    response: PayeeResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ tenant, params }) => ({ status: 200, body: { data: toPayee(getPayee(tenant, params.payeeId)) } }),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/v1/payees/:payeeId',
    operationId: 'updatePayee',
    summary: 'Change a payee',
    tag,
    scopes: ['payees:write'],
    params: PayeeParams,
    body: PayeeUpdate,
    response: PayeeResponse,
    statuses: [200],
    errors: ['not_found', 'invalid_reference', 'external_id_conflict', 'payee_exists'],
    requestExample: { aliases: ['PINGO DOCE', 'PD LISBOA'] },
    // If-Match is checked against the resource as it is now (CONTRACT §25).
    current,
    handle: ({ tenant, auth, params, body }) => ({
      status: 200,
      body: { data: toPayee(updatePayee(tenant, auth.subject.country, params.payeeId, body)) },
    }),
  }),
]
