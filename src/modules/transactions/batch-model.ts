import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { Nullable } from '../../platform/schemas.ts'
import { RulesApplied, Transaction, TransactionBatchItem } from './model.ts'

/** Batch import (CONTRACT §16): up to 500 transaction upserts applied together or not at all. */

export const MAX_BATCH_ITEMS = 500
export const MAX_BATCH_BODY_BYTES = 4 * 1024 * 1024

const envelope = {
  dryRun: t.Optional(t.Boolean({ default: false, description: 'check and report every item, write nothing' })),
  ifDeleted: t.Optional(
    t.Union([t.Literal('recreate'), t.Literal('skip')], {
      default: 'recreate',
      description: '`skip`: an externalId whose transaction was deleted (tombstone kept) is reported `skipped_deleted` instead of created again',
    }),
  ),
  applyRules: t.Optional(
    t.Boolean({
      default: false,
      description: 'run your active rules on each item (CONTRACT §23); each item’s `rulesApplied` lists the rules that matched (null without it)',
    }),
  ),
}

export const TransactionBatch = t.Object(
  { items: t.Array(TransactionBatchItem, { minItems: 1, maxItems: MAX_BATCH_ITEMS, description: `1–${MAX_BATCH_ITEMS} transaction upserts` }), ...envelope },
  { title: 'TransactionBatch', additionalProperties: false },
)

/** The batch with its items unchecked: a dry run reports bad items one by one instead of refusing the whole body. */
export const TransactionBatchEnvelope = t.Object(
  { items: t.Array(t.Unknown(), { minItems: 1, maxItems: MAX_BATCH_ITEMS }), ...envelope },
  { additionalProperties: false },
)

export const BATCH_OPERATIONS = ['created', 'updated', 'unchanged', 'skipped_deleted', 'matched'] as const
export type BatchOperation = (typeof BATCH_OPERATIONS)[number]

const ItemError = t.Object(
  {
    field: Nullable(t.String({ description: 'the item’s field, e.g. `amount`; null when the rule spans fields' })),
    code: t.String({ description: 'the error code the item would get alone (validation_failed, invalid_reference, rule_violation, …)' }),
    detail: t.String(),
  },
  { title: 'BatchItemError', additionalProperties: false },
)

export const BatchItemResult = t.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    externalId: Nullable(t.String()),
    operation: Nullable(
      t.Union(
        BATCH_OPERATIONS.map((op) => t.Literal(op)),
        { description: 'null for an item that fails (dry run)' },
      ),
    ),
    data: Nullable(Transaction),
    errors: t.Array(ItemError),
    rulesApplied: RulesApplied,
  },
  { title: 'BatchItemResult', additionalProperties: false },
)

export const TransactionBatchResponse = t.Object(
  {
    data: t.Array(BatchItemResult),
    summary: t.Object(
      {
        created: Type.Integer(),
        updated: Type.Integer(),
        unchanged: Type.Integer(),
        matched: Type.Integer({ description: 'items that adopted a transaction a schedule had posted (CONTRACT §29)' }),
        skippedDeleted: Type.Integer(),
        failed: Type.Integer(),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'TransactionBatchResponse', additionalProperties: false },
)

export type TransactionBatchInput = typeof TransactionBatch.static
export type BatchItemOut = typeof BatchItemResult.static
export type BatchItemErrorOut = typeof ItemError.static
