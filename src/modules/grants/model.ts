import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { BooleanQuery, EpochMs, ListOf, Nullable, PathId, SingleOf } from '../../platform/schemas.ts'
import { GRANTABLE_SCOPES, SCOPES } from '../../platform/scopes.ts'

/** Households (CONTRACT §30): grants that let another owner's keys act on a ledger. */

const GrantScope = t.Union(
  GRANTABLE_SCOPES.map((scope) => t.Literal(scope)),
  { description: GRANTABLE_SCOPES.join(', ') },
)
const AnyScope = t.Union(
  SCOPES.map((scope) => t.Literal(scope)),
  { description: SCOPES.join(', ') },
)
const OwnerId = t.String({ description: 'an owner id, `own_…`', examples: ['own_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'] })

export const Grant = t.Object(
  {
    id: t.String({ description: '`grt_…`', examples: ['grt_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'] }),
    direction: t.Union([t.Literal('given'), t.Literal('received')], {
      description: '`given`: your ledger, opened to the grantee; `received`: the subject’s ledger, opened to you',
    }),
    subjectOwnerId: OwnerId,
    granteeOwnerId: OwnerId,
    scopes: t.Array(GrantScope),
    label: Nullable(t.String()),
    createdAt: EpochMs,
    expiresAt: Nullable(EpochMs),
    revokedAt: Nullable(EpochMs),
  },
  { title: 'Grant', additionalProperties: false },
)

export const GrantCreate = t.Object(
  {
    granteeOwnerId: OwnerId,
    scopes: t.Array(GrantScope, {
      minItems: 1,
      uniqueItems: true,
      description: 'at most the scopes of the key making the request; never keys:* or grants:* (viewer: every *:read; editor: viewer + the data writes)',
    }),
    label: t.Optional(Nullable(t.String({ maxLength: 200 }))),
    expiresIn: t.Optional(
      Nullable(Type.Integer({ minimum: 60, maximum: 10 * 366 * 86_400, description: 'seconds until the grant ends (60 s – 10 years); absent or null: never' })),
    ),
  },
  { title: 'GrantCreate', additionalProperties: false },
)

export const GrantListQuery = t.Object({ includeRevoked: t.Optional(BooleanQuery('include revoked and expired grants')) }, { additionalProperties: false })

export const GrantParams = PathId('grantId')
export const GrantResponse = SingleOf(Grant, 'GrantResponse')
export const GrantListResponse = ListOf(Grant, 'GrantListResponse')

export const Subject = t.Object(
  {
    ownerId: OwnerId,
    name: Nullable(t.String()),
    self: t.Boolean({ description: 'true for the key owner’s own ledger (no Pfin-Subject needed)' }),
    grantId: Nullable(t.String({ description: 'the grant that opens it; null for your own' })),
    scopes: t.Array(AnyScope, { description: 'what this key may do there: its scopes, and under a grant only those the grant holds too' }),
    expiresAt: Nullable(EpochMs),
  },
  { title: 'Subject', additionalProperties: false },
)
export const SubjectListResponse = ListOf(Subject, 'SubjectListResponse')

export type GrantOut = typeof Grant.static
export type GrantCreateInput = typeof GrantCreate.static
