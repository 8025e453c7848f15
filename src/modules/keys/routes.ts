import { mintApiKey } from '../../platform/auth.ts'
import { defineRoute } from '../../platform/route.ts'
import { ApiKeyCreate, ApiKeyListQuery, ApiKeyListResponse, ApiKeyParams, ApiKeyResponse, NewApiKeyResponse } from './model.ts'
import { createKey, getKey, listKeys, type Minted, revokeKey } from './service.ts'

/** The owner's keys and signed-in apps (CONTRACT §28), under `keys:read` and `keys:write`, which no key gets by default. */
const tag = 'Keys'

export const keyRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/keys',
    operationId: 'listKeys',
    summary: 'List your API keys and signed-in apps (oldest first)',
    description:
      'Personal keys (`type: key`) and OAuth grants (`type: oauth`, one per app sign-in) together; live ones only unless `includeRevoked`. No secrets.',
    tag,
    delegable: false,
    scopes: ['keys:read'],
    query: ApiKeyListQuery,
    response: ApiKeyListResponse,
    statuses: [200],
    errors: ['validation_failed'],
    handle: ({ control, auth, query }) => ({ status: 200, body: listKeys(control, auth, query) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/keys',
    operationId: 'createKey',
    summary: 'Make an API key (its secret is in this answer only)',
    description:
      'The new key may carry at most the scopes of the key or token that makes it (403 `insufficient_scope` otherwise). The answer holds the key once: a replay with the same Idempotency-Key answers `key: null`.',
    tag,
    delegable: false,
    scopes: ['keys:write'],
    body: ApiKeyCreate,
    response: NewApiKeyResponse,
    statuses: [201],
    errors: ['limit_reached'],
    store: 'control',
    prepare: ({ auth }) => mintApiKey(auth.subject.id),
    requestExample: { name: 'bank import script', scopes: ['transactions:read', 'transactions:write'], expiresIn: 7_776_000 },
    handle: ({ control, auth, body, prepared }) => {
      // prepare never rejects: a failed hash reaches here as its error (CONTRACT §6: a 500, logged).
      if (prepared instanceof Error) throw prepared
      const minted = prepared as Minted
      const item = createKey(control, auth, body, minted)
      return { status: 201, body: { data: { ...item, key: minted.plaintext } }, stored: { data: { ...item, key: null } }, location: `/v1/keys/${item.id}` }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/keys/:keyId',
    operationId: 'getKey',
    summary: 'Get one API key or signed-in app',
    tag,
    delegable: false,
    scopes: ['keys:read'],
    params: ApiKeyParams,
    response: ApiKeyResponse,
    statuses: [200],
    errors: ['not_found'],
    etag: true,
    handle: ({ control, auth, params }) => ({ status: 200, body: { data: getKey(control, auth, params.keyId) } }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/keys/:keyId',
    operationId: 'revokeKey',
    summary: 'Revoke an API key, or sign an app out',
    description:
      'A key stops working, or an OAuth grant and every token of it end, within a second on every request; again: 200, unchanged. A caller may revoke the key or grant it is using.',
    tag,
    delegable: false,
    scopes: ['keys:write'],
    params: ApiKeyParams,
    response: ApiKeyResponse,
    statuses: [200],
    errors: ['not_found'],
    handle: ({ control, auth, params }) => ({ status: 200, body: { data: revokeKey(control, auth, params.keyId) } }),
  }),
]
