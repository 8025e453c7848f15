import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Nullable } from '../../platform/schemas.ts'
import { MAX_BATCH_ITEMS } from './batch-model.ts'
import { Transaction, TransactionUpdate } from './model.ts'

/** Bulk update (CONTRACT §26): up to 500 transactions changed together or not at all. */

export const BulkUpdateItem = t.Object(
  {
    transactionId: t.String({ minLength: 1, description: 'the transaction to change' }),
    patch: t.Optional(TransactionUpdate),
  },
  { title: 'BulkUpdateItem', additionalProperties: false },
)

export const TransactionBulkUpdate = t.Object(
  {
    patch: t.Optional(TransactionUpdate),
    items: t.Array(BulkUpdateItem, {
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description: `1–${MAX_BATCH_ITEMS} transactions, each at most once; an item’s own \`patch\` is laid over the shared one, field by field`,
    }),
    dryRun: t.Optional(t.Boolean({ default: false, description: 'check every item and report what it would become; write nothing' })),
  },
  { title: 'TransactionBulkUpdate', additionalProperties: false },
)

const ItemError = t.Object(
  {
    field: Nullable(t.String({ description: 'the field of the item’s patch, e.g. `categoryId`; null when the rule spans fields' })),
    code: t.String({ description: 'the error code the change would get alone (invalid_reference, rule_violation, …)' }),
    detail: t.String(),
  },
  { title: 'BulkUpdateItemError', additionalProperties: false },
)

export const BulkUpdateResult = t.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    transactionId: t.String(),
    operation: Nullable(
      t.Union([t.Literal('updated'), t.Literal('unchanged')], {
        description: '`unchanged` when the patch leaves the transaction as it was (nothing written); null for an item that fails (dry run)',
      }),
    ),
    data: Nullable(Transaction),
    errors: t.Array(ItemError),
  },
  { title: 'BulkUpdateResult', additionalProperties: false },
)

export const TransactionBulkUpdateResponse = t.Object(
  {
    data: t.Array(BulkUpdateResult, { description: 'one per item, in order; `data` is the transaction as it is (a dry run: as it would be)' }),
    summary: t.Object({ updated: Type.Integer(), unchanged: Type.Integer(), failed: Type.Integer() }, { additionalProperties: false }),
  },
  { title: 'TransactionBulkUpdateResponse', additionalProperties: false },
)

export type TransactionBulkUpdateInput = typeof TransactionBulkUpdate.static
export type BulkUpdateResultOut = typeof BulkUpdateResult.static
