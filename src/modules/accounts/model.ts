import { t } from 'elysia'
import {
  BooleanQuery,
  Currency,
  Cursor,
  EpochMs,
  UpdatedAt,
  ExternalId,
  Id,
  Limit,
  ListOf,
  LongText,
  Money,
  Name,
  Nullable,
  PathId,
  ShortText,
  SingleOf,
  UpsertOf,
} from '../../platform/schemas.ts'

export const ACCOUNT_TYPES = ['physical', 'bank', 'ewallet', 'card', 'investment', 'crypto', 'loan', 'other'] as const
export const AccountType = t.Union(
  ACCOUNT_TYPES.map((type) => t.Literal(type)),
  { description: 'physical, bank, ewallet, card, investment, crypto, loan or other' },
)

export const CustomField = t.Object(
  { label: t.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1–200 characters, not blank' }), value: t.String({ maxLength: 200 }) },
  { title: 'CustomField', additionalProperties: false },
)
const CustomFields = t.Array(CustomField, { maxItems: 50 })

export const Account = t.Object(
  {
    id: Id('acct', 'acct_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    externalId: Nullable(t.String()),
    name: t.String(),
    type: AccountType,
    subtype: Nullable(t.String()),
    providerSlug: Nullable(t.String()),
    secondaryProviderSlug: Nullable(t.String()),
    balance: t.Number({ description: 'current balance, exact decimal' }),
    currency: t.String(),
    color: Nullable(t.String()),
    icon: Nullable(t.String()),
    linkedAccountId: Nullable(t.String()),
    isArchived: t.Boolean(),
    isLiability: t.Boolean(),
    isFavourite: t.Boolean(),
    showInDashboard: t.Boolean(),
    isHidden: t.Boolean(),
    notes: Nullable(t.String()),
    sortOrder: Nullable(t.Number()),
    accountNumber: Nullable(t.String()),
    customFields: t.Array(CustomField),
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
  },
  { title: 'Account', additionalProperties: false },
)

/** Optional fields shared by create and upsert. */
const optionalFields = {
  subtype: t.Optional(ShortText),
  providerSlug: t.Optional(ShortText),
  secondaryProviderSlug: t.Optional(ShortText),
  color: t.Optional(ShortText),
  icon: t.Optional(ShortText),
  linkedAccountId: t.Optional(t.String()),
  isLiability: t.Optional(t.Boolean()),
  notes: t.Optional(LongText),
  sortOrder: t.Optional(t.Number()),
  accountNumber: t.Optional(ShortText),
  customFields: t.Optional(CustomFields),
  isFavourite: t.Optional(t.Boolean()),
  showInDashboard: t.Optional(t.Boolean()),
  isHidden: t.Optional(t.Boolean()),
}

export const AccountCreate = t.Object(
  { name: Name, type: AccountType, balance: Money, currency: Currency, externalId: t.Optional(ExternalId), ...optionalFields },
  { title: 'AccountCreate', additionalProperties: false },
)

export const AccountUpsert = t.Object(
  { externalId: ExternalId, name: Name, type: AccountType, balance: Money, currency: Currency, ...optionalFields },
  { title: 'AccountUpsert', additionalProperties: false },
)

export const AccountUpdate = t.Object(
  {
    externalId: t.Optional(Nullable(ExternalId)),
    name: t.Optional(Name),
    type: t.Optional(AccountType),
    balance: t.Optional(Money),
    currency: t.Optional(Currency),
    subtype: t.Optional(Nullable(ShortText)),
    providerSlug: t.Optional(Nullable(ShortText)),
    secondaryProviderSlug: t.Optional(Nullable(ShortText)),
    color: t.Optional(Nullable(ShortText)),
    icon: t.Optional(Nullable(ShortText)),
    linkedAccountId: t.Optional(Nullable(t.String())),
    isLiability: t.Optional(t.Boolean()),
    notes: t.Optional(Nullable(LongText)),
    sortOrder: t.Optional(Nullable(t.Number())),
    accountNumber: t.Optional(Nullable(ShortText)),
    customFields: t.Optional(CustomFields),
    isFavourite: t.Optional(t.Boolean()),
    showInDashboard: t.Optional(t.Boolean()),
    isHidden: t.Optional(t.Boolean()),
  },
  { title: 'AccountUpdate', additionalProperties: false },
)

export const AccountListQuery = t.Object(
  { limit: t.Optional(Limit), cursor: t.Optional(Cursor), includeArchived: t.Optional(BooleanQuery('include archived accounts')) },
  { additionalProperties: false },
)

export const AccountParams = PathId('accountId')
export const AccountResponse = SingleOf(Account, 'AccountResponse')
export const AccountListResponse = ListOf(Account, 'AccountListResponse')
export const AccountUpsertResponse = UpsertOf(Account, 'AccountUpsertResponse')

export type AccountOut = typeof Account.static
export type AccountCreateInput = typeof AccountCreate.static
export type AccountUpdateInput = typeof AccountUpdate.static
