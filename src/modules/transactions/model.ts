import { t } from 'elysia'
import {
  CalendarDate,
  ClockTime,
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
  SingleOf,
} from '../../platform/schemas.ts'

/** Money in a query string: a plain decimal, read exactly (CONTRACT §4), never through a double. */
const AmountQuery = (description: string) =>
  t.String({ pattern: '^-?\\d+(\\.\\d+)?$', maxLength: 40, description: `${description}; an exact decimal such as 12.5 or -100` })

const CategoryType = Nullable(t.Union([t.Literal('expense'), t.Literal('income')]))

/** One leg of a split transaction (CONTRACT §21). */
export const Split = t.Object(
  {
    id: Id('spl', 'spl_0193a5c0e1f27c3d9a0b1c2d3e4f5a6b'),
    amount: t.Number({ description: 'exact decimal; the legs of a transaction sum exactly to its amount' }),
    categoryId: Nullable(t.String()),
    categoryType: CategoryType,
    payeeId: Nullable(t.String({ description: 'null: the leg counts toward the transaction’s payee' })),
    note: Nullable(t.String()),
  },
  { title: 'Split', additionalProperties: false },
)

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
    originalDescription: Nullable(t.String({ description: 'the bank’s own text for the transaction, as imported; null when none was given' })),
    time: Nullable(t.String({ description: 'HH:MM or HH:MM:SS, as sent' })),
    isTransfer: t.Boolean(),
    transferToAccountId: Nullable(t.String()),
    destinationAmount: Nullable(t.Number({ description: 'on transfers, the amount credited to the destination; null otherwise' })),
    exchangeRate: Nullable(t.Number({ description: 'as sent; null when absent' })),
    hasSplits: t.Boolean({ description: 'true exactly when `splits` is not empty' }),
    splitMode: Nullable(t.String({ description: '"category" when split (the only mode for now), else null' })),
    categoryType: CategoryType,
    createdAt: EpochMs,
    updatedAt: UpdatedAt,
    createdBy: Nullable(
      t.String({
        description:
          'the owner whose key made it (your own id for your own writes; another’s under a household grant, CONTRACT §30); null on transactions made before households',
      }),
    ),
    updatedBy: Nullable(t.String({ description: 'the owner whose key last changed it; null on transactions made before households' })),
    splits: t.Array(Split, { description: 'the legs, in the order given; [] when not split' }),
    tagIds: t.Array(t.String(), { description: 'the tags, in the order given; [] when none' }),
    scheduleId: Nullable(t.String({ description: 'the schedule that posted it (CONTRACT §29); null for any other; kept when the schedule is deleted' })),
  },
  { title: 'Transaction', additionalProperties: false },
)

const Rate = t.Number({ exclusiveMinimum: 0, description: 'a positive number' })
const PositiveMoney = t.Number({ exclusiveMinimum: 0, description: 'exact decimal, > 0, at most 8 decimal places' })

export const SplitInput = t.Object(
  {
    amount: Money,
    categoryId: t.Optional(Nullable(t.String({ description: 'absent: the default category of the leg’s payee, else of the transaction’s payee' }))),
    payeeId: t.Optional(Nullable(t.String())),
    payeeName: t.Optional(Name),
    note: t.Optional(Nullable(LongText)),
  },
  { title: 'SplitInput', additionalProperties: false },
)

export const MAX_SPLITS = 100
export const MAX_TAGS_PER_TRANSACTION = 20

const Splits = t.Array(SplitInput, {
  maxItems: MAX_SPLITS,
  description:
    'The legs: 2–100, whose amounts sum exactly to `amount` (a leg may be 0 or of the opposite sign), or [] to unsplit. Replaces every leg; absent keeps them. ' +
    'A split transaction has no category of its own, and its amount changes only together with `splits` that sum to the new amount.',
})
const TagIds = t.Array(t.String(), {
  maxItems: MAX_TAGS_PER_TRANSACTION,
  description: '0–20 of your tag ids; replaces the transaction’s tags ([] clears them); absent keeps them',
})
const TagNames = t.Array(Name, {
  maxItems: MAX_TAGS_PER_TRANSACTION,
  description: '0–20 tag names, each found by normalized name or created; instead of tagIds, not with it',
})

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
  splits: t.Optional(Splits),
  tagIds: t.Optional(TagIds),
  tagNames: t.Optional(TagNames),
}

/** Set when the transaction is written by create, upsert or batch; PATCH does not take it (CONTRACT §23). */
const OriginalDescription = t.Optional(
  Nullable(
    t.String({
      maxLength: 2000,
      description: 'the bank’s own text (≤ 2000 characters), kept as it came; create, upsert and batch set it, PATCH cannot change it',
    }),
  ),
)
// No `default` keyword in a request body: generated clients would make the field required.
const ApplyRules = t.Optional(
  t.Boolean({
    description:
      'default false; true runs your active rules on this write: they fill in the fields the request leaves out and report the rules that matched in `rulesApplied`',
  }),
)

const upsertFields = {
  externalId: ExternalId,
  accountId: t.String(),
  amount: Money,
  date: CalendarDate,
  ...optionalFields,
  originalDescription: OriginalDescription,
}

export const TransactionCreate = t.Object(
  {
    accountId: t.String(),
    amount: Money,
    date: CalendarDate,
    externalId: t.Optional(ExternalId),
    ...optionalFields,
    originalDescription: OriginalDescription,
    applyRules: ApplyRules,
  },
  { title: 'TransactionCreate', additionalProperties: false },
)

export const TransactionUpsert = t.Object({ ...upsertFields, applyRules: ApplyRules }, { title: 'TransactionUpsert', additionalProperties: false })

/** A batch item: an upsert; whether rules run is said once, for the whole batch. */
export const TransactionBatchItem = t.Object(upsertFields, { title: 'TransactionBatchItem', additionalProperties: false })

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
    categoryId: t.Optional(
      t.String({
        minLength: 1,
        description:
          'the transaction’s category, or the category of one of its legs; `none`: uncategorized (no category, not split, not a transfer; or split with a leg that has none)',
      }),
    ),
    payeeId: t.Optional(t.String({ minLength: 1, description: 'the transaction’s payee, or the payee of one of its legs' })),
    tagId: t.Optional(t.String({ minLength: 1, description: 'transactions carrying this tag' })),
    from: t.Optional(CalendarDate),
    to: t.Optional(CalendarDate),
    externalId: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    q: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 200,
        description: 'text to find, ignoring case and accents: in the note, a leg’s note, or the name or an alias of the payee (its own or a leg’s)',
      }),
    ),
    minAmount: t.Optional(AmountQuery('the smallest amount, inclusive (an expense is positive, income negative)')),
    maxAmount: t.Optional(AmountQuery('the largest amount, inclusive (an expense is positive, income negative)')),
  },
  { additionalProperties: false },
)

export const TransactionParams = PathId('transactionId')
export const TransactionResponse = SingleOf(Transaction, 'TransactionResponse')
export const TransactionListResponse = ListOf(Transaction, 'TransactionListResponse')

/**
 * What rules did to a write: the ids of the rules whose conditions held, in the order they ran;
 * null when the write did not ask for rules. Beside `data`, not in it: it describes this write,
 * not the transaction (a later read, the change feed and the agent context know nothing of it).
 */
export const RulesApplied = Nullable(
  t.Array(t.String(), {
    description: 'the ids of the rules whose conditions held, in the order they ran ([] when none did); null when the request did not send applyRules: true',
  }),
)

export const TransactionCreateResponse = t.Object(
  { data: Transaction, rulesApplied: RulesApplied },
  { title: 'TransactionCreateResponse', additionalProperties: false },
)
export const TransactionUpsertResponse = t.Object(
  { operation: t.Union([t.Literal('created'), t.Literal('updated')]), data: Transaction, rulesApplied: RulesApplied },
  { title: 'TransactionUpsertResponse', additionalProperties: false },
)

export type TransactionOut = typeof Transaction.static
export type SplitOut = typeof Split.static
export type SplitInputValue = typeof SplitInput.static
export type TransactionUpdateInput = typeof TransactionUpdate.static
/** What a write's body may carry: PATCH's fields, and the bank text that only create, upsert and batch set. */
export type TransactionWriteInput = TransactionUpdateInput & { originalDescription?: string | null }
export type TransactionCreateInput = typeof TransactionCreate.static
export type TransactionUpsertInput = typeof TransactionUpsert.static
export type TransactionBatchItemInput = typeof TransactionBatchItem.static
export type TransactionListInput = typeof TransactionListQuery.static
