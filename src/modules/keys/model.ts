import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { BooleanQuery, Cursor, EpochMs, Limit, ListOf, Name, Nullable, PathId, SingleOf } from '../../platform/schemas.ts'
import { SCOPES } from '../../platform/scopes.ts'

/** The owner's own credentials (CONTRACT §28): personal API keys and the apps signed in with OAuth. */

const ScopeName = t.Union(
  SCOPES.map((scope) => t.Literal(scope)),
  { description: SCOPES.join(', ') },
)

export const ApiKey = t.Object(
  {
    id: t.String({ description: 'a key’s `key_…` id, or an OAuth grant’s `app_…`', examples: ['key_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'] }),
    type: t.Union([t.Literal('key'), t.Literal('oauth')], { description: '`key`: a personal API key; `oauth`: an app signed in through /signin' }),
    name: Nullable(t.String({ description: 'the key’s label, or the app’s name as it registered' })),
    clientId: Nullable(t.String({ description: 'the OAuth client (`cli_…`) of a grant; null for a key' })),
    scopes: t.Array(ScopeName),
    createdAt: EpochMs,
    lastUsedAt: Nullable(EpochMs),
    expiresAt: Nullable(EpochMs),
    revokedAt: Nullable(EpochMs),
    current: t.Boolean({ description: 'true for the key or grant that made this request' }),
  },
  { title: 'ApiKey', additionalProperties: false },
)

export const NewApiKey = t.Object(
  {
    ...ApiKey.properties,
    key: Nullable(
      t.String({
        description:
          'the key itself, `pfk_…`: shown in this answer only. A replay of the request (same Idempotency-Key) answers null: the secret is never stored',
      }),
    ),
  },
  { title: 'NewApiKey', additionalProperties: false },
)

export const ApiKeyCreate = t.Object(
  {
    name: Name,
    scopes: t.Array(ScopeName, { minItems: 1, uniqueItems: true, description: 'at most the scopes of the key or token making the request' }),
    expiresIn: t.Optional(
      Nullable(
        Type.Integer({ minimum: 60, maximum: 10 * 366 * 86_400, description: 'seconds until the key stops working (60 s – 10 years); absent or null: never' }),
      ),
    ),
  },
  { title: 'ApiKeyCreate', additionalProperties: false },
)

export const ApiKeyListQuery = t.Object(
  { limit: t.Optional(Limit), cursor: t.Optional(Cursor), includeRevoked: t.Optional(BooleanQuery('include revoked and expired keys and grants')) },
  { additionalProperties: false },
)

export const ApiKeyParams = PathId('keyId')
export const ApiKeyResponse = SingleOf(ApiKey, 'ApiKeyResponse')
export const NewApiKeyResponse = SingleOf(NewApiKey, 'NewApiKeyResponse')
export const ApiKeyListResponse = ListOf(ApiKey, 'ApiKeyListResponse')

export type ApiKeyOut = typeof ApiKey.static
export type ApiKeyCreateInput = typeof ApiKeyCreate.static
