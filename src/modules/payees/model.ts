import { t } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Cursor, EpochMs, UpdatedAt, ExternalId, Id, Limit, ListOf, Name, Nullable, PathId, ShortText, SingleOf, UpsertOf } from '../../platform/schemas.ts'

export const Payee = t.Object(
  {
    id: Id('pay', 'pay_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    externalId: Nullable(t.String()),
    name: t.String(),
    normalizedName: t.String({ description: 'lower case, accents stripped, whitespace collapsed' }),
    aliases: t.Array(t.String()),
    categoryId: Nullable(t.String()),
    isMerchant: t.Boolean(),
    transactionCount: Type.Integer({ minimum: 0, description: 'all of the payee’s transactions' }),
    totalSpent: t.Number({ description: 'sum of positive amounts of non-transfer transactions, exact decimal' }),
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
  },
  { title: 'Payee', additionalProperties: false },
)

const Aliases = t.Array(Name, { maxItems: 50 })

export const PayeeCreate = t.Object(
  {
    name: Name,
    externalId: t.Optional(ExternalId),
    aliases: t.Optional(Aliases),
    categoryId: t.Optional(Nullable(t.String())),
    linkedPersonId: t.Optional(Nullable(ShortText)),
    isMerchant: t.Optional(t.Boolean()),
  },
  { title: 'PayeeCreate', additionalProperties: false },
)

export const PayeeUpsert = t.Object(
  {
    externalId: ExternalId,
    name: Name,
    aliases: t.Optional(Aliases),
    categoryId: t.Optional(Nullable(t.String())),
    linkedPersonId: t.Optional(Nullable(ShortText)),
    isMerchant: t.Optional(t.Boolean()),
  },
  { title: 'PayeeUpsert', additionalProperties: false },
)

export const PayeeUpdate = t.Object(
  {
    externalId: t.Optional(Nullable(ExternalId)),
    name: t.Optional(Name),
    aliases: t.Optional(Aliases),
    categoryId: t.Optional(Nullable(t.String())),
    linkedPersonId: t.Optional(Nullable(ShortText)),
    isMerchant: t.Optional(t.Boolean()),
  },
  { title: 'PayeeUpdate', additionalProperties: false },
)

export const PayeeListQuery = t.Object(
  {
    limit: t.Optional(Limit),
    cursor: t.Optional(Cursor),
    q: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'case- and accent-insensitive substring of the name or an alias' })),
  },
  { additionalProperties: false },
)

export const PayeeParams = PathId('payeeId')
export const PayeeResponse = SingleOf(Payee, 'PayeeResponse')
export const PayeeListResponse = ListOf(Payee, 'PayeeListResponse')
export const PayeeUpsertResponse = UpsertOf(Payee, 'PayeeUpsertResponse')

export type PayeeOut = typeof Payee.static
export type PayeeUpdateInput = typeof PayeeUpdate.static
