import { defineRoute } from '../../platform/route.ts'
import { GrantCreate, GrantListQuery, GrantListResponse, GrantParams, GrantResponse, SubjectListResponse } from './model.ts'
import { createGrant, listGrants, listSubjects, revokeGrant } from './service.ts'

/**
 * Households (CONTRACT §30): the key owner's grants under `grants:read` / `grants:write`, which no
 * key gets by default, and the ledgers it may act on. None of them runs under `Pfin-Subject`.
 */
const tag = 'Households'

export const grantRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/me/subjects',
    operationId: 'listSubjects',
    summary: 'The ledgers this key may act on: your own, and each shared with you',
    description: 'Send `Pfin-Subject: <ownerId>` to act on one of the others. `scopes` are what this key may do there.',
    tag,
    scopes: ['me:read'],
    delegable: false,
    response: SubjectListResponse,
    statuses: [200],
    handle: ({ control, auth }) => ({ status: 200, body: listSubjects(control, auth) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/grants',
    operationId: 'listGrants',
    summary: 'List the grants you gave and the ones you received (oldest first)',
    description: 'Live ones only unless `includeRevoked`.',
    tag,
    scopes: ['grants:read'],
    delegable: false,
    query: GrantListQuery,
    response: GrantListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ control, auth, query }) => ({ status: 200, body: listGrants(control, auth, query.includeRevoked ?? false) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/grants',
    operationId: 'createGrant',
    summary: 'Let another owner’s keys act on your ledger',
    description:
      'At most one live grant per grantee (409 `grant_exists`: revoke it first). Its scopes are at most the caller’s, and never keys:* or grants:* (no re-delegation).',
    tag,
    scopes: ['grants:write'],
    delegable: false,
    body: GrantCreate,
    response: GrantResponse,
    statuses: [201],
    errors: ['invalid_reference', 'grant_exists', 'limit_reached'],
    store: 'control',
    requestExample: { granteeOwnerId: 'own_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b', scopes: ['me:read', 'accounts:read', 'transactions:read'], label: 'bookkeeper' },
    handle: ({ control, auth, body }) => {
      const grant = createGrant(control, auth, body)
      return { status: 201, body: { data: grant }, location: `/v1/grants/${grant.id}` }
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/grants/:grantId',
    operationId: 'revokeGrant',
    summary: 'Revoke a grant you gave',
    description: 'The grantee’s requests stop within a second; again: 200, unchanged. A grant you received is its giver’s to revoke (404).',
    tag,
    scopes: ['grants:write'],
    delegable: false,
    params: GrantParams,
    response: GrantResponse,
    statuses: [200],
    errors: ['not_found'],
    handle: ({ control, auth, params }) => ({ status: 200, body: { data: revokeGrant(control, auth, params.grantId) } }),
  }),
]
