import { t } from 'elysia'
import {
  CalendarDate,
  ClockTime,
  Cursor,
  EpochMs,
  ExternalId,
  Id,
  Limit,
  ListOf,
  LongText,
  Money,
  Name,
  Nullable,
  PathId,
  SingleOf,
  UpsertOf,
} from '../../platform/schemas.ts'

export const Transaction = t.Object(
  {
    id: Id('txn', 'txn_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    externalId: Nullable(t.String()),
    accountId: Nullable(t.String()),
    categoryId: Nullable(t.String()),
    payeeId: Nullable(t.String()),
    amount: t.Number({ description: 'exact decimal; positive = expense, negative = income' }),
    date: t.String({ description: 'YYYY-MM-DD' }),
    note: Nullable(t.String()),
    time: Nullable(t.String({ description: 'HH:MM or HH:MM:SS, as sent' })),
    isTransfer: t.Boolean(),
    transferToAccountId: Nullable(t.String()),
    destinationAmount: Nullable(t.Number({ description: 'on transfers, the amount credited to the destination; null otherwise' })),
    exchangeRate: Nullable(t.Number({ description: 'as sent; null when absent' })),
    hasSplits: t.Boolean({ description: 'always false in v1 (splits are not offered)' }),
    splitMode: Nullable(t.String({ description: 'always null in v1' })),
    categoryType: Nullable(t.Union([t.Literal('expense'), t.Literal('income')])),
    createdAt: EpochMs,
  },
  { title: 'Transaction', additionalProperties: false },
)

const Rate = t.Number({ exclusiveMinimum: 0, description: 'a positive number' })
const PositiveMoney = t.Number({ exclusiveMinimum: 0, description: 'exact decimal, > 0, at most 8 decimal places' })

const optionalFields = {
  categoryId: t.Optional(Nullable(t.String())),
  payeeId: t.Optional(Nullable(t.String())),
  payeeName: t.Optional(Name),
  note: t.Optional(Nullable(LongText)),
  time: t.Optional(Nullable(ClockTime)),
  isTransfer: t.Optional(t.Boolean()),
  transferToAccountId: t.Optional(Nullable(t.String())),
  destinationAmount: t.Optional(PositiveMoney),
  exchangeRate: t.Optional(Rate),
}

export const TransactionCreate = t.Object(
  { accountId: t.String(), amount: Money, date: CalendarDate, externalId: t.Optional(ExternalId), ...optionalFields },
  { title: 'TransactionCreate', additionalProperties: false },
)

export const TransactionUpsert = t.Object(
  { externalId: ExternalId, accountId: t.String(), amount: Money, date: CalendarDate, ...optionalFields },
  { title: 'TransactionUpsert', additionalProperties: false },
)

export const TransactionUpdate = t.Object(
  {
    externalId: t.Optional(Nullable(ExternalId)),
    accountId: t.Optional(t.String()),
    amount: t.Optional(Money),
    date: t.Optional(CalendarDate),
    ...optionalFields,
  },
  { title: 'TransactionUpdate', additionalProperties: false },
)

export const TransactionListQuery = t.Object(
  {
    limit: t.Optional(Limit),
    cursor: t.Optional(Cursor),
    accountId: t.Optional(t.String({ minLength: 1, description: 'source account, or destination of a transfer' })),
    categoryId: t.Optional(t.String({ minLength: 1 })),
    payeeId: t.Optional(t.String({ minLength: 1 })),
    from: t.Optional(CalendarDate),
    to: t.Optional(CalendarDate),
    externalId: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
)

export const TransactionParams = PathId('transactionId')
export const TransactionResponse = SingleOf(Transaction, 'TransactionResponse')
export const TransactionListResponse = ListOf(Transaction, 'TransactionListResponse')
export const TransactionUpsertResponse = UpsertOf(Transaction, 'TransactionUpsertResponse')

export type TransactionOut = typeof Transaction.static
export type TransactionUpdateInput = typeof TransactionUpdate.static
export type TransactionListInput = typeof TransactionListQuery.static
